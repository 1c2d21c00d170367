"""Shifts by any count, as Python and NumPy shift: a count at or past the width, or a negative
one, shifts every bit out (``<<`` gives 0; ``>>`` gives 0, or -1 for a negative value). C++
leaves such counts undefined, so the generated code spells a count it cannot bound with
threadtile.h's ``tt::shl``/``tt::shr``; the simulator never wraps a count into the value's
dtype first (259 is not 3 for an int8)."""

import numpy as np
import pytest

import threadtile as cuda
import threadtile.tile as ct
from threadtile.runtime import nvrtc


@cuda.jit
def shifts(a, n, out):
    i = cuda.threadIdx.x
    out[i, 0] = a[i] << n[i]
    out[i, 1] = a[i] >> n[i]
    out[i, 2] = a[i] << (n[i] & 7)  # bounded: the plain C++ shift
    out[i, 3] = a[i] >> 3


@ct.kernel
def tile_shifts(A, N, L, R):
    a = ct.load(A, index=(0,), shape=(16,))
    n = ct.load(N, index=(0,), shape=(16,))
    ct.store(L, index=(0,), tile=a << n)
    ct.store(R, index=(0,), tile=a >> n)


COUNTS = [0, 3, 7, 8, 31, 32, 33, 64, 65, -1, 100, 127, 63, 1, 2, 5]
DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


def _expected(a, n):
    """Python's shifts of the values, in the values' dtype."""
    w = a.dtype.itemsize * 8
    left, right = [], []
    for x, c in zip(a.tolist(), n.astype(np.int64).tolist()):
        if a.dtype.kind == "u" and c < 0:  # the count is the dtype's (an unsigned one wraps)
            c = c % (1 << w)
        left.append(0 if not 0 <= c < w else x << c)
        right.append((-1 if x < 0 else 0) if not 0 <= c < w else x >> c)
    def wrap(values):  # Python ints -> the dtype, two's complement
        return np.array([v % (1 << w) for v in values], np.uint64).astype(a.dtype)

    return wrap(left), wrap(right)


def _inputs(dt):
    a = np.array([1, -8, 5, 127, -128, 3, 2, 1] * 2, np.int64).astype(dt)
    n = np.array(COUNTS, np.int64).astype(dt)
    return a, n


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_thread_level_shifts_by_any_count(dt):
    a, n = _inputs(dt)
    out = np.zeros((16, 4), dt)
    with cuda.simulate():
        shifts[1, 16](a, n, out)
    left, right = _expected(a, n)
    np.testing.assert_array_equal(out[:, 0], left)
    np.testing.assert_array_equal(out[:, 1], right)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_tile_shifts_by_any_count(dt):
    a, n = _inputs(dt)
    lo, ro = np.zeros(16, dt), np.zeros(16, dt)
    with cuda.simulate():
        ct.launch(None, (1,), tile_shifts, (a, n, lo, ro))
    left, right = _expected(a, n)
    np.testing.assert_array_equal(lo, left)
    np.testing.assert_array_equal(ro, right)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint64], ids=lambda d: np.dtype(d).name)
def test_unbounded_counts_use_the_defined_shifts_and_compile(dt):
    a, n = _inputs(dt)
    out = np.zeros((16, 4), dt)
    cu = shifts.cuda_source(a, n, out)
    assert "tt::shl(" in cu and "tt::shr(" in cu
    assert ">> 3LL" in cu  # a constant count in range stays a plain shift
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    tcu = tile_shifts.cuda_source(a, n, np.zeros(16, dt), np.zeros(16, dt))
    for arch in ("sm_80", "sm_90"):
        nvrtc.compile_cubin(cu, arch, options=inc)
        nvrtc.compile_cubin(tcu, arch, options=inc)
