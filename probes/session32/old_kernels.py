"""The Llama decoder's kernels, tile level (``import threadtile.tile as ct``, cuTile's names).

Each is the plain kernel a user writes first; the tile sizes are chosen by the host code
(``layer.py``) from the shapes with one rule, not tuned per shape.

- ``rms_norm``: one row per block, float32 math, bfloat16 in and out;
- ``matmul``, ``matmul_add``, ``matmul_swiglu``: C = A @ B with bfloat16 operands and a float32
  accumulator; ``matmul_add`` adds a residual in its epilogue, ``matmul_swiglu`` multiplies A by
  gate and up columns packed side by side in one weight (``pack_gate_up``) and stores
  ``silu(gate) * up``. Their k loops have the one form the compiler pipelines (docs/tiles.md,
  "The k loop"); ``matmul_swiglu_two`` is the SwiGLU as first written (two accumulators,
  the weights unpacked), kept for the benchmark;
- ``matmul_part`` with ``combine``: a product split along K for few rows and a long K (decode's
  MLP down projection), each split's float32 partial product stored, then summed (with the
  residual) and rounded once;
- ``rope``: rotate-half rotary embedding of one token's heads per block, in place;
- ``kv_store``: one token's K and V rows into the caches at a position per sequence;
- ``attention_prefill``: causal flash attention with grouped-query heads (online softmax in
  base 2, a tile of queries against tiles of keys);
- ``attention_decode`` and ``attention_combine``: flash decoding, one query token per sequence
  against its cache, the keys split across blocks, then the splits' partial results merged by
  their log-sum-exps.
"""

from __future__ import annotations

import math

import numpy as np

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]
ZERO = ct.PaddingMode.ZERO
NEG_INF = ct.PaddingMode.NEG_INF
LOG2E = 1.0 / math.log(2.0)


@ct.kernel(num_warps=8)
def rms_norm(X, W, Y, eps: float, N: ConstInt):
    """Y[r] = X[r] / sqrt(mean(X[r]^2) + eps) * W, one row per block, rows up to N long
    (the padding zeros add nothing to the sum of squares)."""
    r = ct.bid(0)
    x = ct.load(X, index=(r, 0), shape=(1, N), padding_mode=ZERO).astype(ct.float32)
    w = ct.load(W, index=(0,), shape=(N,), padding_mode=ZERO).astype(ct.float32)
    inv = ct.rsqrt(ct.sum(x * x) / X.shape[1] + eps)
    ct.store(Y, index=(r, 0), tile=(x * inv * w).astype(Y.dtype))


