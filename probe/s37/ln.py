"""Probe: the LayerNorm sample's kernel (three passes) with the row cache at several sizes."""
import os, sys, json
sys.path[:0] = ["bench", "examples"]
import torch
import threadtile.tile as ct
import tile_kernels as tiles
from _common import cuda_time_ms
res = []
for n in (4096, 32768):
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.randn(4096, n, device="cuda").to(dt)
        y = torch.empty_like(x)
        w = torch.randn(n, device="cuda").to(dt)
        b = torch.randn(n, device="cuda").to(dt)
        mean = torch.empty(4096, device="cuda"); rstd = torch.empty(4096, device="cuda")
        gb = 2 * x.numel() * x.element_size() / 1e9
        copy = gb / cuda_time_ms(lambda: y.copy_(x)) * 1e3
        tor = gb / cuda_time_ms(lambda: torch.nn.functional.layer_norm(x, (n,), w, b)) * 1e3
        ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double())
        row = dict(shape=f"{name} 4096x{n}", copy=round(copy), torch=round(tor))
        for cap in ("0", "32768", "65536", "131072", "200000"):
            os.environ["THREADTILE_ROWCACHE_BYTES"] = cap
            for tn in (1024,):
                k = ct.kernel(tiles.layer_norm_fwd.py_func)
                y.fill_(float("nan"))
                try:
                    ms = cuda_time_ms(lambda: ct.launch(0, (4096,), k, (x, w, b, y, mean, rstd, 1e-5, tn)))
                    err = (y.double() - ref).abs().max().item()
                    row[f"c{cap}"] = (round(gb / ms * 1e3), round(gb / ms * 1e3 / copy, 3), f"{err:.1e}")
                except Exception as e:
                    row[f"c{cap}"] = str(e)[:100]
        print(row, flush=True)
        res.append(row)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "ln.json"), "w"), indent=1)
