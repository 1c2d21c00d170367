"""Diagnostic, not a benchmark of record: the tile matmul on float32 inputs through tfloat32
(mma.sync: tile.h's staged loop where each warp's blocks share their rows, else the loop as
written) under several tile shapes and warp counts, TFLOP/s against cuBLAS (tf32) in one run
at 4096^3. TF32_PROBE_DTYPE=float16 or bfloat16 runs the same shapes on 16-bit inputs (those
without a Hopper main loop take the staged loop too)."""

from __future__ import annotations

import functools
import os
import sys

from _common import ROOT, cuda_time_ms

sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    import torch
    from kernels import tiles

    import threadtile.tile as ct

    n = 4096
    dt = getattr(torch, os.environ.get("TF32_PROBE_DTYPE", "float32"))
    a, b = torch.randn(n, n, device="cuda").to(dt), torch.randn(n, n, device="cuda").to(dt)
    c = torch.empty(n, n, device="cuda", dtype=dt)
    flop = 2 * n ** 3
    torch.backends.cuda.matmul.allow_tf32 = True
    cublas = flop / cuda_time_ms(lambda: torch.matmul(a, b, out=c), 2, 10) / 1e9
    ref = a.double() @ b.double()
    print(f"cublas tf32 {cublas:.0f} TFLOP/s", flush=True)
    for w, (tm, tn, tk) in ((4, (64, 64, 32)), (4, (64, 128, 32)), (8, (128, 64, 32)),
                            (8, (128, 128, 32)), (8, (128, 128, 16)), (8, (128, 256, 16)),
                            (8, (128, 256, 32)), (16, (256, 128, 32)), (4, (128, 64, 32))):
        kern = ct.kernel(num_warps=w)(tiles.matmul.py_func)
        run = functools.partial(ct.launch, 0, (n // tm, n // tn), kern, (a, b, c, tm, tn, tk))
        try:
            c.fill_(float("nan"))
            run()
            err = ((c.double() - ref).norm() / ref.norm()).item()
            t = flop / cuda_time_ms(run, 2, 10) / 1e9
            print(f"w{w} {tm}x{tn}x{tk}: {t:.1f} TFLOP/s ({t / cublas:.3f}), rel err {err:.1e}",
                  flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"w{w} {tm}x{tn}x{tk}: {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
