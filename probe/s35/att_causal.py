import sys, json, os, torch
sys.path.insert(0, "bench")
from attention import load_sample, flops
from _common import cuda_time_ms
from pathlib import Path
from torch.nn.functional import scaled_dot_product_attention as sdpa
tag = sys.argv[1]
mod = load_sample(Path("probe/cutile"), "threadtile")
res = {}
cases = [((4,32,32,4096,128), [(128,128),(128,64),(64,64)]),
         ((1,32,8,4096,128), [(128,128),(128,64),(64,64)]),
         ((4,32,32,4096,64), [(128,128),(64,64)])]
for (b, h, kvh, s, d), cfgs in cases:
    torch.manual_seed(0)
    q = torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
    k = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    v = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    causal = True
    ref = sdpa(q, k, v, is_causal=causal, enable_gqa=kvh != h).float()
    f = flops(b, h, s, d, causal)
    for tm, tn in cfgs:
        run = lambda: mod.cutile_fmha(q, k, v, tile_m=tm, tile_n=tn, causal=causal, query_group_size=h // kvh)
        out = run(); torch.cuda.synchronize()
        err = (out.float() - ref).abs().max().item()
        t = min(cuda_time_ms(run) for _ in range(3))
        key = f"B{b} H{h} KV{kvh} D{d} causal {tm}x{tn}"
        res[key] = (round(f / t / 1e9, 1), round(err, 4))
        print(tag, key, res[key], flush=True)
json.dump(res, open(os.environ.get("OUT", "/tmp") + f"/causal_{tag}.json", "w"), indent=1)
