"""``simulate(mode="python")``: the kernel's own Python function, once per thread."""

import sys
from pathlib import Path

import numpy as np
import pytest
from kernels import lecture

import threadtile as cuda
from threadtile.backends.sim import simulate
from threadtile.errors import BarrierDivergenceError, OutOfBoundsError

_LINES = Path(__file__).read_text().splitlines()
FULL = 0xFFFFFFFF


def line_of(marker: str) -> int:
    hits = [k + 1 for k, text in enumerate(_LINES) if text.rstrip().endswith(f"# HERE: {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


@cuda.jit(device=True)
def doubled(x):
    return x * 2


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = 4
    while stride > 0:
        if t < stride:
            sh[t] += sh[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 1 and cuda.blockIdx.x == 0:
        breakpoint()  # noqa: T100
        print("sh[:2] =", sh[0], sh[1], cuda.laneid == 1)
    if t == 0:
        out[cuda.blockIdx.x] = doubled(sh[0])


def test_shared_memory_barriers_device_functions_print(capsys, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: seen.append(
        (cuda.threadIdx.x, cuda.blockIdx.x)))
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    with simulate(mode="python"):
        block_sum[2, 8](a, out)
    np.testing.assert_array_equal(out, 2 * a.reshape(2, 8).sum(axis=1))
    assert seen == [(1, 0)]  # breakpoint() ran inside thread 1 of block 0
    assert capsys.readouterr().out == "sh[:2] = 28.000000 16.000000 True\n"


def test_lecture_matmul_with_constant_tile_width():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((10, 12)).astype(np.float32)
    n = rng.standard_normal((12, 9)).astype(np.float32)
    out = np.zeros((10, 9), np.float32)
    with simulate(mode="python"):
        lecture.matmul_dynamic[(3, 3), (4, 4), 0, 2 * 4 * 4 * 4](m, n, out, 4)
    np.testing.assert_allclose(out, m.astype(np.float64) @ n, rtol=1e-5, atol=1e-5)


@cuda.jit
def static_matmul(m, n, out):
    ms = cuda.shared.array((8, 8), np.float32)
    ns = cuda.shared.array((8, 8), np.float32)
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * 8 + tr
    c = cuda.blockIdx.x * 8 + tc
    p = np.float32(0.0)
    for ph in range(m.shape[1] // 8):
        ms[tr, tc] = m[r, tc + ph * 8]
        ns[tr, tc] = n[tr + ph * 8, c]
        cuda.syncthreads()
        for i in range(8):
            p += ms[tr, i] * ns[i, tc]
        cuda.syncthreads()
    out[r, c] = p


def test_every_thread_of_a_block_sees_one_shared_array():
    """64 OS threads reach each shared.array() together: they must get the same array."""
    rng = np.random.default_rng(1)
    m = rng.standard_normal((24, 16)).astype(np.float32)
    n = rng.standard_normal((16, 16)).astype(np.float32)
    for _ in range(3):
        out = np.zeros((24, 16), np.float32)
        with simulate(mode="python"):
            static_matmul[(2, 3), (8, 8)](m, n, out)
        np.testing.assert_allclose(out, m.astype(np.float64) @ n, rtol=1e-5, atol=1e-5)


@cuda.jit
def warp_reduce_and_histogram(a, out, hist):
    i = cuda.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v
    cuda.atomic.add(hist, int(a[i]) % 4, 1)
    b = cuda.ballot_sync(FULL, a[i] % 2 == 0)
    if cuda.laneid == 0:
        out[2 + i // 32] = b


def test_warp_operations_and_atomics():
    a = np.arange(64, dtype=np.int64)
    out = np.zeros(4, np.int64)
    hist = np.zeros(4, np.int64)
    with simulate(mode="python"):
        warp_reduce_and_histogram[1, 64](a, out, hist)
    np.testing.assert_array_equal(out[:2], a.reshape(2, 32).sum(1))
    np.testing.assert_array_equal(out[2:], [0x55555555, 0x55555555])
    np.testing.assert_array_equal(hist, [16, 16, 16, 16])


@cuda.jit
def different_barriers(out):
    t = cuda.threadIdx.x
    if t < 4:
        cuda.syncthreads()  # HERE: first barrier
    else:
        cuda.syncthreads()  # HERE: second barrier
    out[t] = t


@cuda.jit
def barrier_after_return(out):
    t = cuda.threadIdx.x
    if t == 3:
        return
    cuda.syncthreads()  # HERE: after return
    out[t] = t


@cuda.jit
def negative_index(a, out):
    t = cuda.threadIdx.x
    out[t] = a[t - 1]  # HERE: negative


def test_threads_waiting_at_different_barriers():
    with simulate(mode="python"), pytest.raises(BarrierDivergenceError) as info:
        different_barriers[1, 8](np.zeros(8, np.int64))
    e = info.value
    assert e.line == line_of("first barrier") and e.block == (0, 0, 0)
    assert e.thread == (4, 0, 0)  # the first thread not waiting at that barrier
    assert f"line {line_of('second barrier')}" in str(e)


def test_barrier_after_early_return():
    with simulate(mode="python"), pytest.raises(BarrierDivergenceError) as info:
        barrier_after_return[1, 8](np.zeros(8, np.int64))
    assert info.value.line == line_of("after return") and info.value.thread == (3, 0, 0)
    assert "returned" in str(info.value)


def test_negative_index_in_python_mode():
    with simulate(mode="python"), pytest.raises(OutOfBoundsError) as info:
        negative_index[1, 4](np.zeros(4), np.zeros(4))
    assert info.value.line == line_of("negative") and info.value.thread == (0, 0, 0)


@cuda.jit
def python_error(a):
    t = cuda.threadIdx.x
    a[t] = 1 // (t - 2)


def test_a_python_exception_in_one_thread_reaches_the_caller():
    with simulate(mode="python"), pytest.raises(ZeroDivisionError):
        python_error[1, 4](np.zeros(4, np.int64))


@pytest.mark.parametrize("mode", ["lockstep", "python"])
def test_atomic_inc_dec_uint64(mode):
    from kernels.atomics import atomic_wrap
    res = np.array([3, 2], np.uint64)
    olds = np.zeros((2, 20), np.uint64)
    with simulate(mode=mode):
        atomic_wrap[1, 32](res, np.array([7], np.uint64), olds)
    assert res.tolist() == [(3 + 20) % 8, (2 - 20) % 8]
    assert sorted(olds[0].tolist()) == sorted([(3 + k) % 8 for k in range(20)])
