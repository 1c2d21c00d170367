export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_COMMIT=wt
for d in float16 bfloat16; do
echo "== persistent $d elastic"
THREADTILE_CACHE_DIR=/tmp/ttc-c timeout 100 python3 bench/tile_sweep.py --no-cutile --forms persistent --dtypes $d --name tile_sweep_elastic2_$d 2>&1 | grep -v Warn | grep -v "256x\|128x128\|128x256" | tail -30
done
