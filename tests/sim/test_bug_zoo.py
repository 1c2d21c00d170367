"""The bug zoo: one kernel per class of bug the simulator turns into an error.

Each test asserts the exception type, the Python line it reports (found by the ``# BUG`` marker
comment on that line, so editing this file does not break the tests) and the block and thread it
names. The lecture's tiled matmul appears twice: without its second ``syncthreads()`` (a thread
overwrites a tile another thread is still reading) and without its first (a thread reads a tile
element before its owner wrote it).
"""

import math
from pathlib import Path

import numpy as np
import pytest

import threadtile as cuda
from threadtile import Constant
from threadtile.backends.sim import simulate
from threadtile.errors import (
    BarrierDivergenceError,
    KernelRuntimeError,
    OutOfBoundsError,
    RaceError,
    UninitializedReadError,
)

_LINES = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    """The 1-based line of this file that ends with ``# BUG: <marker>``."""
    hits = [k + 1 for k, text in enumerate(_LINES) if text.rstrip().endswith(f"# BUG: {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


# ---- the lecture's tiled matmul, two ways wrong ---------------------------------------------

@cuda.jit
def matmul_no_second_sync(m, n, out, tw: Constant[int]):
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
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0  # BUG: war write
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]  # BUG: war read
        # the second cuda.syncthreads() is missing here
    if r < h and c < w:
        out[r, c] = p


@cuda.jit
def matmul_no_first_sync(m, n, out, tw: Constant[int]):
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
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0  # BUG: raw write
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        # the first cuda.syncthreads() is missing here
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]  # BUG: raw read
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


