"""Where causal prefill attention's time goes: block order, the diagonal mask, non-causal."""
import math, os, sys
sys.path[:0] = ["bench", "examples"]
import torch
import threadtile.tile as ct
from llama.kernels import ConstInt
from _common import cuda_time_ms
from llama.config import Config
from llama import kernels as K
LOG2E = 1.4426950408889634
ZERO = ct.PaddingMode.ZERO

def make(reverse, causal, diag_only=True, kfix=False, vfix=False):
    @ct.kernel
    def att(Q, K, V, Out, scale: float, G: ConstInt, D: ConstInt, TM: ConstInt, TN: ConstInt):
        i = ct.num_blocks(0) - 1 - ct.bid(0) if reverse else ct.bid(0)
        h, b = ct.bid(1), ct.bid(2)
        kvh = h // G
        seq = Q.shape[1]
        qk_scale = scale * LOG2E
        q = ct.load(Q, index=(b, i, h, 0), shape=(1, TM, 1, D), padding_mode=ZERO).reshape((TM, D))
        rows = (i * TM + ct.arange(TM, dtype=ct.int32)).reshape((TM, 1))
        cols = ct.arange(TN, dtype=ct.int32).reshape((1, TN))
        m = ct.full((TM, 1), -math.inf, dtype=ct.float32)
        l_sum = ct.zeros((TM, 1), dtype=ct.float32)
        acc = ct.zeros((TM, D), dtype=ct.float32)
        last = min((i + 1) * TM, seq) if causal else seq
        full_tiles = (i * TM) // TN if causal else seq // TN
        k0 = ct.load(K, index=(b, kvh, 0, 0), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                     padding_mode=ZERO).reshape((D, TN))
        for j in range(ct.cdiv(last, TN)):
            if kfix:
                s = ct.mma(q, k0, ct.zeros((TM, TN), dtype=ct.float32))
            else:
                k = ct.load(K, index=(b, kvh, 0, j), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                            padding_mode=ZERO).reshape((D, TN))
                s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
            if j >= full_tiles:
                keep = (j * TN + cols <= rows) & (j * TN + cols < seq)
                s = ct.where(keep, s, -math.inf)
            m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True) * qk_scale)
            p = ct.exp2(s * qk_scale - m_new, flush_to_zero=True)
            alpha = ct.exp2(m - m_new, flush_to_zero=True)
            l_sum = l_sum * alpha + ct.sum(p, axis=1, keepdims=True)
            v = ct.load(V, index=(b, 0 if vfix else j, kvh, 0), shape=(1, TN, 1, D),
                        padding_mode=ZERO).reshape((TN, D))
            acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
            m = m_new
        out = (acc / l_sum).reshape((1, TM, 1, D)).astype(Out.dtype)
        ct.store(Out, index=(b, i, h, 0), tile=out)
    return att

cfg = Config(); h, kvh, d = cfg.heads, cfg.kv_heads, cfg.head_dim
seq = 4096
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
for name, kern, causal in [("example", K.attention_prefill, True), ("kfix", make(False, True, kfix=True), True),
                           ("vfix", make(False, True, vfix=True), True), ("kvfix", make(False, True, kfix=True, vfix=True), True), ("noncausal", make(False, False), False)]:
    for tm, tn, nw in [(64, 64, 4)]:
        kk = kern if nw == 4 else kern.replace_hints(num_warps=nw)
        f = lambda: kk[(seq // tm, h, 1)](q, k, v, o, 1 / math.sqrt(d), cfg.group, d, tm, tn)
        f()
        ms = min(cuda_time_ms(f) for _ in range(3))
        fl = 4 * h * seq * seq * d / (2 if causal else 1)
        print(f"{name} {tm}x{tn}: {fl / ms / 1e9:.0f} TFLOP/s ({ms:.4f} ms)", flush=True)
