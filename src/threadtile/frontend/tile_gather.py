"""Lowering of cuTile's indexed memory operations: ``gather`` and ``scatter`` (an array's
elements at tiles of element indices, with a mask and a padding value), and
``load_advanced_indexing`` / ``store_advanced_indexing`` with ``Slice`` (rows at a tile of
indices, slices of the other axes), which become the same two ``ir.TileOp``s.

``INDEXED`` maps each ``threadtile.tile`` name to its lowering (``tile_calls.lower_call``
dispatches there). The typing is cuTile's: integer indices broadcast together, a bool mask,
the padding and the stored value converted implicitly to the array's dtype (docs/tiles.md).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError, TileCodeValueError
from ..ir import nodes as ir
from ..lang import tile as lt
from ..lang.types import ArrayType, TileType, bool_, int64, void
from . import typing as ty
from .tiles import (
    array_arg,
    bind_args,
    broadcast,
    broadcast_shapes,
    cast,
    dtype_weak,
    enum_member,
    is_pow2,
    is_tile,
    scalar_arg,
    shape_of,
    static_bool,
    static_int,
    tile_op,
    tile_or_scalar,
    tile_promote,
)
from .values import IndexSlice, Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer

# ---- gather and scatter: an array's elements at tiles of indices -------------------------------

def _gather_indices(lw: Lowerer, raw, ndim: int, node, fname: str) -> tuple[list, tuple]:
    """``indices`` of gather/scatter: one integer tile or number per array axis (a 1-d array
    may take it bare), tiles broadcast to their common shape, numbers int64; and that
    shape."""
    items = raw.items if isinstance(raw, Tup) else [raw]
    if len(items) != ndim:
        alt = ", or one tile or number" if ndim == 1 else " (() for a 0-d array)" if (
            ndim == 0) else ""
        raise lw.error(node, f"{fname}(): a {ndim}-d array takes a tuple of {ndim} indices"
                             f"{alt}, got {len(items)}",
                       "give one index tile (or number) per array axis", cls=TileCodeTypeError)
    idx = []
    for d, it in enumerate(items):
        it = tile_or_scalar(lw, it, node)
        dt = dtype_weak(it)[0]
        if not dt.is_int:
            axis = f" for axis {d}" if ndim > 1 else ""
            raise lw.error(node, f"{fname}(): the index{axis} has the non-integer dtype {dt}",
                           "indices are integer tiles or numbers (cast with .astype(ct.int32))",
                           cls=TileCodeTypeError)
        idx.append(it)
    shapes = [shape_of(x) for x in idx]
    if not shapes:  # a 0-d array: its one element, a 0-d tile
        return [], ()
    nd = max(len(s) for s in shapes)
    padded = [(1,) * (nd - len(s)) + s for s in shapes]
    if any(len({d for d in dims if d != 1}) > 1 for dims in zip(*padded)):
        raise lw.error(node, f"{fname}(): the index shapes {', '.join(map(str, shapes))} are "
                             "not broadcastable to a common shape", cls=TileCodeTypeError)
    shape = broadcast_shapes(lw, shapes, node)
    # index tiles keep their integer dtype (the backends widen each element to int64: a
    # uint64 index past 2**63 becomes negative, outside the array as cuTile has it)
    return [broadcast(lw, x, shape, node) if is_tile(x) else ty.convert(x, int64)
            for x in idx], shape


def _broadcastable_to(src: tuple, dst: tuple) -> bool:
    """Whether ``src`` broadcasts to ``dst`` without widening it (cuTile's rule for the mask,
    the padding value and the stored value of gather/scatter)."""
    return len(src) <= len(dst) and all(a in (1, b) for a, b in zip(reversed(src),
                                                                     reversed(dst)))


def _implicit(lw: Lowerer, v, t, node, fname: str, what: str):
    """``v`` (tile or scalar) converted to the array's dtype ``t`` where cuTile converts
    implicitly: a tile (or typed scalar) whose dtype promotes to ``t``; a Python number or
    loosely typed argument of a kind (bool < integer < float) not above ``t``'s, a constant
    integer within ``t``'s range. A constant (``float("2.0")``) counts as a Python number."""
    dt, weak = dtype_weak(v)
    if not weak and not isinstance(v, ir.Const):  # a constant is loosely typed (cuTile's rule)
        if dt != t and tile_promote(dt, t) != t:
            raise lw.error(node, f"{fname}(): {what} cannot implicitly cast {dt} to {t}",
                           f"convert it first: .astype({t.name})", cls=TileCodeTypeError)
        return cast(lw, v, t, node)
    rank = {"b": 0, "i": 1, "u": 1, "f": 2}
    c = v.value if isinstance(v, ir.Const) else None
    bad = rank.get(dt.kind, 3) > rank.get(t.kind, 3)
    if t.kind == "b":
        bad = dt.kind not in "biu" or (c is not None and c not in (0, 1))
    if bad:
        shown = c if c is not None else f"a {dt} number"
        raise lw.error(node, f"{fname}(): {what} cannot implicitly cast {shown} to {t}",
                       f"pass a value of the array's dtype ({t})", cls=TileCodeTypeError)
    if c is not None and t.is_int and dt.kind != "b":
        lo, hi = (0, (1 << t.bits) - 1) if t.kind == "u" else (-(1 << (t.bits - 1)),
                                                                 (1 << (t.bits - 1)) - 1)
        if not lo <= c <= hi:
            raise lw.error(node, f"{fname}(): {what} {c} is out of range of {t}",
                           cls=TileCodeValueError)
    return cast(lw, v, t, node)


