export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=x
TT_REL=0 python3 probe/s34/att_modes.py base 2>&1 | grep -v Warn
TT_REL=1 python3 probe/s34/att_modes.py rel 2>&1 | grep -v Warn
