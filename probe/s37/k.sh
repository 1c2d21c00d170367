export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh > /dev/null 2>&1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=$1
timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/tile/test_two_blocks.py 2>&1 | tail -1
for v in 1 0 1 0; do
echo "== prefetch $v"
THREADTILE_MAP_PREFETCH=$v THREADTILE_CACHE_DIR=/tmp/ttc-p$v timeout 60 python3 bench/fixed_cost.py --no-cutile --tiles 128x128x64,64x256x64 --ks 1024,2048,4096 --name fixed_cost_pf$v 2>&1 | grep -v Warn | tail -4
done
