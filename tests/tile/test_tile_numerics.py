"""Tile kernels (tests/kernels/tiles.py) on every target against NumPy in float64: elementwise
work; matrix products (the tensor-core matmul in float16, bfloat16 and float32 through
tfloat32 at the shapes that reach each of tile.h's k loops, the FMA matmul, a transpose, tiles
inside a thread-level kernel); softmax and layer norm in their several layouts; reductions,
scans, atomics, device functions, printf and corners of the language.

Each test runs in the simulator and on the GPU from one body (the ``target`` fixture,
tests/conftest.py). Inputs are fresh random arrays (the seed is printed: THREADTILE_TEST_SEED
replays a failure), outputs are poisoned with NaN (or a sentinel) first and checked whole, and
tolerances follow from the dtypes: float32 within about 1e-5, 16-bit outputs within their
rounding, sums in any order within their float32 rounding bounds, selections exact. What only
a compiled kernel has (tensor maps, the sm_90 build, torch streams) is in
tests/gpu/test_tile_paths_gpu.py.
"""

import numpy as np
import pytest
from conftest import U32, assert_close, assert_dot_close, cdiv, poison, quantize
from kernels import tiles

import threadtile.tile as ct

ConstInt = ct.Constant[int]
PAD_ZERO = ct.PaddingMode.ZERO

U_HALF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}  # unit roundoffs
TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}  # one or a few roundings


def gamma(n: int) -> float:
    """The bound on the relative error of n float32 roundings in a row: n u / (1 - n u)."""
    return n * U32 / (1 - n * U32)


