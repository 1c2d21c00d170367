export PYTHONUNBUFFERED=1 THREADTILE_COMMIT=${THREADTILE_COMMIT:-unknown}
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples THREADTILE_CACHE_DIR=/tmp/ttc-$RANDOM
cd bench
timeout 300 python3 llama.py --parts layer,attention,mlp 2>&1 | grep -v Warn | tail -30
timeout 120 python3 llama_profile.py 2>&1 | grep -v Warn | tail -30
cd ..
mkdir -p $OUT/results && cp bench/results/llama.json bench/results/llama_profile.json $OUT/results/
