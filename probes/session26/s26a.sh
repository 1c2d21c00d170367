#!/bin/bash
# session 26: nvrtc 13.5 on the device; prefill attention occupancy variants with resources; dwdb variants
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep nvrtc
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
echo "== attention"; timeout 200 python3 probe/att_pipe.py n135 2>&1 | grep -v Warn
echo "== dwdb"; timeout 100 python3 probe/dwdb.py on 2>&1 | grep -v Warn
