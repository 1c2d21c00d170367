export PYTHONUNBUFFERED=1
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-a THREADTILE_COMMIT=38ea039
for f in plain persistent batched; do
echo "== $f"; timeout 190 python3 bench/tile_sweep.py --dtypes float16 --forms $f --name sweep16_$f 2>&1 | grep -v Warn | tail -30
done
