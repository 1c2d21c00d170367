#!/bin/bash
# session 26, last call: GPU suite at HEAD, the A/B of the store change (src vs probe/src_old), llama (all parts)
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONUNBUFFERED=1
bash probe/ab.sh 2>&1 | tail -14
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 220 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -4
echo "== llama"; timeout 150 python3 bench/llama.py 2>&1 | grep -v Warn | tail -8
cp bench/results/llama.json $OUT/ 2>/dev/null
