export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=$1
THREADTILE_CACHE_DIR=/tmp/tt-cache timeout 300 pytest -m gpu -q -p no:cacheprovider -n 14 tests 2>&1 | tail -5
