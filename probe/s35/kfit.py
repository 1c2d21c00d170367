"""Fixed cost a tile: plain matmul at M = N = 4096 and K = 1024 ... 8192; ms = a + b K."""
import sys, math, json, os, torch
sys.path.insert(0, "bench")
from _common import cuda_time_ms
from tile_sweep import build
import threadtile.tile as tt
systems = {"threadtile": (tt, build(tt))}
try:
    import cuda.tile as cu
    systems["cutile"] = (cu, build(cu))
except Exception as e:
    print("no cutile", e)
res = {}
stream = torch.cuda.current_stream()
for tiles in [(128, 128, 64), (64, 256, 64), (128, 256, 64)]:
    tm, tn, tk = tiles
    for K in (1024, 2048, 4096, 8192):
        a = torch.randn(4096, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, 4096, device="cuda", dtype=torch.float16)
        out = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
        row = {"cublas": cuda_time_ms(lambda: torch.matmul(a, b))}
        grid = (4096 // tm, 4096 // tn, 1)
        for name, (ct, ks) in systems.items():
            args = (a, b, out, tm, tn, tk, 0)
            ct.launch(stream, grid, ks["plain"], args)
            row[name] = cuda_time_ms(lambda: ct.launch(stream, grid, ks["plain"], args))
        key = f"{tm}x{tn}x{tk} K{K}"
        res[key] = {k: round(v, 4) for k, v in row.items()}
        print(key, res[key], flush=True)
    for name in ["cublas"] + list(systems):
        ks_ = [1024, 2048, 4096, 8192]
        ys = [res[f"{tm}x{tn}x{tk} K{K}"][name] for K in ks_]
        n = len(ks_); mx = sum(ks_) / n; my = sum(ys) / n
        bb = sum((x - mx) * (y - my) for x, y in zip(ks_, ys)) / sum((x - mx) ** 2 for x in ks_)
        aa = my - bb * mx
        waves = (4096 // tm) * (4096 // tn) / 132
        print(f"  {name}: fixed {aa*1000:.1f} us ({aa*1000/waves:.2f} us a tile-wave), per K {bb*1e6:.2f} ns", flush=True)
json.dump(res, open(os.environ.get("OUT", "/tmp") + "/kfit.json", "w"), indent=1)
