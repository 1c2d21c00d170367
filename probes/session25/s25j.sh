export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-j PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
timeout 190 python3 -m pytest -m gpu -q -p no:cacheprovider -n 15 -rfEX tests --ignore=tests/tile --ignore=tests/examples 2>&1 | grep -v Warn | tail -4
