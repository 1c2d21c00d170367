"""prefill attention (and decode) with / without the operand pipelining (argv[1] == 'off')."""
import math, sys
sys.path.insert(0, "bench")
if len(sys.argv) > 1 and sys.argv[1] == "off":
    import threadtile.ir.passes as P
    P.pipeline_operands = lambda f: False
import torch
from _common import cuda_time_ms
from llama import kernels as K
from llama.config import Config
from llama.layer import DecoderLayer
from torch.nn.functional import scaled_dot_product_attention as sdpa
from threadtile.tile import cdiv
cfg = Config()
seq, h, kvh, d = 4096, cfg.heads, cfg.kv_heads, cfg.head_dim
scale = 1 / math.sqrt(d)
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
ref = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
           enable_gqa=True).transpose(1, 2).float()
flops = 4 * h * seq * seq * d / 2
tag = sys.argv[1] if len(sys.argv) > 1 else "on"
configs = [(64, 64, 4, None), (64, 64, 4, 3), (64, 64, 4, 2), (128, 128, 8, None), (128, 128, 8, 2)]
for tm, tn, nw, occ in configs:
    kern = K.attention_prefill.replace_hints(num_warps=nw, occupancy=occ)
    o = torch.full((1, seq, h, d), float("nan"), dtype=torch.bfloat16, device="cuda")
    f = lambda: kern[(cdiv(seq, tm), h, 1)](q, k, v, o, scale, cfg.group, d, tm, tn)
    try:
        f()
    except Exception as e:
        print(tag, tm, tn, nw, occ, "ERR", str(e)[:200]); continue
    r = kern.resources(q, k, v, o, scale, cfg.group, d, tm, tn)
    print(tag, tm, tn, nw, occ, r.registers, r.spill_stores, r.blocks_per_sm if hasattr(r, "blocks_per_sm") else "")
    err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
    t = min(cuda_time_ms(f) for _ in range(2))
    print(f"{tag} prefill tm {tm} tn {tn} warps {nw} occ {occ}: {flops/t/1e9:.1f} TFLOP/s err {err:.4f}", flush=True)
t = cuda_time_ms(lambda: sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True))
print(f"sdpa {flops/t/1e9:.1f}")
for ctx in (4096, 4097):
    batch = 32
    qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
    kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
    nbytes = 2 * batch * ctx * kvh * d * 2
    layer = DecoderLayer(cfg, None)
    out = layer.attention_decode(qd, kc, vc, lens, ctx)
    r = sdpa(qd[:, :, None].transpose(1, 2).transpose(1, 2), kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)[:, :, 0].float()
    err = ((out.float() - r).abs().max() / r.abs().max()).item()
    t = min(cuda_time_ms(lambda: layer.attention_decode(qd, kc, vc, lens, ctx)) for _ in range(2))
    print(f"{tag} decode ctx {ctx}: {nbytes/t/1e6:.0f} GB/s err {err:.4f}", flush=True)
