export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /tmp/nvs.log 2>&1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_CACHE_DIR=/tmp/d0 timeout 100 python3 probe/s35/att_128.py staged 2>&1 | grep -v Warn
