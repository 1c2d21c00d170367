"""Parts of tiles: ``extract`` (a subtile), ``insert`` (a subtile replaced) and ``cat`` (two
tiles joined along an axis), cuTile's rules.

A subtile is one cell of the grid that ``shape`` cuts the tile into: ``index`` counts cells,
not elements (cell ``i`` of axis ``d`` starts at element ``i * shape[d]``), and ``shape`` must
divide the tile's shape on every axis. The index may be known only at run time; an index known
at compile time and outside the grid is a compile error, one known at run time is checked by
the simulator (the GPU code clamps it into the grid).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import TileType, bool_, int64
from . import typing as ty
from .tiles import (
    bind_args,
    is_pow2,
    is_tile,
    reshape,
    scalar_arg,
    static_int,
    static_shape,
    tile_op,
)
from .values import Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


def _tile(lw: Lowerer, v, node, fname: str, what: str = "x") -> ir.Expr:
    if not is_tile(v):
        raise lw.error(node, f"{fname}(): {what} must be a tile, got {describe_value(v)}",
                       cls=TileCodeTypeError)
    return v


def _grid_index(lw: Lowerer, x: TileType, sub: tuple, v, node, fname: str) -> list[ir.Expr]:
    """The cell index of a subtile of shape ``sub`` in ``x``, one int64 per axis."""
    items = v.items if isinstance(v, Tup) else [v]
    if len(items) != x.ndim:
        raise lw.error(node, f"{fname}(): the index has {len(items)} entries for a "
                             f"{x.ndim}-d tile", cls=TileCodeTypeError)
    out = []
    for d, (n, s, it) in enumerate(zip(x.shape, sub, items)):
        if s == 0 or n % s:
            raise lw.error(node, f"{fname}(): the tile's shape {x.shape} is not divisible by "
                                 f"the subtile's {sub} on axis {d}", cls=TileCodeTypeError)
        i = scalar_arg(lw, it, node)
        if not (i.type.is_int or i.type == bool_):
            raise lw.error(node, f"{fname}(): the index must be integers, got {i.type}",
                           cls=TileCodeTypeError)
        if isinstance(i, ir.Const) and not 0 <= int(i.value) < n // s:
            raise lw.error(node, f"{fname}(): index {int(i.value)} is out of bounds on axis "
                                 f"{d}: the tile {x.shape} has {n // s} subtiles of {sub} "
                                 f"there (valid: 0 to {n // s - 1})",
                           "the index counts subtiles, not elements", cls=TileCodeTypeError)
        out.append(ty.convert(i, int64))
    return out


def _sub_shape(lw: Lowerer, v, ndim: int, node) -> tuple:
    shape = static_shape(lw, v, node, "extract() shape")
    if shape and len(shape) != ndim:
        raise lw.error(node, f"extract(): the shape {shape} has {len(shape)} axes for a "
                             f"{ndim}-d tile", cls=TileCodeTypeError)
    return shape


def extract(lw: Lowerer, x, index, shape_v, node) -> ir.Expr:
    """``ct.extract(x, index, shape)``: the subtile at cell ``index``; ``shape=()`` takes one
    element as a 0-d tile."""
    fname = "extract"
    x = _tile(lw, x, node, fname)
    shape = _sub_shape(lw, shape_v, x.type.ndim, node)
    sub = shape or (1,) * x.type.ndim
    idx = _grid_index(lw, x.type, sub, index, node, fname)
    r = tile_op(lw, node, TileType(x.type.dtype, sub), "extract", [x] + idx)
    if not shape and sub:  # shape=(): a 0-d tile
        r = reshape(lw, r, Tup([]), node)
    return r


def insert(lw: Lowerer, x, index, value, node) -> ir.Expr:
    """``ct.insert(x, index, value)``: ``x`` with the subtile at cell ``index`` replaced by
    ``value`` (a 0-d ``value`` is one element)."""
    fname = "insert"
    x = _tile(lw, x, node, fname)
    value = _tile(lw, value, node, fname, "value")
    if value.type.dtype != x.type.dtype:
        raise lw.error(node, f"insert(): Cannot insert a tile of dtype {value.type.dtype} into "
                             f"a tile of dtype {x.type.dtype}", "convert it with .astype()",
                       cls=TileCodeTypeError)
    if value.type.ndim == 0:
        value = reshape(lw, value, Tup([ir.Const(int64, lw.loc(node), 1)] * x.type.ndim), node)
    if value.type.ndim != x.type.ndim:
        raise lw.error(node, f"insert(): the value's rank {value.type.ndim} does not match the "
                             f"tile rank {x.type.ndim}", "reshape the value to the tile's rank",
                       cls=TileCodeTypeError)
    idx = _grid_index(lw, x.type, value.type.shape, index, node, fname)
    return tile_op(lw, node, x.type, "insert", [x, value] + idx)


def cat(lw: Lowerer, tiles_v, axis_v, node) -> ir.Expr:
    """``ct.cat((x, y), axis)``: two tiles of one dtype and rank, equal off ``axis``, joined
    along it; the result's shape must be powers of two (one tile: itself)."""
    if not isinstance(tiles_v, Tup):
        raise lw.error(node, f"cat() takes a tuple of tiles, got {describe_value(tiles_v)}",
                       cls=TileCodeTypeError)
    items = tiles_v.items
    if not items:
        raise lw.error(node, "cat() received an empty tuple", cls=TileCodeTypeError)
    if len(items) > 2:
        raise lw.error(node, f"cat() supports at most 2 tiles, got {len(items)}",
                       "concatenate two at a time", cls=TileCodeTypeError)
    ts = [_tile(lw, t, node, "cat", "each item") for t in items]
    x = ts[0]
    nd = x.type.ndim
    axis = static_int(lw, axis_v, node, "cat() axis")
    if not -nd <= axis < nd:
        raise lw.error(node, f"cat(): axis {axis} is out of range for {nd}-d tiles",
                       f"the axis is one of {-nd} to {nd - 1}", cls=TileCodeTypeError)
    axis %= nd
    if len(ts) == 1:
        return x
    y = ts[1]
    if y.type.ndim != nd:
        raise lw.error(node, f"cat(): Expected tiles to have the same rank: {nd} != "
                             f"{y.type.ndim}", cls=TileCodeTypeError)
    if y.type.dtype != x.type.dtype:
        raise lw.error(node, f"cat(): Expected tiles to have the same dtype: {x.type.dtype} "
                             f"!= {y.type.dtype}", "convert one with .astype()",
                       cls=TileCodeTypeError)
    shape = list(x.type.shape)
    for d, (a, b) in enumerate(zip(x.type.shape, y.type.shape)):
        if d != axis and a != b:
            raise lw.error(node, "cat(): Expected tiles to have the same shape for non axis "
                                 f"dimensions, got {x.type.shape} and {y.type.shape}",
                           cls=TileCodeTypeError)
    shape[axis] += y.type.shape[axis]
    if not all(is_pow2(d) for d in shape):
        raise lw.error(node, f"cat(): Result tile shape must be power of 2, got: "
                             f"{tuple(shape)}", "tiles of one shape join into a power of two",
                       cls=TileCodeTypeError)
    return tile_op(lw, node, TileType(x.type.dtype, tuple(shape)), "cat", [x, y], axis=axis)


def call(lw: Lowerer, fname: str, node, method_base=None):
    """The calls ``ct.extract/insert/cat(...)`` and the methods ``x.extract/insert(...)``."""
    if fname == "cat":
        v = bind_args(lw, node, "cat", ["tiles", "axis"], {})
        return cat(lw, v["tiles"], v["axis"], node)
    if fname == "extract":
        params = ["index", "shape"] if method_base is not None else ["x", "index", "shape"]
        v = bind_args(lw, node, fname, params, {})
        return extract(lw, v.get("x", method_base), v["index"], v["shape"], node)
    params = ["index", "value"] if method_base is not None else ["x", "index", "value"]
    v = bind_args(lw, node, fname, params, {})
    return insert(lw, v.get("x", method_base), v["index"], v["value"], node)
