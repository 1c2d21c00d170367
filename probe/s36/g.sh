export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=${COMMIT:-x}
T=128x128x32,128x256x32,256x128x32,64x256x32,256x128x64
for z in 1 0; do
echo "== zero=$z"
TTZ=$z THREADTILE_CACHE_DIR=/tmp/ttc-z$z timeout 100 python3 bench/tile_sweep.py --dtypes float32 --tiles $T --no-cutile --name tf32_zero$z 2>&1 | grep -v Warn | grep "float32\|rror" | sed "s/'rel_err'.*//" | cut -c1-110
done
echo "== tf32 GPU tests"
THREADTILE_CACHE_DIR=/tmp/ttc-z1 timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests/gpu/test_tile_paths_gpu.py tests/tile/test_colsplit.py tests/tile/test_store_fragments.py 2>&1 | tail -2
