"""Tile kernels written as a user writes them (``import threadtile.tile as ct``, cuTile's
names): a matrix multiply on tensor cores, a row softmax and layer norms.

The tests check them (tests/tile: in the simulator against NumPy and on the GPU against
torch; tests/codegen compiles each for every supported arch; there they are
``kernels.tiles.<name>``), and bench/tile_bench.py times them against cuBLAS, Triton, torch
and a device-to-device copy. docs/tiles.md explains the choices they make.

- ``matmul`` (and ``matmul_8warps``, the same on 8 warps): C = A @ B, one tile of C per block,
  as cuTile's MatMul sample writes it;
- ``matmul_fp32``: float32 without tfloat32 (FMAs);
- ``softmax_rows``: one row per block, held in registers;
- ``layer_norm_fwd``: layer norm forward as first written, three passes over X (the form
  of cuTile's LayerNorm sample);
- ``layer_norm_rows``, ``layer_norm_packed``, ``layer_norm_wide``: layer norm forward with one
  row per block, X read once from memory (float32 rows; 16-bit rows kept packed; long rows
  with the output written in chunks).

A tile kernel launches with its grid alone, e.g. ``matmul_8warps[(cdiv(m, 128), cdiv(n,
256))](a, b, c, 128, 256, 64)`` or ``ct.launch(stream, grid, softmax_rows, (x, y, 4096))``.
"""

import threadtile.tile as ct

ConstInt = ct.Constant[int]
PAD_ZERO = ct.PaddingMode.ZERO


@ct.kernel
def matmul(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A @ B, one (tm, tn) tile of C per block; float32 inputs go through tfloat32 (tensor
    cores), as in cuTile's MatMul sample."""
    bidx = ct.bid(0)
    bidy = ct.bid(1)
    num_tiles_k = ct.num_tiles(A, axis=1, shape=(tm, tk))
    accumulator = ct.full((tm, tn), 0, dtype=ct.float32)
    dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    for k in range(num_tiles_k):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=PAD_ZERO).astype(dtype)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=PAD_ZERO).astype(dtype)
        accumulator = ct.mma(a, b, accumulator)
    accumulator = ct.astype(accumulator, C.dtype)
    ct.store(C, index=(bidx, bidy), tile=accumulator)


# the same kernel on 8 warps: 128-row tiles, two warpgroups (the Hopper path's best shape,
# docs/tiles.md)
matmul_8warps = ct.kernel(num_warps=8)(matmul.py_func)


@ct.kernel
def matmul_fp32(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """Plain float32 (no tfloat32): `@` on float32 tiles multiplies with FMAs."""
    bidx, bidy = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=PAD_ZERO)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=PAD_ZERO)
        acc += a @ b
    ct.store(C, index=(bidx, bidy), tile=acc)


