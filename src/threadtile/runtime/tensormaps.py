"""Tensor maps: the descriptors Hopper's bulk tensor copy engine (TMA) reads, passed to a
kernel as hidden ``__grid_constant__`` parameters after the user's arguments.

The CUDA backend asks for one per operand of a tile matrix multiply's k loop, in a field of
the source it makes (``CudaSource.tensormaps``: array parameter I, a box of H rows of W
elements), and one per mma operand a loop loads straight into shared memory (tile/operands.h
``load_operand_tma``: the array at its own rank, a box over all its axes). At launch the
launcher encodes each from the argument's address, shape and strides with
``cuTensorMapEncodeTiled`` (the 128-byte swizzle, or the 64-byte one for boxes of 64-byte
rows; zero fill outside the array), cached per array geometry. An array TMA cannot copy (an
address or row stride not a multiple of 16 bytes, a last axis that is not contiguous, a box
over 256) gets 128 zero bytes instead, and the launch takes the kernel's portable build (a k
loop's ``sm90::present`` test in tile/kloop_sm90.h, or builds.py's fallback).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

SIZE = 128  # bytes of a CUtensorMap
ALIGN = 64
ZERO = bytes(SIZE)


class TensorMapParam(NamedTuple):
    """A hidden kernel parameter: the tensor map of array parameter ``arg`` for boxes of
    ``box`` elements (innermost extent first). ``rows``: for the 3-d operand of a batched k
    loop, the multiple its batches' rows must be (else the map is zeros), 0 for none;
    ``OPERAND`` for a map of the array at its own rank (an operand load's: ``box`` has an
    extent per axis)."""

    arg: int
    box: tuple[int, int]
    rows: int = 0


_CACHE: dict = {}
_LOCK = threading.Lock()
_DTYPES = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32",
           "int8": "UINT8", "uint8": "UINT8", "int32": "INT32", "uint32": "UINT32",
           "float64": "FLOAT64", "int64": "INT64", "uint64": "UINT64", "uint16": "UINT16",
           "int16": "UINT16", "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8"}


def encode(p: TensorMapParam, dtype, ptr: int, shape: tuple, strides: tuple) -> bytes:
    """The 128 bytes of the tensor map of a 2-d array (``strides`` in elements), or of a 3-d
    one's rows (``flat2d``), or zeros when TMA cannot copy it."""
    key = (p.box, dtype.name, ptr, shape, strides, p.rows)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _encode(p, dtype, ptr, shape, strides)
        with _LOCK:
            if len(_CACHE) > 4096:
                _CACHE.clear()
            _CACHE[key] = hit
    return hit


def usable(box: tuple[int, int], itemsize: int, ptr: int, shape: tuple, strides: tuple) -> bool:
    """Whether TMA can copy ``box`` tiles of this 2-d array with the 128-byte swizzle."""
    if len(shape) != 2 or ptr % 16 or min(shape) < 1:
        return False
    rows, cols = shape
    if strides[1] != 1 and cols > 1:
        return False
    pitch = strides[0] * itemsize
    if rows > 1 and (strides[0] < cols or pitch % 16 or pitch >= 1 << 40):
        return False
    w, h = box
    return (0 < w <= 256 and 0 < h <= 256 and w * itemsize <= 128 and
            max(rows, cols) <= 1 << 31)


def flat2d(shape: tuple, strides: tuple) -> tuple[tuple, tuple] | None:
    """A 3-d array whose batches lie one after another (a batched k loop's operand) as the 2-d
    array of its rows, (B * M, K); None for one that is not."""
    if len(shape) != 3:
        return (shape, strides) if len(shape) == 2 else None
    b, m, k = shape
    if b > 1 and m > 1 and strides[0] != m * strides[1]:
        return None
    return (b * m, k), (strides[1], strides[2])


OPERAND = -1  # TensorMapParam.rows of an operand load's map (backends/cuda/tiles.py)


