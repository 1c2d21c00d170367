export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_OVERLAP=0 THREADTILE_CACHE_DIR=/tmp/d0 timeout 120 python3 probe/s35/att_128.py refill 2>&1 | grep -v Warn
THREADTILE_OVERLAP=1 TT_EXP_RING=1 TT_EXP_DROP=1 THREADTILE_CACHE_DIR=/tmp/d1 timeout 120 python3 probe/s35/att_128.py ovl_barrier 2>&1 | grep -v Warn
THREADTILE_OVERLAP=1 TT_EXP_RING=1 THREADTILE_CACHE_DIR=/tmp/d2 timeout 120 python3 probe/s35/att_128.py ovl_refill 2>&1 | grep -v Warn
