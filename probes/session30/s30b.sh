#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests
for m in tma portable; do AB=$m THREADTILE_CACHE_DIR=/tmp/ttc-$m timeout 200 python3 probe/s30/ab.py 2>&1 | grep -v Warn | tail -8; done
THREADTILE_CACHE_DIR=/tmp/ttc-tma CUTILE_SRC=$PWD/probe/cutile timeout 200 python3 bench/attention.py --no-cutile 2>&1 | grep -v Warn | tail -22
