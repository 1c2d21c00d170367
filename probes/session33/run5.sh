export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /tmp/nv.log 2>&1; tail -1 /tmp/nv.log
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=x
python3 probe/s33/split_gpu.py 2>&1 | grep -v Warn
cp src/threadtile/runtime/*312*.so probe/old/src/threadtile/runtime/
echo "== two loops at da7b810"; OLD=1 OLD_SRC=$PWD/probe/old/src PYTHONPATH=$PWD/probe/old/src:$PWD/tests:$PWD/tests/compat:$PWD/bench timeout 120 python3 probe/s33/split_gpu.py 2>&1 | grep -v Warn
echo "== GPU suite"; timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests/tile/test_tile_webs.py tests/tile/test_tile_operand_layouts.py tests/tile/test_tile_prefetch.py 2>&1 | grep -v Warn | tail -8
