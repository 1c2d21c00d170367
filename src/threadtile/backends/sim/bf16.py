"""The simulator's bfloat16 operations that are not plain arithmetic: bit casts, conversions to
bfloat16 with a directed rounding mode, and numba's ``cuda.bf16`` intrinsics in python mode.
bfloat16 values live in float32 (ops.value_dtype), already rounded."""

from __future__ import annotations

import math

import numpy as np

from ...lang import bf16 as lb
from ...lang.types import SCALARS
from . import ops

_MAX = float((2 - 2.0 ** -7) * 2.0 ** 127)  # the largest finite bfloat16


def bitcast(v, src: str, dst: str):
    """The bits of ``v`` (of kernel type ``src``) as kernel type ``dst``, as NumPy values."""
    a = np.asarray(v)
    if src == "bfloat16":
        a = ops.bf16_to_bits(a)
    if dst == "bfloat16":
        out = ops.bf16_from_bits(a.astype(a.dtype).view(np.uint16))
    else:
        out = a.view(SCALARS[dst].numpy)
    return out if isinstance(v, np.ndarray) else out[()]


def round_to(v, mode: str):
    """``v`` (any number) to bfloat16 rounded towards zero (``rz``), down (``rd``) or up
    (``ru``): the value scaled to bfloat16's 8 significant bits (or its subnormal quantum),
    rounded to an integer in that direction, scaled back; overflow gives the largest finite
    value where the direction is towards it."""
    x = np.asarray(v).astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.frexp(x)[1]
        q = np.ldexp(1.0, np.maximum(e, -125) - 8)
        f = {"rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode]
        r = f(x / q) * q
        big = {"rz": (_MAX, -_MAX), "rd": (_MAX, -np.inf), "ru": (np.inf, -_MAX)}[mode]
        r = np.where(r > _MAX, big[0], np.where(r < -_MAX, big[1], r))
        r = np.where(np.isfinite(x), r, x).astype(np.float32)
    return r if isinstance(v, np.ndarray) else np.float32(r[()])


# ---- python mode: each intrinsic on one thread's values ---------------------------------------

def _b(x):
    return ops.bf16(np.float32(x))


def _sat(r):
    return np.float32(0.0) if math.isnan(r) else _b(min(max(float(r), 0.0), 1.0))


def _fma(a, b, c):
    return _b(np.float64(a) * np.float64(b) + np.float64(c))


def _minmax(a, b, pick, nan_wins):
    if math.isnan(a) or math.isnan(b):
        if nan_wins:
            return a if math.isnan(a) else b
        return b if math.isnan(a) else a
    return pick(a, b)


_ARITH = {
    "habs": lambda a: abs(a), "hneg": lambda a: -a,
    "hadd": lambda a, b: _b(a + b), "hsub": lambda a, b: _b(a - b),
    "hmul": lambda a, b: _b(a * b), "hdiv": lambda a, b: _b(a / b),
    "hadd_rn": lambda a, b: _b(a + b), "hsub_rn": lambda a, b: _b(a - b),
    "hmul_rn": lambda a, b: _b(a * b),
    "hadd_sat": lambda a, b: _sat(_b(a + b)), "hsub_sat": lambda a, b: _sat(_b(a - b)),
    "hmul_sat": lambda a, b: _sat(_b(a * b)), "hfma": _fma,
    "hfma_sat": lambda a, b, c: _sat(_fma(a, b, c)),
    "hfma_relu": lambda a, b, c: (r if math.isnan(r := _fma(a, b, c)) else max(r, 0 * r)),
    "hmax": lambda a, b: _minmax(a, b, max, False), "hmin": lambda a, b: _minmax(a, b, min, False),
    "hmax_nan": lambda a, b: _minmax(a, b, max, True),
    "hmin_nan": lambda a, b: _minmax(a, b, min, True),
    "hisnan": lambda a: bool(math.isnan(a)),
    "hisinf": lambda a: (1 if a > 0 else -1) if math.isinf(a) else 0,
    "heq": lambda a, b: a == b, "hne": lambda a, b: a < b or a > b,
    "hge": lambda a, b: a >= b, "hgt": lambda a, b: a > b, "hle": lambda a, b: a <= b,
    "hlt": lambda a, b: a < b, "hequ": lambda a, b: not (a < b or a > b),
    "hneu": lambda a, b: a != b, "hgeu": lambda a, b: not a < b,
    "hgtu": lambda a, b: not a <= b, "hleu": lambda a, b: not a > b,
    "hltu": lambda a, b: not a >= b,
}
_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def python_call(name: str, *args):
    """``cuda.bf16.<name>(*args)`` on one thread's values (python mode)."""
    if name in _ARITH:
        return _ARITH[name](*[_b(a) for a in args])
    (x,) = args
    if name in lb.MATH:
        fn = lb.MATH[name]
        f32 = np.float32(_b(x))
        if fn == "rcp":
            return _b(np.float32(1) / f32)
        if fn == "exp10":
            return _b(np.float32(10) ** f32)
        return _b(ops.MATH[fn](f32))
    if "_as_" in name:
        src, _, dst = name.partition("_as_")
        return bitcast(_b(x) if src == "bfloat16" else SCALARS[src].numpy.type(x), src, dst)
    src, _, rest = name.partition("_to_")
    dst, _, mode = rest.partition("_")
    v = SCALARS[src].numpy.type(_b(x) if src == "bfloat16" else x)
    if dst == "bfloat16":
        return _b(v) if mode in ("", "rn") else round_to(v, mode)
    if SCALARS[dst].is_float:
        return SCALARS[dst].numpy.type(v)
    return SCALARS[dst].numpy.type(_ROUND[mode](np.float32(v)))

