#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
AB=tma timeout 150 python3 probe/s30/ab.py 2>&1 | grep -v Warn | tail -8
timeout 60 python3 probe/s30/occ.py 2>&1 | grep -v Warn
CUTILE_SRC=$PWD/probe/cutile timeout 200 python3 bench/attention.py --no-cutile 2>&1 | grep -v Warn | grep "threadtile\|SDPA" | tail -22
timeout 300 pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile tests/examples tests/compat tests/gpu 2>&1 | tail -4
