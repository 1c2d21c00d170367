"""Fuzzer regression, seed 30084 (CPU, lockstep vs python mode): ``np.float16(math.floor(x))``
with ``x`` NaN gave -inf in lockstep mode (math.floor returns an int64, NaN converts to the top
bit alone as the GPU converts it, and that int64 to float16 is -inf) but NaN in python mode,
whose math.floor fell back to NumPy's float floor. floor, ceil and trunc now return the int64
the GPU gives for NaN and infinities in python mode too; seed 30594: and for finite floats past
int64's range (CPython's int is unbounded; the GPU clamps)."""

import math

import numpy as np
import pytest

import threadtile as cuda


@cuda.jit
def kernel(x, out, f16):
    i = cuda.grid(1)
    out[i, 0] = math.floor(x[i])
    out[i, 1] = math.ceil(x[i])
    out[i, 2] = math.trunc(x[i])
    f16[i] = np.float16(math.floor(x[i]))


@pytest.mark.parametrize("mode", ["lockstep", "python"])
def test_floor_of_nan_and_infinities(mode):
    x = np.array([np.nan, np.inf, -np.inf, 2.5, -2.5, -2.5e19, 3e19])
    out = np.zeros((7, 3), np.int64)
    f16 = np.zeros(7, np.float16)
    with cuda.simulate(mode=mode):
        kernel[1, 7](x, out, f16)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    np.testing.assert_array_equal(out, [[lo, lo, lo], [hi, hi, hi], [lo, lo, lo],
                                        [2, 3, 2], [-3, -2, -2], [lo, lo, lo], [hi, hi, hi]])
    np.testing.assert_array_equal(f16, np.array([-np.inf, np.inf, -np.inf, 2, -3, -np.inf,
                                                 np.inf], np.float16))
