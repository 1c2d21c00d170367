export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo wt)
echo "== elastic tests"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_elastic.py 2>&1 | tail -3
timeout 120 python3 probe/s37/diag.py 2>&1 | grep -v Warn
for d in float16 bfloat16 float32; do
echo "== persistent $d elastic"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 100 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes $d --name tile_sweep_elastic_$d 2>&1 | grep -v Warn | tail -30
done
echo "== persistent float16 as given"
THREADTILE_ELASTIC=0 THREADTILE_CACHE_DIR=/tmp/ttc-b timeout 100 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes float16 --name tile_sweep_elastic_off_float16 2>&1 | grep -v Warn | tail -30
