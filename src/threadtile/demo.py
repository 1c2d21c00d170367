"""``threadtile demo``: the lecture's tiled matmul, from Python to CUDA C++ to the GPU.

Shows the kernel, the CUDA C++ it becomes, compiles it to a cubin with NVRTC (no GPU needed),
runs it in the CPU simulator with every check on, and, where a GPU is present, runs it there
and compares with torch (or NumPy).
"""

from __future__ import annotations

import inspect
import math
import time

import numpy as np

import threadtile as cuda
from threadtile import Constant


@cuda.jit
def matmul_tiled(m, n, out, tw: Constant[int]):
    sh = cuda.shared.array(0, np.float32)  # dynamic: sized by the launch
    ms = sh[:tw * tw]
    ns = sh[tw * tw:2 * tw * tw]
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    h, k = m.shape
    w = n.shape[1]
    p = 0.0
    for ph in range(math.ceil(k / tw)):
        idx = ph * tw
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


def _rule(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 74 - len(title)))


def main(argv: list[str] | None = None) -> int:
    tw = 16
    rng = np.random.default_rng()
    m = rng.standard_normal((40, 24), dtype=np.float32)
    n = rng.standard_normal((24, 36), dtype=np.float32)
    _rule("the kernel (Python)")
    print(inspect.getsource(matmul_tiled.py_func))
    _rule("the CUDA C++ it compiles to")
    print(matmul_tiled.cuda_source(m, n, np.empty((40, 36), np.float32), tw=tw))
    _rule("NVRTC: compile to cubin (no GPU needed)")
    for arch in ("sm_80", "sm_90"):
        t0 = time.perf_counter()
        spec = matmul_tiled.compile(m, n, np.empty((40, 36), np.float32), arch=arch, tw=tw)
        print(f"{arch}: {len(spec.cubin):,} bytes of cubin in {time.perf_counter() - t0:.3f} s")
    ref = m.astype(np.float64) @ n.astype(np.float64)
    grid = (math.ceil(36 / tw), math.ceil(40 / tw))
    shared = 2 * tw * tw * 4
    _rule("the CPU simulator, every check on")
    try:
        out = np.full((40, 36), np.nan, np.float32)
        with cuda.simulate():
            matmul_tiled[grid, (tw, tw), 0, shared](m, n, out, tw)
        err = np.abs(out - ref).max()
        print(f"simulated: max |out - numpy| = {err:.2e}  ({'OK' if err < 1e-4 else 'WRONG'})")
    except (AttributeError, ImportError) as e:
        print(f"(simulator not available: {e})")
    _rule("the GPU")
    from threadtile.runtime import driver

    if not driver.gpu_available():
        print("no GPU here: the cubin above is what would run on one")
        return 0
    try:
        import torch

        tm, tn = torch.from_numpy(m).cuda(), torch.from_numpy(n).cuda()
        out = torch.full((40, 36), float("nan"), device="cuda")
        matmul_tiled[grid, (tw, tw), 0, shared](tm, tn, out, tw)
        torch.cuda.synchronize()
        err = (out.double() - (tm.double() @ tn.double())).abs().max().item()
        print(f"{driver.current_device().name}: max |out - torch float64| = {err:.2e}  "
              f"({'OK' if err < 1e-4 else 'WRONG'})")
    except ImportError:
        out = np.full((40, 36), np.nan, np.float32)
        matmul_tiled[grid, (tw, tw), 0, shared](m, n, out, tw)
        err = np.abs(out - ref).max()
        print(f"GPU: max |out - numpy float64| = {err:.2e}  ({'OK' if err < 1e-4 else 'WRONG'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
