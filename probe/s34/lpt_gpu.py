import sys, math, json, os, torch
sys.path.insert(0, "bench")
from attention import load_sample, flops
from _common import cuda_time_ms
from pathlib import Path
from torch.nn.functional import scaled_dot_product_attention as sdpa
systems = sys.argv[1].split(",")
mods = {}
for sysname in systems:
    for var, src in (("orig", "probe/cutile"), ("lpt", "probe/cutile_lpt")):
        mods[(sysname, var)] = load_sample(Path(src), sysname)
res = []
for (b, h, kvh, s, d), causal, cfgs in [((4,32,32,4096,128), True, [(128,64),(64,64),(128,128)]),
                                       ((4,32,32,4096,64), True, [(128,64),(64,64),(128,128)]),
                                       ((1,32,8,4096,128), True, [(128,64),(64,64)]),
                                       ((4,32,32,4096,128), False, [(128,64)])]:
    torch.manual_seed(0)
    q = torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
    k = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    v = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    gqa = kvh != h
    ref = sdpa(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=gqa)
    t_sdpa = cuda_time_ms(lambda: sdpa(q, k, v, is_causal=causal, enable_gqa=gqa))
    f = flops(b, h, s, d, causal)
    print(f"B{b} H{h} KV{kvh} D{d} causal={causal} sdpa {f/t_sdpa/1e9:.0f}", flush=True)
    for tm, tn in cfgs:
        line = []
        for (sysname, var), mod in mods.items():
            run = lambda: mod.cutile_fmha(q, k, v, tile_m=tm, tile_n=tn, causal=causal, query_group_size=h // kvh)
            try:
                out = run(); torch.cuda.synchronize()
                err = (out.float() - ref).abs().max().item()
                ts = [cuda_time_ms(run) for _ in range(3)]
                t = min(ts)
                line.append(f"{sysname[:2]}-{var} {f/t/1e9:.0f} ({err:.3f})")
                res.append(dict(shape=[b,h,kvh,s,d], causal=causal, tile=[tm,tn], system=sysname, var=var, tflops=f/t/1e9, all=[f/x/1e9 for x in ts], err=err, sdpa=f/t_sdpa/1e9))
            except Exception as e:
                line.append(f"{sysname[:2]}-{var} ERR {str(e)[:100]}")
        print(f"  {tm}x{tn}: " + " | ".join(line), flush=True)
out = os.environ.get("OUT", "/tmp")
json.dump(res, open(f"{out}/lpt.json", "w"), indent=1)
