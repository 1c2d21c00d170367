export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=${COMMIT:-x}
T=128x128x32,128x256x32,256x128x32,64x256x32,128x128x64,256x256x32
for r in 1 0; do
echo "== round=$r"
THREADTILE_PRODUCER_ROUND=$r THREADTILE_CACHE_DIR=/tmp/ttc-r$r timeout 110 python3 bench/tile_sweep.py --dtypes float32 --tiles $T --no-cutile --name tf32_round$r 2>&1 | grep -v Warn | grep "float32\|rror" | sed "s/'rel_err'.*//" | cut -c1-120
done
echo "== GPU suite"
THREADTILE_CACHE_DIR=/tmp/ttc-r1 timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -4