def _fitted(lw: Lowerer, v, shape: tuple, node, fname: str, what: str):
    """A mask, padding or value operand broadcast to the indices' shape (a scalar stays one)."""
    if is_tile(v):
        if not _broadcastable_to(v.type.shape, shape):
            raise lw.error(node, f"{fname}(): the {what}'s shape {v.type.shape} is not "
                                 f"broadcastable to the index shape {shape}",
                           cls=TileCodeTypeError)
        return broadcast(lw, v, shape, node)
    return v


def _gather_mask(lw: Lowerer, v, shape: tuple, node, fname: str):
    if v is None or isinstance(v, Py) and v.obj is None:
        return ir.Const(bool_, lw.loc(node), True)
    m = tile_or_scalar(lw, v, node)
    if dtype_weak(m)[0] != bool_:
        raise lw.error(node, f"{fname}(): the mask must be boolean, got {dtype_weak(m)[0]}",
                       "compare to make one (ids >= 0), or pass mask=None", cls=TileCodeTypeError)
    return _fitted(lw, m, shape, node, fname, "mask")


def _latency(lw: Lowerer, v, node, fname: str) -> None:
    if v is None or isinstance(v, Py) and v.obj is None:
        return
    n = static_int(lw, v, node, "latency")
    if not 1 <= n <= 10:
        raise lw.error(node, f"{fname}(): latency must be between 1 and 10, got {n}")


def gather(lw: Lowerer, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, "gather", ["array", "indices", "mask", "padding_value",
                                      "check_bounds", "latency"],
                  {"mask": None, "padding_value": ir.Const(int64, lw.loc(node), 0, weak=True),
                   "check_bounds": ir.Const(bool_, lw.loc(node), True), "latency": None})
    arr = array_arg(lw, v["array"], node, "gather")
    at: ArrayType = arr.type
    idx, shape = _gather_indices(lw, v["indices"], at.ndim, node, "gather")
    mask = _gather_mask(lw, v["mask"], shape, node, "gather")
    pad = tile_or_scalar(lw, v["padding_value"], node)
    pad = _fitted(lw, _implicit(lw, pad, at.dtype, node, "gather", "the padding value"),
                  shape, node, "gather", "padding value")
    check = static_bool(lw, v["check_bounds"], node, "check_bounds")
    _latency(lw, v["latency"], node, "gather")
    return tile_op(lw, node, TileType(at.dtype, shape), "gather", [arr] + idx + [mask, pad],
                   check_bounds=check)


def scatter(lw: Lowerer, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, "scatter", ["array", "indices", "value", "mask", "check_bounds",
                                       "latency"],
                  {"mask": None, "check_bounds": ir.Const(bool_, lw.loc(node), True),
                   "latency": None})
    arr = array_arg(lw, v["array"], node, "scatter")
    at: ArrayType = arr.type
    if at.readonly:
        raise lw.error(node, "scatter() to a read-only (constant) array")
    idx, shape = _gather_indices(lw, v["indices"], at.ndim, node, "scatter")
    mask = _gather_mask(lw, v["mask"], shape, node, "scatter")
    val = tile_or_scalar(lw, v["value"], node)
    val = _fitted(lw, _implicit(lw, val, at.dtype, node, "scatter", "the stored value"),
                  shape, node, "scatter", "value")
    if not is_tile(val):  # the value is a tile of the indices' shape (tile.h loops over it)
        val = tile_op(lw, node, TileType(at.dtype, shape), "full", [val])
    check = static_bool(lw, v["check_bounds"], node, "check_bounds")
    _latency(lw, v["latency"], node, "scatter")
    return tile_op(lw, node, void, "scatter", [arr, val] + idx + [mask], check_bounds=check)


# ---- load/store_advanced_indexing: rows at a tile of indices, slices of the other axes ---------

_PAD_VALUES = {"zero": 0.0, "neg_zero": -0.0, "nan": float("nan"), "pos_inf": float("inf"),
               "neg_inf": float("-inf")}


