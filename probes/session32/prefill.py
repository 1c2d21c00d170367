"""Session 32: prefill attention, heavy-first grid vs the old order; decode configs; copy bw."""
import math, sys, json, os
import torch
sys.path.insert(0, os.path.dirname(__file__))
from torch.nn.functional import scaled_dot_product_attention as sdpa
sys.path.insert(0, "bench")
from _common import cuda_time_ms
from llama import kernels as K
import old_kernels as OK
from threadtile.tile import cdiv

res = {}
h, kvh, d, seq = 32, 8, 128, 4096
scale = 1 / math.sqrt(d)
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
flops = 4 * h * seq * seq * d / 2
ref = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
           enable_gqa=True).transpose(1, 2)
t = cuda_time_ms(lambda: sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                              is_causal=True, enable_gqa=True))
res["sdpa"] = flops / t / 1e9
print("sdpa", res["sdpa"], flush=True)
for tm, tn in [(64, 128), (64, 64), (128, 128), (128, 64)]:
    for name, fn in [
        ("new", lambda: K.attention_prefill[(h, cdiv(seq, tm), 1)](q, k, v, o, scale, 4, d, tm, tn)),
        ("old", lambda: OK.attention_prefill[(cdiv(seq, tm), h, 1)](q, k, v, o, scale, 4, d, tm, tn))]:
        try:
            o.fill_(float("nan")); fn(); torch.cuda.synchronize()
            err = ((o.float() - ref.float()).abs().max().item())
            tt = cuda_time_ms(fn)
            res[f"{name} {tm}x{tn}"] = (flops / tt / 1e9, err)
            print(name, tm, tn, round(flops / tt / 1e9, 1), "err", err, flush=True)
        except Exception as e:
            print(name, tm, tn, "FAILED", repr(e)[:300], flush=True)
# device copy bandwidth
x = torch.empty(2 * 32 * 4096 * 8 * 128, dtype=torch.bfloat16, device="cuda")
y = torch.empty_like(x)
tc = cuda_time_ms(lambda: y.copy_(x))
res["copy_gbs"] = 2 * x.numel() * 2 / tc / 1e6
tr = cuda_time_ms(lambda: torch.sum(x.view(-1, 4096), dim=1, dtype=torch.float32))
res["read_sum_gbs"] = x.numel() * 2 / tr / 1e6
print("copy", res["copy_gbs"], "read(sum)", res["read_sum_gbs"], flush=True)
json.dump(res, open(os.environ.get("OUT", "/tmp") + "/prefill.json", "w"), indent=1)
# decode: configs
batch, ctx, G = 32, 4096, 4
qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
nbytes = 2 * batch * ctx * kvh * d * 2
rd = sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)[:, :, 0]
t = cuda_time_ms(lambda: sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True))
print("decode sdpa", nbytes / t / 1e6, flush=True)
res["dec_sdpa"] = nbytes / t / 1e6
for tn, chunk in [(64, 2048), (64, 1024), (128, 2048), (128, 4096), (64, 4096), (32, 2048)]:
    splits = cdiv(ctx, chunk)
    sp2 = 1 << (splits - 1).bit_length()
    opart = torch.empty(batch, kvh, splits, G, d, dtype=torch.float32, device="cuda")
    lse = torch.empty(batch, kvh, splits, G, dtype=torch.float32, device="cuda")
    od = torch.empty(batch, h, d, dtype=torch.bfloat16, device="cuda")
    def run():
        K.attention_decode[(splits, kvh, batch)](qd, kc, vc, lens, opart, lse, scale, G, d, tn, chunk)
        K.attention_combine[(kvh, batch)](opart, lse, od, G, d, sp2)
    def dec_only():
        K.attention_decode[(splits, kvh, batch)](qd, kc, vc, lens, opart, lse, scale, G, d, tn, chunk)
    try:
        run(); torch.cuda.synchronize()
        err = (od.float() - rd.float()).abs().max().item()
        tt = cuda_time_ms(run); t1 = cuda_time_ms(dec_only)
        res[f"dec {tn} {chunk}"] = (nbytes / tt / 1e6, nbytes / t1 / 1e6, err)
        print("decode", tn, chunk, round(nbytes / tt / 1e6), "alone", round(nbytes / t1 / 1e6), "err", err, flush=True)
    except Exception as e:
        print("decode", tn, chunk, "FAILED", repr(e)[:300], flush=True)
json.dump(res, open(os.environ.get("OUT", "/tmp") + "/prefill.json", "w"), indent=1)