@cuda.jit
def matmul_static_no_second_sync(m, n, out):
    ms = cuda.shared.array((16, 16), np.float32)
    ns = cuda.shared.array((16, 16), np.float32)
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    p = np.float32(0.0)
    for ph in range(m.shape[1] // 16):
        ms[tr, tc] = m[r, tc + ph * 16]  # BUG: static war write
        ns[tr, tc] = n[tr + ph * 16, c]
        cuda.syncthreads()
        for i in range(16):
            p += ms[tr, i] * ns[i, tc]
    out[r, c] = p


def _matmul_args(n=32, tw=16):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    return m, b, np.zeros((n, n), np.float32)


def test_matmul_missing_second_syncthreads():
    m, n, out = _matmul_args()
    with simulate(), pytest.raises(RaceError) as info:
        matmul_no_second_sync[(2, 2), (16, 16), 0, 2 * 16 * 16 * 4](m, n, out, 16)
    e = info.value
    # phase 1 overwrites ms[0] while thread (15, 0, 0) may still read it from phase 0
    assert e.line == line_of("war write")
    assert (e.block, e.thread) == ((0, 0, 0), (0, 0, 0))
    assert e.kind == "write" and e.array == "ms" and e.index == (0,)
    assert e.other.line == line_of("war read") and e.other.kind == "read"
    assert e.other.block == (0, 0, 0) and e.other.thread != (0, 0, 0)
    assert "no syncthreads() between them" in str(e)
    assert f"line {line_of('war read')}" in str(e)


def test_matmul_missing_first_syncthreads():
    m, n, out = _matmul_args()
    with simulate(), pytest.raises(RaceError) as info:
        matmul_no_first_sync[(2, 2), (16, 16), 0, 2 * 16 * 16 * 4](m, n, out, 16)
    e = info.value
    # thread (1, 0, 0) reads ms[0], which thread (0, 0, 0) wrote with no barrier between
    assert e.line == line_of("raw read")
    assert (e.block, e.thread) == ((0, 0, 0), (1, 0, 0))
    assert e.kind == "read" and e.array == "ms" and e.index == (0,)
    assert e.other.line == line_of("raw write")
    assert (e.other.block, e.other.thread, e.other.kind) == ((0, 0, 0), (0, 0, 0), "write")


def test_static_matmul_missing_second_syncthreads():
    m, n, out = _matmul_args()
    with simulate(), pytest.raises(RaceError) as info:
        matmul_static_no_second_sync[(2, 2), (16, 16)](m, n, out)
    assert info.value.line == line_of("static war write")
    assert info.value.index == (0, 0) and info.value.thread == (0, 0, 0)


def test_missing_barrier_goes_unnoticed_without_checks():
    """Lockstep execution hides the bug (the result is right), which is why the check exists."""
    m, n, out = _matmul_args()
    with simulate(checks={"bounds", "barrier", "uninit"}):
        matmul_no_second_sync[(2, 2), (16, 16), 0, 2 * 16 * 16 * 4](m, n, out, 16)
    np.testing.assert_allclose(out, m.astype(np.float64) @ n, rtol=1e-4, atol=1e-4)


# ---- races ----------------------------------------------------------------------------------

@cuda.jit
def shared_write_write(out):
    sh = cuda.shared.array(4, np.int32)
    sh[0] = cuda.threadIdx.x  # BUG: shared waw
    cuda.syncthreads()
    out[cuda.threadIdx.x] = sh[0]


@cuda.jit
def blocks_write_one_element(out):
    if cuda.threadIdx.x == 0:
        out[0] = cuda.blockIdx.x  # BUG: global waw


@cuda.jit
def reads_previous_block(a):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        a[b] = 1.0  # BUG: cross-block write
        if b > 0:
            a[b] += a[b - 1]  # BUG: cross-block read


@cuda.jit
def atomic_and_plain(counter, out):
    t = cuda.threadIdx.x
    if t == 0:
        out[0] = counter[0]  # BUG: plain read of atomic
    else:
        cuda.atomic.add(counter, 0, 1)  # BUG: atomic after plain read


@cuda.jit
def warp_synchronous_without_syncwarp(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    if t < 32:
        sh[t] += sh[t + 16]  # BUG: warp race
        sh[t] += sh[t + 8]
    if t == 0:
        out[0] = sh[0]


def test_shared_write_write():
    with simulate(), pytest.raises(RaceError) as info:
        shared_write_write[1, 32](np.zeros(32, np.int32))
    e = info.value
    assert e.line == line_of("shared waw") and e.kind == "write"
    assert e.other.kind == "write" and e.other.line == e.line
    assert (e.thread, e.other.thread) == ((1, 0, 0), (0, 0, 0))


def test_two_blocks_write_one_global_element():
    with simulate(), pytest.raises(RaceError) as info:
        blocks_write_one_element[3, 32](np.zeros(1, np.int64))
    e = info.value
    assert e.line == line_of("global waw")
    assert (e.block, e.thread) == ((1, 0, 0), (0, 0, 0))
    assert (e.other.block, e.other.thread) == ((0, 0, 0), (0, 0, 0))
    assert "different blocks" in str(e)


def test_read_of_another_blocks_write():
    with simulate(), pytest.raises(RaceError) as info:
        reads_previous_block[4, 32](np.zeros(4, np.float32))
    e = info.value
    assert e.line == line_of("cross-block read") and e.kind == "read"
    assert e.block == (1, 0, 0) and e.index == (0,)
    assert e.other.line == line_of("cross-block write") and e.other.block == (0, 0, 0)


def test_atomic_against_plain_access():
    with simulate(), pytest.raises(RaceError) as info:
        atomic_and_plain[1, 32](np.zeros(1, np.int32), np.zeros(1, np.int32))
    e = info.value
    assert e.line == line_of("atomic after plain read") and e.kind == "atomic"
    assert e.other.line == line_of("plain read of atomic") and e.other.thread == (0, 0, 0)


def test_warp_synchronous_code_needs_syncwarp():
    """Threads of a warp are not implicitly synchronous (since Volta): the classic unrolled
    last-warp reduction without syncwarp() races."""
    with simulate(), pytest.raises(RaceError) as info:
        warp_synchronous_without_syncwarp[1, 64](np.ones(64, np.float32),
                                                 np.zeros(1, np.float32))
    assert info.value.line == line_of("warp race")


# ---- out of bounds --------------------------------------------------------------------------

@cuda.jit
def shifted_copy(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i - 1]  # BUG: negative index


@cuda.jit
def unguarded_copy(a, out):
    i = cuda.grid(1)
    out[i] = a[i]  # BUG: past the end


@cuda.jit
def transpose_wrong_bound(a, out):
    r, c = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[0]:  # should be a.shape[1]
        out[c, r] = a[r, c]  # BUG: 2-d index


@cuda.jit
def row_overrun(a, out):
    t = cuda.threadIdx.x
    out[t] = a[0, t]


@cuda.jit
def shared_overrun(out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t + 1] = 1.0  # BUG: shared index
    out[t] = 0.0


@cuda.jit
def local_overrun(out, n):
    acc = cuda.local.array(4, np.float32)
    for k in range(n):
        acc[k] = k  # BUG: local index
    out[cuda.grid(1)] = acc[0]


def test_negative_index_does_not_wrap():
    with simulate(), pytest.raises(OutOfBoundsError) as info:
        shifted_copy[1, 32](np.zeros(32, np.float32), np.zeros(32, np.float32))
    e = info.value
    assert e.line == line_of("negative index")
    assert (e.block, e.thread, e.array, e.index, e.shape) == (
        (0, 0, 0), (0, 0, 0), "a", (-1,), (32,))
    assert "negative indices do not wrap" in str(e)


def test_index_past_the_end_in_a_later_block():
    with simulate(), pytest.raises(OutOfBoundsError) as info:
        unguarded_copy[2, 64](np.zeros(100, np.float32), np.zeros(128, np.float32))
    e = info.value
    assert e.line == line_of("past the end")
    assert (e.block, e.thread, e.index, e.shape) == ((1, 0, 0), (36, 0, 0), (100,), (100,))


def test_one_axis_out_of_bounds():
    a = np.zeros((8, 4), np.float32)
    with simulate(), pytest.raises(OutOfBoundsError) as info:
        transpose_wrong_bound[(1, 1), (8, 8)](a, np.zeros((4, 8), np.float32))
    e = info.value
    assert e.line == line_of("2-d index") and e.array == "a" and e.shape == (8, 4)
    assert e.index == (0, 4) and e.thread == (0, 4, 0)


def test_shared_and_local_arrays_are_checked():
    with simulate(), pytest.raises(OutOfBoundsError) as info:
        shared_overrun[1, 32](np.zeros(32, np.float32))
    assert info.value.line == line_of("shared index") and info.value.thread == (31, 0, 0)
    assert info.value.array == "sh" and info.value.index == (32,)
    with simulate(), pytest.raises(OutOfBoundsError) as info:
        local_overrun[1, 4](np.zeros(4, np.float32), 5)
    assert info.value.line == line_of("local index") and info.value.index == (4,)


# ---- barrier divergence ---------------------------------------------------------------------

@cuda.jit
def barrier_in_branch(out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = 1.0
        cuda.syncthreads()  # BUG: barrier in branch
    out[t] = 0.0


@cuda.jit
def barrier_after_early_return(a, out):
    t = cuda.threadIdx.x
    if t >= a.size:
        return
    cuda.syncthreads()  # BUG: barrier after return
    out[t] = a[t]


@cuda.jit
def two_barriers(out):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        cuda.syncthreads()  # BUG: even barrier
    else:
        cuda.syncthreads()
    out[t] = t


@cuda.jit
def barrier_in_divergent_loop(out):
    t = cuda.threadIdx.x
    for _k in range(t // 8 + 1):
        cuda.syncthreads()  # BUG: loop barrier
    out[t] = t


@cuda.jit
def shuffle_in_branch(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    if t < 16:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, 8)  # BUG: partial shuffle
    out[t] = v


def test_syncthreads_in_divergent_branch():
    with simulate(), pytest.raises(BarrierDivergenceError) as info:
        barrier_in_branch[2, 32](np.zeros(32, np.float32))
    e = info.value
    assert e.line == line_of("barrier in branch")
    assert e.block == (0, 0, 0) and e.thread == (16, 0, 0)
    assert e.missing == [(k, 0, 0) for k in range(16, 32)]


def test_syncthreads_after_early_return():
    with simulate(), pytest.raises(BarrierDivergenceError) as info:
        barrier_after_early_return[1, 32](np.zeros(20, np.float32), np.zeros(32, np.float32))
    e = info.value
    assert e.line == line_of("barrier after return") and e.thread == (20, 0, 0)
    assert "returned" in str(e)


def test_threads_at_different_barriers():
    with simulate(), pytest.raises(BarrierDivergenceError) as info:
        two_barriers[1, 8](np.zeros(8, np.int32))
    assert info.value.line == line_of("even barrier") and info.value.thread == (1, 0, 0)


def test_barrier_in_loop_with_divergent_trip_count():
    with simulate(), pytest.raises(BarrierDivergenceError) as info:
        barrier_in_divergent_loop[1, 32](np.zeros(32, np.int32))
    # in the second iteration only threads 8..31 are still looping
    assert info.value.line == line_of("loop barrier") and info.value.thread == (0, 0, 0)


def test_shuffle_with_a_mask_naming_absent_lanes():
    with simulate(), pytest.raises(BarrierDivergenceError) as info:
        shuffle_in_branch[1, 32](np.zeros(32, np.float32), np.zeros(32, np.float32))
    assert info.value.line == line_of("partial shuffle") and info.value.thread == (16, 0, 0)


# ---- uninitialized shared memory ------------------------------------------------------------

@cuda.jit
def half_initialized(out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = 1.0
    cuda.syncthreads()
    out[t] = sh[31 - t]  # BUG: uninitialized


@cuda.jit
def histogram_without_zeroing(data, hist):
    sh = cuda.shared.array(8, np.int32)
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(sh, data[i] % 8, 1)  # BUG: atomic on uninitialized
    cuda.syncthreads()
    if cuda.threadIdx.x < 8:
        cuda.atomic.add(hist, cuda.threadIdx.x, sh[cuda.threadIdx.x])


def test_read_of_unwritten_shared_memory():
    with simulate(), pytest.raises(UninitializedReadError) as info:
        half_initialized[1, 32](np.zeros(32, np.float32))
    e = info.value
    assert e.line == line_of("uninitialized")
    assert e.thread == (0, 0, 0) and e.index == (31,) and e.array == "sh"


def test_atomic_on_unwritten_shared_memory():
    with simulate(), pytest.raises(UninitializedReadError) as info:
        histogram_without_zeroing[1, 32](np.arange(32, dtype=np.int32), np.zeros(8, np.int32))
    assert info.value.line == line_of("atomic on uninitialized")


# ---- every error is a KernelRuntimeError; checks can be switched off -------------------------

@pytest.mark.parametrize("kernel, args, check", [
    (shared_write_write, (np.zeros(32, np.int32),), "race"),
    (half_initialized, (np.zeros(32, np.float32),), "uninit"),
    (barrier_in_branch, (np.zeros(32, np.float32),), "barrier"),
])
def test_each_check_can_be_turned_off(kernel, args, check):
    with simulate(), pytest.raises(KernelRuntimeError):
        kernel[1, 32](*args)
    with simulate(checks={check: False}):
        kernel[1, 32](*args)
    with simulate(checks=False):
        kernel[1, 32](*args)


def test_bounds_off_still_stops_accesses_outside_the_memory():
    """Without the per-axis check an index inside the allocation passes (a GPU reads the next
    row); one outside the allocation is still an error (a GPU would fault)."""
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = np.zeros(8, np.float32)
    with simulate(), pytest.raises(OutOfBoundsError):
        row_overrun[1, 8](a, out)
    with simulate(checks={"bounds": False}):
        row_overrun[1, 8](a, out)
    np.testing.assert_array_equal(out, np.arange(8))
    with simulate(checks={"bounds": False}), pytest.raises(OutOfBoundsError):
        shifted_copy[1, 32](np.zeros(32, np.float32), np.zeros(32, np.float32))
