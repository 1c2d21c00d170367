#!/bin/bash
# session 26: the occupancy rule (blockfit.py): GPU suite with the fit log; llama attention and
# cuTile samples with THREADTILE_BLOCKFIT=0 and 1
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
echo "== GPU suite"; TT_FITLOG=$OUT/fits_suite.log timeout 280 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -4
sort $OUT/fits_suite.log | uniq -c | sort -rn | grep "sm_90a" | head -40
for f in 0 1; do
  echo "== llama attention, BLOCKFIT=$f"
  THREADTILE_BLOCKFIT=$f TT_FITLOG=$OUT/fits_llama$f.log timeout 150 python3 bench/llama.py --parts attention,layer 2>&1 | grep -v Warn | grep -i "attention\|layer\|prefill\|decode" | head -12
done
sort -u $OUT/fits_llama1.log
for f in 0 1; do
  echo "== cutile samples, BLOCKFIT=$f"
  THREADTILE_BLOCKFIT=$f TT_FITLOG=$OUT/fits_samples$f.log timeout 150 python3 bench/cutile_samples.py --src probe/cutile 2>&1 | grep -v Warn | tail -30
  cp bench/results/cutile_samples.json $OUT/samples$f.json 2>/dev/null
done
sort -u $OUT/fits_samples1.log
