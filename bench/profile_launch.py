"""Where a launch's host time goes (a diagnostic, not a benchmark): times each stage of
``kernel[grid, block](a, b, c)`` on three torch tensors, then a cProfile of full launches."""

import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def per_us(fn, n=20000):
    for _ in range(500):
        fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def main():
    import torch

    import threadtile
    from threadtile.runtime import arrays, launcher

    def add(a, b, c):
        i = threadtile.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    k = threadtile.jit(add)
    a, b, c = (torch.randn(32, device="cuda") for _ in range(3))
    L = k[1, 32]
    L(a, b, c)
    torch.cuda.synchronize()
    compiled = next(iter(k._launches.values()))[0]
    names = k._runtime_names
    infos = arrays.describe_all((a, b, c), names)
    ck = compiled
    g, bl = L.grid, L.block
    print(f"full launch          {per_us(lambda: L(a, b, c)):6.2f} us")
    print(f"describe_all         {per_us(lambda: arrays.describe_all((a, b, c), names)):6.2f} us")
    print(f"CompiledKernel.launch{per_us(lambda: ck.launch(g, bl, None, 0, infos)):6.2f} us")
    print(f"  with stream=0      {per_us(lambda: ck.launch(g, bl, 0, 0, infos)):6.2f} us")
    print(f"framework stream     {per_us(lambda: launcher._framework_stream('torch', 0)):6.2f} us")
    print(f"k[1, 32] lookup      {per_us(lambda: k[1, 32]):6.2f} us")
    print(f"a.data_ptr()         {per_us(lambda: a.data_ptr()):6.2f} us")
    print(f"a.stride()           {per_us(lambda: a.stride()):6.2f} us")
    print(f"a.shape              {per_us(lambda: a.shape):6.2f} us")
    print(f"a.is_contiguous()    {per_us(lambda: a.is_contiguous()):6.2f} us")
    print(f"a.dtype              {per_us(lambda: a.dtype):6.2f} us")
    print(f"a.device.index       {per_us(lambda: a.device.index):6.2f} us")
    print(f"a.get_device()       {per_us(lambda: a.get_device()):6.2f} us")
    torch.cuda.synchronize()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5000):
        L(a, b, c)
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
