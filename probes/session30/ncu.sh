#!/bin/bash
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples THREADTILE_CACHE_DIR=/tmp/tt-cache
python3 probe/s30/att1.py
timeout 300 ncu --clock-control none -k regex:attention_prefill -s 1 -c 1 --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy -o $OUT/att python3 probe/s30/att1.py 2>&1 | tail -3
ncu -i $OUT/att.ncu-rep --print-details all 2>&1 | head -150 > $OUT/details.txt
ncu -i $OUT/att.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv 2>&1
ls -la $OUT; head -60 $OUT/details.txt