def close(got, ref, rtol, atol):
    """Every element written (no NaN where the reference has none) and within tolerance."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    assert not np.isnan(got[~np.isnan(ref)]).any(), "unwritten (NaN) elements"
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


# ---- elementwise -----------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "tile"), [(1000, 256), (100_000, 1024),
                                         (50, 64)])  # 64: a tile smaller than the block
def test_vector_add(target, rng, n, tile):
    """Not a multiple of the tile: the last tile is padded, its store clipped."""
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = target.to_device(poison(n, np.float32))
    target.launch_tile(tiles.vector_add, ct.cdiv(n, tile), target.to_device(a),
                       target.to_device(b), c, tile)
    # one float32 rounding of the exact sum
    np.testing.assert_array_equal(target.to_host(c), (a.astype(np.float64) + b).astype(
        np.float32))


def test_launch_with_a_stream_as_cutile_does(target, rng):
    """ct.launch(stream, grid, kernel, args), with None: the current stream."""
    n = 300
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = target.to_device(poison(n, np.float32))
    with target.running():
        ct.launch(None, (ct.cdiv(n, 128), 1, 1), tiles.vector_add,
                  (target.to_device(a), target.to_device(b), c, 128))
    np.testing.assert_array_equal(target.to_host(c), (a.astype(np.float64) + b).astype(
        np.float32))


@pytest.mark.parametrize(("n", "scale"), [(1000, 5.0), (4096, 8.0)])
def test_exp_modes(target, rng, n, scale):
    """FULL is within 2 ulp of exp; APPROX within a few ulp near zero, its error growing with
    |x| (2 + 1.16 |x| ulp is the hardware exponential's bound). The simulator computes both
    as NumPy's exponential; on the GPU they are different code."""
    x = (rng.standard_normal(n) * scale).astype(np.float32)
    full, fast = target.to_device(poison(n, np.float32)), target.to_device(poison(n, np.float32))
    target.launch_tile(tiles.exp_modes, cdiv(n, 512), target.to_device(x), full, fast, 512)
    full, fast = target.to_host(full), target.to_host(fast)
    x64 = x.astype(np.float64)
    ref = np.exp(x64)
    ulp = np.finfo(np.float32).eps * ref
    assert not np.isnan(full).any() and not np.isnan(fast).any()
    assert (np.abs(full - ref) <= 2 * ulp + 1e-45).all()
    assert (np.abs(fast - ref) <= (3 + 1.2 * np.abs(x64)) * ulp + 1e-38).all()
    if target.name == "gpu":
        assert not np.array_equal(full, fast)  # the two modes are different code


def test_div_modes(target, rng):
    """truediv: IEEE by default (correctly rounded); APPROX within 2 ulp for divisors below
    2**126 (the hardware's fast division; the simulator divides as IEEE)."""
    n = 3000
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    y = (rng.uniform(0.5, 4.0, n) * rng.choice([-1, 1], n) * 10.0 ** rng.integers(-3, 4, n)
         ).astype(np.float32)
    full, fast = target.to_device(poison(n, np.float32)), target.to_device(poison(n, np.float32))
    target.launch_tile(tiles.div_modes, cdiv(n, 512), target.to_device(x), target.to_device(y),
                       full, fast, 512)
    full, fast = target.to_host(full), target.to_host(fast)
    ref = x.astype(np.float64) / y
    np.testing.assert_array_equal(full, ref.astype(np.float32))
    ulp = np.finfo(np.float32).eps * np.abs(ref)
    assert (np.abs(fast - ref) <= 2 * ulp + 1e-38).all()


def test_exp2_flush_to_zero(target, rng):
    """exp2(x, flush_to_zero=True) of float32: results below 2**-126 are zero, the others
    as exp2 (within 2 ulp); without the flag they stay subnormal."""
    n = 2000
    x = np.concatenate([rng.uniform(-149.0, -126.0, n // 2),
                        rng.standard_normal(n // 2) * 20.0]).astype(np.float32)
    keep, ftz = target.to_device(poison(n, np.float32)), target.to_device(poison(n, np.float32))
    target.launch_tile(tiles.exp2_ftz, cdiv(n, 512), target.to_device(x), keep, ftz, 512)
    keep, ftz = target.to_host(keep), target.to_host(ftz)
    ref = np.exp2(x.astype(np.float64))
    normal = ref >= 2.0 ** -126
    ulp = np.finfo(np.float32).eps * ref
    assert (np.abs(ftz - ref) <= 2 * ulp)[normal].all()
    assert (ftz[~normal] == 0).all()
    sub = ~normal & (ref > 2.0 ** -140)  # subnormal results of the plain exp2, kept
    assert sub.sum() > 100 and (keep[sub] > 0).all()
    assert (np.abs(keep - ref) <= 2 * ulp + 2.0 ** -149)[sub].all()


def _elementwise_ref(x, y, n_tile):
    """What tiles.elementwise computes, in float64, as the bounds (lo, hi) of the values it may
    return before the float32 roundings: r3 is rounded to float16 from float32 arithmetic,
    which may land on either side of a float16 rounding boundary near the exact value."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    r0 = np.where(x > y, np.exp(x) - np.log(np.abs(y) + 1), np.sqrt(np.abs(x)) * 2)
    r1 = np.maximum(x, 0.5) + np.minimum(y, -0.5) + np.tanh(x) * np.sin(y) - np.cos(x)
    r2 = np.floor(x * 4) / 4 + np.ceil(y) + np.exp2(y) - np.log2(np.abs(x) + 2)
    r3 = x ** 2 + y ** 3 - 1 / np.sqrt(y * y + 1)
    slack = 16 * U32 * (x ** 2 + np.abs(y) ** 3 + 1)  # a few float32 roundings of the terms
    r3_lo, r3_hi = quantize(r3 - slack, "float16"), quantize(r3 + slack, "float16")
    idx = np.arange(n_tile)
    r4 = np.cumsum(x) + (idx % 3 - idx // 5)
    r5 = x.reshape(n_tile // 8, 8).T.reshape(-1) + 3.0
    first = idx < n_tile // 2
    rest = r4 + r5
    return (np.where(first, r0 + r1, r2 + r3_lo) + rest,
            np.where(first, r0 + r1, r2 + r3_hi) + rest)


def test_elementwise(target, rng):
    """Math, comparisons, where, min/max, casts, powers, scans and shape changes on one tile."""
    n = 256
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = rng.uniform(-2, 2, n).astype(np.float32)
    out = target.to_device(poison(n, np.float32))
    target.launch_tile(tiles.elementwise, 1, target.to_device(x), target.to_device(y), out, n)
    got = target.to_host(out).astype(np.float64)
    lo, hi = _elementwise_ref(x, y, n)
    assert not np.isnan(got).any()
    tol = 2e-3 * np.maximum(np.abs(lo), np.abs(hi)) + 2e-3
    assert ((got >= lo - tol) & (got <= hi + tol)).all(), np.max(
        np.maximum(lo - got, got - hi) - tol)


# ---- matrix products on tensor cores ---------------------------------------------------------

U_OUT = dict(U_HALF, float32=U32)
U_TF32 = 2.0 ** -11  # tfloat32 keeps 10 mantissa bits


def assert_mma_close(got, a, b, u_in=0.0, u_out=U32):
    """``got`` is a @ b (float64 operands, as the kernel sees them) accumulated in float32 in
    any order: within (k + 2) u |a| @ |b|, plus 2 u_in |a| @ |b| where the operands are rounded
    to tfloat32 first, plus one rounding (u_out) of the result to the output dtype."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ref = a @ b
    mag = np.abs(a) @ np.abs(b)
    k = a.shape[1]
    bound = (k + 2) * U32 * mag + 2 * u_in * mag + u_out * np.abs(ref) + 1e-30
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape
    assert not np.isnan(got).any(), "unwritten (NaN) elements"
    err = np.abs(got - ref)
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} elements off; worst {(err - bound).max()}"


def ids(cases):
    """Test ids for (shape, tiles, ...) cases: m x k x n / tm x tn x tk (and the rest)."""
    return ["x".join(map(str, c[0])) + "/" + "x".join(map(str, c[1])) + "".join(
        f"-{v}" for v in c[2:]) for c in cases]


def operands(target, rng, m, k, n, dtype, b_transposed=False):
    """Random A (m, k) and B (k, n) on the target in ``dtype`` and, as float64, the values the
    kernel sees. A transposed B is the (k, n) view of an (n, k) array."""
    av = quantize(rng.standard_normal((m, k)), dtype)
    if b_transposed:
        bt = quantize(rng.standard_normal((n, k)), dtype)
        return target.array(av, dtype), target.array(bt, dtype).T, av, bt.T
    bv = quantize(rng.standard_normal((k, n)), dtype)
    return target.array(av, dtype), target.array(bv, dtype), av, bv


MATMUL_SHAPES = [
    ((96, 80, 64), (32, 32, 16)),
    ((70, 50, 40), (32, 32, 16)),     # edge tiles along every axis
    ((200, 96, 136), (32, 32, 16)),
    ((512, 512, 512), (64, 64, 32)),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), MATMUL_SHAPES, ids=ids(MATMUL_SHAPES))
def test_matmul(target, rng, dtype, shape, tiles_mnk):
    """float16/bfloat16 on tensor cores accumulate in float32; float32 inputs are rounded to
    tfloat32 (10 mantissa bits) before they are multiplied."""
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, dtype)
    c = target.array(poison((m, n), dtype), dtype)
    target.launch_tile(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_in=U_TF32 if dtype == "float32" else 0.0,
                     u_out=U_OUT[dtype])


# the shapes of tile.h's k loops on 8 warps (on the GPU each reaches its own C++ path)
K_LOOP_SHAPES = [
    ((512, 256, 768), (128, 256, 64)),    # Hopper main loop (TMA + wgmma) on sm_90a
    ((1000, 520, 1030), (128, 256, 64)),  # edge tiles: TMA fills zeros, the store skips
    ((384, 1024, 256), (128, 128, 64)),
    ((512, 1001, 512), (128, 256, 64)),   # rows of 1001 halves: no TMA, the portable loop
    # K of 32: steps of two k on sm_90a, the last one half a step where their count is odd
    ((384, 128, 256), (128, 128, 32)),    # 4 k: two whole steps
    ((384, 96, 256), (128, 128, 32)),     # 3 k: a whole step and a half
    ((256, 80, 256), (128, 256, 32)),     # 3 k, the last partly past K (TMA's zeros)
    ((192, 32, 128), (64, 128, 32)),      # 1 k: the half step alone
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), K_LOOP_SHAPES, ids=ids(K_LOOP_SHAPES))
def test_matmul_k_loop_paths(target, rng, dtype, shape, tiles_mnk):
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, dtype)
    c = target.array(poison((m, n), dtype), dtype)
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_out=U_OUT[dtype])


