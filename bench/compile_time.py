"""Compile time of the lecture's tiled matmul: cold (empty cache) and warm (a fresh process
that hits the cache), for threadtile, numba-cuda (cache=True) and Triton, in one run.

Each measurement is a fresh Python process (bench/_compile_child.py) that imports everything
and initialises the CUDA driver first (each library's own way), then times the first launch
of the kernel up to its completion: specialization,
code generation, compilation or cache load, module load and the launch itself.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import write

HERE = Path(__file__).resolve().parent
REPS = 3


def child(lib: str, cache: str) -> float:
    env = dict(os.environ, THREADTILE_CACHE_DIR=cache, TRITON_CACHE_DIR=cache,
               NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, str(HERE / "_compile_child.py"), lib, cache],
                         capture_output=True, text=True, env=env, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{lib}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    results: dict = {}
    for lib in ("threadtile", "numba", "triton"):
        cold, warm = [], []
        for _ in range(REPS):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(child(lib, cache))
                warm.append(child(lib, cache))
        results[lib] = {"cold_s": statistics.median(cold), "warm_s": statistics.median(warm),
                        "cold_all": cold, "warm_all": warm}
        print(f"{lib:10s} cold {results[lib]['cold_s'] * 1e3:8.1f} ms   "
              f"warm {results[lib]['warm_s'] * 1e3:8.1f} ms", flush=True)
    t = results["threadtile"]
    ratios = {f"threadtile / {lib} ({kind})": t[kind] / results[lib][kind]
              for lib in ("numba", "triton") for kind in ("cold_s", "warm_s")}
    write("compile_time", {"seconds": results, "ratios": ratios},
          notes="median of 3 fresh processes each; time of the first launch until done, "
                "imports and driver initialisation excluded; numba with cache=True, Triton with "
                "its own cache dir")


if __name__ == "__main__":
    main()
