"""Scalar semantics of the simulator: the NumPy spelling of every IR operator and intrinsic.

This is the simulator's side of the table that ``backends/cuda/emit.py`` and ``threadtile.h``
keep for CUDA: Python's ``//`` and ``%``, Python's ``min``/``max`` (the first argument unless
the second compares strictly smaller/larger), C casts, the bit intrinsics, ``printf``'s ``%f``.

Every value the generated code handles is a NumPy object: a NumPy scalar when all lanes agree
(uniform), or a 1-d array with one entry per lane. NumPy arithmetic on two operands of one dtype
keeps that dtype and wraps integers as C does, so most operators need no helper at all; the
IR has already converted both operands to the result type.
"""

from __future__ import annotations

import math

import numpy as np

from ...lang import minifloat
from ...lang.types import NARROW_FLOATS, Scalar, bfloat16

ndarray = np.ndarray


def value_dtype(t: Scalar) -> np.dtype:
    """The NumPy dtype values of ``t`` are computed in. bfloat16 values live in float32,
    rounded to bfloat16 after every operation (:func:`bf16`)."""
    if t == bfloat16 or t.restricted:
        return np.dtype(np.float32)
    return t.numpy


def scalar(value, t: Scalar):
    """``value`` as a NumPy scalar of kernel type ``t``."""
    v = value_dtype(t).type(value)
    if t.name in NARROW_FLOATS:
        return np.float32(minifloat.round_to(value, t.name))
    return bf16(v) if t == bfloat16 else v


