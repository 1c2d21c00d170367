"""decode SwiGLU (32 x 4096 @ packed 4096 x 2x14336) at the few-row stage rule's bounds FS=least,most"""
import os, sys
sys.path[:0] = [os.path.abspath("src"), os.path.abspath("examples"), os.path.abspath("bench")]
from threadtile.ir import tiling
if os.environ.get("FS"):
    tiling.STAGES_FEW_ROWS = tuple(map(int, os.environ["FS"].split(",")))
import torch
from llama import kernels as K
from llama.config import tiles_for
from _common import cuda_time_ms
m, k, f = 32, 4096, 14336
a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
wg = (torch.randn(k, f, device="cuda") / k**0.5).to(torch.bfloat16)
wu = (torch.randn(k, f, device="cuda") / k**0.5).to(torch.bfloat16)
tm, tn, tk = tiles_for(m, k, f, swiglu=True)
gu = K.pack_gate_up(wg, wu, tn).contiguous()
c = torch.full((m, f), float("nan"), device="cuda", dtype=torch.bfloat16)
f_ = lambda: K.matmul_swiglu[(-(-m // tm), f // tn)](a, gu, c, tm, tn, tk)
f_(); torch.cuda.synchronize()
g, u = a.double() @ wg.double(), a.double() @ wu.double()
ref = g * torch.sigmoid(g) * u
err = (c.double() - ref).abs().max().item()
t = min(cuda_time_ms(f_) for _ in range(3))
tt = min(cuda_time_ms(lambda: torch.nn.functional.silu(a @ wg) * (a @ wu)) for _ in range(3))
print(f"swiglu decode {tm}x{tn}x{tk} FS={tiling.STAGES_FEW_ROWS}: {t*1e3:.1f} us ({2*k*f*2/t/1e6:.0f} GB/s) torch {tt*1e3:.1f} us err {err:.3f}")
