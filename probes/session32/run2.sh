export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
which ncu || ls /usr/local/cuda*/bin/ncu
ncu --profile-from-start off --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats python3 probe/s32/dec_ncu.py 128 4096 > $OUT/ncu.txt 2>&1
grep -E "==PROF==|Duration|DRAM Through|Memory Through|Achieved Occ|Theoretical Occ|Registers Per|Shared Memory Config|Dynamic Shared|Grid Size|Block Size|Stall|Warp Cycles|Issued Warp|No Eligible|attention|flash|fmha|kernel|Mem Busy|Max Bandwidth|L2 Hit|Waves" $OUT/ncu.txt | head -80
