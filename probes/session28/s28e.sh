#!/bin/bash
# final: the GPU suite at the head, decode SwiGLU at 4/5 buffers, projections, then llama.py (all parts) for llama.json
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
(export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -4)
for fs in 4,4 4,8 4,4 4,8; do FS=$fs THREADTILE_CACHE_DIR=/tmp/ttc-s$fs timeout 60 python3 probe/swi.py 2>&1 | grep -v Warn | tail -1; done
THREADTILE_CACHE_DIR=/tmp/ttc-p timeout 60 python3 probe/kspl.py 2>&1 | grep -v "Warn\|__init__"
cd bench && THREADTILE_CACHE_DIR=/tmp/ttc-l timeout 200 python3 llama.py 2>&1 | grep -v Warn | tail -14
cp results/llama.json $OUT/
