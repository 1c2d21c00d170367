"""one prefill attention launch per config, for ncu."""
import math, sys
import threadtile.ir.passes as P
P.pipeline_operands = lambda f: False
import torch
from llama import kernels as K
from llama.config import Config
from threadtile.tile import cdiv
cfg = Config()
seq, h, kvh, d = 4096, cfg.heads, cfg.kv_heads, cfg.head_dim
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
for tm, tn, nw in [(64, 64, 4), (128, 128, 8)]:
    kern = K.attention_prefill if nw == 4 else K.attention_prefill.replace_hints(num_warps=nw)
    kern[(cdiv(seq, tm), h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, tm, tn)
torch.cuda.synchronize()
