#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=fa7087a
timeout 100 python3 probe/s30/occ.py 2>&1 | grep -v Warn
timeout 300 python3 bench/llama.py --parts attention,layer 2>&1 | grep -v Warn | tail -12
