"""Tile kernels (tests/kernels/tiles.py) in the simulator against NumPy in float64.

Inputs are fresh random arrays (the seed is printed: THREADTILE_TEST_SEED replays a failure),
outputs are poisoned with NaN first, and tolerances follow from the dtypes. The same kernels
compile to cubins in tests/codegen and run on a GPU in tests/gpu/test_tile_gpu.py.
"""

import numpy as np
import pytest
from conftest import U32, assert_close, assert_dot_close, cdiv, np_dtype, poison, quantize
from kernels import tiles

import threadtile as tt
import threadtile.tile as ct


def sim(kernel, grid, *args, **constants):
    with tt.simulate():
        kernel[grid](*args, **constants)


def test_vector_add(rng):
    n = 1000  # not a multiple of the tile: the last tile is padded
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = poison(n, np.float32)
    sim(tiles.vector_add, ct.cdiv(n, 256), a, b, c, 256)
    assert_close(c, a.astype(np.float64) + b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape", [(96, 80, 64), (70, 50, 40)])
def test_matmul(rng, dtype, shape):
    """float16/bfloat16 on tensor cores accumulate in float32; float32 inputs are rounded to
    tfloat32 (10 mantissa bits) before they are multiplied."""
    m, k, n = shape
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    dt = np_dtype(dtype)
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    c = poison((m, n), np.float32).astype(dt)
    tm, tn, tk = 32, 32, 16
    sim(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    a64, b64 = quantize(a, dtype), quantize(b, dtype)
    # float32 accumulation of exact products, then one rounding to the output dtype; tfloat32
    # adds a relative error of 2^-11 to each input
    u_in = 2.0 ** -11 if dtype == "float32" else 0.0
    ref = a64 @ b64
    bound = (k + 2) * U32 * (np.abs(a64) @ np.abs(b64)) + 2 * u_in * (np.abs(a64) @ np.abs(b64))
    out_u = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": U32}[dtype]
    got = c.astype(np.float64)
    assert not np.isnan(got).any()
    assert (np.abs(got - ref) <= bound + out_u * np.abs(ref) + 1e-30).all()


def test_matmul_fp32_fma(rng):
    m, k, n = 50, 70, 40
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = poison((m, n), np.float32)
    sim(tiles.matmul_fp32, (cdiv(m, 32), cdiv(n, 32)), a, b, c, 32, 32, 8)
    assert_dot_close(c, a, b)


def _softmax(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax(rng):
    x = rng.standard_normal((16, 64)).astype(np.float32) * 4
    y = poison(x.shape, np.float32)
    sim(tiles.softmax, 16 // 2, x, y, 2, 64)
    assert_close(y, _softmax(x), ulps=8)


@pytest.mark.parametrize(("n", "dtype"), [(1000, "float32"), (256, "float32"),
                                          (300, "float16")])
def test_softmax_rows(rng, n, dtype):
    """Rows shorter than the tile are padded with -inf; the reductions of a (1, 1024) tile
    over 256 threads take tile.h's register-and-shuffle path."""
    x = (rng.standard_normal((5, n)) * 3).astype(dtype)
    y = poison(x.shape, dtype)
    sim(tiles.softmax_rows, 5, x, y, 1 << (n - 1).bit_length())
    assert_close(y, _softmax(quantize(x, dtype)), dtype, ulps=8)


@pytest.mark.parametrize(("n", "dtype"), [(1000, "float32"), (256, "float32"),
                                          (100, "float32"), (700, "bfloat16")])
def test_softmax_chunked(rng, n, dtype):
    """Chunks of 256: four, one whole, one padded (100: every position's maximum starts at
    the finite floor and some stay there), and a padded last chunk in bfloat16; a large
    first value and -inf entries exercise the running maximum's rescaling."""
    x = (rng.standard_normal((4, n)) * 3).astype(np.float32)
    x[:, 0] = 20.0
    x[1, 5:9] = -np.inf
    x = x.astype(np_dtype(dtype))
    y = poison(x.shape, x.dtype)
    sim(tiles.softmax_chunked, 4, x, y, 256)
    assert_close(y, _softmax(quantize(x, dtype)), dtype, ulps=16)


def test_exp_modes(rng):
    """Both rounding modes simulate as NumPy's exponential (the GPU test bounds their error)."""
    x = (rng.standard_normal(1000) * 5).astype(np.float32)
    full, fast = poison(1000, np.float32), poison(1000, np.float32)
    sim(tiles.exp_modes, 2, x, full, fast, 512)
    assert_close(full, np.exp(x.astype(np.float64)), ulps=4)
    assert_close(fast, np.exp(x.astype(np.float64)), ulps=4)


def _check_layer_norm(x, w, b, y, mean, rstd, eps=1e-5):
    """Y, Mean and Rstd of a layer norm over the rows of x, against float64 NumPy."""
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    rs = 1 / np.sqrt(x64.var(axis=1) + eps)
    assert_close(mean, mu, ulps=64)
    assert_close(rstd, rs, ulps=64)
    assert_close(y, (x64 - mu[:, None]) * rs[:, None] * w + b, ulps=64)


def test_layer_norm(rng):
    m, n = 7, 300  # n not a multiple of the tile
    x = (rng.standard_normal((m, n)) * 2 + 1).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y = poison((m, n), np.float32)
    mean, rstd = poison(m, np.float32), poison(m, np.float32)
    sim(tiles.layer_norm_fwd, m, x, w, b, y, mean, rstd, 1e-5, 128)
    _check_layer_norm(x, w, b, y, mean, rstd)


@pytest.mark.parametrize("kernel, n", [("layer_norm_rows", 300), ("layer_norm_rows", 1024),
                                       ("layer_norm_packed", 3000),
                                       ("layer_norm_packed", 4096),
                                       ("layer_norm_wide", 700), ("layer_norm_wide", 1024),
                                       ("layer_norm_chunked", 700),
                                       ("layer_norm_chunked", 1024),
                                       ("layer_norm_chunked", 100)])
def test_layer_norm_rows(rng, kernel, n):
    """The row in registers; 300 and 700 pad it (masked out of the variance), and 700 pads
    the last chunk of layer_norm_wide."""
    m = 5
    x = (rng.standard_normal((m, n)) * 2 + 1).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y = poison((m, n), np.float32)
    mean, rstd = poison(m, np.float32), poison(m, np.float32)
    consts = {"layer_norm_rows": (1024,), "layer_norm_wide": (1024, 256),
              "layer_norm_chunked": (256,), "layer_norm_packed": (4096,)}[kernel]
    kern = getattr(tiles, kernel)
    if kernel == "layer_norm_packed":  # 32 warps simulate slowly: 4 are enough here
        kern = ct.kernel(num_warps=4)(kern.py_func)
    sim(kern, m, x, w, b, y, mean, rstd, 1e-5, *consts)
    _check_layer_norm(x, w, b, y, mean, rstd)


@pytest.mark.parametrize("width", [512, 509])
def test_vector_runs(rng, width):
    C, rows = 512, 10  # three blocks, the last one half outside; 509 wide: edge tiles
    x = rng.standard_normal((rows, width)).astype(np.float32)
    w = rng.standard_normal(C).astype(np.float32)
    h = rng.standard_normal((rows, width)).astype(np.float16)  # the 16-bit stand-in
    nb = -(-rows // 4)
    outs = [poison((rows, width), np.float32), np.full(rows, -1, np.int32),
            poison((nb, width), np.float32), poison((nb * 8, C // 2), np.float32),
            poison((rows, width), np.float16)]
    sim(tiles.vector_runs, nb, x, w, h, *outs, C)
    ref = tiles.vector_runs_reference(x, w, h, C)
    assert_close(outs[0], ref[0], ulps=4)
    assert (outs[1] == ref[1]).all()
    np.testing.assert_allclose(outs[2], ref[2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[3][:rows * 2], ref[3][:rows * 2], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(outs[4], ref[4], rtol=1e-3, atol=1e-3)


def test_transpose(rng):
    x = rng.standard_normal((100, 70)).astype(np.float32)
    y = poison((70, 100), np.float32)
    sim(tiles.transpose, (cdiv(100, 32), cdiv(70, 64)), x, y, 32, 64)
    assert_close(y, x.T.astype(np.float64), ulps=0)


def test_mixed_matmul_rowsum(rng):
    """Tile matmul, then warp shuffles and atomics per thread (tests/kernels/tiles.py)."""
    m, k, n = 70, 64, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = poison((m, n), np.float32)
    rowsum = np.zeros(m, np.float32)
    with tt.simulate():
        tiles.matmul_rowsum[(cdiv(m, 32), cdiv(n, 64)), 128](a, b, c, rowsum, 32, 64, 32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_dot_close(c, a64, b64)
    ref = (a64 @ b64).sum(axis=1)
    bound = (k + n + 2) * U32 * (np.abs(a64) @ np.abs(b64)).sum(axis=1)
    assert (np.abs(rowsum - ref) <= bound).all()


def test_reductions(rng):
    R, C, nb = 16, 8, 3
    x = rng.standard_normal((nb * R, C)).astype(np.float32)
    x[5, 3] = x[5, 6] = 9.0  # a tie: argmax is the first
    outs = dict(sums=poison((nb * R, 1), np.float32), maxs=poison(nb * R, np.float32),
                mins=poison((nb, C), np.float32), prods=poison(nb * R, np.float32),
                amax=np.full(nb * R, -1, np.int32), amin=np.full((nb, C), -1, np.int32),
                total=poison(nb, np.float32))
    sim(tiles.reductions, nb, x, *outs.values(), R, C)
    x64 = x.astype(np.float64)
    blocks = x64.reshape(nb, R, C)
    assert_close(outs["sums"], x64.sum(axis=1, keepdims=True), ulps=8)
    assert_close(outs["maxs"], x64.max(axis=1), ulps=0)
    assert_close(outs["mins"], blocks.min(axis=1), ulps=0)
    assert_close(outs["prods"], x64.prod(axis=1), ulps=8)
    assert_close(outs["amax"], x64.argmax(axis=1))
    assert_close(outs["amin"], blocks.argmin(axis=1))
    assert_close(outs["total"], blocks.sum(axis=(1, 2)), ulps=64)


def _elementwise_ref(x, y, n_tile):
    x, y = x.astype(np.float64), y.astype(np.float64)
    r0 = np.where(x > y, np.exp(x) - np.log(np.abs(y) + 1), np.sqrt(np.abs(x)) * 2)
    r1 = np.maximum(x, 0.5) + np.minimum(y, -0.5) + np.tanh(x) * np.sin(y) - np.cos(x)
    r2 = np.floor(x * 4) / 4 + np.ceil(y) + np.exp2(y) - np.log2(np.abs(x) + 2)
    r3 = quantize(x ** 2 + y ** 3 - 1 / np.sqrt(y * y + 1), "float16")
    idx = np.arange(n_tile)
    r4 = np.cumsum(x) + (idx % 3 - idx // 5)
    r5 = x.reshape(n_tile // 8, 8).T.reshape(-1) + 3.0
    return np.where(idx < n_tile // 2, r0 + r1, r2 + r3) + r4 + r5


def test_elementwise(rng):
    n = 256
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = rng.uniform(-2, 2, n).astype(np.float32)
    out = poison(n, np.float32)
    sim(tiles.elementwise, 1, x, y, out, n)
    np.testing.assert_allclose(out, _elementwise_ref(x, y, n), rtol=2e-3, atol=2e-3)


def test_histogram_atomics(rng):
    n, nb_bins = 1000, 16
    x = rng.uniform(-2, 18, n).astype(np.float32)
    bins = np.zeros(nb_bins, np.int32)
    sim(tiles.histogram, ct.cdiv(n, 128), x, bins, nb_bins, 128)
    f = np.floor(x).astype(np.int64)
    ref = np.bincount(f[(f >= 0) & (f < nb_bins)], minlength=nb_bins)
    assert_close(bins, ref)


def test_printf(capfd):
    x = np.arange(64, dtype=np.float32)
    sim(tiles.printf_sum, 2, x, 64)
    out = capfd.readouterr().out
    assert out == "sum 0 of 64: 2016.00\nsum 1 of 64: 2016.00\n"


def test_atomic_cas_xchg_max():
    T, nb = 16, 3
    lock = np.zeros(T + 2, np.int32)
    owner = np.full(nb * T, -1, np.int32)
    vals = np.zeros(nb * T, np.float32)
    sim(tiles.claim, nb, lock, owner, vals, T)
    # atomics are serialized in block order here (any order is legal on a GPU)
    assert (lock[:T] == 1).all() and (lock[T:] == 10 * (nb - 1)).all()
    assert (owner[:T] == 0).all() and (owner[T:] == 1).all()
    assert (vals == 5).all()


def test_device_functions_with_tiles(rng):
    x = rng.standard_normal((64, 16)).astype(np.float32)
    y = poison(x.shape, np.float32)
    sim(tiles.with_functions, 4, x, y, 16)
    x64 = x.astype(np.float64)
    assert_close(y, x64 * 2 + x64.sum(axis=1, keepdims=True), ulps=16)


def test_launch_with_a_stream_as_cutile_does(rng):
    n = 300
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = poison(n, np.float32)
    with tt.simulate():
        ct.launch(None, (ct.cdiv(n, 128), 1, 1), tiles.vector_add, (a, b, c, 128))
    assert_close(c, a.astype(np.float64) + b)


def _odds_ref(x, ints, h, T):
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
def test_odds_and_ends(rng, half):
    if half == "bfloat16":
        pytest.importorskip("ml_dtypes")
    T = 8
    x = rng.standard_normal((4 * T, T)).astype(np.float32)
    ints = rng.integers(-1000, 1000, 4 * T * T).astype(np.int32)
    h = rng.standard_normal(4 * T).astype(np_dtype(half))
    out = poison((4 * T, T), np.float32)
    iout = np.full(4 * T * T, 12345, np.int32)
    hout = poison(4 * T, np.float32)
    sim(tiles.odds_and_ends, 4, x, np.ascontiguousarray(x.T).T, ints, h, out, iout, hout, T)
    ref, iref = _odds_ref(x, ints, h, T)
    assert_close(out[:2 * T], ref[:2 * T], ulps=16)
    assert np.isnan(out[2 * T:]).all()  # blocks 2 and 3 returned first
    assert_close(iout[:2 * T * T], iref)
    assert (iout[2 * T * T:] == 12345).all()
    h64 = quantize(h, half)[:2 * T]
    hh = quantize(h64 * h64, half)
    assert_close(hout[:2 * T], quantize(hh - quantize(h64 / 3, half), half), ulps=0)
