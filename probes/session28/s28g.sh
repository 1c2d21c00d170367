#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
THREADTILE_CACHE_DIR=/tmp/ttc-s timeout 40 python3 probe/splitk.py 2>&1 | grep -v Warn
cd bench && THREADTILE_CACHE_DIR=/tmp/ttc-s timeout 60 python3 llama.py --parts layer 2>&1 | grep -v Warn | tail -4
cp results/llama.json $OUT/
