export PYTHONUNBUFFERED=1
eval "$(bash .cutile-dev/cutile-on-device.sh install .cutile-dev)" > /tmp/inst.log 2>&1 || tail -5 /tmp/inst.log
export PYTHONPATH=$PWD/src:$PWD/examples:$PWD/tests:$PWD/bench:$PWD/tests/compat THREADTILE_COMMIT=$1 THREADTILE_CACHE_DIR=/tmp/c3
timeout 290 python3 bench/attention.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | tail -30
timeout 250 python3 bench/cutile_samples.py --src $PWD/probe/cutile 2>&1 | grep -v Warn | tail -30
