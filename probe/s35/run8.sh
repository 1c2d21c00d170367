export PYTHONUNBUFFERED=1
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1 || tail -5 /tmp/inst.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=x THREADTILE_CACHE_DIR=/tmp/c8
timeout 200 python3 probe/s35/kfit.py 2>&1 | grep -v Warn
