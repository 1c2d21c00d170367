export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo x)
python3 probe/s32/prefill.py 2>&1 | grep -v Warn
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
ncu --profile-from-start off --clock-control none --metrics $M python3 probe/s32/dec_ncu2.py 128 4096 4 2>&1 | grep -v "^==\|Warn" | grep -E "attention|cudnn|dram|gpu__|lts" | head -12
echo "== GPU suite"; timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
