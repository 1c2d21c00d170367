export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
for pf in 0 1 0 1; do
echo "== prefetch $pf"
(cd bench && THREADTILE_PREFETCH=$pf THREADTILE_CACHE_DIR=/tmp/ttc-$RANDOM timeout 100 python3 llama.py --parts attention 2>&1 | grep -v Warn | tail -3)
done
