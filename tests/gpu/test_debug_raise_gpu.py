"""jit(debug=True) kernels raise on the host what they raise on the GPU (numba's debug mode):
the exception's class and arguments, the thread and block, the kernel's line; without debug
the raising thread only stops."""

import numpy as np
import pytest
from conftest import HAVE_GPU

import threadtile as cuda

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no GPU")]


class OddValue(Exception):
    pass


def check_values(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        if a[i] % 2 == 1:
            raise OddValue("odd value at", 7)
        out[i] = a[i] // 2


def test_a_debug_kernel_raises_on_the_host():
    k = cuda.jit(debug=True, opt=False)(check_values)
    a = np.arange(0, 256, 2, dtype=np.int64)
    out = cuda.to_device(np.zeros(128, np.int64))
    k[4, 32](cuda.to_device(a), out)  # nothing raised
    np.testing.assert_array_equal(out.copy_to_host(), a // 2)
    a[70] = 3  # thread 6 of block 2
    with pytest.raises(OddValue, match=r"In function 'check_values', file .*"
                       r"test_debug_raise_gpu.py, line 22, tid=\[6, 0, 0\] ctaid=\[2, 0, 0\]"):
        k[4, 32](cuda.to_device(a), out)
    a[70] = 4
    k[4, 32](cuda.to_device(a), out)  # the report was cleared
    # without debug the raising thread stops and the launch goes on
    a[70] = 3
    plain = cuda.jit(check_values)
    out = cuda.to_device(np.full(128, -1, np.int64))
    plain[4, 32](cuda.to_device(a), out)
    got = out.copy_to_host()
    assert got[70] == -1 and got[69] == a[69] // 2


def divides(r, x, y):
    r[0] = y[0] / x[0]


def test_a_debug_kernel_raises_zero_division_error():
    k = cuda.jit(debug=True)(divides)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        k[1, 1](np.zeros(1), np.zeros(1), np.ones(1))
