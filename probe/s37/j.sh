export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /dev/null 2>&1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=$1
THREADTILE_CACHE_DIR=/tmp/ttc-l timeout 150 python3 bench/tile_sweep.py --no-cutile --dtypes float32 --tiles 128x256x128,256x128x128,256x256x128 --name tile_sweep_tf32_k128 2>&1 | grep -v Warn | grep float32
