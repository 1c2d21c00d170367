"""Fuzzer regression, seed 30002 (CPU, lockstep vs python mode): ``min(x / y, 10.0)`` with
``x / y`` NaN gave 10 in lockstep mode (and on the GPU: the compiled code calls fmin, which
ignores a NaN operand) but NaN in python mode, which ran Python's ``min``. Python mode now
gives kernels min and max of numbers as compiled code has them."""

import math

import numpy as np
import pytest

import threadtile as cuda


@cuda.jit
def kernel(x, out):
    i = cuda.grid(1)
    out[i, 0] = min(x[i], np.float64(10))
    out[i, 1] = min(np.float64(10), x[i])
    out[i, 2] = max(x[i], np.float64(10))
    out[i, 3] = max(np.float64(10), x[i])
    out[i, 4] = math.exp(min(x[i] / x[i], np.float64(10)))
    out[i, 5] = min(x[i], np.float64(7), np.float64(3))
    out[i, 6] = max(1, 2)  # ints: Python's own


@pytest.mark.parametrize("mode", ["lockstep", "python"])
def test_min_max_ignore_nan_in_both_modes(mode):
    x = np.array([np.nan, 3.0, 20.0, 0.0])
    out = np.full((4, 7), -1.0)
    with cuda.simulate(mode=mode):
        kernel[1, 4](x, out)
    want = np.array([[10, 10, 10, 10, math.exp(10), 3, 2],
                     [3, 3, 10, 10, math.e, 3, 2],
                     [10, 10, 20, 20, math.e, 3, 2],
                     [0, 0, 10, 10, math.exp(10), 0, 2]])
    np.testing.assert_allclose(out, want, rtol=1e-15)
