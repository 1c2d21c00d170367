#!/bin/bash
# Session 26's first device call (written at the end of session 25). Carry .whl; set
# THREADTILE_COMMIT explicitly.
# Not yet on a GPU: 66307db (cuTile kernels' array extents int32: every @ct.kernel's shape
# arithmetic is int32 C++ now). Run the GPU suite first.
# Then: prefill attention after the int32 mask (ptxas 217 -> 168 registers, 3 blocks an SM;
# 284 TFLOP/s before, 293-299 measured with occupancy=3), decode attention, and the dwdb
# kernel (27.6 us; try __launch_bounds__(512, 1): ptxas 64 -> 128 registers, fewer spills).
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== GPU suite"; timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -6
echo "== attention"; timeout 120 python3 probe/att_pipe.py int32 2>&1 | grep -v Warn
echo "== dwdb"; timeout 60 python3 probe/dwdb.py on 2>&1 | grep -v Warn
