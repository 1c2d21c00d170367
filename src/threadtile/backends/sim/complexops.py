"""The simulator's complex numbers: NumPy complex64/complex128 lanes, with numba's (CPython's)
arithmetic where NumPy's differs, and Python's ``cmath`` for the functions.

- ``a / b``: CPython's scaled quotient (NumPy multiplies by a reciprocal, which rounds
  differently); a zero divisor gives nan+nanj (numba's CPU target raises there);
- ``a ** b``: CPython's polar formula in float64, ``b == 2`` the product (numba's cpow);
- cmath functions: Python's ``cmath``, lane by lane in complex128, rounded to complex64 where
  the operand is one. A domain error (``cmath.log(0)``) gives C99's value, NumPy's.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from ...ir.ops import CMATH1


def _pack(re, im, dt, scalar: bool):
    """Complex lanes of dtype ``dt`` from their parts (``re + 1j * im`` would turn an
    infinite part into a nan: 1j * inf is nan+infj)."""
    re, im = np.broadcast_arrays(np.asarray(re), np.asarray(im))
    out = np.empty(re.shape, dt)
    out.real, out.imag = re, im
    return out[()] if scalar else out


def _lanes(f, z, otype):
    """``f`` applied to every lane of ``z`` (a NumPy scalar or vector), as ``otype``."""
    arr = np.asarray(z)
    out = np.empty(arr.shape, otype)
    flat, res = arr.reshape(-1), out.reshape(-1)
    for k in range(flat.size):
        res[k] = f(complex(flat[k]))
    return out if isinstance(z, np.ndarray) else out[()]


def _cmath(name: str):
    py = getattr(cmath, name)
    npf = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
           "acosh": np.arccosh, "atanh": np.arctanh}.get(name) or getattr(np, name)

    def one(z: complex) -> complex:
        try:
            return py(z)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return complex(npf(np.complex128(z)))

    def run(z):
        return _lanes(one, z, np.asarray(z).dtype)
    return run


def div(a, b):
    """CPython's complex quotient, lane by lane over vectors."""
    dt = np.result_type(a, b)
    ft = np.float32 if dt == np.complex64 else np.float64
    ar, ai = np.real(a).astype(ft), np.imag(a).astype(ft)
    br, bi = np.real(b).astype(ft), np.imag(b).astype(ft)
    with np.errstate(all="ignore"):
        by_re = np.abs(br) >= np.abs(bi)
        safe_br = np.where(br == 0, ft(1), br)
        safe_bi = np.where(bi == 0, ft(1), bi)
        r1 = bi / safe_br
        d1 = br + bi * r1
        re1, im1 = (ar + ai * r1) / d1, (ai - ar * r1) / d1
        r2 = br / safe_bi
        d2 = br * r2 + bi
        re2, im2 = (ar * r2 + ai) / d2, (ai * r2 - ar) / d2
        re = np.where(by_re, re1, re2)
        im = np.where(by_re, im1, im2)
        nan = (by_re & (br == 0)) | (~by_re & (bi == 0))
        re = np.where(nan, ft(np.nan), re)
        im = np.where(nan, ft(np.nan), im)
    return _pack(re, im, dt, not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)))


def _pow1(a: complex, b: complex) -> complex:
    if b == 2:
        return a * a
    if b == 0:
        return complex(1.0, 0.0)
    if a == 0:
        return 0j
    vabs = math.hypot(a.real, a.imag)
    length = math.pow(vabs, b.real) if vabs != 0 else 0.0
    at = math.atan2(a.imag, a.real)
    ph = at * b.real
    if b.imag != 0:
        length /= math.exp(at * b.imag)
        ph += b.imag * math.log(vabs)
    return complex(length * math.cos(ph), length * math.sin(ph))


def _pow_safe(a: complex, b: complex) -> complex:
    try:
        return _pow1(a, b)
    except (OverflowError, ValueError):
        return complex(math.nan, math.nan)


def power(a, b):
    """numba's complex power (CPython's formula; ``b == 2`` the product of the operand's own
    precision), lane by lane."""
    dt = np.result_type(a, b)
    av, bv = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
    out = np.empty(av.shape, dt)
    fa, fb, fo = av.reshape(-1), bv.reshape(-1), out.reshape(-1)
    for k in range(fo.size):
        if fb[k] == 2:
            fo[k] = fa[k] * fa[k]
        else:
            fo[k] = _pow_safe(complex(fa[k]), complex(fb[k]))
    scalar = not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray))
    return out[()] if scalar else out


def rect(r, phi):
    dt = np.complex64 if np.result_type(r, phi) == np.float32 else np.complex128

    def one(r1: float, p1: float) -> complex:
        try:
            return cmath.rect(r1, p1)
        except (ValueError, OverflowError):
            return complex(math.nan, math.nan)
    rv, pv = np.broadcast_arrays(np.asarray(r, np.float64), np.asarray(phi, np.float64))
    out = np.empty(rv.shape, dt)
    fr, fp, fo = rv.reshape(-1), pv.reshape(-1), out.reshape(-1)
    for k in range(fo.size):
        fo[k] = one(float(fr[k]), float(fp[k]))
    scalar = not (isinstance(r, np.ndarray) or isinstance(phi, np.ndarray))
    return out[()] if scalar else out


def make(re, im):
    dt = np.complex64 if np.result_type(re, im) == np.float32 else np.complex128
    return _pack(re, im, dt, not (isinstance(re, np.ndarray) or isinstance(im, np.ndarray)))


def phase(z):
    return np.arctan2(np.imag(z), np.real(z))


def _pred(f):
    def run(z):
        return f(np.real(z)) | f(np.imag(z)) if f is not np.isfinite else \
            f(np.real(z)) & f(np.imag(z))
    return run


# intrinsic name -> implementation (operands as NumPy scalars or lanes)
CALLS = {
    "complex": make, "rect": rect, "real": np.real, "imag": np.imag, "cabs": np.abs,
    "phase": phase, "conj": np.conjugate, "cisnan": _pred(np.isnan),
    "cisinf": _pred(np.isinf), "cisfinite": _pred(np.isfinite),
    **{f"cmath.{n}": _cmath(n) for n in CMATH1},
}
