"""The lecture's matmul, 5120x256 @ 256x5120 fp32: threadtile vs numba-cuda vs torch (cuBLAS).

Same kernel source on both sides (bench/kernels.py). Writes
bench/results/matmul_lecture.json. Needs a GPU, torch and numba-cuda.
"""

from __future__ import annotations

import math

import numpy as np
from _common import cuda_time_ms, load_kernels, write

H, K, W = 5120, 256, 5120


def main() -> None:
    import torch

    np.row_stack = getattr(np, "row_stack", np.vstack)  # numba-cuda 0.30 needs it on NumPy 2.5
    tt, nb = load_kernels("threadtile"), load_kernels("numba")
    TW = tt.TW
    # naive, static, dynamic, dynamic_const (threadtile only), in that order
    ours, theirs = dict(tt.MATMULS), dict(nb.MATMULS)
    g = torch.Generator(device="cuda").manual_seed(0)
    m = torch.randn(H, K, device="cuda", generator=g)
    n = torch.randn(K, W, device="cuda", generator=g)
    ref = (m.double() @ n.double())
    out = torch.empty(H, W, device="cuda")
    grid, block = (math.ceil(W / TW), math.ceil(H / TW)), (TW, TW)
    smem = 2 * TW * TW * 4

    def launcher(lib, name, k):
        if name == "naive" or name == "static":
            return lambda: k[grid, block](m, n, out)
        if name == "dynamic":
            return lambda: k[grid, block, 0, smem](m, n, out, TW)
        return lambda: k[grid, block, 0, smem](m, n, out, TW)

    results: dict = {}
    for lib, kernels in (("threadtile", ours), ("numba", theirs)):
        for name, k in kernels.items():
            run = launcher(lib, name, k)
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            err = ((out.double() - ref).norm() / ref.norm()).item()
            ms = cuda_time_ms(run)
            results[f"{lib}.{name}"] = {"ms": ms, "rel_err": err,
                                        "gflops": 2 * H * K * W / ms / 1e6}
            print(f"{lib:10s} {name:14s} {ms:8.3f} ms  rel_err {err:.1e}", flush=True)
    tm = cuda_time_ms(lambda: torch.matmul(m, n, out=out))
    results["torch.matmul"] = {"ms": tm, "gflops": 2 * H * K * W / tm / 1e6}
    print(f"torch      matmul         {tm:8.3f} ms", flush=True)
    r = {k: v["ms"] for k, v in results.items()}
    ratios = {
        "threadtile.static / numba.static": r["threadtile.static"] / r["numba.static"],
        "threadtile.dynamic / numba.dynamic": r["threadtile.dynamic"] / r["numba.dynamic"],
        "threadtile.naive / numba.naive": r["threadtile.naive"] / r["numba.naive"],
        "threadtile.dynamic_const / threadtile.static":
            r["threadtile.dynamic_const"] / r["threadtile.static"],
        "threadtile.static / torch.matmul": r["threadtile.static"] / r["torch.matmul"],
    }
    for k, v in ratios.items():
        print(f"{k:48s} {v:6.3f}")
    write("matmul_lecture", {"times": results, "ratios": ratios},
          notes=f"{H}x{K} @ {K}x{W} fp32, TW={TW}, blocks {TW}x{TW}; CUDA-event median of 30 "
                "after 5 warm-ups; rel_err = ||out-ref||/||ref|| vs float64")


if __name__ == "__main__":
    main()
