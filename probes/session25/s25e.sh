export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1 THREADTILE_CACHE_DIR=/tmp/c8
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
sed -i 's/for tm, tn, nw in \[(64, 64, 4), (128, 128, 8)\]/for tm, tn, nw in [(64, 64, 4)]/' probe/att_ncu.py
python3 probe/att_ncu.py
timeout 300 ncu --clock-control none -k regex:attention_prefill --launch-count 1 --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 probe/att_ncu.py > $OUT/att_src.csv 2> $OUT/att_src.err
ls -la $OUT; head -c 600 $OUT/att_src.csv; tail -3 $OUT/att_src.err
