export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
for s in 2 3 4 6; do THREADTILE_CACHE_DIR=/tmp/cs$s timeout 100 python3 probe/pm_stages.py $s 2>&1 | grep -v Warn; done
