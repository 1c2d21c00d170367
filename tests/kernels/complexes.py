"""Complex numbers: arithmetic, parts, promotion with reals, cmath, local and shared arrays."""

import cmath

import numpy as np

import threadtile as cuda
from threadtile import complex64, complex128

from . import example

N_ARITH = 10  # columns of arith's output
N_CMATH = 20  # columns of cmath_funcs' output


@cuda.jit
def arith(z, w, f, out):
    """out[i, k]: the k-th expression of z[i], w[i] (complex) and f[i] (real)."""
    i = cuda.grid(1)
    if i < z.size:
        a = z[i]
        b = w[i]
        out[i, 0] = a + b
        out[i, 1] = a - b * 2
        out[i, 2] = a * b
        out[i, 3] = a / b
        out[i, 4] = -a + f[i] * 1j
        out[i, 5] = a.conjugate() * f[i] + complex(f[i], 2)
        out[i, 6] = abs(a) + a.real * 1j - a.imag
        out[i, 7] = a ** 2 + b ** 0.5
        out[i, 8] = a ** b
        out[i, 9] = (1.0 if a == b else 0.0) + (2.0 if a != a.conjugate() else 0.0)


@cuda.jit
def cmath_funcs(z, out):
    """out[i, k]: the k-th cmath function of z[i]."""
    i = cuda.grid(1)
    if i < z.size:
        v = z[i]
        out[i, 0] = cmath.sqrt(v)
        out[i, 1] = cmath.exp(v)
        out[i, 2] = cmath.log(v)
        out[i, 3] = cmath.log10(v)
        out[i, 4] = cmath.sin(v)
        out[i, 5] = cmath.cos(v)
        out[i, 6] = cmath.tan(v)
        out[i, 7] = cmath.asin(v)
        out[i, 8] = cmath.acos(v)
        out[i, 9] = cmath.atan(v)
        out[i, 10] = cmath.sinh(v)
        out[i, 11] = cmath.cosh(v)
        out[i, 12] = cmath.tanh(v)
        out[i, 13] = cmath.asinh(v)
        out[i, 14] = cmath.acosh(v)
        out[i, 15] = cmath.atanh(v)
        out[i, 16] = cmath.phase(v)
        r, p = cmath.polar(v)
        out[i, 17] = cmath.rect(r, p)
        out[i, 18] = cmath.log(v, 2.0)
        out[i, 19] = cmath.isnan(v) + 2 * cmath.isinf(v) + 4 * cmath.isfinite(v)


@cuda.jit
def local_shared(z, out):
    """A complex local array and a complex shared array: out[i] = z[i] + z[i ^ 1] * 1j."""
    i = cuda.threadIdx.x
    loc = cuda.local.array(2, complex128)
    sh = cuda.shared.array(64, complex64)
    sh[i] = z[i]
    cuda.syncthreads()
    loc[0] = sh[i]
    loc[1] = sh[i ^ 1] * 1j
    out[i] = loc[0] + loc[1]


@cuda.jit
def scalar_arg(a, s, k):
    """A complex scalar argument; a float32 array promoted by it: a[i] = a[i] * s + k."""
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * s + k


EXAMPLES = {
    "arith": [example(np.zeros(4, dt), np.zeros(4, dt), np.zeros(4, ft), np.zeros((4, 10), dt))
              for dt, ft in ((np.complex64, np.float32), (np.complex128, np.float64))],
    "cmath_funcs": [example(np.zeros(4, dt), np.zeros((4, N_CMATH), dt))
                    for dt in (np.complex64, np.complex128)],
    "local_shared": [example(np.zeros(64, np.complex64), np.zeros(64, np.complex128))],
    "scalar_arg": [example(np.zeros(4, np.complex128), 1j, 2.0)],
}
