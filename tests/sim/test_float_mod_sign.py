"""A float ``%`` whose result is zero is a zero of the divisor's sign, as Python's and numba's
``%`` give it (C's fmod keeps the dividend's): ``-4.0 % 2.0`` is ``0.0``, ``4.0 % -2.0`` is
``-0.0``; float16, float32 and float64, in the simulator and on the GPU."""

import numpy as np
import pytest

import threadtile as cuda


@cuda.jit
def _mod(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] % b[i]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_zero_remainder_has_the_divisors_sign(target, dtype):
    a = np.array([-4, 4, -4, 4, 0, -0.0, 5, -5], dtype)
    b = np.array([2, -2, -2, 2, -3, 3, 3, 3], dtype)
    out = target.to_device(np.full(a.size, np.nan, dtype))
    target.launch(_mod, 1, 32, target.to_device(a), target.to_device(b), out)
    got = target.to_host(out)
    want = [float(x) % float(y) for x, y in zip(a, b)]
    assert got.astype(np.float64).tolist() == want
    assert np.signbit(got).tolist() == [bool(np.signbit(w)) for w in want]
