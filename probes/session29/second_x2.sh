#!/bin/bash
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
echo "== GPU suite"; start=$SECONDS
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 24 -rfEX tests 2>&1 | grep -v Warn | tail -8
echo "suite $((SECONDS-start)) s"
echo "== llama_tp"; start=$SECONDS
(cd bench && timeout 200 python3 llama_tp.py) 2>&1 | tail -15
echo "llama_tp $((SECONDS-start)) s"
cp bench/results/llama_tp.json $OUT/ 2>/dev/null
echo "== f8 timing"
CUDA_VISIBLE_DEVICES=1 timeout 100 python3 probe/f8_time.py 2>&1 | tail -10
