#!/bin/bash
# A/B of ir/prefetch.py (refill after last mma): llama attention parts + FMHA sample, then the GPU suite
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
for pf in 0 1 0 1; do
echo "== prefetch $pf"
(cd bench && THREADTILE_PREFETCH=$pf THREADTILE_CACHE_DIR=/tmp/ttc-$pf timeout 100 python3 llama.py --parts attention 2>&1 | grep -v Warn | grep -i "attention\|GB/s\|TFLOP" | tail -4)
done
for pf in 0 1; do
echo "== FMHA sample prefetch $pf"
(cd bench && THREADTILE_PREFETCH=$pf THREADTILE_CACHE_DIR=/tmp/ttc-$pf timeout 150 python3 attention.py --no-cutile --src ../probe/cutile 2>&1 | grep -v Warn | tail -14)
done
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
