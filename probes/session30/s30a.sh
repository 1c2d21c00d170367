#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests
for m in tma portable tma; do AB=$m THREADTILE_CACHE_DIR=/tmp/ttc-$m timeout 200 python3 probe/s30/ab.py 2>&1 | grep -v Warn | tail -8; done
THREADTILE_CACHE_DIR=/tmp/ttc-tma timeout 250 pytest -m gpu -q -p no:cacheprovider -n 14 -x tests/examples/test_llama.py tests/tile/test_tile_operand_layouts.py tests/tile/test_tile_gather_operand.py tests/tile/test_tile_fragments.py tests/tile/test_cutile_compat.py tests/tile/test_tile_small_m.py tests/gpu 2>&1 | tail -15
