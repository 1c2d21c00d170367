"""Tile-level kernels (threadtile.tile, cuTile's names), and one that mixes levels.

The kernels the benchmarks time (the matmuls, ``softmax_rows``, the layer norms) are written
in examples/tile_kernels.py and imported here, so that each is ``kernels.tiles.<name>`` with
its ``EXAMPLES`` entry like the rest. ``vector_add``, ``softmax`` and ``transpose`` are
written as cuTile's samples write them, so that porting is only the import.
"""

import numpy as np
from tile_kernels import (  # noqa: F401  (kernels.tiles.<name>, as the tests use them)
    layer_norm_fwd,
    layer_norm_packed,
    layer_norm_rows,
    layer_norm_wide,
    matmul,
    matmul_8warps,
    matmul_fp32,
    softmax_rows,
)

import threadtile as cuda
import threadtile.tile as ct
from threadtile import bfloat16, float16, float32
from threadtile.lang.types import ArrayType

from . import example

ConstInt = ct.Constant[int]
PAD_ZERO = ct.PaddingMode.ZERO


@ct.kernel
def vector_add(a, b, c, tile: ConstInt):
    pid = ct.bid(0)
    ta = ct.load(a, index=(pid,), shape=(tile,), padding_mode=PAD_ZERO)
    tb = ct.load(b, index=(pid,), shape=(tile,), padding_mode=PAD_ZERO)
    ct.store(c, index=(pid,), tile=ta + tb)


@ct.kernel
def bmm(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """A batched matmul as cuTile's BatchMatMul sample writes it: 3-d loads of batch bid(2)
    reshaped to 2-d (the batched k loop: a Hopper loop on maps of the 3-d arrays' rows)."""
    bi, bj, z = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=2, shape=(1, tm, tk))):
        a = ct.load(A, index=(z, bi, k), shape=(1, tm, tk), padding_mode=PAD_ZERO)
        b = ct.load(B, index=(z, k, bj), shape=(1, tk, tn), padding_mode=PAD_ZERO)
        acc = ct.mma(ct.reshape(a, (tm, tk)), ct.reshape(b, (tk, tn)), acc)
    ct.store(C, index=(z, bi, bj), tile=ct.reshape(acc.astype(C.dtype), (1, tm, tn)))


