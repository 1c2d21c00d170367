export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo x)
timeout 330 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -15
