export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-i
timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_rowcache.py tests/tile/test_elastic.py 2>&1 | tail -3
timeout 200 python3 probe/s37/ln.py 2>&1 | grep -v Warn
