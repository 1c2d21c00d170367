export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_CACHE_DIR=/tmp/k0 timeout 100 python3 probe/s35/kfit2.py base 2>&1 | grep -v Warn
THREADTILE_CACHE_DIR=/tmp/k1 timeout 100 python3 probe/s35/kfit2.py nostore 2>&1 | grep -v Warn
THREADTILE_PRODUCER=0 THREADTILE_CACHE_DIR=/tmp/k2 timeout 100 python3 probe/s35/kfit2.py noproducer 2>&1 | grep -v Warn
