export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
PYTHONPATH=$PWD/src THREADTILE_CACHE_DIR=/tmp/ttc ST=3,5,8 timeout 500 python3 probe/dec_mm.py 2>&1 | grep -v Warn
