export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
cp src/threadtile/runtime/*.so probe/wip/src/threadtile/runtime/ 2>/dev/null
: THREADTILE_CACHE_DIR=/tmp/d1 PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests timeout 200 python3 probe/dec_grid.py main 2>&1 | grep -v Warn
THREADTILE_CACHE_DIR=/tmp/d2 TTSRC=$PWD/probe/wip/src PYTHONPATH=$PWD/examples:$PWD/tests timeout 200 python3 probe/dec_grid.py pipe 2>&1 | grep -v Warn
