#!/bin/bash
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
timeout 120 pytest -m gpu -q -p no:cacheprovider -n 8 tests/tile/test_tile_partials.py 2>&1 | tail -2
PARTIALS=0 timeout 100 python3 probe/s31/samples_probe.py 2>&1 | grep -v Warn | sed 's/^/off /'
timeout 100 python3 probe/s31/samples_probe.py 2>&1 | grep -v Warn
for k in transpose persistent fft dwdb; do
  KERNEL=$k NCU=1 timeout 120 ncu --clock-control none -k regex:'transpose|persistent|fft|dwdb' -c 1 --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy -o $OUT/$k python3 probe/s31/samples_probe.py > /dev/null 2>&1
  ncu -i $OUT/$k.ncu-rep --print-details all > $OUT/$k.txt 2>&1
  ncu -i $OUT/$k.ncu-rep --page source --csv --print-source sass > $OUT/$k.sass.csv 2>&1
  grep -E "Duration|Registers Per|Warp Cycles Per Issued|Issued Ipc|Achieved Occ" $OUT/$k.txt | head -6 | sed "s/^/$k /"
done
ls $OUT
