"""Races whose writes store the value the element already holds are benign (a RaceWarning):
numba's tests write ``a[0] = 1`` from every thread. A write of any other value stays a
RaceError, whether it races with a write or a read."""

import warnings

import numpy as np
import pytest

import threadtile as cuda
from threadtile.errors import RaceError, RaceWarning


@cuda.jit
def every_thread_writes_one(a):
    a[0] = 1


@cuda.jit
def every_thread_writes_its_id(a):
    a[0] = cuda.threadIdx.x


@cuda.jit
def broadcast_then_copy(a):
    # lane 0 stores 42, the warp syncs, every lane reads a[0] while lane 0 writes 42 again
    i = cuda.grid(1)
    if i == 0:
        a[0] = 42
    cuda.syncwarp(0xFFFFFFFF)
    a[i] = a[0]


@cuda.jit
def read_while_changed(a, out):
    i = cuda.grid(1)
    out[i] = a[0]
    if i == 5:
        a[0] = 7


@cuda.jit
def two_statements_same_value(a):
    i = cuda.threadIdx.x
    if i < 16:
        a[0] = 3.0
    else:
        a[0] = 3.0


@cuda.jit
def nan_everywhere(a):
    a[0] = np.float32(np.nan)


def _run(k, *args, grid=1, block=32):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with cuda.simulate():
            k[grid, block](*args)
    return [x for x in w if issubclass(x.category, RaceWarning)]


def test_same_value_from_every_thread_warns_once():
    a = np.zeros(1, np.int32)
    w = _run(every_thread_writes_one, a, grid=2)
    assert a[0] == 1
    assert len(w) == 1 and "benign" in str(w[0].message)


def test_different_values_are_an_error():
    with cuda.simulate(), pytest.raises(RaceError):
        every_thread_writes_its_id[1, 32](np.zeros(1, np.int32))


def test_rewrite_of_the_read_value_is_benign():
    a = np.zeros(32, np.int32)
    w = _run(broadcast_then_copy, a)
    np.testing.assert_array_equal(a, np.full(32, 42))
    assert len(w) == 1


def test_write_of_a_new_value_read_concurrently_is_an_error():
    with cuda.simulate(), pytest.raises(RaceError) as e:
        read_while_changed[1, 32](np.zeros(1, np.int32), np.zeros(32, np.int32))
    assert "races with a read" in str(e.value)


def test_same_value_from_two_statements_and_nan_bits():
    a = np.zeros(1, np.float64)
    assert len(_run(two_statements_same_value, a)) >= 1 and a[0] == 3.0
    b = np.zeros(1, np.float32)
    assert _run(nan_everywhere, b) and np.isnan(b[0])
