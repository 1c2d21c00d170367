export PYTHONUNBUFFERED=1
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1
python3 -c "import cuda.tile; print('cuda.tile', cuda.tile.__version__)"
python3 -c "from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version())" 2>/dev/null || PYTHONPATH=src python3 -c "from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version())"
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/ttc-a THREADTILE_COMMIT=38ea039
echo "== fixed cost beside cuTile"; timeout 150 python3 bench/fixed_cost.py 2>&1 | grep -v Warn
echo "== samples"; timeout 200 python3 bench/cutile_samples.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | tail -25
echo "== attention"; timeout 220 python3 bench/attention.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | grep -v "^\[" | tail -30
