"""decode projections: split-K (config.split_for) against the plain tiles, through DecoderLayer.matmul / mlp."""
import os, sys
sys.path[:0] = [os.path.abspath("src"), os.path.abspath("examples"), os.path.abspath("bench")]
import torch
from llama import layer as L, config as C
from llama.config import Config
from _common import cuda_time_ms
cfg = Config()
orig = L.split_for
def t(f):
    f(); torch.cuda.synchronize()
    return min(cuda_time_ms(f) for _ in range(3)) * 1e3
for name, (m, k, n) in {"Wdown": (32, 14336, 4096)}.items():
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = (torch.randn(k, n, device="cuda") / k**0.5).to(torch.bfloat16)
    r = torch.randn(m, n, device="cuda").to(torch.bfloat16)
    ref = a.double() @ b.double() + r.double()
    res = {}
    for mode in ("split", "plain"):
        L.split_for = orig if mode == "split" else (lambda *x, **y: None)
        c = L.DecoderLayer.matmul(a, b, residual=r)
        err = (c.double() - ref).abs().max().item()
        res[mode] = (t(lambda: L.DecoderLayer.matmul(a, b, residual=r)), err)
    L.split_for = orig
    print(name, C.split_for(m, k, n), " ".join(f"{k_} {v[0]:.1f} us (err {v[1]:.3f})" for k_, v in res.items()),
          f"torch {t(lambda: torch.addmm(r, a, b)):.1f} us", flush=True)
