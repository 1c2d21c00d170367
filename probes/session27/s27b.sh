export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src THREADTILE_CACHE_DIR=/tmp/ttc
SEC="--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy"
for s in 3 8; do
python3 probe/mm_ncu.py
S=$s timeout 200 ncu --clock-control none -k regex:matmul_add --launch-count 1 --launch-skip 2 $SEC python3 probe/mm_ncu.py > $OUT/ncu$s.txt 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|Achieved Occ|Issued Ipc|Warp Cycles Per Issued|No Eligible|Active Warps|Stall|Eligible|L1/TEX Hit|Mem Busy|Max Bandwidth" $OUT/ncu$s.txt | head -40
done
