"""The simulator's tile operations about dtypes: conversions with a rounding mode (``cast`` with
``rounding``), ``bytes`` (bitcast, pack_to_bytes, unpack_from_bytes) and ``from_scalars``
(astile). Tile values are as in tiles.py: arrays of shape ``(nb, *shape)``; bfloat16, tfloat32
and the narrow floats live in float32, already rounded."""

from __future__ import annotations

import numpy as np

from ...lang import minifloat
from ...lang.types import NARROW_FLOATS, Scalar, bfloat16, float16, float32, float64, tfloat32
from . import ops

_NP = {float64: np.float64, float32: np.float32, float16: np.float16}


def round_float(x: np.ndarray, t: Scalar, mode: str) -> np.ndarray:
    """Float values ``x`` converted to float dtype ``t`` with rounding ``mode`` (rn, rz, rm, rp,
    ra), as float32 for bfloat16, tfloat32 and the narrow floats."""
    if t.name in NARROW_FLOATS:
        return minifloat.round_to(x, t.name, mode)
    x64 = np.asarray(x).astype(np.float64)
    if t == float64:
        return x64
    if t in (bfloat16, tfloat32):
        # the float32 value rounded in the same direction first (directed roundings compose;
        # RA only comes from float32 and narrower, which float32 holds exactly)
        f = round_float(x, float32, mode if mode != "ra" else "rn")
        bits = f.view(np.uint32)
        low = 16 if t == bfloat16 else 13
        mask = np.uint32((1 << low) - 1)
        keep = bits & ~mask
        rest = bits & mask
        neg = (bits >> np.uint32(31)).astype(bool)
        half = np.uint32(1 << (low - 1))
        if mode == "rz":
            up = np.zeros(bits.shape, bool)
        elif mode == "ra":
            up = rest >= half
        elif mode == "rn":
            up = (rest > half) | ((rest == half) & ((keep >> np.uint32(low)) & 1).astype(bool))
        else:  # rm/rp: away from zero where that is the direction
            up = (rest != 0) & (neg if mode == "rm" else ~neg)
        r = (keep + np.where(up, np.uint32(1 << low), np.uint32(0))).astype(np.uint32)
        out = r.view(np.float32)
        return np.where(np.isfinite(f), out, f)
    dt = _NP[t]
    r = x64.astype(dt)
    r64 = r.astype(np.float64)
    with np.errstate(invalid="ignore"):
        if mode == "rz":
            fix = np.abs(r64) > np.abs(x64)
            r = np.where(fix, np.nextafter(r, dt(0)), r)
        elif mode == "rm":
            r = np.where(r64 > x64, np.nextafter(r, dt(-np.inf)), r)
        elif mode == "rp":
            r = np.where(r64 < x64, np.nextafter(r, dt(np.inf)), r)
        elif mode == "ra":
            away = np.nextafter(r, np.copysign(dt(np.inf), x64).astype(dt))
            tie = (np.abs(r64) < np.abs(x64)) & \
                (np.abs(away.astype(np.float64) - x64) == np.abs(x64 - r64))
            r = np.where(tie, away, r)
    return r.astype(dt)


def cast_rounded(B, op, site, blocks, args):
    """``astype`` with a rounding mode other than to-nearest-even (``op.attrs['rounding']``)."""
    (x,) = args
    return round_float(x, op.type.dtype, op.attrs["rounding"])


def to_bytes(x: np.ndarray, t: Scalar) -> np.ndarray:
    """The bytes of values ``x`` (shape (nb, ...)) of dtype ``t``, row-major: (nb, nbytes)."""
    flat = np.asarray(x).reshape(x.shape[0], -1)
    if t.name == "float4_e2m1fn":
        nib = minifloat.from_value(flat, t.name)
        return (nib[:, 0::2] | (nib[:, 1::2] << np.uint8(4))).astype(np.uint8)
    if t.name in NARROW_FLOATS:
        return minifloat.from_value(flat, t.name).astype(np.uint8)
    if t == bfloat16:
        raw = ops.bf16_to_bits(flat)
    elif t == tfloat32:
        raw = flat.astype(np.float32)
    else:
        raw = np.ascontiguousarray(flat.astype(t.numpy))
    return np.ascontiguousarray(raw).view(np.uint8).reshape(flat.shape[0], -1)


def from_bytes(raw: np.ndarray, t: Scalar) -> np.ndarray:
    """Values of dtype ``t`` (as tiles hold them) from bytes ``raw`` of shape (nb, nbytes)."""
    raw = np.ascontiguousarray(raw, np.uint8)
    if t.name == "float4_e2m1fn":
        nib = np.stack([raw & np.uint8(0xF), raw >> np.uint8(4)], axis=-1)
        return minifloat.decode(nib.reshape(raw.shape[0], -1), t.name)
    if t.name in NARROW_FLOATS:
        return minifloat.decode(raw, t.name)
    if t == bfloat16:
        return ops.bf16_from_bits(raw.view(np.uint16))
    if t == tfloat32:
        return raw.view(np.float32)
    return raw.view(t.numpy)


def bytes_op(B, op, site, blocks, args):
    """bitcast, pack_to_bytes, unpack_from_bytes: the same bits read as another dtype."""
    (x,) = args
    src, t = op.args[0].type.dtype, op.type.dtype
    out = from_bytes(to_bytes(x, src), t)
    return out.reshape((x.shape[0],) + op.type.shape)
