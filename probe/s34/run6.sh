export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=x
timeout 175 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -4
timeout 45 python3 bench/tile_sweep.py --dtypes float16 --forms plain,persistent --tiles 128x128x64,256x64x32,64x128x64 --no-cutile --name tile_sweep_partial 2>&1 | grep -v Warn | cut -c1-200
