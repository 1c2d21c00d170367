#!/bin/bash
# session 28 first call: GPU suite at c0e8677, then ncu of decode attention and Wdown (source-level SASS)
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
echo "== ncu decode attention"
timeout 120 ncu --set full --import-source yes -k regex:attention -s 1 -c 1 -o /tmp/att python3 probe/dec_ncu.py > /tmp/ncu1.log 2>&1; tail -2 /tmp/ncu1.log
ncu -i /tmp/att.ncu-rep --page source --csv --print-source sass > $OUT/att_sass.csv 2>&1
ncu -i /tmp/att.ncu-rep --page details --csv > $OUT/att_details.csv 2>&1
echo "== ncu Wdown"
timeout 120 ncu --set full -k regex:matmul -s 2 -c 1 -o /tmp/mm python3 probe/mm_ncu.py > /tmp/ncu2.log 2>&1; tail -2 /tmp/ncu2.log
ncu -i /tmp/mm.ncu-rep --page source --csv --print-source sass > $OUT/mm_sass.csv 2>&1
ncu -i /tmp/mm.ncu-rep --page details --csv > $OUT/mm_details.csv 2>&1
ls -la $OUT
