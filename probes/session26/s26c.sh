#!/bin/bash
# session 26: the Hopper loop's steps of two k for K = 32 (16-bit): GPU tests, then the sweep's K=32 and K=64 tiles
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
echo "== GPU tests"; timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests/tile tests/codegen 2>&1 | grep -v Warn | tail -6
T=64x64x32,64x128x32,128x64x32,128x128x32,128x256x32,256x64x32,256x128x32,64x256x32,64x64x64,64x128x64,128x64x64,128x128x64,128x256x64,256x64x64,256x128x64,64x256x64
echo "== sweep"; timeout 330 python3 bench/tile_sweep.py --dtypes float16 --no-cutile --tiles $T --name tile_sweep_k32 2>&1 | grep -v Warn | tail -60
cp bench/results/tile_sweep_k32.json $OUT/ 2>/dev/null
