"""Numerics of the kernel language (tests/kernels/language.py, and a few kernels written here)
against float64 NumPy references, on every target: indices and warps, memory spaces, barriers
and fences, control flow, views, printing, arithmetic, device functions and frozen constants.

Each test runs on every target (the ``target`` fixture, tests/conftest.py): in the simulator and
on the GPU, from one body. Inputs are fresh random arrays (the seed is printed), outputs are
poisoned (NaN or a sentinel) before the launch so that an element a kernel fails to write
shows, and results are compared in float64 with tolerances that follow from the dtype.
"""

import math

import numpy as np
import pytest
from conftest import assert_close, assert_dot_close, cdiv, poison
from kernels import language

import threadtile as cuda

FULL = 0xFFFFFFFF

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


@cuda.jit
def ids3(out):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + \
        cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    g = t + (cuda.blockIdx.x + cuda.blockIdx.y * cuda.gridDim.x) * (
        cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z)
    out[g, 0] = cuda.laneid
    out[g, 1] = cuda.shfl_sync(FULL, t, 0)  # lane 0 of the warp: the warp's first thread
    out[g, 2] = cuda.ballot_sync(FULL, t % 3 == 0)


def test_warps_follow_the_linear_thread_id(target):
    """3-d blocks of 96 threads: warps are runs of 32 in the linear thread index."""
    out = target.to_device(poison((2 * 2 * 96, 3), np.int64))
    target.launch(ids3, (2, 2), (8, 4, 3), out)
    got = target.to_host(out)
    t = np.tile(np.arange(96), 4)
    np.testing.assert_array_equal(got[:, 0], t % 32)
    np.testing.assert_array_equal(got[:, 1], t - t % 32)
    bits = sum(1 << k for k in range(32) if k % 3 == 0)
    other = sum(1 << k for k in range(32) if (k + 32) % 3 == 0)
    third = sum(1 << k for k in range(32) if (k + 64) % 3 == 0)
    np.testing.assert_array_equal(got[:, 2], np.tile(np.repeat([bits, other, third], 32), 4))


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


@cuda.jit
def views(a, out, tmp):
    i = cuda.grid(1)
    row = a[i]  # a row view per thread
    loc = cuda.local.array(4, np.float64)
    for k in range(4):
        loc[k] = row[k] * 2.0
    tail = row[1:]
    out[i, 0] = tail[0] + loc[3]
    out[i, 1] = len(tail)
    col = a[:, 2]
    out[i, 2] = col[i]
    sub = tmp[::2]
    sub[i] = i


def test_views_local_arrays_and_strides(target, rng):
    """Row, column and sliced views of a strided argument, a local array, and a write through
    a strided view that leaves the elements between untouched."""
    base = rng.standard_normal((8, 8))
    a = base[:, ::2]  # a strided argument
    out = target.to_device(poison((8, 3), np.float64))
    tmp = target.to_device(np.zeros(16))
    target.launch(views, 1, 8, target.to_device(a), out, tmp)
    got, tmp = target.to_host(out), target.to_host(tmp)
    np.testing.assert_array_equal(got[:, 0], a[:, 1] + 2 * a[:, 3])
    np.testing.assert_array_equal(got[:, 1], 3)
    np.testing.assert_array_equal(got[:, 2], a[:, 2])
    np.testing.assert_array_equal(tmp[::2], np.arange(8))
    np.testing.assert_array_equal(tmp[1::2], 0)


@pytest.mark.parametrize(("dtype", "value", "text"), [
    ("float32", 1.5, "value 1.500000 index 0 positive True"),
    ("int32", -3, "value -3 index 0 positive False")])
def test_printer(target, capfd, dtype, value, text):
    a = target.to_device(np.array([value, 0, 0, 0], dtype))
    with target.capture_prints(capfd) as printed:
        target.launch(language.printer, 1, 4, a)
    lines = [ln for ln in "".join(printed).splitlines() if ln.startswith("value")]
    assert lines == [text]


@cuda.jit(device=True)
def first_multiple(a, k):
    for j in range(a.size):
        if a[j] % k == 0:
            return j
    return -1


