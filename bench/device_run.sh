#!/usr/bin/env bash
# One call on the GPU machine: the GPU tests, then the benchmarks; logs and JSON under $OUT.
#   bash bench/device_run.sh [tests|bench|all] [bench names...]
set -u
what=${1:-all}; shift || true
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 THREADTILE_CACHE_DIR=/tmp/tt-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider -x --timeout=300 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  names=${*:-"matmul_lecture launch_overhead compile_time"}
  for b in $names; do
    (cd bench && python3 "$b.py") 2>&1 | tee "$OUT/bench_$b.log"
  done
fi
