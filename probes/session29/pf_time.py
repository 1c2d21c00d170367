"""A/B of the loop-load prefetch (THREADTILE_PREFETCH) on the LayerNorm sample-style kernel."""
import os, sys, json
sys.path.insert(0, "bench"); sys.path.insert(0, "tests"); sys.path.insert(0, "examples")
import torch
from _common import cuda_time_ms
import threadtile.tile as ct
from kernels import tiles
mode = os.environ.get("THREADTILE_PREFETCH", "1")
out = {}
for n, dt in ((4096, torch.float32), (4096, torch.bfloat16), (32768, torch.float32), (32768, torch.bfloat16)):
    m = 4096
    x = torch.randn(m, n, device="cuda").to(dt); y = torch.empty_like(x)
    w = torch.randn(n, device="cuda").to(dt); b = torch.randn(n, device="cuda").to(dt)
    mean = torch.empty(m, device="cuda"); rstd = torch.empty(m, device="cuda")
    gb = 2 * x.numel() * x.element_size() / 1e9
    z = torch.empty_like(x)
    copy = gb / cuda_time_ms(lambda: z.copy_(x)) * 1e3
    f = lambda: ct.launch(0, (m,), tiles.layer_norm_fwd, (x, w, b, y, mean, rstd, 1e-5, 1024))
    f(); torch.cuda.synchronize()
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double())
    err = (y.double() - ref).abs().max().item()
    ms = cuda_time_ms(f)
    key = f"{n}_{str(dt)[6:]}"
    out[key] = dict(gbs=gb / ms * 1e3, copy=copy, frac=gb / ms * 1e3 / copy, err=err)
    print(mode, key, f"{gb/ms*1e3:.0f} GB/s, {gb/ms*1e3/copy:.0%} of copy, err {err:.2e}", flush=True)
json.dump(out, open(os.environ.get("OUT", "/tmp") + f"/pf_{mode}.json", "w"), indent=1)
