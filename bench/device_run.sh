#!/usr/bin/env bash
# One call on the GPU machine: the GPU tests, then the benchmarks; logs and JSON under $OUT.
#   bash bench/device_run.sh [tests|bench|compat|all] [bench names...]
# compat: numba-cuda's test suite with the import swapped, on the GPU, each launch compared with
# numba-cuda's own on the GPU (tests/compat/numba_suite.py --gpu)
set -u
what=${1:-all}; shift || true
export THREADTILE_COMMIT=${THREADTILE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}
export PYTHONPATH=$PWD/src:/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 THREADTILE_CACHE_DIR=/tmp/tt-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider -x --timeout=300 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40
fi
if [ "$what" = compat ] || [ "$what" = all ]; then
  # in chunks of files, each with its own JSON (a chunk that runs out of time loses only
  # itself); COMPAT_FROM/COMPAT_TO pick chunks, COMPAT_DEADLINE stops starting new ones
  python3 -c 'import sys; sys.path.insert(0, "tests/compat"); import numba_suite as m
print("\n".join(m.files(m.suite_dir())))' > /tmp/compat_files.txt
  split -d -l ${COMPAT_CHUNK:-10} /tmp/compat_files.txt /tmp/compat_chunk_
  start=$SECONDS
  for c in /tmp/compat_chunk_*; do
    n=${c##*_}
    [ "$n" -lt "${COMPAT_FROM:-0}" ] || [ "$n" -gt "${COMPAT_TO:-99}" ] && continue
    [ $((SECONDS - start)) -gt "${COMPAT_DEADLINE:-420}" ] && { echo "deadline: stop before $n"; break; }
    timeout 240 python3 tests/compat/numba_suite.py --gpu --json "$OUT/compat_gpu_$n.json" \
      $(cat "$c") 2>&1 | tail -1 | sed "s/^/chunk $n: /"
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  names=${*:-"matmul_lecture launch_overhead compile_time"}
  for b in $names; do
    (cd bench && python3 "$b.py") 2>&1 | tee "$OUT/bench_$b.log"
  done
fi
