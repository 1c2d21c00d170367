import math, sys
sys.path[:0] = ["bench", "examples"]
import torch
from _common import cuda_time_ms
from llama import kernels as K
from llama.config import Config
from threadtile.tile import cdiv
cfg = Config(); h, kvh, d = cfg.heads, cfg.kv_heads, cfg.head_dim
seq = 4096
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
for name, kern in [("blockfit", K.attention_prefill), ("occ2", K.attention_prefill.replace_hints(occupancy=2)), ("occ3", K.attention_prefill.replace_hints(occupancy=3))]:
    f = lambda: kern[(seq // 64, h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, 64, 64)
    f()
    ms = min(cuda_time_ms(f) for _ in range(3))
    print(f"{name}: {4 * h * seq * seq * d / 2 / ms / 1e9:.0f} TFLOP/s", flush=True)
