export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=8cc4a98
echo "== elastic tests"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_elastic.py 2>&1 | tail -3
for d in float16 bfloat16 float32; do
echo "== persistent $d elastic"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 100 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes $d --name tile_sweep_elastic_$d 2>&1 | grep -v Warn | tail -30
echo "== persistent $d as given"
THREADTILE_ELASTIC=0 THREADTILE_CACHE_DIR=/tmp/ttc-b timeout 100 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes $d --name tile_sweep_elastic_off_$d 2>&1 | grep -v Warn | tail -30
done
mkdir -p $OUT/results && cp bench/results/tile_sweep_elastic*.json $OUT/results/
echo "== GPU suite"
THREADTILE_CACHE_DIR=/tmp/ttc-a timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -8
