"""Numerics of the classics against float64 NumPy references, on every target: the lecture's
matmuls (tests/kernels/lecture.py), the numba documentation's examples
(tests/kernels/numba_docs.py), and correct classics written here: tiled matmuls, tree, warp
and last-block reductions, histograms, prefix scans.

Each test runs on every target (the ``target`` fixture, tests/conftest.py): in the simulator,
with every check on (so these also show that correct kernels raise no false alarm), and on the
GPU, from one body. Inputs are fresh random arrays (the seed is printed), outputs are poisoned
(NaN or a sentinel) before the launch so that an element a kernel fails to write shows, and
results are compared in float64 with tolerances that follow from the dtype; sums that may
round in any order are held to their rounding bounds.
"""

import math

import numpy as np
import pytest
from conftest import U32, assert_close, assert_dot_close, cdiv, poison
from kernels import lecture, numba_docs

import threadtile as cuda

FULL = 0xFFFFFFFF
TW = lecture.TW
U64 = 2.0 ** -53  # unit roundoff of float64


def sum_bound(terms: int, abs_sum, u: float = U32):
    """The error bound of a sum of ``terms`` values rounded in any order: gamma(terms - 1)
    times the sum of their magnitudes (Higham, Accuracy and Stability, 4.2)."""
    n = terms - 1
    return n * u / (1 - n * u) * np.asarray(abs_sum, np.float64)


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




# ---- tiled matmuls ---------------------------------------------------------------------------
# lecture.matmul_static, lecture.matmul_dynamic (tw a Constant[int]) and, here, the dynamic one
# with tw an ordinary runtime argument

@cuda.jit
def matmul_dynamic(m, n, out, tw):
    sh = cuda.shared.array(0, np.float32)
    ms = sh[:tw * tw]
    ns = sh[tw * tw:2 * tw * tw]
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    h, k = m.shape
    w = n.shape[1]
    p = np.float32(0.0)
    for ph in range(math.ceil(k / tw)):
        idx = ph * tw
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


@pytest.mark.parametrize(("h", "k", "w"), [(64, 64, 64), (67, 45, 33)])
def test_tiled_matmuls(target, rng, h, k, w):
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    grid, shared = (cdiv(w, TW), cdiv(h, TW)), 2 * TW * TW * 4
    md, nd = target.to_device(m), target.to_device(n)
    for kernel, extra, sh in [(lecture.matmul_static, (), 0), (matmul_dynamic, (TW,), shared),
                              (lecture.matmul_dynamic, (TW,), shared)]:
        out = target.to_device(poison((h, w), np.float32))
        target.launch(kernel, grid, (TW, TW), md, nd, out, *extra, shared=sh)
        assert_dot_close(target.to_host(out), m, n)
    # a strided (transposed) operand
    out = target.to_device(poison((h, w), np.float32))
    target.launch(lecture.matmul_static, grid, (TW, TW),
                  target.to_device(np.ascontiguousarray(m.T).T), nd, out)
    assert_dot_close(target.to_host(out), m, n)


# ---- reductions ------------------------------------------------------------------------------

