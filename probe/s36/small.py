"""Probe: small/narrow tiles' block shape and occupancy (plain and persistent, fp16 4096^3)."""
import sys, math, json, os
sys.path.insert(0, "bench")
import torch
import threadtile.tile as ct
from tile_sweep import build
from _common import cuda_time_ms
ks = build(ct)
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
ref = (a.float() @ b.float())
sms = torch.cuda.get_device_properties(0).multi_processor_count
stream = torch.cuda.current_stream()
res = []
for tl in [(64, 256, 64), (256, 64, 64), (64, 128, 64), (128, 64, 64), (64, 64, 64), (128, 128, 64)]:
    for form in ("plain", "persistent"):
        base = ks[form]
        variants = {"default": base}
        for nw in (4, 8):
            variants[f"w{nw}"] = ct.kernel(base.py_func, num_warps=nw)
            variants[f"w{nw}o2"] = ct.kernel(base.py_func, num_warps=nw, occupancy=2)
        variants["o2"] = ct.kernel(base.py_func, occupancy=2)
        for name, kern in variants.items():
            grids = [1]
            if form == "persistent":
                grids = [1, 2, 3]
            for g in grids:
                tiles = math.ceil(n / tl[0]) * math.ceil(n / tl[1])
                grid = (min(g * sms, tiles), 1, 1) if form == "persistent" else (n // tl[0], n // tl[1], 1)
                out = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
                args = (a, b, out, *tl, 0)
                try:
                    ct.launch(stream, grid, kern, args)
                    torch.cuda.synchronize()
                    err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
                    ms = cuda_time_ms(lambda: ct.launch(stream, grid, kern, args))
                    tf = 2 * n ** 3 / ms / 1e9
                except Exception as e:  # noqa
                    err, tf = str(e)[:80], 0
                row = dict(tiles="x".join(map(str, tl)), form=form, variant=name, grid_x=g, tflops=round(tf, 1), err=err if isinstance(err, str) else round(err, 5))
                res.append(row)
                print(row, flush=True)
out = os.environ.get("OUT", "/tmp")
json.dump(res, open(f"{out}/small.json", "w"), indent=1)
