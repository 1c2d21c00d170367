"""A lambda a kernel calls is a device function, as a ``def`` is (cuda.Reduce takes them)."""

import numpy as np
import pytest

import threadtile as cuda
from threadtile import KernelCompileError

add = lambda a, b: a + b  # noqa: E731
two = (lambda a: a * 2, lambda b: b * 3)  # two lambdas on a line, told apart by parameters
same = (lambda a: a * 2, lambda a: a * 3)  # not told apart: refused


def caller(fn):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fn(x[i], x[i])
    return k


def unary(fn):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fn(x[i])
    return k


def test_lambda_device_functions():
    x = np.arange(5, dtype=np.float32)
    out = np.zeros(5, np.float32)
    with cuda.simulate():
        caller(add)[1, 32](x, out)
        np.testing.assert_array_equal(out, 2 * x)
        caller(lambda a, b: max(a, b) - 1)[1, 32](x, out)
        np.testing.assert_array_equal(out, x - 1)
        unary(two[1])[1, 32](x, out)
        np.testing.assert_array_equal(out, 3 * x)
    assert caller(add).compile(cuda.float32[::1], cuda.float32[::1], arch="sm_80")


def test_ambiguous_lambda_is_refused():
    with cuda.simulate(), pytest.raises(KernelCompileError, match="lambda"):
        unary(same[0])[1, 32](np.zeros(2), np.zeros(2))
