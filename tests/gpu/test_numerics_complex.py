"""Numerics of complex numbers (tests/kernels/complexes.py) against complex128 NumPy/cmath
references, in the simulator and on the GPU (the ``target`` fixture)."""

import cmath
import math

import numpy as np
import pytest
from kernels import complexes as K

import threadtile as cuda
from threadtile.errors import KernelCompileError

_RTOL = {"complex64": 2e-6, "complex128": 1e-12}


def _close(got, ref, dtype, what):
    got, ref = np.asarray(got, np.complex128), np.asarray(ref, np.complex128)
    np.testing.assert_allclose(got.real, ref.real, rtol=_RTOL[dtype], atol=_RTOL[dtype],
                               err_msg=f"{what} (real part)")
    np.testing.assert_allclose(got.imag, ref.imag, rtol=_RTOL[dtype], atol=_RTOL[dtype],
                               err_msg=f"{what} (imaginary part)")


def _values(rng, n, dtype):
    return (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_arithmetic(target, rng, dtype):
    n = 64
    ft = "float32" if dtype == "complex64" else "float64"
    z, w = _values(rng, n, dtype), _values(rng, n, dtype)
    w[0] = z[0]  # == holds somewhere
    f = rng.uniform(-2, 2, n).astype(ft)
    out = target.array(np.full((n, K.N_ARITH), np.nan), dtype)
    target.launch(K.arith, 1, 64, target.array(z, dtype), target.array(w, dtype),
                  target.array(f, ft), out)
    got = target.to_host(out)
    a, b, f = z.astype(complex), w.astype(complex), f.astype(float)
    refs = [a + b, a - b * 2, a * b, a / b, -a + f * 1j, a.conjugate() * f + (f + 2j),
            abs(a) + a.real * 1j - a.imag, a ** 2 + b ** 0.5, a ** b,
            (a == b) * 1.0 + (a != a.conjugate()) * 2.0]
    for k, ref in enumerate(refs):
        _close(got[:, k], ref, dtype, f"arith column {k}")


_CMATH = [cmath.sqrt, cmath.exp, cmath.log, cmath.log10, cmath.sin, cmath.cos, cmath.tan,
          cmath.asin, cmath.acos, cmath.atan, cmath.sinh, cmath.cosh, cmath.tanh, cmath.asinh,
          cmath.acosh, cmath.atanh, cmath.phase, lambda v: cmath.rect(*cmath.polar(v)),
          lambda v: cmath.log(v, 2.0),
          lambda v: cmath.isnan(v) + 2 * cmath.isinf(v) + 4 * cmath.isfinite(v)]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cmath(target, rng, dtype):
    n = 64
    z = _values(rng, n, dtype)
    z[:4] = [complex(np.inf, 1), complex(np.nan, 0), 0.5j, -1.5]
    out = target.array(np.full((n, K.N_CMATH), np.nan), dtype)
    target.launch(K.cmath_funcs, 1, 64, target.array(z, dtype), out)
    got = target.to_host(out)
    for k, f in enumerate(_CMATH):
        ref = np.array([f(complex(v)) for v in z[4:]])
        _close(got[4:, k], ref, dtype, f"cmath column {k}")
    flags = got[:4, 19].real
    assert list(flags) == [2, 1, 4, 4]  # inf, nan, finite, finite


def test_local_and_shared_arrays(target):
    z = (np.arange(64) * (1 + 2j)).astype(np.complex64)
    out = target.array(np.zeros(64), "complex128")
    target.launch(K.local_shared, 1, 64, target.array(z, "complex64"), out)
    ref = z.astype(complex) + z[np.arange(64) ^ 1].astype(complex) * 1j
    _close(target.to_host(out), ref, "complex128", "local/shared")


def test_scalar_arguments(target):
    a = target.array(np.arange(8) * (1 - 1j), "complex128")
    target.launch(K.scalar_arg, 1, 8, a, 0.5j, np.complex64(1 + 2j))
    ref = np.arange(8) * (1 - 1j) * 0.5j + (1 + 2j)
    _close(target.to_host(a), ref, "complex128", "scalar arguments")


def test_division_by_zero_is_nan_and_infinities_survive(target):
    # CPython's quotient: a zero divisor gives nan+nanj (numba's CPU target raises); a part
    # that is infinite stays infinite where the formula keeps it so
    z = np.array([1 + 1j, np.inf + 0j, 2 + 0j], np.complex128)
    w = np.array([0j, 2 + 0j, np.inf + 0j], np.complex128)
    out = target.array(np.zeros((3, K.N_ARITH)), "complex128")
    f = target.array(np.zeros(3), "float64")
    target.launch(K.arith, 1, 3, target.array(z, "complex128"), target.array(w, "complex128"),
                  f, out)
    q = target.to_host(out)[:, 3]
    assert np.isnan(q[0].real) and np.isnan(q[0].imag)
    assert q[1].real == np.inf
    assert q[2] == 0


def _order(a, out):
    out[0] = 1.0 if a[0] < a[1] else 0.0


def test_complex_errors():
    with pytest.raises(KernelCompileError, match="complex numbers have no order"):
        cuda.jit(_order).cuda_source(np.zeros(2, np.complex64), np.zeros(1))


def _shuffle(a):
    a[0] = cuda.shfl_sync(0xFFFFFFFF, a[1], 0)


def _math_on_complex(a):
    a[0] = math.sqrt(a[1])


def test_complex_refusals():
    z = np.zeros(2, np.complex64)
    with pytest.raises(KernelCompileError, match="shfl_sync.. of a complex number"):
        cuda.jit(_shuffle).cuda_source(z)
    with pytest.raises(KernelCompileError, match="takes real numbers, got a complex one"):
        cuda.jit(_math_on_complex).cuda_source(z)
