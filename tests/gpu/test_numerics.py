"""Numerics of every kernel in tests/kernels against float64 NumPy references, on every target.

One test per kernel. Inputs are fresh random arrays (the seed is printed), outputs are poisoned
(NaN or a sentinel) before the launch so that an element a kernel fails to write shows, and
results are compared in float64 with tolerances that follow from the dtype. On the GPU, arrays
are torch tensors (see conftest); tests at the end cover CuPy arrays, threadtile's DeviceArray
and NumPy host arrays.
"""

import math

import numpy as np
import pytest
from conftest import (
    U32,
    assert_chain,
    assert_close,
    assert_dot_close,
    cdiv,
    gpu_target,
    poison,
    quantize,
)
from kernels import atomics, dtypes, language, lecture, mathfuncs, numba_docs, warp

# ---- the lecture -----------------------------------------------------------------------------

@pytest.mark.parametrize("transposed", [False, True])
def test_matmul_naive(target, rng, transposed):
    h, k, w = 50, 40, 70
    mh = rng.standard_normal((h, k)).astype(np.float32)
    nh = rng.standard_normal((k, w)).astype(np.float32)
    # transposed: m is a column-major view of a (k, h) array
    m = target.to_device(np.ascontiguousarray(mh.T).T if transposed else mh)
    out = target.to_device(poison((h, w), np.float32))
    target.launch(lecture.matmul_naive, (cdiv(w, 16), cdiv(h, 16)), (16, 16), m,
                  target.to_device(nh), out)
    assert_dot_close(target.to_host(out), mh, nh)


def test_matmul_static(target, rng):
    h, k, w = 67, 45, 33
    mh = rng.standard_normal((h, k)).astype(np.float32)
    nh = rng.standard_normal((k, w)).astype(np.float32)
    out = target.to_device(poison((h, w), np.float32))
    tw = lecture.TW
    target.launch(lecture.matmul_static, (cdiv(w, tw), cdiv(h, tw)), (tw, tw),
                  target.to_device(mh), target.to_device(nh), out)
    assert_dot_close(target.to_host(out), mh, nh)


@pytest.mark.parametrize("tw", [8, 16])
def test_matmul_dynamic(target, rng, tw):
    h, k, w = 40, 52, 29
    mh = rng.standard_normal((h, k)).astype(np.float32)
    nh = rng.standard_normal((k, w)).astype(np.float32)
    out = target.to_device(poison((h, w), np.float32))
    target.launch(lecture.matmul_dynamic, (cdiv(w, tw), cdiv(h, tw)), (tw, tw),
                  target.to_device(mh), target.to_device(nh), out, shared=2 * tw * tw * 4,
                  tw=tw)
    assert_dot_close(target.to_host(out), mh, nh)


# ---- the numba documentation -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_increment_by_one(target, rng, dtype):
    n = 1000
    ah = (rng.standard_normal(n) * 100).astype(dtype)
    a = target.to_device(ah)
    target.launch(numba_docs.increment_by_one, cdiv(n, 256), 256, a)
    assert_close(target.to_host(a), ah.astype(np.float64) + 1, dtype)


def test_increment_a_2D_array(target, rng):
    ah = rng.standard_normal((37, 23)).astype(np.float32)
    a = target.to_device(ah)
    target.launch(numba_docs.increment_a_2D_array, (cdiv(37, 16), cdiv(23, 16)), (16, 16), a)
    assert_close(target.to_host(a), ah.astype(np.float64) + 1, "float32")


