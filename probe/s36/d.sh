export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-a THREADTILE_COMMIT=colsplit
echo "== colsplit tests"; timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_colsplit.py 2>&1 | tail -3
echo "== 256x256 sweep"
timeout 150 python3 bench/tile_sweep.py --dtypes float16 --tiles 256x256x32,256x256x64,256x256x128 --no-cutile --name sweep_256 2>&1 | grep -v Warn | grep "float16\|wrote"
timeout 100 python3 bench/tile_sweep.py --dtypes bfloat16,float32 --tiles 256x256x64 --no-cutile --name sweep_256b 2>&1 | grep -v Warn | grep "float\|wrote"
echo "== small tiles probe"; timeout 280 python3 probe/s36/small.py 2>&1 | grep -v Warn
