export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /tmp/nv.log 2>&1; tail -1 /tmp/nv.log
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=x
echo "== GPU suite"; timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -6
