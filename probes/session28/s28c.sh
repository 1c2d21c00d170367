#!/bin/bash
# k-split of few-block staged loops: correctness (GPU tests of the staged loop), A/B of decode projections and the layer
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
for d in probe/old probe/nok; do cp src/threadtile/runtime/*.so $d/src/threadtile/runtime/ 2>/dev/null; done
for round in 1 2; do
for tree in . probe/nok probe/old; do
  echo "== $tree"
  (cd $tree && THREADTILE_CACHE_DIR=/tmp/ttc-$(basename $tree) timeout 100 python3 $OLDPWD/probe/kspl.py 2>&1 | grep -v Warn)
done; done
for tree in . probe/nok probe/old; do
  echo "== layer $tree"
  (cd $tree/bench && THREADTILE_CACHE_DIR=/tmp/ttc-$(basename $tree) timeout 150 python3 llama.py --parts layer 2>&1 | grep -v Warn | tail -6)
done
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
