export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=c7cc106
echo "== persistent float32"
THREADTILE_CACHE_DIR=/tmp/ttc-f timeout 120 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes float32 --name tile_sweep_elastic_float32 2>&1 | grep -v Warn | tail -1
echo "== GPU suite"
THREADTILE_CACHE_DIR=/tmp/ttc-g timeout 280 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -5
