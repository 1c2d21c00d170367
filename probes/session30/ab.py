"""A/B: TMA operand loads (this tree) against the portable build (cp.async), same run."""
import math, os, sys, time
sys.path[:0] = ["bench", "examples"]
import torch
import threadtile.builds as B
mode = os.environ.get("AB", "tma")
if mode == "portable":
    _t = B.target_for
    B.target_for = lambda spec, arch, options=(), portable=False, cluster=True: _t(spec, arch, options, True, cluster)
from _common import cuda_time_ms
from llama import kernels as K
from llama.config import Config
from threadtile.tile import cdiv
from torch.nn.functional import scaled_dot_product_attention as sdpa
cfg = Config(); h, kvh, d = cfg.heads, cfg.kv_heads, cfg.head_dim
CONF = [(4096, 64, 64, 4), (4096, 64, 128, 4), (4096, 128, 64, 8), (4096, 128, 128, 8), (1000, 64, 64, 4)] if mode == 'tma' else [(4096, 64, 64, 4), (4096, 64, 128, 4), (4096, 128, 128, 8)]
for seq, tm, tn, nw in CONF:
    torch.manual_seed(0)
    qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
    q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
    o = torch.full((1, seq, h, d), float("nan"), dtype=torch.bfloat16, device="cuda")
    kern = K.attention_prefill if nw == 4 else K.attention_prefill.replace_hints(num_warps=nw)
    f = lambda: kern[(cdiv(seq, tm), h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, tm, tn)
    t0 = time.time(); f(); torch.cuda.synchronize(); first = time.time() - t0
    ref = sdpa(q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(), is_causal=True, enable_gqa=True).transpose(1, 2)
    err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
    ms = min(cuda_time_ms(f) for _ in range(3))
    fl = 4 * h * seq * seq * d / 2
    print(f"{mode} prefill seq {seq} {tm}x{tn}: {fl / ms / 1e9:.0f} TFLOP/s ({ms:.4f} ms) err {err:.2e} first {first:.2f}s", flush=True)
# unaligned: a Q view whose storage starts 8 bytes in: TMA cannot read it -> the portable build
seq = 512
buf = torch.randn(1 * seq * (h + 2 * kvh) * d + 4, device="cuda").to(torch.bfloat16)
qkv = buf[4:].view(1, seq, h + 2 * kvh, d)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.full((1, seq, h, d), float("nan"), dtype=torch.bfloat16, device="cuda")
K.attention_prefill[(cdiv(seq, 64), h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, 64, 64)
ref = sdpa(q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(), is_causal=True, enable_gqa=True).transpose(1, 2)
print(mode, "unaligned err", ((o.float() - ref).abs().max() / ref.abs().max()).item())
