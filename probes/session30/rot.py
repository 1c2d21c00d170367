"""Llama prefill attention with K loaded one step ahead by hand (the load after the first product)."""
import math, sys
sys.path[:0] = ["bench", "examples"]
import threadtile.tile as ct
from llama.kernels import ConstInt
LOG2E = 1.4426950408889634
ZERO = ct.PaddingMode.ZERO

@ct.kernel
def att_rot(Q, K, V, Out, scale: float, G: ConstInt, D: ConstInt, TM: ConstInt, TN: ConstInt):
    i, h, b = ct.bid(0), ct.bid(1), ct.bid(2)
    kvh = h // G
    seq = Q.shape[1]
    qk_scale = scale * LOG2E
    q = ct.load(Q, index=(b, i, h, 0), shape=(1, TM, 1, D), padding_mode=ZERO).reshape((TM, D))
    rows = (i * TM + ct.arange(TM, dtype=ct.int32)).reshape((TM, 1))
    cols = ct.arange(TN, dtype=ct.int32).reshape((1, TN))
    m = ct.full((TM, 1), -math.inf, dtype=ct.float32)
    l_sum = ct.zeros((TM, 1), dtype=ct.float32)
    acc = ct.zeros((TM, D), dtype=ct.float32)
    last = min((i + 1) * TM, seq)
    full_tiles = (i * TM) // TN
    k = ct.load(K, index=(b, kvh, 0, 0), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                padding_mode=ZERO).reshape((D, TN))
    for j in range(ct.cdiv(last, TN)):
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
        k = ct.load(K, index=(b, kvh, 0, j + 1), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                    padding_mode=ZERO).reshape((D, TN))
        if j >= full_tiles:
            keep = (j * TN + cols <= rows) & (j * TN + cols < seq)
            s = ct.where(keep, s, -math.inf)
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True) * qk_scale)
        p = ct.exp2(s * qk_scale - m_new, flush_to_zero=True)
        alpha = ct.exp2(m - m_new, flush_to_zero=True)
        l_sum = l_sum * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(b, j, kvh, 0), shape=(1, TN, 1, D),
                    padding_mode=ZERO).reshape((TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m = m_new
    out = (acc / l_sum).reshape((1, TM, 1, D)).astype(Out.dtype)
    ct.store(Out, index=(b, i, h, 0), tile=out)

if __name__ == "__main__":
    import numpy as np, ml_dtypes
    z = lambda *s: np.zeros(s, dtype=ml_dtypes.bfloat16)
    qkv = z(1, 4096, 48, 128)
    args = (qkv[:, :, :32], qkv[:, :, 32:40], qkv[:, :, 40:], z(1, 4096, 32, 128), 0.1)
    src = att_rot.cuda_source(*args, G=4, D=128, TM=64, TN=64)
    print("\n".join(l for l in src.split("\n") if "load" in l or "mma<" in l or "for (" in l))
