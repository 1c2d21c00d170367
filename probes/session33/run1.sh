export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=x
echo "== hint as asked (new)"; python3 bench/attention.py --src $PWD/probe/cutile --no-cutile 2>&1 | grep -v Warn | grep -v "^\[" 
cp bench/results/attention.json $OUT/att_new.json
echo "== scaled (old)"; THREADTILE_BLOCKFIT=0 python3 bench/attention.py --src $PWD/probe/cutile --no-cutile 2>&1 | grep -v Warn | grep -v "^\["
cp bench/results/attention.json $OUT/att_old.json
