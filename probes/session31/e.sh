#!/bin/bash
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM THREADTILE_COMMIT=$(cat probe/s31/COMMIT)
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)"
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
timeout 500 python3 bench/cutile_samples.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | tail -16
cp bench/results/cutile_samples.json $OUT/
