import sys, math, json, os, time
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from attention import load_sample
from _common import cuda_time_ms
from pathlib import Path
import torch
from torch.nn.functional import scaled_dot_product_attention as sdpa
mod = load_sample(Path("probe/cutile"), "threadtile")
base = mod.fmha_kernel
HINTS = [None, (4, 1), (4, 2), (4, 3), (8, 1), (8, 2)]
out = []
for (b, h, kvh, s, d) in [(4, 32, 32, 4096, 128), (4, 32, 32, 4096, 64), (1, 32, 8, 4096, 128)]:
    torch.manual_seed(0)
    q = torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
    k = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    v = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    for causal in (False, True):
        ref = sdpa(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=kvh != h)
        f = 4 * b * h * s * s * d / (2 if causal else 1)
        for tm, tn in [(128, 128), (128, 64), (64, 64)]:
            row = []
            for hint in HINTS:
                if hint and tm == 128 and tn == 128 and hint[0] == 4:
                    continue
                kern = base if hint is None else base.replace_hints(num_warps=hint[0], occupancy=hint[1])
                try:
                    run = lambda: mod.cutile_fmha(q, k, v, tile_m=tm, tile_n=tn, causal=causal, query_group_size=h // kvh, kernel=kern)
                    o = run(); torch.cuda.synchronize()
                    err = (o.float() - ref).abs().max().item()
                    t = cuda_time_ms(run)
                    row.append(f"{hint}:{f/t/1e9:.0f}{'' if err < 2e-2 else '!BAD'}")
                    out.append(dict(shape=[b,h,kvh,s,d], causal=causal, tile=[tm,tn], hint=hint, tflops=round(f/t/1e9,1), err=err))
                except Exception as e:
                    row.append(f"{hint}:ERR {str(e)[:80]}")
            print(f"D{d} KV{kvh} causal={causal} {tm}x{tn}: " + "  ".join(row), flush=True)
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "fmha_warps.json"), "w"))
