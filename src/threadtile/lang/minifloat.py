"""The narrow float formats (8-bit and 4-bit) in NumPy: their values, and conversions to and from
their bit patterns with every rounding mode.

Formats (the OCP microscaling names, as torch and cuTile spell them):

=================  =====  ===========  =========  ===================================
name               bits   exponent     mantissa   specials
=================  =====  ===========  =========  ===================================
float8_e4m3fn      8      4 (bias 7)   3          no infinities; S.1111.111 is NaN
float8_e5m2        8      5 (bias 15)  2          IEEE-like: infinities and NaNs
float8_e8m0fnu     8      8 (bias 127) 0          unsigned powers of two; 0xFF is NaN
float4_e2m1fn      4      2 (bias 1)   1          no infinities, no NaN
=================  =====  ===========  =========  ===================================

A conversion to a narrow format is *saturating*, as the GPU's (``cvt ... .satfinite``,
cuda_fp8.h's ``__NV_SATFINITE``): a finite value beyond the largest magnitude, or an infinity,
becomes the largest finite value of its sign; NaN stays NaN (float4_e2m1fn has none: its
largest value). The rounding is to nearest, ties to even, unless another mode is asked for.

In the simulator a narrow value lives in a float32 (as bfloat16 does), already rounded; a NaN
keeps its pattern's mantissa bits in the float32's low bits, so that bits survive a round trip
through a tile (pack_to_bytes of unpack_from_bytes is the identity, as on the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

__all__ = ["Format", "FORMATS", "decode", "encode", "from_value", "round_to", "MODES"]

#: the rounding modes: to nearest even, towards zero, down (to -inf), up (to +inf), to
#: nearest with ties away from zero
MODES = ("rn", "rz", "rm", "rp", "ra")


@dataclass(frozen=True)
class Format:
    """One narrow float format: widths of its fields, its bias and its special values."""

    name: str
    bits: int
    ebits: int
    mbits: int
    bias: int
    signed: bool = True
    inf: bool = False  # the top exponent holds infinities and NaNs (IEEE style)
    nan_all_ones: bool = False  # only the all-ones pattern (of the magnitude) is NaN

    @property
    def nan_code(self) -> int | None:
        """The canonical NaN's magnitude bits (None: no NaN)."""
        if self.inf or self.nan_all_ones:
            return (1 << (self.bits - self.signed)) - 1
        return None

    def value(self, code: int) -> float:
        """The value of magnitude bits ``code`` (no sign bit), NaN or infinity included."""
        e, m = code >> self.mbits, code & ((1 << self.mbits) - 1)
        top = (1 << self.ebits) - 1
        if self.inf and e == top:
            return float("inf") if m == 0 else float("nan")
        if self.nan_all_ones and code == self.nan_code:
            return float("nan")
        if e == 0 and self.mbits > 0:
            return m * 2.0 ** (1 - self.bias - self.mbits)
        return (1 + m / (1 << self.mbits)) * 2.0 ** (e - self.bias)


FORMATS = {f.name: f for f in (
    Format("float8_e4m3fn", 8, 4, 3, 7, nan_all_ones=True),
    Format("float8_e5m2", 8, 5, 2, 15, inf=True),
    Format("float8_e8m0fnu", 8, 8, 0, 127, signed=False, nan_all_ones=True),
    Format("float4_e2m1fn", 4, 2, 1, 1),
)}


@cache
def _tables(name: str):
    """(float32 bits of every pattern, the finite magnitudes in order, their codes)."""
    f = FORMATS[name]
    mags = 1 << (f.bits - f.signed)
    out = np.zeros(1 << f.bits, np.uint32)
    finite, codes = [], []
    for code in range(mags):
        v = f.value(code)
        if v != v:  # NaN: quiet, with the pattern's mantissa in the low bits
            bits = 0x7FC00000 | (code & ((1 << f.mbits) - 1))
        else:
            bits = int(np.float32(v).view(np.uint32))
            if v != float("inf"):
                finite.append(v)
                codes.append(code)
        out[code] = bits
        if f.signed:
            out[code | mags] = bits | 0x80000000
    return out, np.array(finite, np.float64), np.array(codes, np.uint8)


