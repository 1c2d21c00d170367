import os, sys
tree = os.environ["TREE"]
sys.path[:0] = [tree, "examples"]
import torch, threadtile
from llama.config import Config
from llama.layer import DecoderLayer
print(threadtile.__file__)
cfg = Config()
batch, h, kvh, d, ctx = 32, cfg.heads, cfg.kv_heads, cfg.head_dim, 4096
qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
layer = DecoderLayer(cfg, None)
f = lambda: layer.attention_decode(qd, kc, vc, lens, ctx)
f(); torch.cuda.synchronize()
nbytes = 2 * batch * ctx * kvh * d * 2
best = 1e9
for _ in range(5):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(50): f()
    e.record(); torch.cuda.synchronize()
    best = min(best, s.elapsed_time(e) / 50)
print(f"decode attention {best * 1e3:.1f} us {nbytes / best / 1e6:.0f} GB/s")
