"""Launch overhead: a tiny kernel on three torch tensors, host microseconds per launch.

threadtile vs numba-cuda vs a raw launch through cuda-core and through cuda.bindings'
cuLaunchKernel (pointers prepared once: the floor) vs a torch op, all in one process. Each
figure is the median over 9 rounds of 2,000 back-to-back launches (host time per launch;
the GPU work is a few nanoseconds, so this is the Python + driver submission cost), the
methods' rounds interleaved so that the machine's drift falls on all of them alike. Tile
kernels (a vector add with a Constant tile size): threadtile's ``ct.launch`` and
``kernel[grid]``, and cuTile's ``ct.launch`` of the same source where cuda.tile is installed.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import write

N_LAUNCH, ROUNDS = 2000, 9


TILE_SRC = """import {mod} as ct


@ct.kernel
def vadd(a, b, c, T: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(c, index=(i,), tile=ct.load(a, index=(i,), shape=(T,)) +
             ct.load(b, index=(i,), shape=(T,)))
"""


def per_launch_us(fns: dict) -> dict:
    """Median host µs per launch of each of ``fns``, their rounds interleaved (A B C ... A B C
    ...), so that the machine's drift during the run falls on every one alike."""
    import torch

    for fn in fns.values():
        for _ in range(200):
            fn()
    torch.cuda.synchronize()
    rounds: dict = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(N_LAUNCH):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            rounds[name].append((t1 - t0) / N_LAUNCH * 1e6)
    return {name: statistics.median(r) for name, r in rounds.items()}


SRC = r"""
extern "C" __global__ void add(const float* a, const float* b, float* c, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""


def main() -> None:
    import torch

    np.row_stack = getattr(np, "row_stack", np.vstack)
    from numba import cuda as ncuda

    import threadtile

    def add(a, b, c):
        i = threadtile.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    ours = threadtile.jit(add)
    g = {"cuda": ncuda}
    exec_src = (
        "def add(a, b, c):\n"
        "    i = cuda.grid(1)\n"
        "    if i < c.size:\n"
        "        c[i] = a[i] + b[i]\n")
    exec(compile(exec_src, "numba_add", "exec"), g)  # noqa: S102
    theirs = ncuda.jit(g["add"])

    n = 32
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.empty(n, device="cuda")
    fns = {}
    k = ours[1, 32]
    k(a, b, c)
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b)
    fns["threadtile"] = lambda: k(a, b, c)
    kn = theirs[1, 32]
    fns["numba-cuda"] = lambda: kn(a, b, c)
    fns["torch.add(out=)"] = lambda: torch.add(a, b, out=c)

    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    dev = Device()
    dev.set_current()
    arch = "sm_" + "".join(map(str, dev.compute_capability))
    mod = Program(SRC, "c++", ProgramOptions(arch=arch)).compile("cubin")
    kern = mod.get_kernel("add")
    stream = dev.create_stream(torch.cuda.current_stream())
    cfg = LaunchConfig(grid=1, block=32)
    pa, pb, pc = a.data_ptr(), b.data_ptr(), c.data_ptr()
    n64 = np.int64(n)
    fns["cuda.core.launch"] = lambda: launch(stream, cfg, kern, pa, pb, pc, n64)

    from cuda.bindings import driver

    fn = driver.CUfunction(int(kern.handle)) if hasattr(kern, "handle") else None
    vals = [ctypes.c_void_p(pa), ctypes.c_void_p(pb), ctypes.c_void_p(pc),
            ctypes.c_longlong(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    sh = int(stream.handle)
    addr = ctypes.addressof(params)
    if fn is not None:
        def raw():
            driver.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, sh, addr, 0)
        fns["cuLaunchKernel (floor)"] = raw
    # tile kernels with a Constant: cuTile's launch (ct.launch) and kernel[grid], and cuTile's
    # own launch of the same source where cuda.tile is installed (each from a file: a kernel's
    # source must be readable)
    ts = torch.cuda.current_stream()
    tmp = tempfile.mkdtemp(prefix="tt-launch-")
    sys.path.insert(0, tmp)
    for name, mod in (("tt_vadd", "threadtile.tile"), ("cut_vadd", "cuda.tile")):
        Path(tmp, name + ".py").write_text(TILE_SRC.format(mod=mod))
        try:
            m = importlib.import_module(name)
        except ImportError:  # cuTile is optional
            continue
        m.ct.launch(ts, (1,), m.vadd, (a, b, c, 32))
        torch.cuda.synchronize()
        assert torch.allclose(c, a + b)
        label = "threadtile" if name == "tt_vadd" else "cuTile"
        fns[f"{label} ct.launch (tile)"] = functools.partial(m.ct.launch, ts, (1,), m.vadd,
                                                             (a, b, c, 32))
        if label == "threadtile":
            fns["threadtile kernel[grid] (tile)"] = functools.partial(m.vadd[1], a, b, c, 32)
    results = per_launch_us(fns)
    torch.cuda.synchronize()
    c.fill_(float("nan"))
    k(a, b, c)
    assert torch.allclose(c, a + b)
    for name, us in results.items():
        print(f"{name:24s} {us:7.2f} us")
    ratios = {"threadtile / numba-cuda": results["threadtile"] / results["numba-cuda"],
              "threadtile / cuda.core.launch": results["threadtile"] / results["cuda.core.launch"],
              "threadtile / torch.add": results["threadtile"] / results["torch.add(out=)"]}
    for name, r in ratios.items():
        print(f"{name:32s} {r:6.2f}")
    write("launch_overhead", {"us_per_launch": results, "ratios": ratios},
          notes="host time per launch, median of 9 rounds of 2000 launches, the methods' rounds "
                "interleaved; tiny add kernel, "
                "three torch CUDA tensors of 32 floats, torch's current stream")


if __name__ == "__main__":
    main()
