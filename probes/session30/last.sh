#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=$(cat probe/s30/COMMIT)
timeout 150 pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile tests/examples 2>&1 | grep -E "passed|failed|FAILED" | tail -6
timeout 100 python3 bench/llama.py --parts attention 2>&1 | grep -v Warn | tail -2
