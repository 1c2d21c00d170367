#!/bin/bash
# Session 29's first device call, on nvidia-h200-x2: the GPU suite at the head, then the 2-GPU
# benchmarks (llama_tp, allgather_matmul) rerun at the head.
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
echo "== GPU suite"; start=$SECONDS
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 24 -rfEX tests 2>&1 | grep -v Warn | tail -8
echo "suite $((SECONDS-start)) s"
echo "== llama_tp"; start=$SECONDS
(cd bench && timeout 170 python3 llama_tp.py) 2>&1 | tail -15
echo "llama_tp $((SECONDS-start)) s"
echo "== allgather"; start=$SECONDS
(cd bench && timeout 100 python3 allgather_matmul.py --sample ../probe/cutile/samples/AllGatherMatmul.py) 2>&1 | tail -12
echo "allgather $((SECONDS-start)) s"
cp bench/results/llama_tp.json bench/results/allgather_matmul.json $OUT/ 2>/dev/null
