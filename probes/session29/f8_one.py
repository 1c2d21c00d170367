import sys, os
sys.path.insert(0, "bench"); sys.path.insert(0, "tests"); sys.path.insert(0, "examples")
import torch
from _common import cuda_time_ms
import threadtile.tile as ct
from kernels import tiles
m = k = n = 4096
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn); b = torch.randn(k, n, device="cuda").to(torch.float8_e4m3fn)
one = torch.ones((), device="cuda")
ref = torch._scaled_mm(a, b.t().contiguous().t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
for opt in ((), ("-DTT_F8_ONE",)):
    for tmnk in ((128, 256, 128), (128, 128, 128), (256, 128, 128), (64, 256, 128)):
        kern = ct.kernel(tiles.matmul.py_func)
        kern.options = tuple(kern.options) + opt
        c = torch.empty(m, n, device="cuda")
        f = lambda: kern[(m // tmnk[0], n // tmnk[1])](a, b, c, *tmnk)
        f(); torch.cuda.synchronize()
        t = cuda_time_ms(f)
        print(opt, tmnk, f"{2*m*n*k/t/1e9:.0f} TFLOP/s", "equal" if torch.equal(c, ref) else "DIFFERS", flush=True)
