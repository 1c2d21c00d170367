#!/bin/bash
# Session 29's first device call (written at the end of session 28). Carry .whl (rebuild it if
# the checkout is new: nvrtc135.txz from the nvidia-cuda-nvrtc 13.5 wheel's nvidia/ tree, and the
# nvidia-cuda-cccl wheel; the image has pytest-xdist). Set THREADTILE_COMMIT explicitly.
# Not yet on a GPU: aa23837's test_split_down_projection_on_the_gpu (tests/examples), 447c91b
# (blockfit remembers its reports: CPU reporting only), 9e9997b (a rename in kloop.h).
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