@cuda.jit
def tree_sum(a, out):
    sh = cuda.shared.array(256, np.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def warp_shuffle_sum(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else np.float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def block_sum_with_warps(a, out):
    """Warp shuffles within warps, then the warps' sums through shared memory."""
    sums = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = a[i] if i < a.size else np.float32(0.0)
    off = 16
    while off > 0:
        v += cuda.shfl_xor_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        sums[t // 32] = v
    cuda.syncthreads()
    if t < 32:
        w = sums[t] if t < cuda.blockDim.x // 32 else np.float32(0.0)
        off = 16
        while off > 0:
            w += cuda.shfl_down_sync(FULL, w, off)
            off //= 2
        if t == 0:
            out[cuda.blockIdx.x] = w


@cuda.jit
def last_warp_with_syncwarp(a, out):
    """The unrolled last-warp reduction done right: syncwarp() between the steps."""
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    if t < 32:
        s = 32
        while s > 0:
            v = sh[t] + sh[t + s] if t < s else np.float32(0.0)
            cuda.syncwarp()
            if t < s:
                sh[t] = v
            cuda.syncwarp()
            s //= 2
    if t == 0:
        out[0] = sh[0]


@cuda.jit
def threadfence_sum(a, partial, counter, out):
    sh = cuda.shared.array(128, np.float64)
    last = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t == 0:
        s = 0.0
        for k in range(cuda.blockDim.x):
            s += sh[k]
        partial[cuda.blockIdx.x] = s
        cuda.threadfence()
        last[0] = cuda.atomic.add(counter, 0, 1) == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0] and t == 0:
        total = 0.0
        for b in range(cuda.gridDim.x):
            total += partial[b]
        out[0] = total


def _blocks(a, size):
    """``a`` zero-padded to whole blocks of ``size``, one block a row."""
    padded = np.zeros(cdiv(a.size, size) * size, np.float64)
    padded[:a.size] = a
    return padded.reshape(-1, size)


def test_tree_reduction(target, rng):
    a = rng.standard_normal(5000)
    nb = cdiv(a.size, 256)
    out = target.to_device(poison(nb, np.float64))
    target.launch(tree_sum, nb, 256, target.to_device(a), out)
    got = target.to_host(out)
    blocks = _blocks(a, 256)
    assert not np.isnan(got).any()
    assert (np.abs(got - blocks.sum(1)) <= sum_bound(256, np.abs(blocks).sum(1), U64)).all()
    np.testing.assert_allclose(got.sum(), a.sum(), rtol=1e-12,
                               atol=sum_bound(a.size, np.abs(a).sum(), U64))


def test_warp_shuffle_reductions(target, rng):
    a = rng.standard_normal(4096).astype(np.float32)
    a64 = a.astype(np.float64)
    dev = target.to_device(a)
    out = target.to_device(np.zeros(1, np.float32))  # the warps' sums are added into it
    target.launch(warp_shuffle_sum, 16, 256, dev, out)
    np.testing.assert_allclose(target.to_host(out)[0], a64.sum(), rtol=1e-4, atol=1e-3)
    out = target.to_device(poison(8, np.float32))
    target.launch(block_sum_with_warps, 8, 512, dev, out)
    got = target.to_host(out)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, a64.reshape(8, 512).sum(1), rtol=1e-4, atol=1e-3)
    out = target.to_device(poison(1, np.float32))
    target.launch(last_warp_with_syncwarp, 1, 64, target.to_device(a[:64]), out)
    np.testing.assert_allclose(target.to_host(out)[0], a64[:64].sum(), rtol=1e-5,
                               atol=sum_bound(64, np.abs(a64[:64]).sum()))


def test_threadfence_reduction(target, rng):
    a = rng.standard_normal(1000)
    nb = cdiv(a.size, 128)
    partial = target.to_device(poison(nb, np.float64))
    out = target.to_device(poison(1, np.float64))
    target.launch(threadfence_sum, nb, 128, target.to_device(a), partial,
                  target.to_device(np.zeros(1, np.int32)), out)
    blocks = _blocks(a, 128)
    got = target.to_host(partial)
    assert (np.abs(got - blocks.sum(1)) <= sum_bound(128, np.abs(blocks).sum(1), U64)).all()
    np.testing.assert_allclose(target.to_host(out)[0], a.sum(), rtol=1e-12,
                               atol=sum_bound(a.size, np.abs(a).sum(), U64))


# ---- histograms ------------------------------------------------------------------------------

@cuda.jit
def histogram_global(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def histogram_shared(data, hist):
    sh = cuda.shared.array(16, np.int32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(sh, data[i], 1)
        i += stride
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(hist, t, sh[t])


@cuda.jit
def float_histogram(x, hist, lo, width):
    i = cuda.grid(1)
    if i < x.size:
        b = int((x[i] - lo) / width)
        b = min(max(b, 0), hist.size - 1)
        cuda.atomic.add(hist, b, 1.0)


def test_histograms(target, rng):
    """Counts start at zero (atomics add into them) and must come out exact."""
    data = rng.integers(0, 16, 10_000).astype(np.int64)
    ref = np.bincount(data, minlength=16)
    dev = target.to_device(data)
    hist = target.to_device(np.zeros(16, np.int32))
    target.launch(histogram_global, cdiv(data.size, 256), 256, dev, hist)
    np.testing.assert_array_equal(target.to_host(hist), ref)
    hist = target.to_device(np.zeros(16, np.int32))
    target.launch(histogram_shared, 8, 128, dev, hist)
    np.testing.assert_array_equal(target.to_host(hist), ref)
    x = rng.random(3000)
    h = target.to_device(np.zeros(10))
    target.launch(float_histogram, cdiv(x.size, 128), 128, target.to_device(x), h, 0.0, 0.1)
    np.testing.assert_array_equal(target.to_host(h), np.histogram(x, 10, (0, 1))[0])


# ---- prefix scans ----------------------------------------------------------------------------

@cuda.jit
def scan_hillis_steele(a, out):
    """Inclusive scan of one block: read, barrier, write, barrier at every step."""
    sh = cuda.shared.array(256, np.float64)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    off = 1
    while off < cuda.blockDim.x:
        v = sh[t - off] if t >= off else 0.0
        cuda.syncthreads()
        if t >= off:
            sh[t] += v
        cuda.syncthreads()
        off *= 2
    out[t] = sh[t]


@cuda.jit
def scan_blelloch(a, out):
    """Exclusive work-efficient scan (up-sweep, down-sweep) of 2 * blockDim elements."""
    sh = cuda.shared.array(512, np.int64)
    t = cuda.threadIdx.x
    n = 2 * cuda.blockDim.x
    sh[2 * t] = a[2 * t]
    sh[2 * t + 1] = a[2 * t + 1]
    off = 1
    d = n // 2
    while d > 0:
        cuda.syncthreads()
        if t < d:
            ai = off * (2 * t + 1) - 1
            bi = off * (2 * t + 2) - 1
            sh[bi] += sh[ai]
        off *= 2
        d //= 2
    if t == 0:
        sh[n - 1] = 0
    d = 1
    while d < n:
        off //= 2
        cuda.syncthreads()
        if t < d:
            ai = off * (2 * t + 1) - 1
            bi = off * (2 * t + 2) - 1
            v = sh[ai]
            sh[ai] = sh[bi]
            sh[bi] += v
        d *= 2
    cuda.syncthreads()
    out[2 * t] = sh[2 * t]
    out[2 * t + 1] = sh[2 * t + 1]


def test_prefix_scans(target, rng):
    a = rng.standard_normal(256)
    out = target.to_device(poison(256, np.float64))
    target.launch(scan_hillis_steele, 1, 256, target.to_device(a), out)
    got = target.to_host(out)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, np.cumsum(a), rtol=1e-12, atol=1e-12)
    b = rng.integers(-100, 100, 512)
    outb = target.to_device(poison(512, np.int64))
    target.launch(scan_blelloch, 1, 256, target.to_device(b), outb)
    np.testing.assert_array_equal(target.to_host(outb), np.concatenate([[0], np.cumsum(b)[:-1]]))
