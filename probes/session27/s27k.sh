export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
cp src/threadtile/runtime/*.so probe/src_old/threadtile/runtime/
for tree in probe/src_old src; do
TREE=$PWD/$tree THREADTILE_CACHE_DIR=/tmp/ttc-$RANDOM timeout 60 python3 probe/dec_att_ab.py 2>&1 | grep -v Warn | tail -2
done
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests THREADTILE_CACHE_DIR=/tmp/tt-cache-$RANDOM
echo "== GPU suite"; timeout 160 python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 -rfEX tests 2>&1 | grep -v Warn | tail -8
