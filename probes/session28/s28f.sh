#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
(export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU tests of the example"; timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 -rfEX tests/examples tests/gpu/test_tile_paths_gpu.py 2>&1 | grep -v Warn | tail -3)
THREADTILE_CACHE_DIR=/tmp/ttc-s timeout 60 python3 probe/splitk.py 2>&1 | grep -v Warn
cd bench && THREADTILE_CACHE_DIR=/tmp/ttc-s timeout 70 python3 llama.py --parts layer 2>&1 | grep -v Warn | tail -4
