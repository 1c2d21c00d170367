import sys, os, importlib.util
sys.path.insert(0, os.path.join(os.getcwd(), "bench")); sys.path.insert(0, "probe/cutile/samples")
from _common import cuda_time_ms
if os.environ.get("OLD_SRC"):  # (_common put this tree's src first)
    sys.path.insert(0, os.environ["OLD_SRC"])
from cutile_suite import swap_imports
import torch
import threadtile; print("threadtile from", threadtile.__file__)
from torch.nn.functional import scaled_dot_product_attention as sdpa

def load(path, tag):
    text = swap_imports(open(path).read())
    spec = importlib.util.spec_from_loader(tag, loader=None)
    mod = importlib.util.module_from_spec(spec); mod.__file__ = path
    exec(compile(text, path, "exec"), mod.__dict__)
    return mod
OLD = os.environ.get("OLD") == "1"
mods = {"two loops": load("probe/s33/AttentionFMHA_split.py", "a2")} if OLD else {
        "one loop": load("probe/cutile/samples/AttentionFMHA.py", "a1"),
        "two loops": load("probe/s33/AttentionFMHA_split.py", "a2")}
for (b, h, kvh, s, d) in [(4, 32, 32, 4096, 128)] + ([] if OLD else [(4, 32, 32, 4096, 64), (1, 32, 8, 4096, 128)]):
    torch.manual_seed(0)
    q = torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
    k = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    v = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
    for causal in ((True,) if OLD else (True, False)):
        ref = sdpa(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=kvh != h)
        f = 4 * b * h * s * s * d / (2 if causal else 1)
        for tm, tn in ([(64, 64)] if OLD else [(128, 128), (128, 64), (64, 64)]):
            row = []
            for name, mod in mods.items():
                run = lambda: mod.cutile_fmha(q, k, v, tile_m=tm, tile_n=tn, causal=causal, query_group_size=h // kvh)
                o = run(); torch.cuda.synchronize()
                err = (o.float() - ref).abs().max().item()
                t = cuda_time_ms(run)
                row.append(f"{name} {f/t/1e9:.0f}{'' if err < 2e-2 else ' BAD %.3g' % err}")
            print(f"D{d} KV{kvh} causal={causal} {tm}x{tn}: " + "; ".join(row), flush=True)
