export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /tmp/nvs.log 2>&1; grep "^nvrtc" /tmp/nvs.log
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=$1
THREADTILE_CACHE_DIR=/tmp/k0 timeout 60 python3 probe/s35/kfit2.py staged 2>&1 | grep -v Warn
THREADTILE_CACHE_DIR=/tmp/sw timeout 150 python3 bench/tile_sweep.py --dtypes float16 --no-cutile --name tile_sweep_staged --tiles 64x64x64,64x128x64,64x256x64,128x64x64,128x128x32,128x128x64,128x256x64,256x64x64,256x128x64 2>&1 | grep -v Warn | grep -o "float16 [a-z]* [0-9x]* {'threadtile': {[^}]*}" | sed "s/'rel_err.*//"
THREADTILE_CACHE_DIR=/tmp/tt-cache timeout 220 pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -4
