export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=38ea039
echo "== fixed cost, staged (main)"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 150 python3 bench/fixed_cost.py --no-cutile --name fixed_cost_staged 2>&1 | grep -v Warn
echo "== fixed cost, bulk"
THREADTILE_BULK_STORE=1 THREADTILE_CACHE_DIR=/tmp/ttc-b timeout 150 python3 bench/fixed_cost.py --no-cutile --name fixed_cost_bulk 2>&1 | grep -v Warn
echo "== store tests with bulk"
THREADTILE_BULK_STORE=1 THREADTILE_CACHE_DIR=/tmp/ttc-b timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_store_fragments.py 2>&1 | tail -4
echo "== GPU suite"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 280 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -8
