"""cuda.Reduce / cuda.reduce on every target against NumPy's reductions (float64 reference)."""

import numpy as np
import pytest

import threadtile as cuda

sum_reduce = cuda.Reduce(lambda a, b: a + b)


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)


@pytest.mark.parametrize("n", [1, 15, 256, 257, 16385, 100003])
def test_sum_of_every_size(target, rng, n):
    a = rng.standard_normal(n)
    with target.running():
        got = sum_reduce(target.to_device(a))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a.sum(), rtol=1e-12, atol=1e-9)


def test_float32_and_integers(target, rng):
    a = rng.standard_normal(5000).astype(np.float32)
    i = rng.integers(-1000, 1000, 7777).astype(np.int32)
    with target.running():
        s = sum_reduce(target.to_device(a))
        m = max_reduce(target.to_device(i), init=-5000)
        p = cuda.reduce(lambda x, y: x * y)(target.to_device(np.full(40, 1.5)), init=2)
    assert s.dtype == np.float32
    np.testing.assert_allclose(s, a.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
    assert m == i.max() and m.dtype == np.int32
    np.testing.assert_allclose(p, 2 * 1.5 ** 40, rtol=1e-12)


def test_init_size_res_and_empty(target):
    a = np.arange(1, 11, dtype=np.float64)
    with target.running():
        assert sum_reduce(target.to_device(a), init=3) == 58
        assert sum_reduce(target.to_device(a), size=4) == 10
        assert sum_reduce(target.to_device(a[:0]), init=7) == 7
        res = cuda.to_device(np.zeros(2))
        assert sum_reduce(target.to_device(a), res=res) is None
        assert res.copy_to_host()[0] == 55
    with cuda.simulate():
        assert sum_reduce(a) == 55  # a host array is copied


def test_2d_refused():
    with cuda.simulate(), pytest.raises(TypeError, match="1D"):
        sum_reduce(np.zeros((2, 2)))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_reduce_kernel_compiles(arch):
    k = sum_reduce._compile(np.dtype(np.float32))
    k.compile(cuda.float32[::1], cuda.float32[::1], cuda.float32, cuda.bool_, arch=arch)
