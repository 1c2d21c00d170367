#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=$(cat probe/s30/COMMIT)
timeout 300 pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | grep -E "passed|failed|FAILED|Error" | tail -8
timeout 150 python3 bench/llama.py --parts attention,layer 2>&1 | grep -v Warn | tail -6
CUTILE_SRC=$PWD/probe/cutile timeout 150 python3 bench/attention.py --no-cutile 2>&1 | grep -v Warn | grep "SDPA\|64x64\|128x128\|128x64" | tail -24