@ct.kernel(num_warps=8)
def softmax_rows(x, y, N: ConstInt):
    """One row per block, any row length up to N (padded with -inf), computed in float32."""
    row = ct.load(x, index=(ct.bid(0), 0), shape=(1, N),
                  padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
    e = ct.exp(row - ct.max(row))
    ct.store(y, index=(ct.bid(0), 0), tile=(e * (1.0 / ct.sum(e))).astype(y.dtype))


@ct.kernel
def layer_norm_fwd(X, W, B, Y, Mean, Rstd, eps, TILE_N: ConstInt):
    """Layer norm forward the way a first version is written: row ``bid(0)`` of X in chunks of
    TILE_N, three passes (the mean, the variance about it, then the output), each pass a loop
    of loads accumulated in float32 (the form of cuTile's LayerNorm sample)."""
    r = ct.bid(0)
    n = X.shape[1]
    chunks = ct.num_tiles(X, axis=1, shape=(1, TILE_N))

    mu = ct.zeros((1, TILE_N), dtype=ct.float32)  # per column, then (re-bound) the row's
    for c in range(chunks):
        mu += ct.load(X, index=(r, c), shape=(1, TILE_N), padding_mode=PAD_ZERO)
    mu = ct.sum(mu, axis=1) / n
    ct.store(Mean, index=(r,), tile=mu)

    var = ct.zeros((1, TILE_N), dtype=ct.float32)
    for c in range(chunks):
        x = ct.load(X, index=(r, c), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        inside = c * TILE_N + ct.arange(TILE_N, dtype=ct.int32) < n
        d = ct.where(inside, x - mu, 0)
        var += d * d
    var = ct.sum(var, axis=1) / n
    inv = 1 / ct.sqrt(var + eps)
    ct.store(Rstd, index=(r,), tile=inv)

    for c in range(chunks):
        x = ct.load(X, index=(r, c), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        w = ct.load(W, index=(c,), shape=(TILE_N,), padding_mode=PAD_ZERO)
        b = ct.load(B, index=(c,), shape=(TILE_N,), padding_mode=PAD_ZERO)
        ct.store(Y, index=(r, c), tile=((x - mu) * inv * w + b).astype(Y.dtype))


@ct.kernel(num_warps=8)
def layer_norm_rows(X, W, B, Y, Mean, Rstd, eps, N: ConstInt):
    """Layer norm forward with one row per block held in registers: X is read once (the
    cuTile sample, layer_norm_fwd, reads it three times). Rows up to N long, in float32.
    W and B are loaded first, so that their latency overlaps the row's."""
    bid = ct.bid(0)
    n = X.shape[1]
    w = ct.load(W, index=(0,), shape=(N,), padding_mode=PAD_ZERO).astype(ct.float32)
    b = ct.load(B, index=(0,), shape=(N,), padding_mode=PAD_ZERO).astype(ct.float32)
    x = ct.load(X, index=(bid, 0), shape=(1, N), padding_mode=PAD_ZERO).astype(ct.float32)
    mean = ct.sum(x) / n
    centered = x - mean  # the N - n padding zeros add (N - n) mean^2 to the squares
    rstd = 1.0 / ct.sqrt((ct.sum(centered * centered) - (N - n) * mean * mean) / n + eps)
    ct.store(Y, index=(bid, 0), tile=(centered * rstd * w + b).astype(Y.dtype))
    ct.store(Mean, index=(bid,), tile=ct.reshape(mean, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))


@ct.kernel(num_warps=32)
def layer_norm_packed(X, W, B, Y, Mean, Rstd, eps, N: ConstInt):
    """Layer norm forward with one row per block in registers, for 16-bit rows: the row stays
    as loaded (two values to a 32-bit register) and is converted to float32 afresh in each
    pass, and W and B are loaded only for the output, so a bfloat16 row of 32768 fits the
    registers of 32 warps. Rows up to N long."""
    bid = ct.bid(0)
    n = X.shape[1]
    inv_n = 1.0 / ct.float32(n)
    xr = ct.load(X, index=(bid, 0), shape=(1, N), padding_mode=PAD_ZERO)
    mean = ct.sum(xr.astype(ct.float32)) * inv_n
    centered = xr.astype(ct.float32) - mean  # the N - n padding zeros add (N - n) mean^2
    rstd = ct.rsqrt((ct.sum(centered * centered) - (N - n) * mean * mean) * inv_n + eps)
    w = ct.load(W, index=(0,), shape=(N,), padding_mode=PAD_ZERO)
    b = ct.load(B, index=(0,), shape=(N,), padding_mode=PAD_ZERO)
    # converted where they are used, so that the compiler need not hold them as float32
    y = (xr.astype(ct.float32) - mean) * rstd * w.astype(ct.float32) + b.astype(ct.float32)
    ct.store(Y, index=(bid, 0), tile=y.astype(Y.dtype))
    ct.store(Mean, index=(bid,), tile=ct.reshape(mean, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))


@ct.kernel(num_warps=32)
def layer_norm_wide(X, W, B, Y, Mean, Rstd, eps, N: ConstInt, CHUNK: ConstInt):
    """Layer norm forward for long rows: the statistics from the row held in registers (X
    read once from memory), then the output chunk by chunk, re-reading the row's chunks
    (which this block has just read, so they come from cache) with W and B: the registers
    hold one row, not the row and W and B."""
    bid = ct.bid(0)
    n = X.shape[1]
    x = ct.load(X, index=(bid, 0), shape=(1, N), padding_mode=PAD_ZERO).astype(ct.float32)
    mean = ct.sum(x) / n
    centered = x - mean  # the N - n padding zeros add (N - n) mean^2 to the squares
    rstd = 1.0 / ct.sqrt((ct.sum(centered * centered) - (N - n) * mean * mean) / n + eps)
    ct.store(Mean, index=(bid,), tile=ct.reshape(mean, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))
    for j in range(ct.cdiv(n, CHUNK)):
        xj = ct.load(X, index=(bid, j), shape=(1, CHUNK), padding_mode=PAD_ZERO)
        wj = ct.load(W, index=(j,), shape=(CHUNK,), padding_mode=PAD_ZERO)
        bj = ct.load(B, index=(j,), shape=(CHUNK,), padding_mode=PAD_ZERO)
        yj = (xj.astype(ct.float32) - mean) * rstd * wj.astype(ct.float32) + bj.astype(
            ct.float32)
        ct.store(Y, index=(bid, j), tile=yj.astype(Y.dtype))