@ct.kernel
def matmul_persistent(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """A persistent matmul as cuTile's MatMul sample writes it: each block loops over output
    tiles bid(0), bid(0) + num_blocks(0), ... (float32 operands through tfloat32)."""
    dt = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    tiles_n = ct.cdiv(B.shape[1], tn)
    for t in range(ct.bid(0), ct.cdiv(A.shape[0], tm) * tiles_n, ct.num_blocks(0)):
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(t // tiles_n, k), shape=(tm, tk), padding_mode=PAD_ZERO)
            b = ct.load(B, index=(k, t % tiles_n), shape=(tk, tn), padding_mode=PAD_ZERO)
            acc = ct.mma(a.astype(dt), b.astype(dt), acc)
        ct.store(C, index=(t // tiles_n, t % tiles_n), tile=acc.astype(C.dtype))


@ct.kernel
def softmax(input, output, B: ConstInt, N: ConstInt):
    """cuTile's softmax test kernel: B rows of N per block."""
    rows = ct.load(input, index=(ct.bid(0), 0), shape=(B, N))
    numerator = ct.exp(rows - ct.max(rows, axis=1, keepdims=True))
    denominator = ct.sum(numerator, axis=1, keepdims=True)
    ct.store(output, index=(ct.bid(0), 0), tile=numerator / denominator)


# rows of 32768 on 32 warps: 32 values per thread stay in registers
softmax_rows_wide = ct.kernel(num_warps=32)(softmax_rows.py_func)


@ct.kernel
def transpose(x, y, tm: ConstInt, tn: ConstInt):
    """cuTile's Transpose sample: y = x.T tile by tile."""
    bidx = ct.bid(0)
    bidy = ct.bid(1)
    input_tile = ct.load(x, index=(bidx, bidy), shape=(tm, tn), padding_mode=PAD_ZERO)
    transposed_tile = ct.transpose(input_tile)
    ct.store(y, index=(bidy, bidx), tile=transposed_tile)


@cuda.jit(num_warps=4)
def matmul_rowsum(A, B, C, rowsum, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    """A thread-level kernel around a tile matmul (what neither Triton nor cuTile can write):
    the tile product goes to C and, through shared memory, to an epilogue in which each warp
    sums rows of the tile with shuffles and one lane per row adds the sum to ``rowsum`` with
    an atomic (several blocks contribute to each row)."""
    bx = ct.bid(0)
    by = ct.bid(1)
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, index=(bx, k), shape=(TM, TK), padding_mode=PAD_ZERO)
        b = ct.load(B, index=(k, by), shape=(TK, TN), padding_mode=PAD_ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bx, by), tile=acc.astype(C.dtype))
    sh = cuda.shared.array((TM, TN), np.float32)
    ct.store(sh, index=(0, 0), tile=acc)  # a store to shared memory synchronizes the block
    lane = cuda.laneid
    warp = cuda.threadIdx.x // 32
    for r in range(warp, TM, 4):
        s = np.float32(0)
        for c in range(lane, TN, 32):
            s += sh[r, c]
        off = 16
        while off > 0:
            s += cuda.shfl_down_sync(0xFFFFFFFF, s, off)
            off //= 2
        row = bx * TM + r
        if lane == 0 and row < rowsum.shape[0]:
            cuda.atomic.add(rowsum, row, s)


@ct.kernel
def reductions(x, sums, maxs, mins, prods, amax, amin, total, R: ConstInt, C: ConstInt):
    """Every reduction, along each axis and over all (one (R, C) tile per block)."""
    t = ct.load(x, index=(ct.bid(0), 0), shape=(R, C))
    ct.store(sums, index=(ct.bid(0), 0), tile=ct.sum(t, axis=1, keepdims=True))
    ct.store(maxs, index=(ct.bid(0),), tile=ct.max(t, axis=1))
    ct.store(mins, index=(ct.bid(0), 0), tile=ct.min(t, axis=0, keepdims=True))
    ct.store(prods, index=(ct.bid(0),), tile=ct.prod(t, 1))
    ct.store(amax, index=(ct.bid(0),), tile=ct.argmax(t, axis=1))
    ct.store(amin, index=(ct.bid(0), 0), tile=ct.argmin(t, axis=0, keepdims=True))
    ct.store(total, index=(ct.bid(0),), tile=ct.sum(t) + ct.zeros((1,), ct.float32))


@ct.kernel
def elementwise(x, y, out, N: ConstInt):
    """Math, comparisons, where, min/max, casts, powers, scans and shape changes on one tile."""
    tx = ct.load(x, index=(ct.bid(0),), shape=(N,), padding_mode=PAD_ZERO)
    ty = ct.load(y, index=(ct.bid(0),), shape=(N,), padding_mode=PAD_ZERO)
    r0 = ct.where(tx > ty, ct.exp(tx) - ct.log(ct.abs(ty) + 1), ct.sqrt(ct.abs(tx)) * 2)
    r1 = ct.maximum(tx, 0.5) + ct.minimum(ty, -0.5) + ct.tanh(tx) * ct.sin(ty) - ct.cos(tx)
    r2 = ct.floor(tx * 4) / 4 + ct.ceil(ty) + ct.exp2(ty) - ct.log2(ct.abs(tx) + 2)
    r3 = (tx ** 2 + ty ** 3 - ct.rsqrt(ty * ty + 1)).astype(ct.float16).astype(ct.float32)
    idx = ct.arange(N, dtype=ct.int32)
    r4 = ct.cumsum(tx) + (idx % 3 - idx // 5).astype(ct.float32)
    grid = ct.reshape(tx, (N // 8, 8))
    back = ct.permute(ct.expand_dims(ct.transpose(grid), 0), (1, 0, 2)).reshape((N,))
    r5 = back + ct.broadcast_to(ct.full((1,), 3.0, ct.float32), (N,))
    res = ct.reshape(ct.where(idx < N // 2, r0 + r1, r2 + r3) + r4 + r5, (N,))
    ct.store(out, index=(ct.bid(0),), tile=res)


@ct.kernel
def histogram(x, bins, NB: ConstInt, N: ConstInt):
    """atomic_add of a tile of ones at tile-valued indices (several blocks share the bins);
    indices outside ``bins`` are skipped."""
    v = ct.load(x, index=(ct.bid(0),), shape=(N,), padding_mode=PAD_ZERO)
    inside = ct.bid(0) * N + ct.arange(N, dtype=ct.int32) < x.shape[0]
    b = ct.floor(v).astype(ct.int32)
    ct.atomic_add(bins, ct.where(inside, b, NB + 7), ct.ones((N,), ct.int32))


@ct.kernel
def claim(lock, owner, vals, T: ConstInt):
    """atomic_cas with an acquire order (the first block to come takes each slot),
    atomic_xchg, and atomic_max with a relaxed order at block scope; ``owner`` gets the values
    the compare-and-swaps saw."""
    i = ct.arange(T, dtype=ct.int32)
    seen = ct.atomic_cas(lock, (i,), 0, ct.bid(0) + 1, memory_order=ct.MemoryOrder.ACQUIRE)
    ct.store(owner, index=(ct.bid(0),), tile=seen)
    ct.atomic_xchg(vals, i.astype(ct.int64) + T * ct.bid(0), ct.full((T,), 5.0, ct.float32))
    ct.atomic_max(lock, (i % 2 + T,), ct.bid(0) * 10, memory_order=ct.MemoryOrder.RELAXED,
                  memory_scope=ct.MemoryScope.BLOCK)


@ct.function
def row_scaled(t, s):
    """A device function (cuTile's ct.function) taking and returning tiles."""
    return t * s + ct.sum(t, axis=1, keepdims=True)


@ct.function
def wrap(i, n):
    return i % n


@ct.kernel
def with_functions(x, y, T: ConstInt):
    b = wrap(ct.bid(0), 4)
    t = ct.load(x, index=(b, 0), shape=(T, T))
    ct.store(y, index=(b, 0), tile=row_scaled(t, 2.0))


@ct.kernel(num_warps=2)
def odds_and_ends(x, xt, ints, h, out, iout, hout, T: ConstInt):
    """Corners: blocks that return early, branches on block-uniform values, a 0-d tile used
    as a number, loads in Fortran order and from a transposed (strided) view, Python's // and %
    on negative integers, bfloat16/float16 arithmetic, argmax over every axis, reversed
    cumprod."""
    b = ct.bid(0)
    if b >= 2:
        return
    t = ct.load(x, index=(0, b), shape=(T, T), order="F")  # t[i, j] = x[b*T + j, i]
    u = ct.load(xt, index=(b, 0), shape=(T, T))  # xt = x.T, a strided view
    total = ct.sum(t - ct.transpose(u))  # exactly 0 when both loads are right
    if total == 0.0:
        r = t * 2.0
    else:
        r = t
    if b == 1:
        r = r + ct.argmax(r).astype(ct.float32)
    ct.store(out, index=(b, 0), tile=r + ct.cumprod(ct.full((T, T), 1.0001, ct.float32),
                                                    axis=1, reverse=True))
    n = ct.load(ints, index=(b,), shape=(T * T,))
    ct.store(iout, index=(b,), tile=n // 7 * 100 + n % 7 - ct.where(n < 0, 1, 0))
    hh = ct.load(h, index=(b,), shape=(T,))
    ct.store(hout, index=(b,), tile=(hh * hh - hh / 3).astype(hout.dtype))


@ct.kernel(num_warps=4)
def vector_runs(x, w, h, out, amax, colsum, scanned, hout, C: ConstInt):
    """Tiles whose threads hold runs of consecutive elements (tile.h's vector width: 4 for
    (4, 512) on 128 threads, 2 for (8, 256)): vector loads and stores, row reductions and
    argmax over runs, a broadcast of a row, a reshape that changes the width, a column sum
    and a scan through shared memory, and 8-byte runs of bfloat16."""
    b = ct.bid(0)
    t = ct.load(x, index=(b, 0), shape=(4, C), padding_mode=PAD_ZERO)
    tw = ct.load(w, index=(0,), shape=(C,), padding_mode=PAD_ZERO)
    ct.store(out, index=(b, 0), tile=t * tw - ct.max(t, axis=1, keepdims=True))
    ct.store(amax, index=(b,), tile=ct.argmax(t, axis=1))
    ct.store(colsum, index=(b, 0), tile=ct.sum(t, axis=0, keepdims=True))
    halves = ct.reshape(t, (8, C // 2))
    ct.store(scanned, index=(b, 0), tile=ct.cumsum(halves, axis=1))
    th = ct.load(h, index=(b, 0), shape=(4, C), padding_mode=PAD_ZERO)
    ct.store(hout, index=(b, 0), tile=(th * 2.0 + 1.0).astype(hout.dtype))


def vector_runs_reference(x, w, h, C):
    """What tiles.vector_runs computes, in float64 (h's result in float32 before rounding)."""
    rows = x.shape[0]
    nb = -(-rows // 4)
    xp = np.zeros((nb * 4, C))
    xp[:rows, :x.shape[1]] = x
    wp = np.zeros(C)
    wp[:len(w)] = w
    out = (xp * wp - xp.max(axis=1, keepdims=True))[:rows, :x.shape[1]]
    amax = xp.argmax(axis=1)[:rows]
    colsum = xp.reshape(nb, 4, C).sum(axis=1)[:, :x.shape[1]]
    scanned = np.cumsum(xp.reshape(nb * 8, C // 2), axis=1)
    return out, amax, colsum, scanned, h.astype(np.float64) * 2 + 1


@ct.kernel(num_warps=8)
def softmax_chunked(x, y, C: ConstInt):
    """Softmax of rows of any length in chunks of C, in float32: a first pass keeps a running
    maximum and sum for each of the C positions (one exponential per element, no reduction
    inside the loop), then the block combines them, and a second pass re-reads the row's
    chunks (just read by this block, so from cache) to write the output. Registers hold a
    few chunks, not the row, so several blocks share a multiprocessor."""
    bid = ct.bid(0)
    nt = ct.cdiv(x.shape[1], C)
    m = ct.full((1, C), -3.0e38, dtype=ct.float32)  # finite, so that padding adds no NaN
    s = ct.zeros((1, C), dtype=ct.float32)
    for j in range(nt):
        t = ct.load(x, index=(bid, j), shape=(1, C),
                    padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
        d = t - m
        e = ct.exp(-ct.abs(d))  # exp(t - m) below the maximum, exp(m - t) above it
        s = ct.where(d > 0, s * e + 1.0, s + e)
        m = ct.maximum(m, t)
    top = ct.max(m)
    scale = 1.0 / ct.sum(s * ct.exp(m - top))
    for j in range(nt):
        t = ct.load(x, index=(bid, j), shape=(1, C),
                    padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
        ct.store(y, index=(bid, j), tile=(ct.exp(t - top) * scale).astype(y.dtype))


@ct.kernel(num_warps=8)
def layer_norm_chunked(X, W, B, Y, Mean, Rstd, eps, C: ConstInt):
    """Layer norm forward for rows of any length in chunks of C: a first pass keeps Welford's
    running mean and sum of squared deviations for each of the C positions (no reduction
    inside the loop), the block combines them (Chan's formula), and a second pass re-reads
    the row's chunks from cache with W and B to write the output. Few registers per thread,
    so several blocks share a multiprocessor."""
    bid = ct.bid(0)
    n = X.shape[1]
    nt = ct.cdiv(n, C)
    lane = ct.arange(C, dtype=ct.int32)
    mean = ct.zeros((1, C), dtype=ct.float32)
    m2 = ct.zeros((1, C), dtype=ct.float32)
    for j in range(nt):
        x = ct.load(X, index=(bid, j), shape=(1, C), padding_mode=PAD_ZERO).astype(ct.float32)
        valid = j * C + lane < n
        delta = x - mean
        mean = mean + ct.where(valid, delta / (j + 1), 0.0)
        m2 = m2 + ct.where(valid, delta * (x - mean), 0.0)
    count = ct.where(lane < n - (nt - 1) * C, nt, nt - 1).astype(ct.float32)
    mu = ct.sum(count * mean) / n
    dev = mean - mu
    rstd = 1.0 / ct.sqrt((ct.sum(m2) + ct.sum(count * dev * dev)) / n + eps)
    ct.store(Mean, index=(bid,), tile=ct.reshape(mu, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))
    for j in range(nt):
        xj = ct.load(X, index=(bid, j), shape=(1, C), padding_mode=PAD_ZERO)
        wj = ct.load(W, index=(j,), shape=(C,), padding_mode=PAD_ZERO)
        bj = ct.load(B, index=(j,), shape=(C,), padding_mode=PAD_ZERO)
        yj = (xj.astype(ct.float32) - mu) * rstd * wj.astype(ct.float32) + bj.astype(
            ct.float32)
        ct.store(Y, index=(bid, j), tile=yj.astype(Y.dtype))


@ct.kernel(num_warps=4)
def exp_modes(x, full, fast, T: ConstInt):
    """ct.exp with RoundingMode.FULL (the default) and APPROX (the fast hardware exponential)."""
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=PAD_ZERO)
    ct.store(full, index=(ct.bid(0),), tile=ct.exp(t, rounding_mode=ct.RoundingMode.FULL))
    ct.store(fast, index=(ct.bid(0),), tile=ct.exp(t, rounding_mode=ct.RoundingMode.APPROX))


@ct.kernel(num_warps=4)
def div_modes(x, y, full, fast, T: ConstInt):
    """ct.truediv as IEEE (the default) and with RoundingMode.APPROX (the fast division)."""
    a = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=PAD_ZERO)
    b = ct.load(y, index=(ct.bid(0),), shape=(T,), padding_mode=PAD_ZERO)
    ct.store(full, index=(ct.bid(0),), tile=ct.truediv(a, b))
    ct.store(fast, index=(ct.bid(0),), tile=ct.truediv(a, b, flush_to_zero=True,
                                                       rounding_mode=ct.RoundingMode.APPROX))


@ct.kernel(num_warps=4)
def exp2_ftz(x, keep, ftz, T: ConstInt):
    """ct.exp2 as it is and with flush_to_zero=True (subnormal results zero)."""
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=PAD_ZERO)
    ct.store(keep, index=(ct.bid(0),), tile=ct.exp2(t))
    ct.store(ftz, index=(ct.bid(0),), tile=ct.exp2(t, flush_to_zero=True))


@ct.kernel(num_warps=1)
def printf_sum(x, N: ConstInt):
    s = ct.sum(ct.load(x, index=(0,), shape=(N,)))
    ct.printf("sum %d of %d: %.2f\n", ct.bid(0), N, s)


_f32 = np.zeros((64, 64), np.float32)
_f16 = ArrayType(float16, 2, "C")
_bf16 = ArrayType(bfloat16, 2, "C")
_v = np.zeros(100, np.float32)
_vi = np.zeros(100, np.int32)

EXAMPLES = {
    "vector_add": [example(_v, _v, _v, tile=64), example(_v, _v, _v, tile=1024)],
    "matmul": [example(_f16, _f16, _f16, tm=64, tn=64, tk=32),
               example(_bf16, _bf16, _bf16, tm=64, tn=32, tk=16),
               example(_f32, _f32, _f32, tm=32, tn=32, tk=16)],
    "matmul_8warps": [example(_f16, _f16, _f16, tm=128, tn=256, tk=64),
                      example(_bf16, _bf16, _bf16, tm=128, tn=128, tk=64)],
    "matmul_fp32": [example(_f32, _f32, _f32, tm=32, tn=32, tk=8)],
    "matmul_persistent": [example(_f16, _f16, _f16, tm=128, tn=256, tk=64),
                          example(_f32, _f32, _f32, tm=128, tn=128, tk=32)],
    "bmm": [example(ArrayType(float16, 3, "C"), ArrayType(float16, 3, "C"),
                    ArrayType(float16, 3, "C"), tm=128, tn=128, tk=64)],
    "softmax": [example(_f32, _f32, B=2, N=64)],
    "softmax_rows": [example(_f32, _f32, N=1024), example(_f16, _f16, N=256)],
    "softmax_rows_wide": [example(_f32, _f32, N=32768), example(_bf16, _bf16, N=32768)],
    "vector_runs": [example(_f32, _v, _bf16, _f32, _vi, _f32, _f32, _bf16, C=512)],
    "layer_norm_rows": [example(_f32, _v, _v, _f32, _v, _v, 1e-5, N=4096),
                        example(_bf16, ArrayType(bfloat16, 1, "C"), ArrayType(bfloat16, 1, "C"),
                                _bf16, _v, _v, 1e-5, N=1024)],
    "layer_norm_packed": [example(_bf16, ArrayType(bfloat16, 1, "C"), ArrayType(bfloat16, 1, "C"),
                                  _bf16, _v, _v, 1e-5, N=32768),
                          example(_f32, _v, _v, _f32, _v, _v, 1e-5, N=32768)],
    "layer_norm_wide": [example(_f32, _v, _v, _f32, _v, _v, 1e-5, N=32768, CHUNK=4096),
                        example(_bf16, ArrayType(bfloat16, 1, "C"),
                                ArrayType(bfloat16, 1, "C"), _bf16, _v, _v, 1e-5, N=32768,
                                CHUNK=4096)],
    "softmax_chunked": [example(_f32, _f32, C=2048), example(_bf16, _bf16, C=2048)],
    "layer_norm_chunked": [example(_f32, _v, _v, _f32, _v, _v, 1e-5, C=2048),
                           example(_bf16, ArrayType(bfloat16, 1, "C"),
                                   ArrayType(bfloat16, 1, "C"), _bf16, _v, _v, 1e-5, C=2048)],
    "div_modes": [example(_v, _v, _v, _v, T=512)],
    "exp2_ftz": [example(_v, _v, _v, T=512)],
    "exp_modes": [example(_v, _v, _v, T=512),
                  example(ArrayType(bfloat16, 1, "C"), _v, ArrayType(bfloat16, 1, "C"), T=512)],
    "layer_norm_fwd": [example(_f32, _v, _v, _f32, _v, _v, 1e-5, TILE_N=256)],
    "transpose": [example(_f32, _f32, tm=32, tn=64)],
    "matmul_rowsum": [example(_f16, _f16, _f32, _v, TM=32, TN=64, TK=32)],
    "reductions": [example(_f32, _f32, _v, _f32, _v, _vi, _vi.reshape(1, -1), _v, R=16,
                           C=8)],
    "elementwise": [example(_v, _v, _v, N=256)],
    "histogram": [example(_v, _vi, NB=16, N=128)],
    "printf_sum": [example(_v, N=64)],
    "odds_and_ends": [example(_f32, _f32.T, _vi, ArrayType(bfloat16, 1, "C"), _f32, _vi,
                              ArrayType(float32, 1, "C"), T=8)],
    "claim": [example(_vi, _vi, _v, T=16)],
    "with_functions": [example(_f32, _f32, T=16)],
}
_ = float32
