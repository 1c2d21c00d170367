export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
THREADTILE_CACHE_DIR=/tmp/e1 timeout 60 python3 probe/dwdb.py on 2>&1 | grep -v Warn
THREADTILE_CACHE_DIR=/tmp/e2 timeout 60 python3 probe/dwdb.py off 2>&1 | grep -v Warn
echo "== GPU tile tests"; THREADTILE_CACHE_DIR=/tmp/e3 timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile tests/examples 2>&1 | grep -v Warn | tail -3
