#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
AB=tma timeout 150 python3 probe/s30/ab.py 2>&1 | grep -v Warn | tail -8
timeout 200 pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile/test_tile_operand_layouts.py tests/tile/test_tile_fragments.py tests/examples/test_llama.py 2>&1 | tail -2