@cuda.jit
def control(a, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    s = 0
    for j in range(10, 0, -2):  # negative step
        if j == i % 10:
            continue
        if j < i % 7:
            break
        s += j
    out[i, 0] = s
    n = 0
    while True:
        n += 1
        if n * n > i:
            break
    out[i, 1] = n
    out[i, 2] = first_multiple(a, i + 1)
    for q in range(i % 3):  # noqa: B007  (read after the loop)
        pass
    out[i, 3] = q if i % 3 else -7  # Python: the loop variable keeps its last value


def _control_ref(a, i):
    s = 0
    for j in range(10, 0, -2):
        if j == i % 10:
            continue
        if j < i % 7:
            break
        s += j
    n = 0
    while True:
        n += 1
        if n * n > i:
            break
    fm = next((j for j in range(a.size) if a[j] % (i + 1) == 0), -1)
    q = (i % 3) - 1 if i % 3 else -7
    return [s, n, fm, q]


def test_divergent_control_flow(target):
    """continue and break in a loop with a negative step, a while-True loop, a return from
    inside a device function's loop, a loop variable read after its loop: each lane its own
    way (50 threads, the second warp partly outside)."""
    a = np.array([7, 9, 4, 25, 6, 13, 35, 22], np.int64)
    out = target.to_device(poison((50, 4), np.int64))
    target.launch(control, 2, 32, target.to_device(a), out)
    ref = np.array([_control_ref(a, i) for i in range(50)])
    np.testing.assert_array_equal(target.to_host(out), ref)


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


@cuda.jit
def arith(x, y, fx, fy, out, fout):
    i = cuda.grid(1)
    a, b = x[i], y[i]
    out[i, 0] = a // b
    out[i, 1] = a % b
    out[i, 2] = min(a, b)
    out[i, 3] = max(a, b, 0)
    out[i, 4] = abs(a)
    out[i, 5] = a ** 3
    out[i, 6] = (a << 2) >> 1
    out[i, 7] = int(fx[i])
    p, q = fx[i], fy[i]
    fout[i, 0] = p // q
    fout[i, 1] = p % q
    fout[i, 2] = math.sqrt(abs(p))
    fout[i, 3] = p ** 2
    fout[i, 4] = math.floor(p)
    fout[i, 5] = min(p, q)


def test_python_arithmetic(target, rng):
    """Python's meaning of //, %, min, max, abs, ** and int() on int32 and float64 values."""
    x = rng.integers(-50, 50, 64).astype(np.int32)
    y = rng.integers(1, 9, 64).astype(np.int32) * rng.choice([-1, 1], 64).astype(np.int32)
    fx = rng.standard_normal(64) * 10
    fy = rng.standard_normal(64) + 3
    out = target.to_device(poison((64, 8), np.int32))
    fout = target.to_device(poison((64, 6), np.float64))
    target.launch(arith, 2, 32, target.to_device(x), target.to_device(y), target.to_device(fx),
                  target.to_device(fy), out, fout)
    out, fout = target.to_host(out), target.to_host(fout)
    xi, yi = x.astype(np.int64), y.astype(np.int64)
    np.testing.assert_array_equal(out[:, 0], xi // yi)
    np.testing.assert_array_equal(out[:, 1], xi % yi)
    np.testing.assert_array_equal(out[:, 2], np.minimum(x, y))
    np.testing.assert_array_equal(out[:, 3], np.maximum(np.maximum(x, y), 0))
    np.testing.assert_array_equal(out[:, 4], np.abs(x))
    np.testing.assert_array_equal(out[:, 5], xi ** 3)
    np.testing.assert_array_equal(out[:, 6], (xi << 2) >> 1)
    np.testing.assert_array_equal(out[:, 7], np.trunc(fx))
    np.testing.assert_allclose(fout[:, 0], np.floor(fx / fy))
    np.testing.assert_allclose(fout[:, 1], np.mod(fx, fy), atol=1e-12)
    np.testing.assert_allclose(fout[:, 2], np.sqrt(np.abs(fx)))
    np.testing.assert_allclose(fout[:, 3], fx ** 2)
    np.testing.assert_allclose(fout[:, 4], np.floor(fx))
    np.testing.assert_allclose(fout[:, 5], np.minimum(fx, fy))


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


