export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-a
timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/tile/test_elastic.py -x 2>&1 | grep -v Warn | tail -30
THREADTILE_ELASTIC=0 timeout 120 python3 probe/s37/diag.py 2>&1 | grep -v Warn
