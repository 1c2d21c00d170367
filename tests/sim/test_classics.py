"""Correct classics run with every check on: no false alarm, and the right numbers (compared in
float64 with NumPy)."""

import math

import numpy as np
import pytest
from kernels import lecture

import threadtile as cuda
from threadtile.backends.sim import simulate

FULL = 0xFFFFFFFF
TW = lecture.TW


def cdiv(a, b):
    return -(-a // b)


# ---- the lecture's tiled matmuls ------------------------------------------------------------
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


def _check_matmul(got, m, n):
    ref = m.astype(np.float64) @ n.astype(np.float64)
    bound = (m.shape[1] + 2) * 2.0 ** -24 * (np.abs(m).astype(np.float64) @ np.abs(n))
    assert np.all(np.abs(got - ref) <= bound + 1e-30)


@pytest.mark.parametrize("h, k, w", [(64, 64, 64), (67, 45, 33)])
def test_tiled_matmuls(h, k, w):
    rng = np.random.default_rng(1)
    m = rng.standard_normal((h, k)).astype(np.float32)
    n = rng.standard_normal((k, w)).astype(np.float32)
    grid = (cdiv(w, TW), cdiv(h, TW))
    with simulate():
        out = np.full((h, w), np.nan, np.float32)
        lecture.matmul_static[grid, (TW, TW)](m, n, out)
        _check_matmul(out, m, n)
        out = np.full((h, w), np.nan, np.float32)
        matmul_dynamic[grid, (TW, TW), 0, 2 * TW * TW * 4](m, n, out, TW)
        _check_matmul(out, m, n)
        out = np.full((h, w), np.nan, np.float32)
        lecture.matmul_dynamic[grid, (TW, TW), 0, 2 * TW * TW * 4](m, n, out, TW)
        _check_matmul(out, m, n)
    # a strided (transposed) operand
    out = np.full((h, w), np.nan, np.float32)
    mt = np.ascontiguousarray(m.T).T
    with simulate():
        lecture.matmul_static[grid, (TW, TW)](mt, n, out)
    _check_matmul(out, m, n)


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


def test_tree_reduction():
    a = np.random.default_rng(2).standard_normal(5000)
    out = np.full(cdiv(a.size, 256), np.nan)
    with simulate():
        tree_sum[out.size, 256](a, out)
    np.testing.assert_allclose(out.sum(), a.sum(), rtol=1e-12)
    np.testing.assert_allclose(out[0], a[:256].sum(), rtol=1e-12)


def test_warp_shuffle_reductions():
    a = np.random.default_rng(3).standard_normal(4096).astype(np.float32)
    out = np.zeros(1, np.float32)
    with simulate():
        warp_shuffle_sum[16, 256](a, out)
    np.testing.assert_allclose(out[0], a.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
    out = np.full(8, np.nan, np.float32)
    with simulate():
        block_sum_with_warps[8, 512](a, out)
    np.testing.assert_allclose(out, a.astype(np.float64).reshape(8, 512).sum(1), rtol=1e-4,
                               atol=1e-3)
    out = np.zeros(1, np.float32)
    with simulate():
        last_warp_with_syncwarp[1, 64](a[:64], out)
    np.testing.assert_allclose(out[0], a[:64].astype(np.float64).sum(), rtol=1e-5)


def test_threadfence_reduction():
    a = np.random.default_rng(4).standard_normal(1000)
    nb = cdiv(a.size, 128)
    out = np.zeros(1)
    with simulate():
        threadfence_sum[nb, 128](a, np.zeros(nb), np.zeros(1, np.int32), out)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-12)


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


def test_histograms():
    data = np.random.default_rng(5).integers(0, 16, 10_000).astype(np.int64)
    ref = np.bincount(data, minlength=16)
    hist = np.zeros(16, np.int32)
    with simulate():
        histogram_global[cdiv(data.size, 256), 256](data, hist)
    np.testing.assert_array_equal(hist, ref)
    hist = np.zeros(16, np.int32)
    with simulate():
        histogram_shared[8, 128](data, hist)
    np.testing.assert_array_equal(hist, ref)
    x = np.random.default_rng(6).random(3000)
    h = np.zeros(10)
    with simulate():
        float_histogram[cdiv(x.size, 128), 128](x, h, 0.0, 0.1)
    np.testing.assert_array_equal(h, np.histogram(x, 10, (0, 1))[0])


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


def test_prefix_scans():
    a = np.random.default_rng(7).standard_normal(256)
    out = np.full(256, np.nan)
    with simulate():
        scan_hillis_steele[1, 256](a, out)
    np.testing.assert_allclose(out, np.cumsum(a), rtol=1e-12, atol=1e-12)
    b = np.random.default_rng(8).integers(-100, 100, 512)
    outb = np.zeros(512, np.int64)
    with simulate():
        scan_blelloch[1, 256](b, outb)
    np.testing.assert_array_equal(outb, np.concatenate([[0], np.cumsum(b)[:-1]]))
