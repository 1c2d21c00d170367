#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
I=threadtile/backends/cuda/include/tile
rm -rf /tmp/v1 /tmp/v2; cp -r src /tmp/v1; cp -r src /tmp/v2
cp probe/s31/var/layout_notid.h /tmp/v1/$I/layout.h
cp probe/s31/var/layout_old.h /tmp/v2/$I/layout.h; cp probe/s31/var/shapes_old.h /tmp/v2/$I/shapes.h; cp probe/s31/var/reduce_old.h /tmp/v2/$I/reduce.h
for rep in 1 2; do
for v in head notid old; do
  case $v in head) P=$PWD/src;; notid) P=/tmp/v1;; old) P=/tmp/v2;; esac
  for k in persistent transpose; do
    PYTHONPATH=$P:$PWD/tests THREADTILE_CACHE_DIR=/tmp/c-$v KERNEL=$k timeout 60 python3 probe/s31/samples_probe.py 2>&1 | grep -v Warn | sed "s/^/$v /"
  done
done
done
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=$(cat probe/s31/COMMIT)
cd bench && timeout 300 python3 llama.py --parts attention 2>&1 | grep -v Warn | tail -6
