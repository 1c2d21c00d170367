#!/bin/bash
# session 26: GPU suite at HEAD (blockfit, K=32 steps, store_fragments interior), the sweep's
# big persistent tiles, llama (all parts), cuTile samples (threadtile side)
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
echo "== GPU suite"; timeout 250 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -5
echo "== pers"; timeout 60 python3 probe/pers64.py 2>&1 | grep -v Warn | tail -6
T=128x256x64,256x128x64,128x128x64,128x256x32,256x128x32,128x128x32,64x256x64,64x128x64
echo "== sweep"; timeout 150 python3 bench/tile_sweep.py --dtypes float16 --forms plain,persistent --no-cutile --tiles $T --name tile_sweep_s26 2>&1 | grep -v Warn | grep -o "^.*'tflops': [0-9.]*, 'of_cublas': [0-9.]*"
cp bench/results/tile_sweep_s26.json $OUT/ 2>/dev/null
echo "== llama"; timeout 200 python3 bench/llama.py 2>&1 | grep -v Warn | tail -8
cp bench/results/llama.json $OUT/ 2>/dev/null
