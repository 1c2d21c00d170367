#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
echo "== f8 GPU tests"
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 -rfEX tests/gpu/test_tile_paths_gpu.py tests/tile/test_tile_float8_loop.py 2>&1 | grep -v Warn | tail -25
echo "== sample"
timeout 120 python3 bench/cutile_samples.py --src probe/cutile --only BatchMatMul 2>&1 | tail -8
echo "== timing"
timeout 120 python3 probe/f8_time.py 2>&1 | tail -12
