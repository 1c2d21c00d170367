"""Integer ``//`` and ``%`` by -1: the most negative value // -1 wraps to itself and % -1 is 0,
as in NumPy, in the simulator and in the generated C++ (where ``a / -1`` of the most negative
value is undefined: threadtile.h's ``floordiv`` and ``pymod`` take -1 apart)."""

import warnings

import numpy as np
import pytest

import threadtile as cuda
from threadtile.runtime import nvrtc


@cuda.jit
def divide(a, b, out):
    i = cuda.threadIdx.x
    out[i, 0] = a[i] // b[i]
    out[i, 1] = a[i] % b[i]


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_floordiv_and_mod_by_minus_one(dt):
    mn = np.iinfo(dt).min
    a = np.array([mn, mn, 7, -7, mn + 1, 0], dt)
    b = np.array([-1, 1, -1, -1, -1, -1], dt)
    out = np.zeros((6, 2), dt)
    with cuda.simulate(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's overflow warning for mn // -1
        divide[1, 6](a, b, out)
    np.testing.assert_array_equal(out[:, 0], np.array([mn, mn, -7, 7, -(mn + 1), 0], dt))
    np.testing.assert_array_equal(out[:, 1], np.zeros(6, dt))
    cu = divide.cuda_source(a, b, out)
    assert "tt::floordiv(" in cu and "tt::pymod(" in cu
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    for arch in ("sm_80", "sm_90"):
        nvrtc.compile_cubin(cu, arch, options=inc)
