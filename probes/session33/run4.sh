export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
cp src/threadtile/runtime/*312*.so probe/old/src/threadtile/runtime/; ls probe/old/src/threadtile/runtime/*.so
export THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=da7b810
echo "== llama old"; PYTHONPATH=$PWD/probe/old/src:$PWD/probe/old/examples:$PWD/bench python3 bench/llama.py --parts layer,attention,mlp 2>&1 | grep -v Warn | tail -12
cp bench/results/llama.json $OUT/llama_old.json
echo "== llama new"; PYTHONPATH=$PWD/src:$PWD/examples:$PWD/bench python3 bench/llama.py --parts layer,attention,mlp 2>&1 | grep -v Warn | tail -12
cp bench/results/llama.json $OUT/llama_new.json
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench
echo "== attention"; python3 bench/attention.py --src $PWD/probe/cutile --no-cutile 2>&1 | grep -v Warn | grep "TFLOP"
cp bench/results/attention.json $OUT/att_new.json
echo "== GPU suite"; timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
