export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | tail -1
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
THREADTILE_CACHE_DIR=/tmp/c5 timeout 250 python3 probe/att_pipe.py off 2>&1 | grep -v Warn | grep -v decode
THREADTILE_CACHE_DIR=/tmp/c6 timeout 250 python3 probe/att_pipe.py on 2>&1 | grep -v Warn | grep -v decode
