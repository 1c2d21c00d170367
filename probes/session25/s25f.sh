export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
THREADTILE_CACHE_DIR=/tmp/c9 timeout 200 python3 probe/att_pipe.py desc 2>&1 | grep -v Warn
echo "== GPU tile tests"; THREADTILE_CACHE_DIR=/tmp/c10 timeout 250 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests/tile tests/examples 2>&1 | grep -v Warn | tail -3
