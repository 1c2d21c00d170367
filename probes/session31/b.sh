#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests
THREADTILE_CACHE_DIR=/tmp/tt-off PARTIALS=0 timeout 100 python3 probe/s31/samples_probe.py 2>&1 | grep -v Warn | sed 's/^/off /'
THREADTILE_CACHE_DIR=/tmp/tt-on timeout 100 python3 probe/s31/samples_probe.py 2>&1 | grep -v Warn
export THREADTILE_CACHE_DIR=/tmp/tt-cache
timeout 300 pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile tests/compat tests/examples 2>&1 | tail -4
