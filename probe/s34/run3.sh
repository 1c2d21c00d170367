export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_CACHE_DIR=/tmp/c0 THREADTILE_OVERLAP=0 python3 probe/s34/att_modes.py base 2>&1 | grep -v Warn
THREADTILE_CACHE_DIR=/tmp/c1 THREADTILE_OVERLAP=1 python3 probe/s34/att_modes.py ovl 2>&1 | grep -v Warn
