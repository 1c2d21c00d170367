"""One prefill attention launch (llama shapes, 64x64) for ncu."""
import math, sys
sys.path[:0] = ["examples"]
import torch
from llama import kernels as K
from llama.config import Config
from threadtile.tile import cdiv
cfg = Config()
seq, h, kvh, d = 4096, cfg.heads, cfg.kv_heads, cfg.head_dim
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
for _ in range(2):
    K.attention_prefill[(cdiv(seq, 64), h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, 64, 64)
torch.cuda.synchronize()
