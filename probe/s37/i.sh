export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "nvrtc"
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=$1
echo "== K=128 small tiles"
THREADTILE_CACHE_DIR=/tmp/ttc-j timeout 120 python3 bench/tile_sweep.py --no-cutile --dtypes float16,bfloat16 --tiles 64x64x128,64x128x128,128x64x128,64x128x64 --name tile_sweep_k128_small 2>&1 | grep -v Warn | tail -1
echo "== GPU suite"
THREADTILE_CACHE_DIR=/tmp/ttc-k timeout 280 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -5
