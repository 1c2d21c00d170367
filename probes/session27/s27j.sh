export PYTHONUNBUFFERED=1 THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
cd bench && THREADTILE_CACHE_DIR=/tmp/ttc-$RANDOM timeout 200 python3 llama.py --parts generate 2>&1 | grep -v Warn | tail -4
mkdir -p $OUT/results && cp results/llama.json $OUT/results/
