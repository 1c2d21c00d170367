export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache
python3 probe/s32/dec_var2.py 2>&1 | grep -v Warn
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_ltcfabric.sum
ncu --profile-from-start off --clock-control none --metrics $M python3 probe/s32/dec_ncu2.py 128 4096 4 2>&1 | grep -v "^==\|Warn" | tail -30
ncu --profile-from-start off --clock-control none --metrics $M python3 probe/s32/dec_ncu2.py 128 4096 8 2>&1 | grep -v "^==\|Warn" | head -16
