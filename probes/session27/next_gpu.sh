#!/bin/bash
# Session 27's first device call (written at the end of session 26). Carry .whl; set
# THREADTILE_COMMIT explicitly. Not yet on a GPU: ded8ccc (store_fragments' out-of-line edge
# path by value) and its two GPU tests (a persistent loop without a producer, interior and
# edge tiles; a batched K=32 loop with an odd count). probe/src_old is src with 9e4f8f0's
# tile/mma.h (the edge path by reference): ab.sh times persistent 128x256x64 and the rest
# against it.
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONUNBUFFERED=1
bash probe/ab.sh 2>&1 | tail -14
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 250 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -5
