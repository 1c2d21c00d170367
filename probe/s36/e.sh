export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-e THREADTILE_COMMIT=${COMMIT:-x}
echo "commit $THREADTILE_COMMIT"
echo "== persistent N=64 tiles"
timeout 120 python3 bench/tile_sweep.py --dtypes float16 --forms persistent --tiles 128x64x32,128x64x64,128x64x128,256x64x32,256x64x64,256x64x128 --no-cutile --name sweep_n64 2>&1 | grep -v Warn | grep "float16\|wrote" | cut -c1-140
echo "== GPU suite"
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -6
timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider -n 4 tests/tile/test_colsplit.py 2>&1 | tail -2
echo "== bf16 + tf32 sweep"
timeout 300 python3 bench/tile_sweep.py --dtypes bfloat16,float32 --no-cutile --name tile_sweep_bf16_tf32 2>&1 | grep -v Warn | grep "wrote\|rror" | tail -5