def operand_geometry(box: tuple, itemsize: int, ptr: int, shape: tuple,
                     strides: tuple) -> tuple[list[int], list[int]] | None:
    """The extents (innermost first) and byte strides (of the axes after the innermost) of
    an operand load's map: the array at its own rank, ``box`` over all its axes (innermost
    first); None where TMA cannot copy it (an address or stride not a multiple of 16 bytes,
    a last axis that is not contiguous, an extent past 2**31, a box past 256)."""
    nd = len(shape)
    if nd != len(box) or nd < 2 or nd > 5 or ptr % 16 or min(shape) < 1:
        return None
    if max(shape) > 1 << 31 or not all(0 < b <= 256 for b in box) or \
            box[0] * itemsize > 128 or (shape[-1] > 1 and strides[-1] != 1):
        return None
    dims = list(reversed(shape))
    out = []
    for d in range(nd - 2, -1, -1):  # axes after the innermost, innermost first
        pitch = strides[d] * itemsize
        if shape[d] == 1:  # never stepped along: any stride TMA takes
            pitch = max(out[-1] if out else 16, 16)
        if pitch <= 0 or pitch % 16 or pitch >= 1 << 40:
            return None
        out.append(pitch)
    return dims, out


def _encode_operand(p: TensorMapParam, dtype, ptr: int, shape: tuple, strides: tuple) -> bytes:
    name = _DTYPES.get(dtype.name)
    geo = operand_geometry(p.box, dtype.itemsize, ptr, shape, strides) if name else None
    if geo is None:
        return ZERO
    return _tiled(name, ptr, *geo, p.box, swizzle64=False)


def _encode(p: TensorMapParam, dtype, ptr: int, shape: tuple, strides: tuple) -> bytes:
    if p.rows == OPERAND:
        return _encode_operand(p, dtype, ptr, shape, strides)
    if p.rows and len(shape) == 3 and shape[1] % p.rows:
        return ZERO  # a batched loop's tiles would cross batches: the portable loop
    flat = flat2d(shape, strides)
    if flat is None:
        return ZERO
    shape, strides = flat
    name = _DTYPES.get(dtype.name)
    if name is None or not usable(p.box, dtype.itemsize, ptr, shape, strides):
        return ZERO
    rows, cols = shape
    pitch = strides[0] * dtype.itemsize if rows > 1 else -(-cols * dtype.itemsize // 16) * 16
    return _tiled(name, ptr, [cols, rows], [pitch], p.box,
                  swizzle64=p.box[0] * dtype.itemsize == 64)


def _tiled(name: str, ptr: int, dims: list, pitches: list, box: tuple, swizzle64: bool) -> bytes:
    """``cuTensorMapEncodeTiled`` of an array of ``name`` elements (extents innermost first,
    the byte strides of the axes after the innermost) for ``box`` tiles: the 128-byte swizzle
    (the 64-byte one with ``swizzle64``), zero fill outside the array; zeros where the driver
    refuses."""
    from cuda.bindings import driver as cu  # noqa: PLC0415

    nd = len(dims)
    swizzle = "CU_TENSOR_MAP_SWIZZLE_64B" if swizzle64 else "CU_TENSOR_MAP_SWIZZLE_128B"
    err, m = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + name), nd, ptr,
        [cu.cuuint64_t(d) for d in dims], [cu.cuuint64_t(s) for s in pitches],
        [cu.cuuint32_t(b) for b in box], [cu.cuuint32_t(1)] * nd,
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(cu.CUtensorMapSwizzle, swizzle),
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if int(err) != 0:
        return ZERO
    import ctypes  # noqa: PLC0415

    return ctypes.string_at(m.getPtr(), SIZE)


def values(params: list[TensorMapParam], infos) -> list[bytes]:
    """The packed values of the hidden parameters for these arguments' ``ArgInfo``s."""
    out = []
    for p in params:
        info = infos[p.arg]
        out.append(encode(p, info.dtype, info.ptr, tuple(info.shape), tuple(info.strides)))
    return out