@ct.kernel(num_warps=4)
def matmul_from(A, B, C, first: int, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A[:, first tk:] @ B[first tk:, :]: a k loop that starts at ``first``."""
    bidx, bidy = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(first, ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=PAD_ZERO)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=PAD_ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bidx, bidy), tile=acc.astype(C.dtype))


@pytest.mark.parametrize(("k", "first"), [(224, 1), (224, 2), (192, 3)])
def test_k_loop_from_a_later_k(target, rng, k, first):
    """The loop's first k is not 0: on sm_90a its columns start there, in steps of two k
    (tk 32) with a half step last where the count is odd."""
    m, n, tm, tn, tk = 256, 128, 128, 128, 32
    a, b, av, bv = operands(target, rng, m, k, n, "float16")
    c = target.array(poison((m, n), "float16"), "float16")
    target.launch_tile(matmul_from, (cdiv(m, tm), cdiv(n, tn)), a, b, c, first, tm, tn, tk)
    assert_mma_close(target.to_host(c), av[:, first * tk:], bv[first * tk:],
                     u_out=U_OUT["float16"])


TF32_SHAPES = [
    ((512, 512, 512), (128, 128, 16), False),  # aligned and inside: cp.async, three buffers
    ((256, 96, 384), (64, 128, 32), False),
    ((1000, 1001, 520), (128, 128, 16), False),  # edge tiles, odd rows: the register loop
    ((256, 128, 256), (128, 128, 32), True),     # B a transposed view: the register loop
]


@pytest.mark.parametrize(("shape", "tiles_mnk", "b_transposed"), TF32_SHAPES,
                         ids=ids(TF32_SHAPES))
def test_matmul_tf32_k_loop_paths(target, rng, shape, tiles_mnk, b_transposed):
    """float32 through tfloat32 in tile.h's staged loop (8 warps: each warp's blocks share
    their rows), on each of its paths; the operands round to tfloat32 either way."""
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, "float32", b_transposed)
    c = target.to_device(poison((m, n), np.float32))
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_in=U_TF32, u_out=U32)


def test_matmul_strided_operand(target, rng):
    """A transposed view of B cannot be copied by TMA (last axis not contiguous): the kernel,
    compiled for strided arrays, takes the portable loop and still multiplies right."""
    m, k, n = 256, 128, 256
    a, b, av, bv = operands(target, rng, m, k, n, "float16", b_transposed=True)
    c = target.array(poison((m, n), "float16"), "float16")
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, 128), cdiv(n, 128)), a, b, c, 128, 128,
                       64)
    assert_mma_close(target.to_host(c), av, bv, u_out=U_OUT["float16"])


# ---- FMAs, transpose, and tiles inside a thread-level kernel ---------------------------------

@pytest.mark.parametrize("shape", [(50, 70, 40), (130, 70, 100)], ids=["50x70x40", "130x70x100"])
def test_matmul_fp32_fma(target, rng, shape):
    """Plain float32 (no tfloat32): each product is one FMA into the float32 accumulator."""
    m, k, n = shape
    a, b, av, bv = operands(target, rng, m, k, n, "float32")
    c = target.to_device(poison((m, n), np.float32))
    target.launch_tile(tiles.matmul_fp32, (cdiv(m, 32), cdiv(n, 32)), a, b, c, 32, 32, 8)
    assert_dot_close(target.to_host(c), av, bv)


@pytest.mark.parametrize("shape", [(100, 70), (300, 170)], ids=["100x70", "300x170"])
def test_transpose(target, rng, shape):
    h, w = shape
    x = rng.standard_normal((h, w)).astype(np.float32)
    y = target.to_device(poison((w, h), np.float32))
    target.launch_tile(tiles.transpose, (cdiv(h, 32), cdiv(w, 64)), target.to_device(x), y,
                       32, 64)
    np.testing.assert_array_equal(target.to_host(y), x.T)  # copies: exact, NaNs included


@pytest.mark.parametrize("shape", [(70, 64, 200), (200, 64, 300)], ids=["70x64x200", "200x64x300"])
def test_mixed_matmul_rowsum(target, rng, shape):
    """Tile matmul, then warp shuffles and atomics per thread (tests/kernels/tiles.py): C is
    the float32 accumulator; each row's sum adds the float32 partial sums of several blocks."""
    m, k, n = shape
    a, b, av, bv = operands(target, rng, m, k, n, "float16")
    c = target.to_device(poison((m, n), np.float32))
    rowsum = target.to_device(np.zeros(m, np.float32))  # accumulated into by atomics
    target.launch(tiles.matmul_rowsum, (cdiv(m, 32), cdiv(n, 64)), 128, a, b, c, rowsum, 32,
                  64, 32)
    assert_dot_close(target.to_host(c), av, bv)
    ref = (av @ bv).sum(axis=1)
    bound = (k + n + 2) * U32 * (np.abs(av) @ np.abs(bv)).sum(axis=1)
    got = target.to_host(rowsum).astype(np.float64)
    assert (np.abs(got - ref) <= bound).all()