@ct.kernel
def matmul(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A @ B, one (tm, tn) tile of C per block, accumulated in float32."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bx, by), tile=acc.astype(C.dtype))


@ct.kernel
def matmul_add(A, B, R, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A @ B + R (a residual added to the float32 accumulator before the one rounding)."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    r = ct.load(R, index=(bx, by), shape=(tm, tn), padding_mode=ZERO).astype(ct.float32)
    ct.store(C, index=(bx, by), tile=(acc + r).astype(C.dtype))


@ct.kernel
def matmul_swiglu(A, GU, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = silu(A @ Wg) * (A @ Wu) for ``GU = pack_gate_up(Wg, Wu, tn)``: column block ``j`` of
    GU (2 tn wide) is gate columns ``j tn ...`` then the same up columns, so one (tm, 2 tn)
    accumulator holds both halves of C's tile ``j``."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, 2 * tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(GU, index=(k, by), shape=(tk, 2 * tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    g = ct.extract(acc, index=(0, 0), shape=(tm, tn))
    u = ct.extract(acc, index=(0, 1), shape=(tm, tn))
    ct.store(C, index=(bx, by), tile=(g / (1.0 + ct.exp(-g)) * u).astype(C.dtype))


@ct.kernel
def matmul_swiglu_two(A, Wg, Wu, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = silu(A @ Wg) * (A @ Wu) as first written: two accumulators in one k loop, the
    weights as they are. Same result as ``matmul_swiglu``; its loop has two ``mma``s, a form
    the compiler does not pipeline (each runs as written), so bench/llama.py times both."""
    bx, by = ct.bid(0), ct.bid(1)
    g = ct.zeros((tm, tn), dtype=ct.float32)
    u = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        g = ct.mma(a, ct.load(Wg, index=(k, by), shape=(tk, tn), padding_mode=ZERO), g)
        u = ct.mma(a, ct.load(Wu, index=(k, by), shape=(tk, tn), padding_mode=ZERO), u)
    ct.store(C, index=(bx, by), tile=(g / (1.0 + ct.exp(-g)) * u).astype(C.dtype))


@ct.kernel
def matmul_part(A, B, P, tm: ConstInt, tn: ConstInt, tk: ConstInt, steps: int):
    """Split-K's first half: ``P[s] = A[:, K_s] @ B[K_s, :]`` in float32 for the ``steps``
    tiles of tk from ``s steps`` on (``s = bid(2)``), one (tm, tn) tile per block. For few
    rows (decode's 32 tokens) C has few tiles: the splits give the GPU enough blocks, each
    streaming wide rows of B. P is (splits, M, N); ``combine`` sums it."""
    bx, by, s = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    first = s * steps
    last = min(first + steps, ct.num_tiles(A, axis=1, shape=(tm, tk)))
    for k in range(first, last):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(P, index=(s, bx, by), tile=acc.reshape((1, tm, tn)))


@ct.kernel
def combine(P, R, C, S: ConstInt, tm: ConstInt, tn: ConstInt, residual: ConstBool):
    """Split-K's second half: C = the sum of P's S splits (+ R where ``residual``), rounded
    once to C's dtype."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.sum(ct.load(P, index=(0, bx, by), shape=(S, tm, tn), padding_mode=ZERO), axis=0)
    if residual:
        acc = acc + ct.load(R, index=(bx, by), shape=(tm, tn), padding_mode=ZERO).astype(
            ct.float32)
    ct.store(C, index=(bx, by), tile=acc.astype(C.dtype))


def pack_gate_up(wg: np.ndarray, wu: np.ndarray, tn: int):
    """The (K, 2 F) weight ``matmul_swiglu`` reads with column tiles of ``tn``: gate and up
    (each (K, F), F a multiple of tn) interleaved in blocks of ``tn`` columns. NumPy arrays or
    torch tensors."""
    k, f = wg.shape
    if wu.shape != wg.shape or f % tn:
        raise ValueError(f"pack_gate_up: gate {tuple(wg.shape)} and up {tuple(wu.shape)} must "
                         f"match, their columns a multiple of {tn}")
    blocks = [wg.reshape(k, f // tn, 1, tn), wu.reshape(k, f // tn, 1, tn)]
    if isinstance(wg, np.ndarray):
        return np.concatenate(blocks, axis=2).reshape(k, 2 * f)
    import torch  # noqa: PLC0415

    return torch.cat(blocks, dim=2).reshape(k, 2 * f)


@ct.kernel
def rope(X, pos, log2_theta: float, NH: ConstInt, D: ConstInt):
    """Rotary embedding in place, Llama's rotate-half convention, of token ``bid(0)``'s NH
    heads: X is (tokens, NH, D), ``pos`` the tokens' positions (int32). Element i < D/2 of a
    head and element i + D/2 rotate by the angle pos * theta^(-2i/D)."""
    t = ct.bid(0)
    half = D // 2
    p = ct.load(pos, index=(t,), shape=(1,)).astype(ct.float32).reshape((1, 1, 1))
    i = ct.arange(half, dtype=ct.int32).astype(ct.float32).reshape((1, 1, half))
    angle = p * ct.exp2(i * (-2.0 * log2_theta / D))
    c, s = ct.cos(angle), ct.sin(angle)
    x1 = ct.load(X, index=(t, 0, 0), shape=(1, NH, half)).astype(ct.float32)
    x2 = ct.load(X, index=(t, 0, 1), shape=(1, NH, half)).astype(ct.float32)
    ct.store(X, index=(t, 0, 0), tile=(x1 * c - x2 * s).astype(X.dtype))
    ct.store(X, index=(t, 0, 1), tile=(x2 * c + x1 * s).astype(X.dtype))


@ct.kernel
def kv_store(Kc, Vc, K, V, start, KV: ConstInt, D: ConstInt):
    """Token ``bid(0)`` of sequence ``bid(1)``: K[b, s] and V[b, s] (each (KV, D)) into the
    caches (batch, max_seq, KV, D) at position ``start[b] + s``."""
    s, b = ct.bid(0), ct.bid(1)
    at = ct.load(start, index=(b,), shape=(1,)).item() + s
    k = ct.load(K, index=(b, s, 0, 0), shape=(1, 1, KV, D))
    v = ct.load(V, index=(b, s, 0, 0), shape=(1, 1, KV, D))
    ct.store(Kc, index=(b, at, 0, 0), tile=k)
    ct.store(Vc, index=(b, at, 0, 0), tile=v)


@ct.kernel
def attention_prefill(Q, K, V, Out, scale: float, G: ConstInt, D: ConstInt, TM: ConstInt,
                      TN: ConstInt):
    """Causal attention of one (TM, D) tile of queries of one head against the keys up to them.

    Q and Out are (batch, seq, heads, D), K and V (batch, seq, kv heads, D): query head h reads
    KV head h // G. Block (i, h, b) takes queries i TM ... i TM + TM - 1. The softmax is
    online, in base 2: a running row maximum m and sum l, the output rescaled as m grows.
    """
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
    last = min((i + 1) * TM, seq)  # keys past the tile's last query or the sequence: masked
    full_tiles = (i * TM) // TN     # tiles of keys every query of the tile sees
    for j in range(ct.cdiv(last, TN)):
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
        v = ct.load(V, index=(b, j, kvh, 0), shape=(1, TN, 1, D),
                    padding_mode=ZERO).reshape((TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m = m_new
    out = (acc / l_sum).reshape((1, TM, 1, D)).astype(Out.dtype)
    ct.store(Out, index=(b, i, h, 0), tile=out)


@ct.kernel
def attention_decode(Q, Kc, Vc, lens, Opart, Lse, scale: float, G: ConstInt, D: ConstInt,
                     TN: ConstInt, chunk: int):
    """One split of flash decoding: the G query heads of KV head ``bid(1)`` of sequence
    ``bid(2)`` (Q is (batch, heads, D), one token each) against cache positions
    ``bid(0) chunk ...`` below ``lens[b]`` (the caches are (batch, max_seq, KV, D)). ``chunk``,
    a multiple of TN, is a run-time value: the host sizes the splits to the cache's length
    without compiling again.

    Writes the split's normalized output to Opart (batch, KV, splits, G, D), float32, and its
    log-sum-exp (base 2, of the scaled scores) to Lse (batch, KV, splits, G): -inf for a split
    past the sequence's end.
    """
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
    for j in range(ct.cdiv(max(stop - first, 0), TN)):
        jt = first // TN + j
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


@ct.kernel
def attention_combine(Opart, Lse, Out, G: ConstInt, D: ConstInt, SP: ConstInt):
    """Out[b, heads of KV head kvh] from the splits of ``attention_decode``: each split's output
    weighted by 2^(lse - max lse), over the weights' sum. Block (kvh, b); SP is the number of
    splits rounded up to a power of two (the padding's lse is -inf). Out is (batch, heads, D)."""
    kvh, b = ct.bid(0), ct.bid(1)
    lse = ct.load(Lse, index=(b, kvh, 0, 0), shape=(1, 1, SP, G),
                  padding_mode=NEG_INF).reshape((SP, G, 1))
    part = ct.load(Opart, index=(b, kvh, 0, 0, 0), shape=(1, 1, SP, G, D),
                   padding_mode=ZERO).reshape((SP, G, D))
    w = ct.exp2(lse - ct.max(lse, axis=0, keepdims=True))
    out = ct.sum(w * part, axis=0) / ct.sum(w, axis=0)
    ct.store(Out, index=(b, kvh, 0), tile=out.reshape((1, G, D)).astype(Out.dtype))
