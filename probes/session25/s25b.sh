export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1 THREADTILE_CACHE_DIR=/tmp/c4
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
python3 probe/att_ncu.py
SEC="--section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
timeout 200 ncu --clock-control none -k regex:attention_prefill --launch-count 2 $SEC python3 probe/att_ncu.py > $OUT/att_ncu.txt 2>&1
grep -E "Duration|Registers Per|Achieved Occ|Theoretical Occ|Block Limit|Issued Ipc|Warp Cycles Per Issued|No Eligible|Active Warps|Dynamic Shared|Tensor|Stall|SM Busy|Executed Ipc|Issue Slots" $OUT/att_ncu.txt | head -60