def bf16(v):
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    a = np.asarray(v, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = np.where(np.isnan(a), a, rounded.astype(np.uint32).view(np.float32))
    return out if isinstance(v, ndarray) else np.float32(out)


def bf16_from_bits(u):
    """float32 values of bfloat16 bit patterns stored as uint16 (NumPy has no bfloat16)."""
    return (np.asarray(u).astype(np.uint32) << 16).view(np.float32)


def bf16_to_bits(v):
    """uint16 bit patterns of float32 values rounded to bfloat16."""
    return (bf16(np.asarray(v, np.float32)).view(np.uint32) >> 16).astype(np.uint16)


def cast(v, t: Scalar):
    """C's conversion of ``v`` to ``t`` (float to int truncates; anything to bool is ``!= 0``)."""
    if t.name in NARROW_FLOATS:  # float8_e8m0fnu rounds up, as cuda_fp8.h's constructor
        return minifloat.round_to(v, t.name, "rp" if t.name == "float8_e8m0fnu" else "rn")
    out = v.astype(value_dtype(t))
    return bf16(out) if t == bfloat16 else out


def float_to_int(v, dt):
    """A float converted to an integer as the GPU converts it (PTX's ``cvt.rzi``,
    measured on an H100/H200): truncated and clamped to the integer's range (a negative value
    to an unsigned type: 0); NaN gives 0 from a float16/float32 to a 32-bit type, else the top
    bit alone (INT_MIN, or 2**31 / 2**63 unsigned). NumPy, like C where it is undefined, gives
    the x86 answer: the top bit for NaN and for every value out of range. An 8- or 16-bit
    integer takes the 32-bit conversion of its signedness, wrapped to its width (the generated
    C++'s ``tt::f2i``; NVVM lowers a plain C++ cast the same way)."""
    dt = np.dtype(dt)
    if dt.itemsize < 4:  # the 32-bit conversion of the same signedness, wrapped
        wide = float_to_int(v, np.int32 if dt.kind == "i" else np.uint32)
        return np.asarray(wide).astype(dt)[()]
    info = np.iinfo(dt)
    v = np.asarray(v)
    with np.errstate(invalid="ignore"):
        out = v.astype(dt)
        high = v >= float(info.max) + 1.0  # 2**31, 2**32, 2**63, 2**64: exact in floats
        low = v < float(info.min) if info.min else v <= -1.0
        nan = np.isnan(v)
        if high.any() or low.any() or nan.any():
            top = 0 if dt.itemsize == 4 and v.dtype.itemsize <= 4 else 1 << (dt.itemsize * 8 - 1)
            out = np.where(high, dt.type(info.max), np.where(low, dt.type(info.min), out))
            out = np.where(nan, np.array(top).astype(np.uint64).astype(dt), out)
    return out[()] if out.ndim == 0 else out


def sel(c, a, b):
    """``a if c else b`` per lane; a uniform condition keeps uniform values scalars."""
    if c.__class__ is not ndarray:
        return a if c else b
    return np.where(c, a, b)


def floordiv_f(a, b):
    """tt::floordiv for floats: ``floor(a / b)``."""
    return np.floor(a / b)


def pymod_f(a, b):
    """tt::pymod for floats: C's fmod moved to the sign of the divisor, as Python's % (and
    numba's): a zero result is a zero of the divisor's sign."""
    r = np.fmod(a, b)
    return sel(r == 0, np.copysign(r, b), sel((r < 0) != (b < 0), r + b, r))


def ipow(a, b):
    """tt::ipow: integer power by squaring; a negative exponent gives 1 (the loop never runs)."""
    dt = np.result_type(a, b)
    base = np.asarray(a, dt).copy()
    e = np.asarray(b, dt).copy()
    r = np.ones(np.broadcast(base, e).shape, dt)
    while True:
        live = e > 0
        if not np.any(live):
            break
        r = np.where(live & ((e & 1) == 1), r * base, r)
        base = np.where(live, base * base, base)
        e = np.where(live, e >> 1, e)
    return r if r.ndim else dt.type(r)


def shift_count(a, b):
    """The count ``b`` in ``a``'s dtype, a negative count or one at or past the width made the
    width (a cast would wrap 259 to 3 for an int8): NumPy then shifts every bit out, as Python
    does (``<<`` gives 0, ``>>`` 0 or -1), which is what the generated C++ computes."""
    dt = np.asarray(a).dtype
    n = np.asarray(b)
    w = dt.itemsize * 8
    out = n >= w if n.dtype.kind == "u" else (n < 0) | (n >= w)
    return np.where(out, w, n).astype(dt)


def shl(a, b):
    """``a << b``: the result has ``a``'s type (C promotes the left operand only)."""
    return np.left_shift(a, shift_count(a, b))


def shr(a, b):
    return np.right_shift(a, shift_count(a, b))


def pymin(a, b):
    """Python's min: ``b if b < a else a`` (so a NaN first argument is kept)."""
    return sel(b < a, b, a)


def pymax(a, b):
    return sel(b > a, b, a)


def iabs(a):
    return np.abs(a)


def _unsigned(v):
    """The bit pattern of an integer as C's ``(uint32_t)`` or ``(unsigned long long)``; 8- and
    16-bit values are zero-extended first (the CUDA backend counts them in their own width)."""
    if v.dtype.itemsize < 4:
        v = v.astype(np.dtype(f"u{v.dtype.itemsize}"))
    return v.astype(np.uint64 if v.dtype.itemsize == 8 else np.uint32)


def popc(v):
    return np.bitwise_count(_unsigned(v)).astype(np.int32)


def clz(v):
    u = _unsigned(v)
    bits = u.dtype.itemsize * 8
    s = 1
    while s < bits:  # smear the highest set bit right: then popcount = bit length
        u = u | (u >> u.dtype.type(s))
        s *= 2
    n = bits - np.bitwise_count(u).astype(np.int32)
    if v.dtype.itemsize < 4:
        n = n - (32 - 8 * v.dtype.itemsize)
    return n.astype(np.int32)


def ffs(v):
    u = _unsigned(v)
    low = u & (~u + u.dtype.type(1))
    pos = np.bitwise_count(low - u.dtype.type(1)).astype(np.int32) + np.int32(1)
    return sel(u == 0, np.int32(0), pos).astype(np.int32)


def brev(v):
    u = _unsigned(v)
    t = u.dtype.type
    bits = u.dtype.itemsize * 8
    masks = [0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
             0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF]
    s, k = 1, 0
    while s < bits:
        m = t(masks[k] & ((1 << bits) - 1))
        u = ((u >> t(s)) & m) | ((u & m) << t(s))
        s *= 2
        k += 1
    if v.dtype.itemsize < 4:
        u = u >> t(32 - 8 * v.dtype.itemsize)
    return u.astype(v.dtype)


def fma(a, b, c):
    """One rounding for float32 (the float64 product of two float32 values is exact)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    return a * b + c


def _pyfunc(f):
    """A math-module function applied per element (NumPy lacks erf, lgamma, tgamma)."""
    def safe(x):
        try:
            return f(x)
        except (ValueError, OverflowError):
            if f is math.gamma and x == math.floor(x) and x <= 0:
                return math.nan
            return math.inf if x > 0 else math.nan

    vf = np.frompyfunc(safe, 1, 1)

    def apply(x):
        out = vf(x)
        return out.astype(x.dtype) if isinstance(out, ndarray) else x.dtype.type(out)

    return apply


def rsqrt(x):
    return x.dtype.type(1) / np.sqrt(x)


def _remainder(x, y):
    """IEEE remainder: ``x - n * y`` with ``n`` the integer nearest ``x / y`` (ties to even).
    It is exact in any precision, so float32 operands may go through float64."""
    f = np.frompyfunc(lambda a, b: math.remainder(a, b) if math.isfinite(a) and b != 0 and
                      not math.isnan(b) else math.nan, 2, 1)
    out = f(np.asarray(x, np.float64), np.asarray(y, np.float64))
    dt = np.result_type(x, y)
    return out.astype(dt) if isinstance(out, ndarray) else dt.type(out)


def frexp(x):
    """(mantissa, exponent) with the mantissa in [0.5, 1); the exponent of inf and NaN is 0,
    as CUDA's frexp gives it."""
    mant, exp = np.frexp(x)
    return mant, sel(np.isfinite(x), exp.astype(np.int32), np.int32(0))


def modf(x):
    """(fractional part, integer part), both with x's sign; modf(inf) is (0, inf)."""
    frac, whole = np.modf(x)
    return frac, whole


def round_ndigits(x, n):
    """Python's ``round(x, n)`` for a float: scaled by a power of ten, rounded half to even,
    scaled back, computed in float64 (n beyond 22 scales in two steps, so that the power of
    ten is exact); an infinite or NaN x, or one whose scaling overflows, is returned as it
    is."""
    v = np.asarray(x, np.float64)
    n = np.asarray(n, np.int64)
    big = n > 22
    p1 = np.power(10.0, np.where(n >= 0, np.where(big, n - 22, n), -n).astype(np.float64))
    p2 = np.where(big, 1e22, 1.0)
    up = n >= 0
    y = np.where(up, v * p1 * p2, v / p1)
    z = np.rint(y)
    z = np.where(up, z / p2 / p1, z * p1)
    keep = ~np.isfinite(v) | (up & ~np.isfinite(y))
    out = np.where(keep, v, z).astype(x.dtype)
    return out if isinstance(x, ndarray) or out.ndim else x.dtype.type(out)


MATH = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": _pyfunc(math.erf), "erfc": _pyfunc(math.erfc), "lgamma": _pyfunc(math.lgamma),
    "tgamma": _pyfunc(math.gamma), "exp2": np.exp2, "rsqrt": rsqrt, "cbrt": np.cbrt,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "fabs": np.fabs, "rint": np.rint,
    "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "fmod": np.fmod, "fma": fma, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "remainder": _remainder, "nextafter": np.nextafter,
    "ldexp": np.ldexp, "fmin": np.fmin, "fmax": np.fmax, "round_ndigits": round_ndigits,
    "frexp": frexp, "modf": modf,
}


def format_item(v, t: Scalar) -> str:
    """One printed value, as the GPU's printf writes it (%lld, %llu, True/False; a float as
    %f, six decimals, numba's format)."""
    if t.kind == "b":
        return "True" if v else "False"
    if t.is_int:
        return str(int(v))
    return f"{float(v):f}"