def _advanced_indices(lw: Lowerer, at: ArrayType, raw, node, fname: str) -> tuple[list, tuple]:
    """The index tiles of an advanced-indexing access (gather/scatter operands) and its shape:
    axis ``d`` of the tile walks the 1-d index tile (the one sparse axis) or the slice
    ``start + arange(length)``."""
    if at.ndim < 2:
        other = "gather" if fname.startswith("load") else "scatter"
        raise lw.error(node, f"{fname}() needs an array of 2 or more axes",
                       f"use ct.{other}() for a 1-d array")
    items = raw.items if isinstance(raw, Tup) else [raw]
    if len(items) != at.ndim:
        raise lw.error(node, f"{fname}(): {len(items)} indices for a {at.ndim}-d array: the "
                             "index length does not match array rank", cls=TileCodeTypeError)
    sparse, shape = [], []
    for d, it in enumerate(items):
        if is_tile(it):
            if it.type.ndim != 1 or not it.type.dtype.is_int:
                raise lw.error(node, f"{fname}(): the index of axis {d} must be a 1D integer "
                                     f"tile or a ct.Slice, got {it.type}", cls=TileCodeTypeError)
            sparse.append(d)
            shape.append(it.type.shape[0])
        elif isinstance(it, IndexSlice):
            if not is_pow2(it.length):
                raise lw.error(node, f"{fname}(): ct.Slice of axis {d} has length {it.length}; "
                                     "it must be a power of two", cls=TileCodeTypeError)
            shape.append(it.length)
        else:
            raise lw.error(node, f"{fname}(): the index of axis {d} must be a 1D integer tile "
                                 f"(the sparse axis) or ct.Slice(start, length), got "
                                 f"{describe_value(it)}", cls=TileCodeTypeError)
    if len(sparse) != 1:
        raise lw.error(node, f"{fname}(): exactly one index must be a 1D integer Tile (the "
                             f"sparse axis); {len(sparse) or 'none'} found",
                       "the other axes take ct.Slice(start, length)", cls=TileCodeTypeError)
    shape = tuple(shape)
    idx = []
    for d, it in enumerate(items):
        axis = (1,) * d + (shape[d],) + (1,) * (at.ndim - d - 1)
        if isinstance(it, IndexSlice):
            one = ir.Const(int64, lw.loc(node), 1)
            it = tile_op(lw, node, TileType(int64, (shape[d],)), "arange", [it.start, one])
        it = tile_op(lw, node, TileType(it.type.dtype, axis), "reshape", [it])
        idx.append(broadcast(lw, it, shape, node))
    return idx, shape


def index_slice(lw: Lowerer, node: ast.Call) -> IndexSlice:
    v = bind_args(lw, node, "Slice", ["start", "length"], {})
    start = scalar_arg(lw, v["start"], node)
    if not start.type.is_int:
        raise lw.error(node, f"ct.Slice(): the start must be an integer, got {start.type}")
    return IndexSlice(ty.convert(start, int64), static_int(lw, v["length"], node,
                                                           "ct.Slice's length"))


def load_advanced(lw: Lowerer, node: ast.Call) -> ir.Expr:
    fname = "load_advanced_indexing"
    v = bind_args(lw, node, fname, ["array", "indices", "padding_mode", "latency", "allow_tma"],
                  {"padding_mode": None, "latency": None, "allow_tma": None})
    arr = array_arg(lw, v["array"], node, fname)
    at: ArrayType = arr.type
    idx, shape = _advanced_indices(lw, at, v["indices"], node, fname)
    mode = "undetermined"
    pm = v["padding_mode"]
    if pm is not None and not (isinstance(pm, Py) and pm.obj is None):
        mode = enum_member(lw, pm, lt.PaddingMode, node, "padding_mode").value
    _latency(lw, v["latency"], node, fname)
    pad = _PAD_VALUES.get(mode, 0.0) if at.dtype.is_float else 0
    pad = ir.Const(at.dtype, lw.loc(node), ty.py_value(pad, at.dtype))
    mask = ir.Const(bool_, lw.loc(node), True)
    # ``tile_view``: a tile of the array's view, as cuTile has it: the default padding is
    # undetermined and a tile wholly outside the array undefined (the simulator's checks)
    return tile_op(lw, node, TileType(at.dtype, shape), "gather", [arr] + idx + [mask, pad],
                   check_bounds=True, tile_view=mode == "undetermined")


def store_advanced(lw: Lowerer, node: ast.Call) -> ir.Expr:
    fname = "store_advanced_indexing"
    v = bind_args(lw, node, fname, ["array", "indices", "tile", "latency", "allow_tma"],
                  {"latency": None, "allow_tma": None})
    arr = array_arg(lw, v["array"], node, fname)
    at: ArrayType = arr.type
    if at.readonly:
        raise lw.error(node, f"{fname}() to a read-only (constant) array")
    idx, shape = _advanced_indices(lw, at, v["indices"], node, fname)
    t = tile_or_scalar(lw, v["tile"], node)
    if shape_of(t) != shape:
        raise lw.error(node, f"{fname}(): the tile's shape {shape_of(t)} does not match the "
                             f"shape the indices imply, {shape}", cls=TileCodeTypeError)
    t = _implicit(lw, t, at.dtype, node, fname, "the stored tile")
    _latency(lw, v["latency"], node, fname)
    mask = ir.Const(bool_, lw.loc(node), True)
    return tile_op(lw, node, void, "scatter", [arr, t] + idx + [mask], check_bounds=True,
                   tile_view=True)


INDEXED = {"gather": gather, "scatter": scatter, "Slice": index_slice,
           "load_advanced_indexing": load_advanced, "store_advanced_indexing": store_advanced}
