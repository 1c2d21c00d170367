"""Diagnostic: the cost of cuLaunchKernel itself, through cuda.bindings and through ctypes
straight into libcuda, on the same kernel and pointers (not a benchmark of threadtile)."""

import ctypes
import statistics
import time

import numpy as np


def per_us(fn, n=5000, rounds=7):
    import torch

    for _ in range(300):
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


def main():
    import torch
    from cuda.bindings import driver
    from cuda.core import Device, Program, ProgramOptions

    dev = Device()
    dev.set_current()
    src = ('extern "C" __global__ void add(const float* a, const float* b, float* c, long long n)'
           "\n    { long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
           "if (i < n) c[i] = a[i] + b[i]; }")
    arch = "sm_" + "".join(map(str, dev.compute_capability))
    kern = Program(src, "c++", ProgramOptions(arch=arch)).compile("cubin").get_kernel("add")
    a, b, c = (torch.randn(32, device="cuda") for _ in range(3))
    vals = [ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
            ctypes.c_void_p(c.data_ptr()), ctypes.c_longlong(32)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    addr = ctypes.addressof(params)
    h = int(kern.handle)
    fn = driver.CUfunction(h)
    stream = int(torch.cuda.current_stream().cuda_stream)
    st = driver.CUstream(stream)
    us = per_us(lambda: driver.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, st, addr, 0))
    print(f"cuda.bindings cuLaunchKernel  {us:6.2f} us")
    lib = ctypes.CDLL("libcuda.so.1")
    f = lib.cuLaunchKernel
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    us = per_us(lambda: f(h, 1, 1, 1, 32, 1, 1, 0, stream, addr, None))
    print(f"ctypes cuLaunchKernel         {us:6.2f} us")
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b)
    x = np.zeros(1)
    print(f"python call of a no-op lambda {per_us(lambda: x):6.2f} us")


if __name__ == "__main__":
    main()
