export PYTHONUNBUFFERED=1
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1
python3 -c "import cuda.tile; print('cuda.tile', cuda.tile.__version__)"
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-h THREADTILE_COMMIT=c7cc106
python3 -c "from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version())"
for d in float16 bfloat16; do
echo "== persistent $d beside cuTile"
timeout 120 python3 bench/tile_sweep.py --forms persistent --dtypes $d --name tile_sweep_elastic_$d 2>&1 | grep -v Warn | tail -1
done
echo "== samples: MatMul"; timeout 100 python3 bench/cutile_samples.py --src $PWD/probe/cutile --only MatMul 2>&1 | grep -v Warn | tail -4