def decode(bits, name: str) -> np.ndarray:
    """float32 values of the patterns ``bits`` (an integer array) of format ``name``."""
    table, _, _ = _tables(name)
    return table[np.asarray(bits).astype(np.intp) & (table.size - 1)].view(np.float32)


def encode(values, name: str, mode: str = "rn", saturate: bool = True) -> np.ndarray:
    """The uint8 patterns of ``values`` (any real array) in format ``name``, rounded by
    ``mode`` (one of :data:`MODES`) and saturated to the largest finite value (without
    ``saturate``, an infinity stays one where the format has them: the patterns of values
    already in the format, as a store or pack_to_bytes writes them)."""
    f = FORMATS[name]
    _, finite, codes = _tables(name)
    x = np.asarray(values)
    x64 = x.astype(np.float64)
    neg = np.signbit(x64) if f.signed else np.zeros(x64.shape, bool)
    a = np.abs(x64) if f.signed else x64
    nan = np.isnan(a)
    a = np.where(nan, 0.0, a)
    n = finite.size
    i = np.clip(np.searchsorted(finite, a, side="right") - 1, 0, n - 1)
    j = np.minimum(i + 1, n - 1)
    lo, hi = finite[i], finite[j]
    exact = (lo == a) | (i == j)
    if mode in ("rn", "ra"):
        dlo, dhi = a - lo, hi - a
        tie = dlo == dhi
        if mode == "rn":
            up = (dhi < dlo) | (tie & (codes[i] & 1).astype(bool))
        else:
            up = (dhi < dlo) | tie
    elif mode == "rz":
        up = np.zeros(a.shape, bool)
    elif mode in ("rp", "rm"):
        up = ~neg if mode == "rp" else neg  # away from zero when that is the direction
    else:
        raise ValueError(f"rounding mode {mode!r}: one of {', '.join(MODES)}")
    if not f.signed:
        # below the smallest value (or negative): the smallest, or 0 rounded up to it
        below = x64 < finite[0]
        i = np.where(below, 0, i)
        up = np.where(below, False, up)
    k = np.where(exact | ~up, i, j)
    out = codes[k].astype(np.uint8)
    if f.nan_code is not None:
        if x.dtype == np.float64:  # (ascontiguousarray makes a 0-d array 1-d: shaped back)
            bits64 = np.ascontiguousarray(x).view(np.uint64).reshape(x.shape)
            raw = (bits64 >> np.uint64(29)).astype(np.uint32)
        else:
            raw = x.astype(np.float32).view(np.uint32)
        payload = raw & np.uint32((1 << f.mbits) - 1)
        nan_bits = f.nan_code if not f.inf else (f.nan_code & ~((1 << f.mbits) - 1)) | \
            np.where(payload == 0, (1 << f.mbits) - 1, payload)
        out = np.where(nan, nan_bits, out).astype(np.uint8)
    else:
        out = np.where(nan, codes[-1], out).astype(np.uint8)
    if f.inf and not saturate:
        out = np.where(np.isinf(x64), f.nan_code & ~((1 << f.mbits) - 1), out).astype(np.uint8)
    if f.signed:
        out |= (neg.astype(np.uint8) << np.uint8(f.bits - 1))
    return out


def from_value(values, name: str) -> np.ndarray:
    """The patterns of values already in format ``name`` (a store, pack_to_bytes)."""
    return encode(values, name, "rn", saturate=False)


def round_to(values, name: str, mode: str = "rn") -> np.ndarray:
    """``values`` rounded to format ``name`` (saturating), as float32."""
    return decode(encode(values, name, mode), name)
