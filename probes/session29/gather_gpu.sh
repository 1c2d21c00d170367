#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
echo "== gather tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 -rfEX tests/tile/test_gather_scatter.py tests/tile/test_tile_gather_operand.py 2>&1 | grep -v Warn | tail -5
echo "== samples"
for s in VectorAddition MoE; do timeout 120 python3 bench/cutile_samples.py --src probe/cutile --only $s 2>&1 | tail -2; done
