export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_CACHE_DIR=/tmp/c5 timeout 100 pytest -m gpu -q -p no:cacheprovider tests/tile/test_tile_launch_order.py 2>&1 | tail -2
for v in "256 grouped" "128 all" "100000 off"; do set -- $v
  TT_EXP_HEAVY=$1 THREADTILE_CACHE_DIR=/tmp/c$1 timeout 150 python3 probe/s35/att_causal.py $2 2>&1 | grep -v Warn
done
