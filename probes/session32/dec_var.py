import math, sys, os, json
sys.path.insert(0, "bench")
import torch
from torch.nn.functional import scaled_dot_product_attention as sdpa
from _common import cuda_time_ms
import threadtile.tile as ct
from llama import kernels as K
from threadtile.tile import cdiv
ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO
LOG2E = 1.0 / math.log(2.0)

@ct.kernel
def dec_jt(Q, Kc, Vc, lens, Opart, Lse, scale: float, G: ConstInt, D: ConstInt,
           TN: ConstInt, chunk: int):
    sp, kvh, b = ct.bid(0), ct.bid(1), ct.bid(2)
    n = ct.load(lens, index=(b,), shape=(1,)).item()
    qk_scale = scale * LOG2E
    q = ct.load(Q, index=(b, kvh, 0), shape=(1, G, D)).reshape((G, D))
    cols = ct.arange(TN, dtype=ct.int32).reshape((1, TN))
    m = ct.full((G, 1), -math.inf, dtype=ct.float32)
    l_sum = ct.zeros((G, 1), dtype=ct.float32)
    acc = ct.zeros((G, D), dtype=ct.float32)
    first = sp * chunk
    stop = min(first + chunk, n)
    for jt in range(first // TN, ct.cdiv(stop, TN)):
        k = ct.load(Kc, index=(b, kvh, 0, jt), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                    padding_mode=ZERO).reshape((D, TN))
        s = ct.mma(q, k, ct.zeros((G, TN), dtype=ct.float32))
        s = ct.where(jt * TN + cols < n, s, -math.inf)
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True) * qk_scale)
        p = ct.exp2(s * qk_scale - m_new, flush_to_zero=True)
        alpha = ct.exp2(m - m_new, flush_to_zero=True)
        l_sum = l_sum * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(Vc, index=(b, jt, kvh, 0), shape=(1, TN, 1, D),
                    padding_mode=ZERO).reshape((TN, D))
        acc = ct.mma(p.astype(Vc.dtype), v, acc * alpha)
        m = m_new
    empty = l_sum == 0.0
    out = ct.where(empty, 0.0, acc / ct.where(empty, 1.0, l_sum))
    lse = ct.where(empty, -math.inf, m + ct.log2(ct.where(empty, 1.0, l_sum)))
    ct.store(Opart, index=(b, kvh, sp, 0, 0), tile=out.reshape((1, 1, 1, G, D)))
    ct.store(Lse, index=(b, kvh, sp, 0), tile=lse.reshape((1, 1, 1, G)))

res = {}
batch, ctx, G, h, kvh, d = 32, 4096, 4, 32, 8, 128
scale = 1 / math.sqrt(d)
qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
nbytes = 2 * batch * ctx * kvh * d * 2
rd = sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)[:, :, 0]
ts = cuda_time_ms(lambda: sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True))
print("sdpa", round(nbytes / ts / 1e6), flush=True)
for rep in range(2):
  for kern, kn in [(K.attention_decode, "plain"), (dec_jt, "jt")]:
    for tn, chunk in [(128, 4096), (128, 2048), (64, 2048), (64, 4096)]:
        splits = cdiv(ctx, chunk)
        sp2 = 1 << (splits - 1).bit_length()
        opart = torch.empty(batch, kvh, splits, G, d, dtype=torch.float32, device="cuda")
        lse = torch.empty(batch, kvh, splits, G, dtype=torch.float32, device="cuda")
        od = torch.empty(batch, h, d, dtype=torch.bfloat16, device="cuda")
        def dec():
            kern[(splits, kvh, batch)](qd, kc, vc, lens, opart, lse, scale, G, d, tn, chunk)
        def run():
            dec(); K.attention_combine[(kvh, batch)](opart, lse, od, G, d, sp2)
        try:
            od.fill_(float("nan")); run(); torch.cuda.synchronize()
            err = (od.float() - rd.float()).abs().max().item()
            tt = cuda_time_ms(run); t1 = cuda_time_ms(dec)
            res[f"{kn} {tn} {chunk} {rep}"] = (nbytes / tt / 1e6, nbytes / t1 / 1e6, err)
            print(kn, tn, chunk, round(nbytes / tt / 1e6), "alone", round(nbytes / t1 / 1e6), "err", err, flush=True)
        except Exception as e:
            print(kn, tn, chunk, "FAILED", repr(e)[:400], flush=True)
json.dump(res, open(os.environ.get("OUT", "/tmp") + "/dec_var.json", "w"), indent=1)
