"""threadtile's simulator against numba's CUDA simulator, on the CPU, in one process.

    python bench/sim_vs_numba.py          # writes bench/results/sim_vs_numba.json

The same kernel source runs on both: bench/kernels.py, written once against numba.cuda's
names, is loaded for ``threadtile`` and for ``numba.cuda`` (``NUMBA_ENABLE_CUDASIM=1``, set
before numba is imported; numba-cuda is only a benchmark dependency, never a test one). Cases:

- the lecture's tiled matmul (dynamic shared memory, ``sh[:tw * tw]`` slices), 64x64x64, TW=16;
- a 100,000-element vector add with 256-thread blocks;
- a shared-memory tree reduction of 65,536 float32 values, 256-thread blocks.

threadtile runs with every check on (races, bounds, barriers, uninitialized shared memory).
Its time is reported for the kernel's first launch (which includes lowering the kernel and
translating it to NumPy code; the process's one-time imports are paid by a warm-up kernel
before) and for later launches (the translation is cached); the headline ratio uses the first
launch, the pessimistic one. numba's simulator runs every launch the same way (one OS thread
per CUDA thread); it is timed once per case, and where a case would take more than
``NUMBA_BUDGET_S`` seconds its grid is cut to the blocks that fit and the time scaled up by
the block count (recorded in the JSON as ``numba_blocks_run``).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # must precede the first import of numba

import numpy as np  # noqa: E402

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 needs it; NumPy 2.5 removed it
    np.row_stack = np.vstack

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

NUMBA_BUDGET_S = float(os.environ.get("NUMBA_BUDGET_S", "60"))
TW = 16
RED_THREADS = 256


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def cases(rng):
    """(name, kernel key, grid, block, shared bytes, args factory, check) per case."""
    m = rng.standard_normal((64, 64)).astype(np.float32)
    n = rng.standard_normal((64, 64)).astype(np.float32)
    a = rng.standard_normal(100_000).astype(np.float32)
    b = rng.standard_normal(100_000).astype(np.float32)
    r = rng.standard_normal(65_536).astype(np.float32)
    ref_mm = m.astype(np.float64) @ n
    return [
        ("tiled_matmul_64_tw16", "matmul_dynamic", (4, 4), (TW, TW), 2 * TW * TW * 4,
         lambda: (m, n, np.zeros((64, 64), np.float32), TW),
         lambda args: float(np.abs(args[2] - ref_mm).max())),
        ("vector_add_100k", "vector_add", (cdiv(a.size, 256),), (256,), 0,
         lambda: (a, b, np.zeros_like(a)),
         lambda args: float(np.abs(args[2] - (a + b)).max())),
        ("shared_reduction_64k", "block_reduce", (r.size // RED_THREADS,), (RED_THREADS,), 0,
         lambda: (r, np.zeros(r.size // RED_THREADS, np.float32)),
         lambda args: float(abs(args[1].astype(np.float64).sum() - r.astype(np.float64).sum()))),
    ]


def time_threadtile(kernel, grid, block, shared, make_args, reps: int = 5):
    from threadtile.backends.sim import simulate

    config = (grid, block) if not shared else (grid, block, 0, shared)
    times = []
    args = None
    with simulate():  # every check on
        for _ in range(1 + reps):
            args = make_args()
            t0 = time.perf_counter()
            kernel[config](*args)
            times.append(time.perf_counter() - t0)
    return times[0], statistics.median(times[1:]), args


def time_numba(kernel, grid, block, shared, make_args):
    """numba's simulator on as many whole blocks as fit the budget (estimated from one)."""
    nblocks = int(np.prod(grid))
    probe = (1,) * len(grid)
    cfg = (probe, block) if not shared else (probe, block, 0, shared)
    kernel[cfg](*make_args())  # warm-up: numba's first launch sets up its simulator
    args = make_args()
    t0 = time.perf_counter()
    kernel[cfg](*args)
    per_block = time.perf_counter() - t0
    run = nblocks if per_block * nblocks <= NUMBA_BUDGET_S else max(1, int(
        NUMBA_BUDGET_S // per_block))
    if run == nblocks:
        args = make_args()
        cfg = (grid, block) if not shared else (grid, block, 0, shared)
        t0 = time.perf_counter()
        kernel[cfg](*args)
        return time.perf_counter() - t0, nblocks, args
    # a cut grid: the first `run` blocks along x (the kernels index from blockIdx, so the
    # work per block is the same as in the full launch)
    cut = (run,) + tuple(1 for _ in grid[1:])
    cfg = (cut, block) if not shared else (cut, block, 0, shared)
    args = make_args()
    t0 = time.perf_counter()
    kernel[cfg](*args)
    return (time.perf_counter() - t0) * nblocks / run, run, None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main() -> None:
    ours = _common.load_kernels("threadtile")
    theirs = _common.load_kernels("numba")
    from threadtile.backends.sim import simulate

    with simulate():
        ours.warm_up[1, 32](np.zeros(32, np.float32))
    theirs.warm_up[1, 32](np.zeros(32, np.float32))
    rng = np.random.default_rng(0)
    results = {}
    for name, key, grid, block, shared, make_args, check in cases(rng):
        first, warm, args = time_threadtile(getattr(ours, key), grid, block, shared, make_args)
        err_ours = check(args)
        nb_time, nb_blocks, nb_args = time_numba(getattr(theirs, key), grid, block, shared,
                                                 make_args)
        total_blocks = int(np.prod(grid))
        results[name] = {
            "grid": list(grid), "block": list(block), "shared_bytes": shared,
            "threadtile_first_launch_s": round(first, 4),
            "threadtile_warm_launch_s": round(warm, 4),
            "numba_sim_s": round(nb_time, 3),
            "numba_blocks_run": nb_blocks, "blocks": total_blocks,
            "numba_time_extrapolated": nb_blocks < total_blocks,
            "speedup_vs_first_launch": round(nb_time / first, 1),
            "speedup_vs_warm_launch": round(nb_time / warm, 1),
            "threadtile_max_abs_error": err_ours,
            "numba_max_abs_error": check(nb_args) if nb_args is not None else None,
        }
        print(f"{name:24s} threadtile first {first * 1e3:8.1f} ms  warm {warm * 1e3:8.1f} ms  "
              f"numba-sim {nb_time:7.2f} s{' (extrapolated)' if nb_blocks < total_blocks else ''}"
              f"  speedup x{nb_time / first:.0f} (warm x{nb_time / warm:.0f})", flush=True)
    results["_environment"] = {
        "cpu_model": cpu_model(), "checks": "all (race, bounds, barrier, uninit)",
        "numba_cuda": importlib.metadata.version("numba-cuda"),
        "numba": importlib.metadata.version("numba"),
        "numba_budget_s": NUMBA_BUDGET_S,
    }
    path = _common.write("sim_vs_numba", results, notes=(
        "CPU only. threadtile: lockstep simulator with every check on; 'first launch' includes "
        "lowering and translating the kernel, ratios use it. numba: NUMBA_ENABLE_CUDASIM=1, "
        "same kernel source. A case whose numba run would exceed numba_budget_s runs a cut "
        "grid and scales the time by the block count (numba_time_extrapolated)."))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
