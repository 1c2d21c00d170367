"""decode projections (m=32) with the layer's tile rule: time + error. Run with cwd = a tree's root."""
import sys, os
sys.path[:0] = [os.path.abspath("src"), os.path.abspath("examples"), os.path.abspath("bench")]
import torch, threadtile
from llama import kernels as K
from llama.config import tiles_for
from _common import cuda_time_ms
print(threadtile.__file__)
for name, (m, k, n) in {"Wo": (32, 4096, 4096), "Wdown": (32, 14336, 4096), "Wqkv": (32, 4096, 6144), "Wo-m16": (16, 4096, 4096), "Wdown-m64": (64, 14336, 4096)}.items():
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = (torch.randn(k, n, device="cuda") / k**0.5).to(torch.bfloat16)
    r = torch.randn(m, n, device="cuda").to(torch.bfloat16)
    ref = a.double() @ b.double() + r.double()
    tm, tn, tk = tiles_for(m, k, n)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    grid = (-(-m // tm), n // tn)
    f = lambda: K.matmul_add[grid](a, b, r, c, tm, tn, tk)
    f(); torch.cuda.synchronize()
    err = (c.double() - ref).abs().max().item()
    t = min(cuda_time_ms(f) for _ in range(3))
    tt = min(cuda_time_ms(lambda: torch.addmm(r, a, b)) for _ in range(3))
    print(f"{name} {tm}x{tn}x{tk}: {t*1e3:.1f} us ({k*n*2/t/1e6:.0f} GB/s) torch {tt*1e3:.1f} us  err {err:.3f}", flush=True)
