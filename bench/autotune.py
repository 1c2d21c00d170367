"""What autotuning costs and what it buys: the tile matmul of examples/tile_kernels.py
autotuned (``@threadtile.autotune``) over 12 configurations of tile shape and warps, float16
at 4096³.

Three fresh processes share one cache folder (each run of ``python autotune.py --child``):

1. **cold**: nothing cached: every configuration compiles (NVRTC) and is timed;
2. **retune**: ``THREADTILE_AUTOTUNE=force``: the cubins are cached, the configurations are
   timed again (the cost of the timing alone);
3. **cached**: the choice is read from disk: nothing compiles, nothing is timed.

Each reports the seconds its first launch took (tuning included) and the choice. Then, in this
process, every configuration is timed with ``_common.cuda_time_ms`` (CUDA events, medians of
30) beside the choice: the choice's TFLOP/s against the fastest, the slowest and the fixed
shape tile_bench.py uses (128x256x64 on 8 warps). Needs a GPU and torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import cuda_time_ms, write

HERE = Path(__file__).resolve().parent
M = N = K = 4096
CONFIGS = [(tm, tn, tk, w) for tm, tn, tk, w in (
    (64, 64, 32, 4), (64, 128, 32, 4), (128, 64, 32, 4), (128, 128, 32, 4),
    (128, 128, 64, 4), (128, 128, 64, 8), (128, 256, 32, 8), (128, 256, 64, 8),
    (256, 128, 64, 8), (64, 256, 64, 4), (64, 64, 64, 4), (256, 256, 32, 8))]
FIXED = (128, 256, 64, 8)  # tile_bench.py's shape


def _tuned():
    from tile_kernels import matmul

    import threadtile as tt

    configs = [tt.Config(tm=m, tn=n, tk=k, num_warps=w) for m, n, k, w in CONFIGS]
    return tt.autotune(configs=configs, key=["A", "B"])(matmul)


def _grid(meta):
    return (-(-meta["A"].shape[0] // meta["tm"]), -(-meta["B"].shape[1] // meta["tn"]))


def _operands():
    import torch

    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g)
    return a, b, torch.empty(M, N, device="cuda", dtype=torch.float16)


def child() -> None:
    """One process: the first launch of the autotuned matmul, timed to its completion."""
    import time

    import torch

    import threadtile  # noqa: F401  (imported before the clock starts)

    a, b, c = _operands()
    tuned = _tuned()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tuned[_grid](a, b, c)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    ref = (a.float() @ b.float()).half()
    err = (c.float() - ref.float()).abs().max().item()
    ch = tuned.last_choice
    r = ch.result
    print(json.dumps({
        "first_launch_s": seconds, "origin": ch.origin, "choice": list(ch.config.kwargs.values())
        + [ch.config.num_warps], "max_abs_err": err,
        "measured": None if r is None else [
            [list(m.config.kwargs.values()) + [m.config.num_warps], m.mean_us, m.num_samples]
            for m in r.successes],
        "failed": None if r is None else [str(cfg) for cfg, _, _ in r.failures]}))


def run_child(cache: str, force: bool) -> dict:
    env = dict(os.environ, THREADTILE_CACHE_DIR=cache)
    env.pop("THREADTILE_AUTOTUNE", None)
    if force:
        env["THREADTILE_AUTOTUNE"] = "force"
    out = subprocess.run([sys.executable, __file__, "--child"], capture_output=True,
                         text=True, env=env, timeout=1200)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import threadtile as tt

    runs = {}
    with tempfile.TemporaryDirectory() as cache:
        for name, force in (("cold", False), ("retune", True), ("cached", False)):
            runs[name] = r = run_child(cache, force)
            print(f"{name:7s} first launch {r['first_launch_s']:7.2f} s  ({r['origin']}, "
                  f"choice {r['choice']}, max |err| {r['max_abs_err']:.3g})", flush=True)
    a, b, c = _operands()
    flop = 2.0 * M * N * K
    tflops = {}
    from tile_kernels import matmul

    for tm, tn, tk, w in CONFIGS:
        k = matmul.replace_hints(num_warps=w)
        grid = (-(-M // tm), -(-N // tn))
        try:
            ms = cuda_time_ms(lambda k=k, grid=grid, tm=tm, tn=tn, tk=tk:
                              k[grid](a, b, c, tm, tn, tk))
        except Exception as e:  # noqa: BLE001  (a shape the device refuses: recorded)
            print(f"  {(tm, tn, tk, w)}: {type(e).__name__}: {e}")
            continue
        tflops[str((tm, tn, tk, w))] = flop / (ms * 1e-3) / 1e12
        print(f"  {(tm, tn, tk, w)}: {tflops[str((tm, tn, tk, w))]:7.1f} TFLOP/s", flush=True)
    chosen = str(tuple(runs["cold"]["choice"]))
    best = max(tflops.values())
    results = {
        "shape": [M, N, K], "dtype": "float16", "configs": len(CONFIGS),
        "runs": runs, "tflops": tflops, "chosen": chosen,
        "chosen_tflops": tflops.get(chosen), "best_tflops": best,
        "worst_tflops": min(tflops.values()), "fixed": str(FIXED),
        "fixed_tflops": tflops.get(str(FIXED)),
        "chosen_vs_best": (tflops.get(chosen) or 0.0) / best,
        "tuning_cost_s": {"cold": runs["cold"]["first_launch_s"],
                          "timing_only": runs["retune"]["first_launch_s"],
                          "cached": runs["cached"]["first_launch_s"]},
        "device": tt.get_current_device().name,
    }
    print(f"chosen {chosen}: {results['chosen_tflops']} TFLOP/s, best {best:.1f}, "
          f"fixed {FIXED}: {results['fixed_tflops']}")
    write("autotune", results,
          notes="first launch of the autotuned matmul in three fresh processes sharing a "
                "cache: cold (compile + time), THREADTILE_AUTOTUNE=force (time only), cached "
                "(read the choice); then every configuration timed with CUDA events (median "
                "of 30, a spin kernel ahead of each)")


if __name__ == "__main__":
    if "--child" in sys.argv:  # (_common put src/ and examples/ on sys.path)
        child()
    else:
        main()
