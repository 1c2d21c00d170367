#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
for m in 0 1; do THREADTILE_CACHE_DIR=/tmp/ttc$m THREADTILE_PREFETCH=$m timeout 100 python3 probe/pf_time.py 2>&1 | tail -4; done
for m in 0 1; do echo "== LayerNorm sample prefetch=$m"; THREADTILE_CACHE_DIR=/tmp/ttc$m THREADTILE_PREFETCH=$m timeout 100 python3 bench/cutile_samples.py --src probe/cutile --only LayerNorm 2>&1 | tail -1; done