def test_add_grid_stride(target, rng):
    n = 10_000
    xh = rng.standard_normal(n).astype(np.float32)
    yh = rng.standard_normal(n).astype(np.float32)
    out = target.to_device(poison(n, np.float32))
    target.launch(numba_docs.add, 8, 128, target.to_device(xh), target.to_device(yh), out)
    assert_close(target.to_host(out), xh.astype(np.float64) + yh, "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numba_matmul(target, rng, dtype):
    h, k, w = 33, 21, 40
    ah = rng.standard_normal((h, k)).astype(dtype)
    bh = rng.standard_normal((k, w)).astype(dtype)
    c = target.to_device(poison((h, w), dtype))
    target.launch(numba_docs.matmul, (cdiv(h, 16), cdiv(w, 16)), (16, 16),
                  target.to_device(ah), target.to_device(bh), c)
    assert_dot_close(target.to_host(c), ah, bh, u=U32 if dtype == "float32" else 2.0 ** -53)


@pytest.mark.parametrize("shape", [(48, 48, 48), (40, 30, 50)])
def test_fast_matmul(target, rng, shape):
    h, k, w = shape
    tpb = numba_docs.TPB
    grid = (cdiv(w, tpb), cdiv(h, tpb))
    assert grid[0] * tpb >= k  # the documented kernel loops over gridDim.x tiles of k
    ah = rng.standard_normal((h, k)).astype(np.float32)
    bh = rng.standard_normal((k, w)).astype(np.float32)
    c = target.to_device(poison((h, w), np.float32))
    target.launch(numba_docs.fast_matmul, grid, (tpb, tpb), target.to_device(ah),
                  target.to_device(bh), c)
    assert_dot_close(target.to_host(c), ah, bh)


def test_sum_reduce(target, rng):
    n, t = 1000, numba_docs.RED_THREADS
    blocks = cdiv(n, t)
    dh = rng.standard_normal(n).astype(np.float32)
    partial = target.to_device(poison(blocks, np.float32))
    target.launch(numba_docs.sum_reduce, blocks, t, target.to_device(dh), partial)
    padded = np.zeros(blocks * t)
    padded[:n] = dh
    chunks = padded.reshape(blocks, t)
    assert_dot_close(target.to_host(partial)[:, None], chunks, np.ones((t, 1)))


# ---- indices ---------------------------------------------------------------------------------

GRID3, BLOCK3 = (2, 3, 2), (4, 2, 3)


def _index_grids():
    """Per element of a (Z, Y, X) grid of threads: its thread and block indices."""
    X, Y, Z = (g * b for g, b in zip(GRID3, BLOCK3))
    z, y, x = np.meshgrid(np.arange(Z), np.arange(Y), np.arange(X), indexing="ij")
    return (x, y, z), (X, Y, Z)


def test_thread_indices(target):
    (x, y, z), (X, Y, Z) = _index_grids()
    out = target.to_device(poison((Z, Y, X, 12), np.int32))
    target.launch(language.thread_indices, GRID3, BLOCK3, out)
    bx, by, bz = BLOCK3
    gx, gy, gz = GRID3
    ref = np.stack([x % bx, y % by, z % bz, x // bx, y // by, z // bz,
                    np.full_like(x, bx), np.full_like(x, by), np.full_like(x, bz),
                    np.full_like(x, gx), np.full_like(x, gy), np.full_like(x, gz)], axis=-1)
    assert_close(target.to_host(out), ref, "int32")


def test_grid_helpers(target):
    (x, y, z), (X, Y, Z) = _index_grids()
    out = target.to_device(poison((Z, Y, X, 9), np.int64))
    target.launch(language.grid_helpers, GRID3, BLOCK3, out)
    full = np.ones_like(x)
    ref = np.stack([x, x, y, X * full, X * full, Y * full, X * full, Y * full, Z * full], -1)
    assert_close(target.to_host(out), ref, "int64")


def test_lanes(target):
    bx, by, blocks = 16, 6, 3
    n = bx * by * blocks
    out = target.to_device(poison((n, 3), np.int32))
    target.launch(language.lanes, blocks, (bx, by), out)
    t = np.arange(n) % (bx * by)  # linear thread index within the block
    ref = np.stack([t % 32, np.full(n, 32), t // 32], axis=-1)
    assert_close(target.to_host(out), ref, "int32")


# ---- memory spaces ---------------------------------------------------------------------------

def test_local_array(target, rng):
    n = 300
    ah = rng.uniform(-1.5, 1.5, n).astype(np.float32)
    out = target.to_device(poison(n, np.float64))
    target.launch(language.local_array, cdiv(n, 128), 128, target.to_device(ah), out)
    # p = 1.0 then p *= a[i]: p is float32 (weak literal), so the powers round in float32
    powers, p = [], np.ones(n, np.float32)
    for _ in range(5):
        powers.append(p.astype(np.float64))
        p = p * ah
    s = np.zeros(n)
    for k in range(4, -1, -1):
        s += powers[k] * (k + 1)
    assert_close(target.to_host(out), s + 5, "float64")


def test_const_arrays(target):
    n = 40
    out = target.to_device(poison((n, 3), np.float32))
    target.launch(language.const_arrays, 1, 64, out)
    i = np.arange(n)
    c = language.COEFFS.astype(np.float64)
    ref = np.stack([c[i % 5] * 2, c[i % 5], language.TABLE[i % 3, i % 4]], axis=-1)
    assert_close(target.to_host(out), ref, "float32")


def test_static_shared_2d(target, rng):
    h, w = language.SHAPE
    blocks = 3
    ah = rng.standard_normal((blocks, h, w)).astype(np.float32)
    out = target.to_device(poison((blocks, h, w), np.float32))
    target.launch(language.static_shared_2d, blocks, (w, h), target.to_device(ah), out)
    assert_close(target.to_host(out), ah[:, ::-1, ::-1], "float32")


@pytest.mark.parametrize("n", [32, 64])
def test_dynamic_shared_views(target, rng, n):
    ah = rng.standard_normal(n).astype(np.float32)
    out = target.to_device(poison(n, np.float32))
    extra = 4  # floats of dynamic shared memory beyond the two views: sh.size == 2 * n + 4
    target.launch(language.dynamic_shared_views, 1, n, target.to_device(ah), out,
                  shared=(2 * n + extra) * 4, n=n)
    a64 = ah.astype(np.float64)
    ref = a64[::-1] + np.float32(10) * ah.astype(np.float32) + n + extra
    assert_close(target.to_host(out), ref, "float32", ulps=64)


# ---- barriers and fences ---------------------------------------------------------------------

def test_barrier_votes(target, rng):
    blocks, t = 4, 64
    ah = rng.integers(-3, 4, (blocks, t)).astype(np.int32)
    ah[1] = rng.integers(1, 50, t)  # a block where every a > 0
    ah[2, 17] = 500  # a block where some a > 100
    out = target.to_device(poison((blocks, 3), np.int32))
    target.launch(language.barrier_votes, blocks, t, target.to_device(ah.reshape(-1)), out)
    ref = np.stack([(ah > 0).sum(1), (ah > 0).all(1), (ah > 100).any(1)], axis=-1)
    assert_close(target.to_host(out), ref, "int32")


def test_last_block_sum(target, rng):
    n, t = 1000, 64
    blocks = cdiv(n, t)
    ah = rng.standard_normal(n)
    partial = target.to_device(poison(blocks, np.float64))
    counter = target.to_device(np.zeros(1, np.int32))
    out = target.to_device(poison(1, np.float64))
    target.launch(language.last_block_sum, blocks, t, target.to_device(ah), partial, counter,
                  out)
    padded = np.zeros(blocks * t)
    padded[:n] = ah
    assert_close(target.to_host(partial), padded.reshape(blocks, t).sum(1), "float64", 100)
    assert_close(target.to_host(counter), [blocks], "int32")
    assert_close(target.to_host(out), [ah.sum()], "float64", ulps=1000)


def test_warp_sync_exchange(target, rng):
    ah = rng.integers(-1000, 1000, 64).astype(np.int32)
    out = target.to_device(poison(64, np.int32))
    target.launch(language.warp_sync_exchange, 1, 64, target.to_device(ah), out)
    assert_close(target.to_host(out), ah[np.arange(64) ^ 1], "int32")


# ---- control flow ----------------------------------------------------------------------------

def _branches_ref(x: int) -> int:
    if x < -5:
        k = 0
    elif -5 <= x < 0:
        k = 1
    elif x in (0, 7):
        k = 2
    elif x <= 10 and x != 3:
        k = 3
    else:
        k = 4
    return (k + (10 if x % 2 == 0 else 20) + (100 if 0 < x < 20 else 0)
            + (1000 if -3 <= x <= 3 else 0))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_branches(target, dtype):
    ah = np.arange(-12, 28).astype(dtype)
    out = target.to_device(poison(ah.size, np.int32))
    target.launch(language.branches, 1, 64, target.to_device(ah), out)
    assert_close(target.to_host(out), [_branches_ref(int(x)) for x in ah], "int32")


def _loops_ref(m: int) -> list[int]:
    k, s = 0, 0
    while True:
        k += 1
        if k > m:
            break
        if k % 2:
            s += k
    j, s2 = m, 0
    while j > 0:
        s2 += j
        j -= 3
    return [sum(range(m)), sum(range(2, m)), sum(range(1, m, 3)), sum(range(m, -1, -2)),
            sum(range(m, 0, -1 - m % 3)), s, s2]


def test_loops(target):
    nh = np.arange(-2, 25).astype(np.int32)
    out = target.to_device(poison((nh.size, 7), np.int64))
    target.launch(language.loops, 1, 32, target.to_device(nh), out)
    assert_close(target.to_host(out), [_loops_ref(int(m)) for m in nh], "int64")


@pytest.mark.parametrize("counts", [(5, 3, 4), (0, 0, 7)])
def test_loop_variables(target, counts):
    out = target.to_device(poison(4, np.int64))
    target.launch(language.loop_variables, 1, 1, target.to_device(np.array(counts, np.int32)),
                  out)
    a, b, c = counts
    assert_close(target.to_host(out), [a - 1 if a else -1, 5, 14, sum(range(b)) + sum(range(c))],
                 "int64")


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_unsigned_countdown(target, dtype):
    out = target.to_device(poison(2, np.int64))
    target.launch(language.unsigned_countdown, 1, 1, dtype(7), out)
    assert_close(target.to_host(out), [sum(range(7, 0, -1)), len(range(7, -1, -2))], "int64")


def test_early_return(target, rng):
    ah = rng.uniform(-10, 120, 200).astype(np.float32)
    out = target.to_device(poison(200, np.int32))
    target.launch(language.early_return, 2, 128, target.to_device(ah), out)
    ref = [-1 if a < 0 else next((k for k in range(10) if k * k > a), 100) for a in ah]
    assert_close(target.to_host(out), ref, "int32")


@pytest.mark.parametrize(("itype", "ftype"), [("int32", "float32"), ("int64", "float64")])
def test_augmented(target, rng, itype, ftype):
    n = 100
    ah = rng.integers(-500, 500, n).astype(itype)
    fh = rng.standard_normal(n).astype(ftype)
    out = target.to_device(poison((n, 2), itype))
    fout = target.to_device(poison(n, ftype))
    target.launch(language.augmented, 1, 128, target.to_device(ah), target.to_device(fh), out,
                  fout)
    ref = []
    for x in ah.tolist():
        y = (((x + 7 - 2) * 3) // 4) % 1000
        y = (((y << 2) >> 1) & 0xFFF | 1) ^ 5
        ref.append([y, (x + 1) * 2 - 3])
    assert_close(target.to_host(out), ref, itype)
    f = fh.astype(ftype)
    z = (f / f.dtype.type(2)) ** 2 + f.dtype.type(1.5) - f.dtype.type(0.25)
    assert_close(target.to_host(fout), z, ftype, ulps=4)


def test_shapes(target):
    m = target.to_device(np.zeros((4, 2, 3), np.float32).transpose(1, 2, 0))
    out = target.to_device(poison(7, np.int64))
    target.launch(language.shapes, 1, 1, m, out)
    d = tuple(m.shape)
    assert_close(target.to_host(out), [*d, d[0], np.prod(d), 3, d[2]], "int64")


def test_strided_copy(target, rng):
    """2-d indexing of a transposed source into a strided (every other row) destination; the
    rows of the destination's base that are not in the view stay untouched."""
    h, w = 24, 17
    sh = rng.standard_normal((w, h)).astype(np.float32)
    src = target.to_device(sh.T)  # (h, w), column-major
    big = poison((2 * h, w), np.float32)
    big_dev = target.to_device(big)
    dst = big_dev[::2]
    target.launch(language.strided_copy, (cdiv(h, 8), cdiv(w, 8)), (8, 8), src, dst)
    got = target.to_host(big_dev)
    assert_close(got[::2], sh.T.astype(np.float64) * 2 + 1, "float32", ulps=2)
    assert np.isnan(got[1::2]).all(), "the kernel wrote outside its view"


def test_strided_3d(target, rng):
    base = rng.standard_normal((5, 3, 4))
    src = target.to_device(base.transpose(2, 0, 1))  # (4, 5, 3): no axis in memory order
    a, b, c = 4, 5, 3
    dst = target.to_device(poison((a, b, c), np.float64))
    target.launch(language.strided_3d, (c, b, a), (4, 4, 4), src, dst)
    s = base.transpose(2, 0, 1)
    assert_close(target.to_host(dst), s - s[0:1], "float64")


@pytest.mark.parametrize("transposed", [False, True])
def test_row_views(target, rng, transposed):
    mh = rng.standard_normal((6, 9)).astype(np.float32)
    m = target.to_device(np.ascontiguousarray(mh.T).T if transposed else mh)
    out = target.to_device(poison(6, np.float32))
    target.launch(language.row_views, 1, 32, m, out)
    m64 = mh.astype(np.float64)
    assert_close(target.to_host(out), m64[:, 1::2].sum(1) + m64[:, 0], "float32", ulps=8)


@pytest.mark.parametrize(("dtype", "value", "text"), [
    ("float32", 1.5, "value 1.5 index 0 positive True"),
    ("int32", -3, "value -3 index 0 positive False")])
def test_printer(target, capfd, dtype, value, text):
    a = target.to_device(np.array([value, 0, 0, 0], dtype))
    with target.capture_prints(capfd) as printed:
        target.launch(language.printer, 1, 4, a)
    lines = [ln for ln in "".join(printed).splitlines() if ln.startswith("value")]
    assert lines == [text]


# ---- arithmetic ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32", "float64"])
def test_pydivmod(target, rng, dtype):
    n = 200
    ah = rng.integers(-50, 51, n).astype(dtype)
    bh = rng.integers(1, 8, n) * rng.choice([-1, 1], n)
    bh = bh.astype(dtype)
    q = target.to_device(poison(n, dtype))
    r = target.to_device(poison(n, dtype))
    target.launch(language.pydivmod, 2, 128, target.to_device(ah), target.to_device(bh), q, r)
    a, b = ah.astype(np.int64), bh.astype(np.int64)  # integer values: // and % are exact
    assert_close(target.to_host(q), a // b, dtype)
    assert_close(target.to_host(r), a % b, dtype)


@pytest.mark.parametrize(("atype", "otype"), [("int32", "float64"), ("int64", "float32")])
def test_true_division(target, rng, atype, otype):
    n = 100
    ah = rng.integers(-100, 100, n).astype(atype)
    bh = (rng.integers(1, 9, n) * rng.choice([-1, 1], n)).astype(np.int32)
    out = target.to_device(poison((n, 3), otype))
    target.launch(language.true_division, 1, 128, target.to_device(ah), target.to_device(bh),
                  out)
    a, b = ah.astype(np.float64), bh.astype(np.float64)
    ref = np.stack([a / b, np.ceil(a / b), a / b > np.floor_divide(a, b)], -1)
    assert_close(target.to_host(out), ref, otype)


def test_scale_half(target, rng):
    xh = rng.standard_normal(100).astype(np.float32)
    out = target.to_device(poison(100, np.float32))
    target.launch(language.scale_half, 1, 128, target.to_device(xh), out)
    assert_close(target.to_host(out), xh.astype(np.float64) * 0.5, "float32", ulps=0)


def test_dot_acc(target, rng):
    n = 300
    ah = rng.standard_normal(n).astype(np.float32)
    bh = rng.standard_normal(n).astype(np.float32)
    out = target.to_device(poison(1, np.float32))
    target.launch(language.dot_acc, 1, 1, target.to_device(ah), target.to_device(bh), out)
    assert_dot_close(target.to_host(out)[None, :], ah[None, :], bh[:, None])


def test_casts(target, rng):
    n = 64
    xh = rng.uniform(-3, 3, n).astype(np.float32)
    xh[:4] = [0.0, -2.0, 1.0, 2.999]
    out = target.to_device(poison((n, 7), np.float64))
    target.launch(language.casts, 1, 64, target.to_device(xh), out)
    f32 = np.float32
    ref = np.stack([(xh * f32(1.5)).astype(np.float64), (xh + f32(0.25)).astype(np.float64),
                    np.trunc(xh), xh.astype(np.float64), xh != 0,
                    np.trunc(xh * f32(1000)).astype(np.int16),
                    np.trunc(xh).astype(np.int64) & 0xFF], axis=-1)
    assert_close(target.to_host(out), ref, "float64")


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_min_max_abs(target, rng, dtype):
    n = 100
    ah = (rng.standard_normal(n) * 5).astype(dtype)
    bh = (rng.standard_normal(n) * 5).astype(dtype)
    out = target.to_device(poison((n, 5), dtype))
    target.launch(language.min_max_abs, 1, 128, target.to_device(ah), target.to_device(bh), out)
    a, b = ah.astype(np.float64), bh.astype(np.float64)
    third = np.minimum(np.minimum(a, b), 0.5)
    if dtype == "int32":
        third = np.trunc(third)  # min(int, int, 0.5) is a float64, stored into int32
    ref = np.stack([np.minimum(a, b), np.maximum(a, b), np.abs(a), third,
                    np.maximum(np.maximum(np.abs(a), np.abs(b)), 1)], axis=-1)
    assert_close(target.to_host(out), ref, dtype, ulps=0)


# ---- functions and constants -----------------------------------------------------------------

def test_device_calls(target, rng):
    n = 100
    ah = rng.uniform(-4, 4, n).astype(np.float32)
    bh = rng.uniform(-4, 4, n).astype(np.float32)
    out = target.to_device(poison(n, np.float32))
    pairs = target.to_device(poison((n, 2), np.int64))
    target.launch(language.device_calls, 1, 128, target.to_device(ah), target.to_device(bh),
                  out, pairs)
    a, b = ah.astype(np.float64), bh.astype(np.float64)
    assert_close(target.to_host(out), np.clip(np.hypot(a, b), 0.5, 4.0), "float32", ulps=4)
    i = np.arange(n)
    assert_close(target.to_host(pairs), np.stack([i * i, -i * i], -1), "int64")


def test_kernel_calls_kernel(target):
    out = target.to_device(poison(50, np.int32))
    target.launch(language.kernel_calls_kernel, 1, 64, out)
    assert_close(target.to_host(out), np.arange(50) * 2, "int32")


@pytest.mark.parametrize(("kernel", "mul", "add"), [
    (language.frozen_globals, language.SCALE, language.OFFSET),
    (language.affine_2_1, 2.0, 1.0), (language.affine_m3_half, -3, 0.5)])
def test_frozen_constants(target, rng, kernel, mul, add):
    ah = rng.standard_normal(100).astype(np.float32)
    out = target.to_device(poison(100, np.float32))
    target.launch(kernel, 1, 128, target.to_device(ah), out)
    ref = (ah * np.float32(mul)).astype(np.float32) + np.float32(add)
    assert_close(target.to_host(out), ref, "float32", ulps=2)  # a * mul + add may be an FMA


@pytest.mark.parametrize("n", [1, 4])
def test_unrolled_sum(target, rng, n):
    size = 50
    ah = rng.standard_normal(size).astype(np.float32)
    out = target.to_device(poison(size, np.float32))
    target.launch(language.unrolled_sum, 1, 64, target.to_device(ah), out, n=n)
    got = target.to_host(out)
    windows = np.lib.stride_tricks.sliding_window_view(ah.astype(np.float64), n).sum(1)
    assert_close(got[:size - n + 1], windows, "float32", ulps=8)
    assert np.isnan(got[size - n + 1:]).all()


# ---- atomics ---------------------------------------------------------------------------------

_ARITH = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


@pytest.mark.parametrize("dtype", _ARITH)
def test_atomic_arith(target, rng, dtype):
    n = 200
    vh = rng.integers(1, 1000, n).astype(dtype)  # integers: float sums are exact too
    init = np.array([10, 10 ** 6, 0, 10 ** 6, 7, 0], dtype)
    res = target.to_device(init.copy())
    olds = target.to_device(poison((6, n), dtype))
    target.launch(atomics.atomic_arith, cdiv(n, 64), 64, target.to_device(vh), res, olds)
    got, o = target.to_host(res), target.to_host(olds)
    v = vh.tolist()
    ref = [10 + sum(v), 10 ** 6 - sum(v), max(v), min(v)]
    assert_close(got[:4], ref, dtype)
    assert got[4] in vh and got[5] in vh
    ops = [lambda a, b: a + b, lambda a, b: a - b, max, min, lambda a, b: b,
           lambda a, b: b if a == 0 else a]
    for k, op in enumerate(ops):
        assert_chain(o[k], vh, init[k].item(), got[k].item(), op)
    assert (o[5] == 0).sum() == 1  # exactly one thread won the compare-and-swap


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
def test_atomic_bits(target, rng, dtype):
    n = 150
    info = np.iinfo(dtype)
    vh = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    vh |= np.array(1, dtype)  # so that the and-chain does not reach zero at once
    init = np.array([-1 if info.min else info.max, 0, 0x0F0F], dtype)
    res = target.to_device(init.copy())
    olds = target.to_device(poison((3, n), dtype))
    target.launch(atomics.atomic_bits, cdiv(n, 64), 64, target.to_device(vh), res, olds)
    got, o = target.to_host(res), target.to_host(olds)
    ref = [np.bitwise_and.reduce(vh) & init[0], np.bitwise_or.reduce(vh),
           np.bitwise_xor.reduce(vh) ^ init[2]]
    assert got.tolist() == np.array(ref, dtype).tolist()
    for k, op in enumerate([lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b]):
        assert_chain(o[k], vh, init[k].item(), got[k].item(), op)


def test_shared_histogram(target, rng):
    n = 3000
    dh = rng.integers(0, 1000, n).astype(np.int32)
    hist = target.to_device(np.zeros((4, 4), np.int32))
    target.launch(atomics.shared_histogram, cdiv(n, 128), 128, target.to_device(dh), hist)
    ref = np.bincount(dh % 16, minlength=16).reshape(4, 4)
    assert_close(target.to_host(hist), ref, "int32")


def test_atomic_counter_slots(target):
    n = 500
    out = target.to_device(poison(n, np.int64))
    counter = target.to_device(np.zeros(1, np.uint32))
    target.launch(atomics.atomic_counter_slots, cdiv(n, 128), 128, out, counter)
    assert sorted(target.to_host(out).tolist()) == list(range(n))
    assert target.to_host(counter).tolist() == [n]


# ---- warps -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float32", "float64"])
def test_shuffles(target, rng, dtype):
    ah = (rng.standard_normal(64) * 1000).astype(dtype)
    out = target.to_device(poison((4, 64), dtype))
    target.launch(warp.shuffles, 1, 64, target.to_device(ah), out)
    i = np.arange(64)
    lane, base = i % 32, i - i % 32
    ref = np.stack([ah[base + (lane + 3) % 32], ah[np.where(lane >= 2, i - 2, i)],
                    ah[np.where(lane + 5 < 32, i + 5, i)], ah[base + (lane ^ 7)]])
    assert_close(target.to_host(out), ref.astype(np.float64), dtype, ulps=0)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_warp_sum(target, rng, dtype):
    ah = (rng.standard_normal(64) * 100).astype(dtype)
    out = target.to_device(poison(2, dtype))
    target.launch(warp.warp_sum, 1, 64, target.to_device(ah), out)
    chunks = ah.astype(np.float64).reshape(2, 32)
    if dtype == "int32":
        assert_close(target.to_host(out), chunks.sum(1), dtype)
    else:
        assert_dot_close(target.to_host(out)[:, None], chunks, np.ones((32, 1)))


def test_votes(target, rng):
    ah = rng.integers(-5, 6, 64).astype(np.int32)
    ah[:32] = rng.integers(1, 6, 32)  # warp 0: every lane positive
    ah[32:] = np.where(ah[32:] > 0, -ah[32:], ah[32:])
    ah[40] = 3  # warp 1: exactly one lane positive
    out = target.to_device(poison((2, 5), np.uint32))
    target.launch(warp.votes, 1, 64, target.to_device(ah), out)
    p = (ah > 0).reshape(2, 32)
    ballot = (p * (1 << np.arange(32, dtype=np.uint64))).sum(1)
    ref = np.stack([p.all(1), p.any(1), ballot, [0x55555555] * 2, [0xFFFFFFFF] * 2], -1)
    assert_close(target.to_host(out), ref.astype(np.float64), "uint32")


_BIT_DTYPES = ["uint32", "int32", "uint64", "int64", "int8", "uint8", "int16", "uint16"]


def _bits_ref(v: int, bits: int) -> list[int]:
    u = v & ((1 << bits) - 1)
    rev = int(f"{u:0{bits}b}"[::-1], 2)
    return [bin(u).count("1"), bits - u.bit_length(), (u & -u).bit_length(), rev]


@pytest.mark.parametrize("dtype", _BIT_DTYPES)
def test_bit_ops(target, rng, dtype):
    info = np.iinfo(dtype)
    xh = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    xh[:3] = [0, 1, info.max]
    out = target.to_device(poison((40, 4), dtype))
    target.launch(warp.bit_ops, 1, 64, target.to_device(xh), out)
    bits = info.bits
    ref = np.array([_bits_ref(int(v), bits) for v in xh], dtype=np.uint64)
    got = target.to_host(out).view(f"u{xh.itemsize}")  # brev sets the sign bit of signed types
    assert got.astype(np.uint64).tolist() == ref.tolist()


# ---- math ------------------------------------------------------------------------------------

_UNARY_REF = [
    lambda v: np.sqrt(np.abs(v)), np.exp, lambda v: np.log(np.abs(v)),
    lambda v: np.abs(v) ** 1.5, np.sin, np.cos, np.tanh, np.floor, np.ceil, np.abs,
    lambda v: np.vectorize(math.erf)(v), lambda v: np.sqrt(np.abs(v)) + np.exp(-np.abs(v)),
    lambda v: np.floor(v * 2) / 2, lambda v: np.abs(v) ** 2 + np.abs(v) ** 0.5,
    lambda v: np.exp(v * 0.5) - np.log(np.abs(v) * 2), lambda v: v * math.pi - math.e,
]
_ULPS = {"float32": 8, "float64": 8, "float16": 4, "bfloat16": 4}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_unary_math(target, rng, dtype):
    n = 100
    xv = rng.uniform(0.1, 3, n) * rng.choice([-1, 1], n)
    xq = quantize(xv, dtype)  # the inputs as the kernel sees them
    x = target.array(xq, dtype)
    out = target.array(np.full((mathfuncs.N_UNARY, n), np.nan), dtype)
    target.launch(mathfuncs.unary_math, 1, 128, x, out)
    got = target.to_host(out)
    for k, f in enumerate(_UNARY_REF):
        assert_close(got[k], f(xq), dtype, ulps=_ULPS[dtype], err_msg=f"row {k}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nan_inf(target, rng, dtype):
    xh = rng.standard_normal(32).astype(dtype)
    xh[:4] = [np.nan, np.inf, -np.inf, 0.0]
    flags = target.to_device(np.ones((32, 3), np.bool_))  # the reference has False in each
    vals = target.to_device(np.full((32, 3), 7.0, dtype))  # NaN is a result here: poison with 7
    target.launch(mathfuncs.nan_inf, 1, 32, target.to_device(xh), flags, vals)
    x = xh.astype(np.float64)
    assert_close(target.to_host(flags), np.stack([np.isnan(x), np.isinf(x), np.isfinite(x)], -1),
                 "bool")
    ref = np.stack([np.where(x > 0, np.inf, -np.inf), x, np.where(np.isnan(x), 0.0, x)], -1)
    assert_close(target.to_host(vals), ref, dtype, ulps=0)


@pytest.mark.parametrize(("itype", "otype"), [("int32", "float64"), ("int64", "float32")])
def test_int_math(target, rng, itype, otype):
    xh = rng.integers(-1000, 1000, 64).astype(itype)
    out = target.to_device(poison((64, 3), otype))
    target.launch(mathfuncs.int_math, 1, 64, target.to_device(xh), out)
    x = xh.astype(np.int64)
    ref = np.stack([np.abs(x), x // 3, np.abs(x) + np.maximum(x, 2) - np.minimum(x, -2)], -1)
    assert_close(target.to_host(out), ref, otype)


# ---- dtypes ----------------------------------------------------------------------------------

def _values(rng, dtype: str, n: int, lo: int, hi: int) -> np.ndarray:
    """Random values that ``dtype`` holds exactly, in [lo, hi] (floats get fractions)."""
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(np.float64)
    if dtype.startswith("u"):
        lo = max(lo, 0)
    v = rng.integers(lo, hi, n, endpoint=True).astype(np.float64)
    if dtype.startswith("float") or dtype == "bfloat16":
        v = quantize(v + rng.uniform(0, 1, n), dtype)
    return v


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_add_arrays(target, rng, dtype):
    n = 100
    xv, yv = _values(rng, dtype, n, -50, 50), _values(rng, dtype, n, -50, 50)
    out = target.array(poison(n, dtype) if dtype != "bool" else np.zeros(n), dtype)
    target.launch(dtypes.add_arrays, 1, 128, target.array(xv, dtype), target.array(yv, dtype),
                  out)
    ref = (xv + yv) != 0 if dtype == "bool" else quantize(xv + yv, dtype)
    assert_close(target.to_host(out), ref, dtype)


@pytest.mark.parametrize("dtype", [d for d in dtypes.DTYPES if d != "bool"])
def test_affine_literal(target, rng, dtype):
    n = 100
    xv = _values(rng, dtype, n, -40, 40) if dtype not in ("uint8",) else \
        _values(rng, dtype, n, 1, 80)
    if dtype.startswith("u"):
        xv = np.maximum(xv, 1)
    out = target.array(poison(n, dtype), dtype)
    target.launch(dtypes.affine_literal, 1, 128, target.array(xv, dtype), out)
    ref = quantize(quantize(xv * 3, dtype) - 1, dtype)  # two roundings for floats
    assert_close(target.to_host(out), ref, dtype, ulps=2)


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_to_float64(target, rng, dtype):
    xv = _values(rng, dtype, 100, -100, 100)
    out = target.to_device(poison(100, np.float64))
    target.launch(dtypes.to_float64, 1, 128, target.array(xv, dtype), out)
    assert_close(target.to_host(out), xv, "float64", ulps=0)


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_from_float64(target, rng, dtype):
    n = 100
    lo = 0 if dtype.startswith("u") or dtype == "bool" else -100
    src = rng.uniform(lo, 100, n)
    src[:3] = [0.0, 12.75, 99.5]
    out = target.array(poison(n, dtype), dtype)
    target.launch(dtypes.from_float64, 1, 128, target.to_device(src), out)
    if dtype == "bool":
        ref = src != 0
    elif dtype.startswith(("int", "uint")):
        ref = np.trunc(src)  # C's conversion truncates towards zero
    else:
        ref = quantize(src, dtype)
    assert_close(target.to_host(out), ref, dtype, ulps=0 if dtype != "bfloat16" else 1)


@pytest.mark.parametrize("dtype", dtypes.SMALL_INTS)
def test_small_int_math(target, rng, dtype):
    n = 100
    ah = rng.integers(0 if dtype[0] == "u" else -10, 11, n).astype(dtype)
    bh = rng.integers(0 if dtype[0] == "u" else -10, 11, n).astype(dtype)
    out = target.to_device(poison((n, 7), dtype))
    target.launch(dtypes.small_int_math, 1, 128, target.to_device(ah), target.to_device(bh), out)
    def wrap(v):  # NumPy's wrap-around in the dtype
        return np.array(v, np.int64).astype(dtype).astype(np.int64)

    a, b = ah.astype(np.int64), bh.astype(np.int64)
    ref = np.stack([np.minimum(a, 2), np.maximum(wrap(a + b), b), wrap(a + b) // 3,
                    wrap(a - b) % 5, wrap(a * a), (wrap(a - b) > 4).astype(np.int64),
                    wrap(-a)], -1)
    assert_close(target.to_host(out), wrap(ref), dtype)


def test_logic(target, rng):
    ah = rng.integers(0, 2, 64).astype(np.bool_)
    bh = rng.integers(0, 2, 64).astype(np.bool_)
    out = target.to_device(np.zeros((64, 4), np.bool_))
    target.launch(dtypes.logic, 1, 64, target.to_device(ah), target.to_device(bh), out)
    ref = np.stack([ah & ~bh, ah | bh, ah == bh, (ah != bh) & (ah | bh)], -1)
    assert_close(target.to_host(out), ref, "bool")


# ---- the arrays users already have (GPU only) ------------------------------------------------

@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:kernel 'add' was given a NumPy array")  # documented, once
@pytest.mark.parametrize("lib", ["torch", "cupy", "device", "host"])
def test_vector_add_array_kinds(rng, lib):
    """The same kernel on torch tensors, CuPy arrays, threadtile DeviceArrays and NumPy host
    arrays (copied to the device and back by the runtime)."""
    t = gpu_target(lib)
    n = 5000
    xh = rng.standard_normal(n).astype(np.float32)
    yh = rng.standard_normal(n).astype(np.float32)
    out = t.to_device(poison(n, np.float32))
    t.launch(numba_docs.add, cdiv(n, 256), 256, t.to_device(xh), t.to_device(yh), out)
    assert_close(t.to_host(out), xh.astype(np.float64) + yh, "float32")


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_strided_views_array_kinds(rng, lib):
    """Transposed and sliced views of torch tensors and CuPy arrays keep their strides."""
    t = gpu_target(lib)
    h, w = 20, 13
    sh = rng.standard_normal((w, h)).astype(np.float32)
    big_dev = t.to_device(poison((2 * h, w), np.float32))
    t.launch(language.strided_copy, (cdiv(h, 8), cdiv(w, 8)), (8, 8), t.to_device(sh.T),
             big_dev[::2])
    got = t.to_host(big_dev)
    assert_close(got[::2], sh.T.astype(np.float64) * 2 + 1, "float32", ulps=2)
    assert np.isnan(got[1::2]).all()
