export PYTHONUNBUFFERED=1
python3 -c "from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version())" 2>/dev/null || PYTHONPATH=src python3 -c "from threadtile.runtime import nvrtc; print('nvrtc', nvrtc.nvrtc_version())"
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1
python3 -c "import cuda.tile; print('cuda.tile', cuda.tile.__version__)"
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/tests/compat:$PWD/bench THREADTILE_CACHE_DIR=/tmp/tt-cache THREADTILE_COMMIT=da7b810
echo "== samples"; python3 bench/cutile_samples.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | tail -25
cp bench/results/cutile_samples.json $OUT/
echo "== attention"; python3 bench/attention.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | grep -v "^\[" | tail -30
cp bench/results/attention.json $OUT/
