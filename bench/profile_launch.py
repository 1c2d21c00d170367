"""Where a launch's host time goes (a diagnostic, not a benchmark): times each stage of
``kernel[grid, block](a, b, c)`` on three torch tensors — the C launcher alone, the same
launcher with a no-op in place of ``cuLaunchKernel`` (its checks and packing), each tensor
accessor it calls, the stream getter — and the driver's own cost, from a loop in C (gcc on
the machine) that calls ``cuLaunchKernel`` with no Python in between. Then a cProfile."""

import cProfile
import ctypes
import functools
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

C_HELPER = r"""
#include <time.h>
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
int nop(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
        unsigned sh, void *st, void **argv, void **extra) { return 0; }
double loop(launch_fn f, void *func, void *stream, void **argv, int n) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++)
        if (f(func, 1, 1, 1, 32, 1, 1, 0, stream, argv, 0)) return -1.0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n / 1e3;
}
"""


def per_us(fn, n=2000, rounds=9):
    import torch

    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def c_helper():
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "h.c"), os.path.join(d, "h.so")
    Path(src).write_text(C_HELPER)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", src, "-o", lib], check=True)
    h = ctypes.CDLL(lib)
    h.loop.restype = ctypes.c_double
    h.loop.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
    return h


def main():
    import torch

    import threadtile
    from threadtile.runtime import arrays, launcher

    tjit = sys.modules["threadtile.jit"]  # the module (threadtile.jit is the decorator)
    print("C launcher built:", launcher.FAST_LAUNCH)

    def add(a, b, c):
        i = threadtile.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    k = threadtile.jit(add)
    a, b, c = (torch.randn(32, device="cuda") for _ in range(3))
    L = k[1, 32]
    L(a, b, c)
    L(a, b, c)
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b)
    compiled = next(iter(k._launches.values()))[0]
    args = (a, b, c)
    d = L.direct
    print("direct launcher:", type(d).__name__)
    h = c_helper()
    nop = ctypes.cast(h.nop, ctypes.c_void_p).value
    real = launcher._CU_LAUNCH_ADDR
    launcher._CU_LAUNCH_ADDR = nop
    infos = arrays.describe_all(args, k._runtime_names)
    dnop = compiled.direct(L.grid, L.block, None, 0, args, infos)
    launcher._CU_LAUNCH_ADDR = real
    getstream = launcher._stream_getter("torch")
    rows = [
        ("L(a, b, c) (full)", lambda: L(a, b, c)),
        ("k[1, 32](a, b, c)", lambda: k[1, 32](a, b, c)),
        ("direct(args)", lambda: d(args)),
        ("direct(args), no-op driver", lambda: dnop(args)),
        ("_sim_env()", tjit._sim_env),
        ("getstream(0)", lambda: getstream(0)),
        ("a.data_ptr()", lambda: a.data_ptr()),
        ("a.shape", lambda: a.shape),
        ("a.is_contiguous()", lambda: a.is_contiguous()),
        ("a.dtype", lambda: a.dtype),
        ("a.get_device()", lambda: a.get_device()),
        ("lambda: None", lambda: None),
        # what the C launcher calls, through the type's descriptors
        ("Tensor.dtype.__get__(a)", functools.partial(type(a).dtype.__get__, a)),
        ("Tensor.shape.__get__(a)", functools.partial(type(a).shape.__get__, a)),
        ("Tensor.is_cuda.__get__(a)", functools.partial(type(a).is_cuda.__get__, a)),
        ("Tensor.is_contiguous(a)", functools.partial(type(a).is_contiguous, a)),
        ("Tensor.data_ptr(a)", functools.partial(type(a).data_ptr, a)),
        ("Tensor.ndim.__get__(a)", functools.partial(type(a).ndim.__get__, a)),
        ("Tensor.nbytes.__get__(a)", functools.partial(type(a).nbytes.__get__, a)),
        ("partial(lambda x: None, a)", functools.partial(lambda x: None, a)),
        ("tls.device", lambda: launcher._tls.device),
    ]
    for name, fn in rows:
        print(f"{name:30s} {per_us(fn):6.2f} us")
    # the driver alone: cuLaunchKernel in a C loop, same kernel, stream and parameters
    stream = getstream(0)
    func = int(compiled._handle)
    argv = ctypes.c_void_p(compiled._argv_addr)
    for n in (2000, 200, 50):
        vals = []
        for _ in range(7):
            vals.append(h.loop(real, func, stream, argv, n))
            torch.cuda.synchronize()
        print(f"C loop of {n:5d} cuLaunchKernel   {statistics.median(vals):6.2f} us")
    vals = []
    for _ in range(7):
        vals.append(h.loop(nop, func, stream, argv, 2000))
    print(f"C loop of no-op                {statistics.median(vals):6.2f} us")
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5000):
        L(a, b, c)
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