# ---- softmax ---------------------------------------------------------------------------------

def _softmax(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("rows", [16, 64])
def test_softmax(target, rng, rows):
    """cuTile's softmax test kernel: two rows of 64 per block."""
    x = rng.standard_normal((rows, 64)).astype(np.float32) * 4
    y = target.to_device(poison(x.shape, np.float32))
    target.launch_tile(tiles.softmax, rows // 2, target.to_device(x), y, 2, 64)
    close(target.to_host(y), _softmax(x), 1e-5, 1e-7)


@pytest.mark.parametrize(("n", "dtype"), [(1000, "float32"), (256, "float32"),
                                          (4096, "float32"), (300, "float16"),
                                          (777, "bfloat16")])
def test_softmax_rows(target, rng, n, dtype):
    """One row per block. Rows shorter than the tile are padded with -inf; the reductions of a
    (1, 1024) tile over 256 threads take tile.h's register-and-shuffle path."""
    xv = quantize(rng.standard_normal((33, n)) * 3, dtype)
    y = target.array(poison(xv.shape, dtype), dtype)
    target.launch_tile(tiles.softmax_rows, 33, target.array(xv, dtype), y,
                       1 << (n - 1).bit_length())
    close(target.to_host(y), _softmax(xv), TOL[dtype], TOL[dtype] * 1e-2)


@pytest.mark.parametrize(("n", "dtype"), [(32768, "float32"), (20000, "bfloat16")])
def test_softmax_rows_wide(target, rng, n, dtype):
    """32 warps, 32 values per thread; 32768 is the interior path (no bounds tests)."""
    xv = quantize(rng.standard_normal((9, n)) * 3, dtype)
    y = target.array(poison(xv.shape, dtype), dtype)
    target.launch_tile(tiles.softmax_rows_wide, 9, target.array(xv, dtype), y, 32768)
    close(target.to_host(y), _softmax(xv), TOL[dtype], TOL[dtype] * 1e-2)


@pytest.mark.parametrize(("n", "dtype", "chunk"), [
    (1000, "float32", 256), (256, "float32", 256), (100, "float32", 256),
    (700, "bfloat16", 256), (32768, "float32", 2048), (32768, "bfloat16", 2048),
    (20000, "bfloat16", 2048), (3000, "float32", 2048)])
def test_softmax_chunked(target, rng, n, dtype, chunk):
    """Chunks of 256 on 8 warps: four, one whole, one padded (100: every position's maximum
    starts at the finite floor and some stay there), a padded last chunk in bfloat16; and
    chunks of 2048: 20000 and 3000 end in a padded chunk. A large first value and -inf
    entries exercise the running maximum's rescaling."""
    xv = rng.standard_normal((9, n)) * 3
    xv[:, 0] = 30.0  # the running maximum jumps at the first element of every row
    xv[1, 5:9] = -np.inf
    xv = quantize(xv, dtype)
    y = target.array(poison(xv.shape, dtype), dtype)
    target.launch_tile(tiles.softmax_chunked, 9, target.array(xv, dtype), y, chunk)
    close(target.to_host(y), _softmax(xv), TOL[dtype], TOL[dtype] * 1e-2)


# ---- layer norm ------------------------------------------------------------------------------

def _layer_norm_ref(x, w, b, eps=1e-5):
    """Y, Mean and Rstd of a layer norm over the rows of x (float64 arrays)."""
    mu = x.mean(axis=1)
    rs = 1 / np.sqrt(x.var(axis=1) + eps)
    return (x - mu[:, None]) * rs[:, None] * w + b, mu, rs


@pytest.mark.parametrize(("m", "n", "tile_n"), [(7, 300, 128), (37, 1000, 256)])
def test_layer_norm(target, rng, m, n, tile_n):
    """cuTile's LayerNorm sample; n is not a multiple of the tile."""
    x = (rng.standard_normal((m, n)) * 2 + 1).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y = target.to_device(poison((m, n), np.float32))
    mean, rstd = target.to_device(poison(m, np.float32)), target.to_device(poison(m, np.float32))
    target.launch_tile(tiles.layer_norm_fwd, m, target.to_device(x), target.to_device(w),
                       target.to_device(b), y, mean, rstd, 1e-5, tile_n)
    ref, mu, rs = _layer_norm_ref(x.astype(np.float64), w, b)
    close(target.to_host(y), ref, 1e-4, 1e-5)
    close(target.to_host(mean), mu, 1e-5, 1e-6)
    close(target.to_host(rstd), rs, 1e-4, 1e-6)


LAYER_NORM_ROWS = [  # (kernel, row length, its constants: the tile's length N or chunk C)
    ("layer_norm_rows", 300, (1024,)), ("layer_norm_rows", 1024, (1024,)),
    ("layer_norm_rows", 4096, (4096,)), ("layer_norm_rows", 1000, (4096,)),
    ("layer_norm_packed", 3000, (4096,)), ("layer_norm_packed", 4096, (4096,)),
    ("layer_norm_packed", 32768, (32768,)), ("layer_norm_packed", 20000, (32768,)),
    ("layer_norm_wide", 700, (1024, 256)), ("layer_norm_wide", 1024, (1024, 256)),
    ("layer_norm_wide", 32768, (32768, 4096)), ("layer_norm_wide", 20000, (32768, 4096)),
    ("layer_norm_chunked", 700, (256,)), ("layer_norm_chunked", 1024, (256,)),
    ("layer_norm_chunked", 100, (256,)), ("layer_norm_chunked", 32768, (2048,)),
    ("layer_norm_chunked", 20000, (2048,)), ("layer_norm_chunked", 1000, (2048,))]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("kernel", "n", "consts"), LAYER_NORM_ROWS, ids=[
    f"{k}-{n}/" + "/".join(map(str, c)) for k, n, c in LAYER_NORM_ROWS])
def test_layer_norm_rows(target, rng, kernel, n, consts, dtype):
    """The row in registers, or chunked; rows shorter than the tile (300, 1000, 3000, 20000)
    are padded (masked out of the variance), and 700 and 20000 pad the last chunk."""
    m = 6
    xv = quantize(rng.standard_normal((m, n)) * 2 + 1, dtype)
    wv, bv = quantize(rng.standard_normal(n), dtype), quantize(rng.standard_normal(n), dtype)
    y = target.array(poison((m, n), dtype), dtype)
    mean, rstd = target.to_device(poison(m, np.float32)), target.to_device(poison(m, np.float32))
    target.launch_tile(getattr(tiles, kernel), m, target.array(xv, dtype),
                       target.array(wv, dtype), target.array(bv, dtype), y, mean, rstd, 1e-5,
                       *consts)
    ref, mu, rs = _layer_norm_ref(xv, wv, bv)
    close(target.to_host(mean), mu, 1e-5, 1e-5)
    close(target.to_host(rstd), rs, 1e-5, 1e-5)
    close(target.to_host(y), ref, TOL[dtype], TOL[dtype])


# ---- runs of consecutive elements ------------------------------------------------------------

@pytest.mark.parametrize("half", ["bfloat16", "float16"])
@pytest.mark.parametrize("view", ["contiguous", "aligned_view", "misaligned_view",
                                  "strided_rows", "narrow"])
def test_vector_runs(target, rng, view, half):
    """Runs of 4 consecutive elements per thread: 16-byte accesses on contiguous rows and on
    an aligned strided view, element accesses where the rows are misaligned or the last axis
    is strided, and the bounds-tested path for the block half outside (10 rows in blocks of
    4). "narrow" arrays are 509 wide: their tiles are edge tiles whose runs may straddle the
    end of a row or start misaligned, each run taking a vector access or element accesses on
    its own. The 16-bit array goes in runs of 8 bytes."""
    C, rows = 512, 10
    width = 509 if view == "narrow" else C
    nb = cdiv(rows, 4)

    def placed(values, dtype):  # a (rows, width) array on the target, laid out as `view` asks
        if view in ("contiguous", "narrow"):
            return target.array(values, dtype)
        if view == "strided_rows":
            big = np.zeros((rows, 2 * C))
            big[:, ::2] = values
            return target.array(big, dtype)[:, ::2]
        pad = {"aligned_view": 8, "misaligned_view": 1}[view]
        big = np.zeros((rows, C + pad))
        big[:, pad:] = values
        return target.array(big, dtype)[:, pad:]

    x = rng.standard_normal((rows, width)).astype(np.float32)
    w = rng.standard_normal(C).astype(np.float32)
    hv = quantize(rng.standard_normal((rows, width)), half)
    outs = [placed(np.full((rows, width), np.nan), "float32"),
            target.to_device(np.full(rows, -1, np.int32)),
            target.to_device(poison((nb, width), np.float32)),
            target.to_device(poison((nb * 8, C // 2), np.float32)),
            placed(np.full((rows, width), np.nan), half)]
    target.launch_tile(tiles.vector_runs, nb, placed(x, "float32"), target.to_device(w),
                       placed(hv, half), *outs, C)
    out, amax, colsum, scanned, hout = (target.to_host(o) for o in outs)
    ref = tiles.vector_runs_reference(x, w, hv, C)
    close(out, ref[0], 1e-6, 1e-6)
    np.testing.assert_array_equal(amax, ref[1])
    close(colsum, ref[2], 1e-5, 1e-5)
    close(scanned, ref[3], 1e-4, 1e-4)
    # 2 h + 1 in float32 (one rounding), then one rounding to the 16-bit dtype
    hout = hout.astype(np.float64)
    assert not np.isnan(hout).any()
    assert (np.abs(hout - ref[4]) <= (U_HALF[half] + 2 * U32) * np.abs(ref[4])).all()


# ---- reductions ------------------------------------------------------------------------------

@pytest.mark.parametrize("nb", [3, 5])
def test_reductions(target, rng, nb):
    """Every reduction, along each axis and over all, one (16, 8) tile per block. Selections
    (max, min, argmax, argmin) are exact, ties going to the lower index; sums and products
    may round in any order: each within gamma(terms - 1) of the exact value (u = 2^-24)."""
    R, C = 16, 8
    x = rng.standard_normal((nb * R, C)).astype(np.float32)
    x[5, 3] = x[5, 6] = 9.0  # a tie: argmax is the first
    host = dict(sums=poison((nb * R, 1), np.float32), maxs=poison(nb * R, np.float32),
                mins=poison((nb, C), np.float32), prods=poison(nb * R, np.float32),
                amax=np.full(nb * R, -1, np.int32), amin=np.full((nb, C), -1, np.int32),
                total=poison(nb, np.float32))
    dev = {k: target.to_device(v) for k, v in host.items()}
    target.launch_tile(tiles.reductions, nb, target.to_device(x), *dev.values(), R, C)
    got = {k: target.to_host(v) for k, v in dev.items()}
    x64 = x.astype(np.float64)
    blocks = x64.reshape(nb, R, C)
    np.testing.assert_array_equal(got["maxs"], x64.max(axis=1))
    np.testing.assert_array_equal(got["mins"], blocks.min(axis=1))
    np.testing.assert_array_equal(got["amax"], x64.argmax(axis=1))
    np.testing.assert_array_equal(got["amin"], blocks.argmin(axis=1))
    absx = np.abs(x64)
    for name in ("sums", "prods", "total"):
        assert not np.isnan(got[name]).any(), f"unwritten (NaN) elements in {name}"
    err = np.abs(got["sums"][:, 0] - x64.sum(axis=1))
    assert (err <= gamma(C - 1) * absx.sum(axis=1)).all(), err
    prod = x64.prod(axis=1)
    assert (np.abs(got["prods"] - prod) <= gamma(C - 1) * np.abs(prod)).all()
    err = np.abs(got["total"] - blocks.sum(axis=(1, 2)))
    assert (err <= gamma(R * C - 1) * absx.reshape(nb, R * C).sum(axis=1)).all(), err


# ---- atomics ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1000, 100_000])
def test_histogram_atomics(target, rng, n):
    """atomic_add of ones at tile-valued indices, several blocks sharing the bins; indices
    outside the bins (and the padding of the last tile) are skipped."""
    nbins = 16
    x = rng.uniform(-2, 18, n).astype(np.float32)
    bins = target.to_device(np.zeros(nbins, np.int32))  # counted into: starts at zero
    target.launch_tile(tiles.histogram, ct.cdiv(n, 128), target.to_device(x), bins, nbins, 128)
    f = np.floor(x).astype(np.int64)
    ref = np.bincount(f[(f >= 0) & (f < nbins)], minlength=nbins)
    np.testing.assert_array_equal(target.to_host(bins), ref)


@pytest.mark.parametrize("nb", [3, 7])
def test_atomic_cas_xchg_max(target, nb):
    """atomic_cas (acquire), atomic_xchg, and atomic_max (relaxed, block scope)."""
    T = 16
    lock = target.to_device(np.zeros(T + 2, np.int32))
    owner = target.to_device(np.full(nb * T, -1, np.int32))
    vals = target.to_device(np.zeros(nb * T, np.float32))
    target.launch_tile(tiles.claim, nb, lock, owner, vals, T)
    lock, owner = target.to_host(lock), target.to_host(owner).reshape(nb, T)
    # each slot went to one block, which saw 0; every other block saw that block's number
    first = lock[:T]
    assert ((first >= 1) & (first <= nb)).all() and (lock[T:] == 10 * (nb - 1)).all()
    for j in range(T):
        col = owner[:, j]
        assert (col[first[j] - 1] == 0) and (np.delete(col, first[j] - 1) == first[j]).all()
    assert (target.to_host(vals) == 5).all()
    if target.name == "sim":  # the simulator runs blocks in order (a GPU, in any order)
        assert (first == 1).all() and (owner[0] == 0).all() and (owner[1:] == 1).all()


# ---- functions, printf and corners -----------------------------------------------------------

def test_device_functions_with_tiles(target, rng):
    """ct.function device functions taking and returning tiles (and a scalar one)."""
    x = rng.standard_normal((64, 16)).astype(np.float32)
    y = target.to_device(poison(x.shape, np.float32))
    target.launch_tile(tiles.with_functions, 4, target.to_device(x), y, 16)
    got = target.to_host(y).astype(np.float64)
    x64 = x.astype(np.float64)
    rowsum = x64.sum(axis=1, keepdims=True)
    absx = np.abs(x64)
    abssum = absx.sum(axis=1, keepdims=True)
    # a float32 sum of 16 terms in any order: within 15 u sum|x| of the exact one (u = 2^-24),
    # plus the rounding of 2 x and of the final add
    bound = (15 * abssum + 2 * (2 * absx + abssum)) * U32
    err = np.abs(got - (x64 * 2 + rowsum))
    assert not np.isnan(got).any() and (err <= bound).all(), (err - bound).max()


def _odds_ref(x, ints, T):
    x64 = x.astype(np.float64)
    out = np.full((2 * T, T), np.nan)
    cp = np.cumprod(np.full((T, T), np.float32(1.0001), np.float64)[:, ::-1], axis=1)[:, ::-1]
    for b in range(2):
        t = x64[b * T:(b + 1) * T, :T].T
        r = t * 2
        if b == 1:
            r = r + np.argmax(r)
        out[b * T:(b + 1) * T] = r + cp
    n = ints[:2 * T * T].astype(np.int64)
    iout = n // 7 * 100 + n % 7 - (n < 0)
    return out, iout


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_odds_and_ends(target, rng, half):
    """Early returns, uniform branches, a 0-d tile as a number, Fortran-order and strided
    loads, Python's // and % on negative integers, 16-bit arithmetic (each operation computed
    in float32 and rounded once), argmax over every axis, a reversed cumprod."""
    T = 8
    x = rng.standard_normal((4 * T, T)).astype(np.float32)
    ints = rng.integers(-1000, 1000, 4 * T * T).astype(np.int32)
    hv = quantize(rng.standard_normal(4 * T), half)
    out = target.to_device(poison((4 * T, T), np.float32))
    iout = target.to_device(np.full(4 * T * T, 12345, np.int32))
    hout = target.to_device(poison(4 * T, np.float32))
    xt = target.to_device(np.ascontiguousarray(x.T).T)  # x's values in a transposed view
    target.launch_tile(tiles.odds_and_ends, 4, target.to_device(x), xt, target.to_device(ints),
                       target.array(hv, half), out, iout, hout, T)
    out, iout, hout = target.to_host(out), target.to_host(iout), target.to_host(hout)
    ref, iref = _odds_ref(x, ints, T)
    assert_close(out[:2 * T], ref[:2 * T], ulps=16)
    assert np.isnan(out[2 * T:]).all()  # blocks 2 and 3 returned first
    assert_close(iout[:2 * T * T], iref)
    assert (iout[2 * T * T:] == 12345).all()
    h64 = hv[:2 * T]
    hh = quantize(h64 * h64, half)
    assert_close(hout[:2 * T], quantize(hh - quantize(h64 / 3, half), half), ulps=0)
    assert np.isnan(hout[2 * T:]).all()


def test_printf(target, capfd):
    x = np.arange(64, dtype=np.float32)
    with target.capture_prints(capfd) as printed:
        target.launch_tile(tiles.printf_sum, 2, target.to_device(x), 64)
    lines = "".join(printed).splitlines()
    assert sorted(lines) == ["sum 0 of 64: 2016.00", "sum 1 of 64: 2016.00"]
    if target.name == "sim":  # the simulator runs blocks in order
        assert lines == ["sum 0 of 64: 2016.00", "sum 1 of 64: 2016.00"]
