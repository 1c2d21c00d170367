#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
for fs in 4 6 8 3; do echo "== stages $fs"; FS=$fs THREADTILE_CACHE_DIR=/tmp/ttc-$fs timeout 100 python3 probe/stg.py 2>&1 | grep -v Warn | grep -v "__init__"; done
echo "== ncu Wdown"
PYTHONPATH=$PWD/src:$PWD/examples timeout 120 ncu --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SpeedOfLight -k regex:matmul -s 2 -c 1 python3 probe/mm_ncu.py 2>&1 | grep -v "^==PROF==" | grep -i "throughput\|stall\|eligible\|issued\|warp cycles\|hit rate\|duration" | head -30
