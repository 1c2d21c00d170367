export THREADTILE_COMMIT=d36e5bc
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-final PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== GPU suite"; timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -4
echo "== llama"; timeout 250 python3 bench/llama.py 2>&1 | tail -14; cp bench/results/llama.json $OUT/
echo "== torch_ops"; (cd bench && timeout 120 python3 torch_ops.py 2>&1 | grep -E "launch  |host function  |graph|out= \(eager\) -|\(eager\) - host"); cp bench/results/torch_ops.json $OUT/
