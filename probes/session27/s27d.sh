export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
PYTHONPATH=$PWD/src THREADTILE_CACHE_DIR=/tmp/ttc-$RANDOM SH=down,o ST=3,5,8 TN=32,64 W=4,8 timeout 400 python3 probe/dec_mm.py 2>&1 | grep -v Warn
