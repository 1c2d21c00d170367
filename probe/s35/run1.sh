export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x
THREADTILE_CACHE_DIR=/tmp/ct timeout 150 pytest -m gpu -q -p no:cacheprovider -x tests/tile/test_store_fragments.py 2>&1 | tail -3
for v in "0 0 base" "1 0 refill" "0 1 ovl" "1 1 both"; do set -- $v
  TT_EXP_REFILL=$1 THREADTILE_OVERLAP=$2 THREADTILE_CACHE_DIR=/tmp/c$1$2 timeout 200 python3 probe/s35/att_modes.py $3 2>&1 | grep -v Warn
done
