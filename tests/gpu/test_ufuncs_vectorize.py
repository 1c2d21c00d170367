"""cuda.vectorize / cuda.guvectorize on every target against NumPy (float64 references):
broadcasting, scalars, signature choice, out= and streams, device and host arrays, gufunc
layouts with loop axes, several outputs, and numba's errors."""

import math

import numpy as np
import pytest

import threadtile as cuda
from threadtile import float32, float64, int32, void


@cuda.vectorize([int32(int32, int32), "float32(float32, float32)",
                 "float64(float64, float64)"], target="cuda")
def sub(a, b):
    return a - b


def sinc(x):
    if x == 0.0:
        return 1.0
    return math.sin(x * math.pi) / (math.pi * x)


@cuda.guvectorize([void(float32[:, :], float32[:, :], float32[:, :]),
                   void(float64[:, :], float64[:, :], float64[:, :])],
                  "(m,n),(n,p)->(m,p)", target="cuda")
def matmul(a, b, c):
    m, n = a.shape
    p = b.shape[1]
    for i in range(m):
        for j in range(p):
            acc = 0.0
            for k in range(n):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc


@cuda.guvectorize([(float64[:], float64[:], float64[:])], "(n),(n)->()", target="cuda")
def dot(x, y, r):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    r[0] = s


@cuda.guvectorize([void(int32[:], int32[:], float64[:])], "(x)->(x),(x)", target="cuda")
def copy_and_scale(a, b, c):
    for i in range(a.size):
        b[i] = a[i]
        c[i] = a[i] * 1.5


def _host(x):
    return x if isinstance(x, np.ndarray) else x.copy_to_host()


def test_vectorize_broadcasts_as_numpy(target, rng):
    a = rng.standard_normal((40, 3, 1))
    b = a.transpose(2, 1, 0).copy()
    with target.running():
        got = sub(target.to_device(a), target.to_device(b))
        host = sub(a, b)
    assert isinstance(host, np.ndarray) and host.dtype == np.float64
    np.testing.assert_array_equal(host, a - b)
    np.testing.assert_array_equal(_host(got), a - b)


def test_scalars_and_signature_choice(target):
    with target.running():
        v = sub(np.arange(5, dtype=np.int32), 2)
        f = sub(np.arange(5, dtype=np.float32), 0.5)
        s = sub(3.0, 1.0)
        d = sub(1.0, cuda.to_device(np.arange(4.0)))
    assert v.dtype == np.int32 and v.tolist() == [-2, -1, 0, 1, 2]
    assert f.dtype == np.float32  # NumPy's rule: the first signature the inputs cast to safely
    np.testing.assert_array_equal(f, np.arange(5, dtype=np.float32) - 0.5)
    assert s == 2.0 and s.dtype == np.float64
    np.testing.assert_array_equal(_host(d), 1.0 - np.arange(4.0))


def test_plain_function_sigs_and_out(target):
    a = np.linspace(-3, 3, 101)
    f = cuda.vectorize([float64(float64), float32(float32)], target="cuda")(sinc)
    add3 = cuda.vectorize("float64(float64, uint32)")(lambda x, k: x + k)
    with target.running():
        got = f(a)
        out = np.zeros_like(a)
        assert f(a, out=out) is out
        dout = cuda.device_array(101)
        f(cuda.to_device(a), out=dout, stream=cuda.stream())
        k = add3(a, np.uint32(3))
    want = np.array([sinc(x) for x in a])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_host(dout), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(k, a + 3)
    assert f.__name__ == "sinc"


def test_ufunc_reduce(target):
    x = np.arange(1, 1000, dtype=np.int32)
    with target.running():
        r = sub.reduce(np.ones(7, np.int32))
        assert sub.reduce(np.array([5], np.int32)) == 5
    # subtraction is not associative: the tree pairs (1-1)-(1-1)... here, as numba's does
    assert r.dtype == np.int32 and r in (-5, -3, -1, 1)
    add = cuda.vectorize(["int32(int32, int32)"])(lambda a, b: a + b)
    with target.running():
        assert add.reduce(x) == x.sum()


def test_guvectorize_loops_and_broadcasts(target, rng):
    a = rng.standard_normal((4, 5, 2, 3)).astype(np.float32)
    b = rng.standard_normal((4, 5, 3, 6)).astype(np.float32)
    x = rng.standard_normal((7, 3, 3))
    y = rng.standard_normal((3, 3))
    with target.running():
        c = matmul(a, b)
        xy = _host(matmul(cuda.to_device(x), y))
        dc = cuda.device_array((4, 5, 2, 6), np.float32)
        assert matmul(cuda.to_device(a), cuda.to_device(b), out=dc) is dc
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_host(dc), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xy, x @ y, rtol=1e-12, atol=1e-12)


def test_guvectorize_scalar_core_and_outputs(target):
    a = ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    b = ((1.5, 2.5, 3.5), (4.5, 5.5, 6.5))
    i = np.arange(10, dtype=np.int32)
    with target.running():
        r = dot(a, b)
        one, two = copy_and_scale(i)
        o1, o2 = np.zeros(10, np.int32), np.zeros(10)
        copy_and_scale(i, o1, o2)
    np.testing.assert_allclose(r, np.sum(np.multiply(a, b), axis=1), rtol=1e-12)
    np.testing.assert_array_equal(one, i)
    np.testing.assert_array_equal(two, i * 1.5)
    np.testing.assert_array_equal(o1, i)
    np.testing.assert_array_equal(o2, i * 1.5)


def test_errors_are_numbas():
    with pytest.raises(TypeError, match="cannot return values"):
        cuda.guvectorize([int32(int32[:], int32[:])], "(m)->(m)")(lambda x, y: None)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        cuda.guvectorize([void(float32[:], float32[:])], "(x)->(x)", nopython=False)
    with pytest.raises(TypeError, match="not supported: 'what1'"):
        cuda.guvectorize([void(float32[:], float32[:])], "(x)->(x)", what1=True)
    with pytest.raises(KeyError, match="Unrecognized options"):
        cuda.vectorize([float32(float32)], nonexistent=2)
    with pytest.warns(RuntimeWarning, match="redundant"):
        cuda.vectorize([float32(float32)], nopython=True)
    with cuda.simulate():
        with pytest.raises(TypeError, match="accepts 1 positional argument .* Got 2"):
            copy_and_scale(np.arange(3, dtype=np.int32), np.arange(3))
        with pytest.raises(ValueError, match="both positional and keyword"):
            matmul(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)), out=np.zeros((2, 2)))
        with pytest.raises(TypeError, match="not supported for the input types"):
            copy_and_scale(np.arange(3.0))
        with pytest.raises(ValueError):
            sub(np.zeros(3), np.zeros(4))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_generated_kernels_compile(arch):
    with cuda.simulate():
        sub(np.zeros((2, 3)), np.zeros((1, 3)))
        matmul(np.zeros((2, 2, 2), np.float32), np.zeros((2, 2), np.float32))
    for k in list(sub._kernels.values()) + list(matmul._kernels.values()):
        for sig in k.overloads if hasattr(k, "overloads") else ():
            k.compile(*sig, arch=arch)
    assert sub._kernels and matmul._kernels
