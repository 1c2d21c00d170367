"""cuTile's array methods in tile kernels: ``Array.slice``, ``Array.tiled_view`` (and the
``TiledView``'s ``load``, ``store``, ``num_tiles``, ``atomic_store_*``) and
``Array.get_raw_memory`` (and ``RawArrayMemory``'s ``load_offset``, ``store_offset`` and
``atomic_*_offset``), with cuTile's typing rules and error messages.

Every one of them is an existing operation on a view: a slice is an ``ir.Slice``, a tiled view
is the array itself typed ``TiledViewType`` (its load and store are ``ct.load``/``ct.store``,
or, where the traversal steps differ from the tile shape, the same on the slice that starts at
the tile's origin), raw memory is an ``ir.RawMemory`` view that offsets index through
gather, scatter and the tile atomics.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang import tile as lt
from ..lang.types import ArrayType, TileType, bool_, int32, int64, void
from ..lang.views import RawMemoryType, TiledViewType
from . import typing as ty
from .tile_gather import _fitted, _gather_mask, _implicit, _latency
from .tiles import (
    bind_args,
    broadcast,
    broadcast_shapes,
    dtype_weak,
    enum_member,
    is_tile,
    item,
    scalar_arg,
    shape_of,
    static_bool,
    static_int,
    tile_op,
    tile_or_scalar,
    where,
)
from .values import Py, ScalarMethod, Tup

if TYPE_CHECKING:
    from .lower import Lowerer

ARRAY_METHODS = ("slice", "tiled_view", "get_raw_memory")
_RMW = {"add": "add", "max": "max", "min": "min", "and": "and_", "or": "or_", "xor": "xor",
        "xchg": "exch"}
TILED_VIEW_METHODS = ("load", "store", "num_tiles") + tuple(f"atomic_store_{k}" for k in _RMW
                                                            if k != "xchg")
RAW_METHODS = ("load_offset", "store_offset", "atomic_cas_offset") + tuple(
    f"atomic_{k}_offset" for k in _RMW)
METHODS = ARRAY_METHODS + TILED_VIEW_METHODS + RAW_METHODS

# the static extents of the views Array.slice made with constant bounds ({(attr, axis): n})
_SLICE_STATIC: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def static_of(lw: Lowerer, arr: ir.Expr) -> dict | None:
    """The annotated static extents and strides of array ``arr`` (``{(attr, axis): value}``):
    of an array parameter, an item of a list parameter, or a local bound once to one."""
    if isinstance(arr, ir.TupleItem) and isinstance(arr.value, ir.Var):
        arr = arr.value  # an item of a list parameter: the list's annotation
    if isinstance(arr, ir.Var):
        return lw.static_dims.get(arr.name) or lw.array_static.get(arr.name)
    return slice_static(arr)  # Array.slice with constant bounds


def _type_error(lw: Lowerer, node, msg: str, hint: str | None = None):
    return lw.error(node, msg, hint, cls=TileCodeTypeError)


def slice_static(arr: ir.Expr) -> dict | None:
    """The static extents and strides of a view ``Array.slice`` made (arrays.static_of)."""
    return _SLICE_STATIC.get(arr) if isinstance(arr, ir.Slice) else None


def attr(lw: Lowerer, arr: ir.Expr, name: str, node):
    """An attribute of an array that only cuTile's arrays have, or of one of its views; None
    where the name is not one of them."""
    t = arr.type
    if isinstance(t, TiledViewType):
        if name == "dtype":
            return Py(t.dtype)
        if name in ("tile_shape", "traversal_steps"):  # compile-time tuples
            return Py(t.tile_shape if name == "tile_shape" else t.steps)
        if name in TILED_VIEW_METHODS:
            return Py(ScalarMethod(arr, name))
        raise _type_error(lw, node, f"a tiled view has no attribute '{name}'",
                          "a TiledView has .dtype, .tile_shape, .traversal_steps, .num_tiles(), "
                          ".load(), .store() and .atomic_store_*()")
    if isinstance(t, RawMemoryType):
        if name == "dtype":
            return Py(t.dtype)
        if name in RAW_METHODS:
            return Py(ScalarMethod(arr, name))
        raise _type_error(lw, node, f"a RawArrayMemory has no attribute '{name}'",
                          "it has .dtype, .load_offset(), .store_offset() and "
                          ".atomic_*_offset()")
    if name in ARRAY_METHODS and lw.spec.threads is not None:
        return Py(ScalarMethod(arr, name))
    return None


def call(lw: Lowerer, m: ScalarMethod, node: ast.Call):
    """``x.method(...)`` of an array, a tiled view or a raw memory (``calls._scalar_method``)."""
    t = m.base.type
    if isinstance(t, TiledViewType):
        if m.name == "load":
            return tv_load(lw, m.base, node)
        if m.name == "store":
            return tv_store(lw, m.base, node)
        if m.name == "num_tiles":
            return tv_num_tiles(lw, m.base, node)
        return tv_atomic(lw, m.base, m.name[len("atomic_store_"):], node)
    if isinstance(t, RawMemoryType):
        if m.name == "load_offset":
            return raw_load(lw, m.base, node)
        if m.name == "store_offset":
            return raw_store(lw, m.base, node)
        return raw_atomic(lw, m.base, m.name[len("atomic_"):-len("_offset")], node)
    if m.name == "slice":
        return array_slice(lw, m.base, node)
    if m.name == "tiled_view":
        return tiled_view(lw, m.base, node)
    bind_args(lw, node, "get_raw_memory", [], {})
    at: ArrayType = t
    return ir.RawMemory(RawMemoryType(at.dtype, 1, "C", at.space, at.readonly), lw.loc(node),
                        m.base)


# ---- Array.slice -------------------------------------------------------------------------------

def _signed_int(lw: Lowerer, v, node, what: str) -> ir.Expr:
    """A slice bound: a signed integer number or 0-d tile, as int64 (cuTile's words)."""
    if is_tile(v) and v.type.ndim == 0:
        v = item(lw, v, node)
    s = lw.scalar(v, node) if not is_tile(v) else v
    dt = dtype_weak(s)[0] if is_tile(s) else s.type
    if is_tile(s) or dt.kind != "i":
        raise _type_error(lw, node, f"slice(): the {what} must be a signed integer: "
                                    f"Expected a signed integer scalar, but got {dt}"
                          + (f" of shape {s.type.shape}" if is_tile(s) else ""),
                          "convert it with ct.astype(x, ct.int32)")
    return ty.convert(s, int64)


def array_slice(lw: Lowerer, arr: ir.Expr, node: ast.Call) -> ir.Slice:
    """``arr.slice(axis, start, stop)``: the view of ``arr`` from ``start`` to ``stop`` along
    ``axis`` (cuTile requires ``0 <= start <= stop <= arr.shape[axis]``)."""
    v = bind_args(lw, node, "slice", ["axis", "start", "stop"], {})
    at: ArrayType = arr.type
    nd = at.ndim
    axis = static_int(lw, v["axis"], node, "slice()'s axis")
    if not -nd <= axis < nd:
        raise _type_error(lw, node, f"slice(): 'Axis {axis} is out of range for rank {nd}'",
                          f"the array has {nd} ax{'i' if nd == 1 else 'e'}s")
    axis %= nd
    start = _signed_int(lw, v["start"], node, "start")
    stop = _signed_int(lw, v["stop"], node, "stop")
    c0 = start.value if isinstance(start, ir.Const) else None
    c1 = stop.value if isinstance(stop, ir.Const) else None
    if c0 is not None and c0 < 0:
        raise _type_error(lw, node, f"slice(): Slice start must be non-negative, got {c0}")
    if c1 is not None and c1 < 0:
        raise _type_error(lw, node, f"slice(): Slice stop must be non-negative, got {c1}")
    if c0 is not None and c1 is not None and c1 < c0:
        raise _type_error(lw, node, f"slice(): Slice stop must be greater than or equal to "
                                    f"start, got start={c0}, stop={c1}")
    loc = lw.loc(node)
    parts: list = []
    for k in range(nd):
        if k == axis:
            parts.append((start, stop, ir.Const(int64, loc, 1, weak=True)))
        else:
            parts.append((ir.Const(int64, loc, 0, weak=True),
                          ir.ArrayDim(int64, loc, arr, "shape", k),
                          ir.Const(int64, loc, 1, weak=True)))
    # rows of a C-contiguous array are C-contiguous; a cut of another axis is strided
    layout = "C" if at.layout == "C" and axis == 0 else "A"
    out = ir.Slice(ArrayType(at.dtype, nd, layout, at.space, at.readonly), loc, arr, parts)
    base = static_of(lw, arr) or {}
    dims = {key: n for key, n in base.items() if key != ("shape", axis)}
    if c0 is not None and c1 is not None:
        dims[("shape", axis)] = c1 - c0
    if dims:
        _SLICE_STATIC[out] = dims
    return out


# ---- Array.tiled_view and TiledView ------------------------------------------------------------

def _const_shape(lw: Lowerer, v, nd: int, node, what: str, pow2: bool) -> tuple:
    """A constant int or tuple of ints of length ``nd`` (or ``()`` for tile_shape), each
    positive (and a power of two where ``pow2``): cuTile's rules and words."""
    items = v.items if isinstance(v, Tup) else list(v.obj) if isinstance(v, Py) and \
        isinstance(v.obj, tuple) else [v]
    shape = tuple(static_int(lw, x, node, f"tiled_view()'s {what}") for x in items)
    if len(shape) != nd and not (what == "shape" and shape == ()):
        raise _type_error(lw, node, f"tiled_view(): Expected {what} length to be {nd}, got "
                                    f"{len(shape)}", f"the array has {nd} axes")
    for i, d in enumerate(shape):
        if d <= 0:
            raise _type_error(lw, node, f"tiled_view(): Dimension #{i} of {what} {shape} is "
                                        "not positive")
        if pow2 and d & (d - 1):
            raise _type_error(lw, node, f"tiled_view(): Dimension #{i} of {what} {shape} is "
                                        "not a power of two")
    return shape


def tiled_view(lw: Lowerer, arr: ir.Expr, node: ast.Call) -> ir.Slice:
    """``arr.tiled_view(tile_shape, padding_mode=, traversal_steps=)``: ``arr`` typed as a
    tiled view (the whole array, every axis kept)."""
    v = bind_args(lw, node, "tiled_view", ["tile_shape", "padding_mode", "traversal_steps"],
                  {"padding_mode": None, "traversal_steps": None})
    at: ArrayType = arr.type
    nd = at.ndim
    shape = _const_shape(lw, v["tile_shape"], nd, node, "shape", True)
    block = shape if shape or not nd else (1,) * nd
    st = v["traversal_steps"]
    steps = block if st is None or isinstance(st, Py) and st.obj is None else \
        _const_shape(lw, st, nd, node, "traversal_steps", False)
    pad = None
    pm = v["padding_mode"]
    if pm is not None and not (isinstance(pm, Py) and pm.obj is None):
        pad = enum_member(lw, pm, lt.PaddingMode, node, "padding_mode").value
        pad = None if pad == "undetermined" else pad
    loc = lw.loc(node)
    parts = [(ir.Const(int64, loc, 0, weak=True), ir.ArrayDim(int64, loc, arr, "shape", k),
              ir.Const(int64, loc, 1, weak=True)) for k in range(nd)]
    t = TiledViewType(at.dtype, nd, at.layout, at.space, at.readonly, shape, steps, pad)
    return ir.Slice(t, loc, arr, parts)


def _tile_index(lw: Lowerer, view: ir.Expr, v, node, fname: str) -> list[ir.Expr]:
    t: TiledViewType = view.type
    items = v.items if isinstance(v, Tup) else [v]
    if len(items) != t.ndim:
        raise _type_error(lw, node, f"{fname}(): Index size {len(items)} does not match the "
                                    f"tiled view rank {t.ndim}",
                          "give one tile index per array axis")
    out = []
    for it in items:
        s = scalar_arg(lw, it, node)
        if not (s.type.is_int or s.type == bool_):
            raise _type_error(lw, node, f"{fname}(): tile indices must be integers, got {s.type}")
        out.append(ty.convert(s, int64))
    return out


def _hints(lw: Lowerer, v: dict, node, fname: str) -> None:
    if v.get("check_bounds") is not None:
        static_bool(lw, v["check_bounds"], node, "check_bounds")
    _latency(lw, v.get("latency"), node, fname)


def _at_tile(lw: Lowerer, view: ir.Expr, idx: list, node) -> tuple[ir.Expr, list]:
    """The array and tile indices that ``ct.load``/``ct.store`` take for tile ``idx`` of a
    tiled view: the view itself where tiles are ``tile_shape`` apart, else the slice that
    starts at the tile's origin (``idx * steps``), tile (0, ..., 0) of it."""
    t: TiledViewType = view.type
    if t.steps == t.block_shape:
        return view, idx
    loc = lw.loc(node)
    parts = [(ir.BinOp(int64, loc, "*", i, ir.Const(int64, loc, s)),
              ir.ArrayDim(int64, loc, view, "shape", k), ir.Const(int64, loc, 1, weak=True))
             for k, (i, s) in enumerate(zip(idx, t.steps))]
    sub = ir.Slice(ArrayType(t.dtype, t.ndim, "A", t.space, t.readonly), loc, view, parts)
    return sub, [ir.Const(int64, loc, 0) for _ in idx]


def tv_load(lw: Lowerer, view: ir.Expr, node: ast.Call) -> ir.Expr:
    """``tv.load(index)``: the tile at ``index``, padded by the view's padding mode."""
    v = bind_args(lw, node, "load", ["index", "check_bounds", "latency", "allow_tma"],
                  {"check_bounds": None, "latency": None, "allow_tma": None})
    t: TiledViewType = view.type
    idx = _tile_index(lw, view, v["index"], node, "load")
    _hints(lw, v, node, "load")
    arr, idx = _at_tile(lw, view, idx, node)
    shape = t.block_shape
    out = tile_op(lw, node, TileType(t.dtype, shape), "load", [arr] + idx, shape=shape,
                  order=tuple(range(t.ndim)), padding=t.padding)
    if shape != t.tile_shape:  # a 0-d tile
        out = tile_op(lw, node, TileType(t.dtype, ()), "reshape", [out])
    return out


def _fit_tile(lw: Lowerer, view: ir.Expr, v, node, fname: str, what: str):
    """A stored tile or atomic update: a tile (or number) broadcastable to the view's tile
    shape, broadcast to it (one entry per array axis)."""
    t: TiledViewType = view.type
    x = tile_or_scalar(lw, v, node)
    if not _broadcastable_to(shape_of(x), t.tile_shape):
        raise _type_error(lw, node, f"{fname}(): {what} shape {shape_of(x)} is not broadcastable "
                                    f"to the tiled view's tile shape {t.tile_shape}")
    if not is_tile(x):
        return tile_op(lw, node, TileType(x.type, t.block_shape), "full", [x])
    x = broadcast(lw, x, t.tile_shape, node)
    if x.type.shape != t.block_shape:
        x = tile_op(lw, node, TileType(x.type.dtype, t.block_shape), "reshape", [x])
    return x


def _broadcastable_to(src: tuple, dst: tuple) -> bool:
    return len(src) <= len(dst) and all(a in (1, b) for a, b in zip(reversed(src),
                                                                     reversed(dst)))


def tv_store(lw: Lowerer, view: ir.Expr, node: ast.Call) -> ir.Expr:
    """``tv.store(index, tile)``: the tile (broadcast to the tile shape, converted implicitly
    to the view's dtype) at ``index``; elements outside the array are left out."""
    v = bind_args(lw, node, "store", ["index", "tile", "check_bounds", "latency", "allow_tma"],
                  {"check_bounds": None, "latency": None, "allow_tma": None})
    t: TiledViewType = view.type
    if t.readonly:
        raise lw.error(node, "store() to a read-only (constant) array")
    idx = _tile_index(lw, view, v["index"], node, "store")
    _hints(lw, v, node, "store")
    x = _fit_tile(lw, view, v["tile"], node, "store", "Tile")
    x = _implicit_view(lw, x, t, node, "store", "the stored tile")
    arr, idx = _at_tile(lw, view, idx, node)
    return tile_op(lw, node, void, "store", [arr, x] + idx, shape=x.type.shape,
                   order=tuple(range(t.ndim)))


def _implicit_view(lw: Lowerer, x, t: ArrayType, node, fname: str, what: str):
    try:
        return _implicit(lw, x, t.dtype, node, fname, what)
    except TileCodeTypeError:
        raise
    except Exception as e:  # noqa: BLE001 - the same error, as cuTile's type
        msg = getattr(e, "message", None)
        if msg is None:
            raise
        raise _type_error(lw, node, msg, getattr(e, "hint", None)) from None


def tv_num_tiles(lw: Lowerer, view: ir.Expr, node: ast.Call) -> ir.Expr:
    """``tv.num_tiles(axis)``: how many tile origins fit along ``axis``,
    ``cdiv(shape[axis], traversal_steps[axis])`` (an int32)."""
    v = bind_args(lw, node, "num_tiles", ["axis"], {})
    t: TiledViewType = view.type
    nd = t.ndim
    axis = static_int(lw, v["axis"], node, "num_tiles()'s axis")
    if not -nd <= axis < nd:
        raise _type_error(lw, node, f"num_tiles(): 'Axis {axis} is out of range for rank {nd}'")
    axis %= nd
    loc = lw.loc(node)
    s = t.steps[axis]
    d = ir.ArrayDim(int64, loc, view, "shape", axis)
    n = ir.BinOp(int64, loc, "//", ir.BinOp(int64, loc, "+", d, ir.Const(int64, loc, s - 1)),
                 ir.Const(int64, loc, s))
    return ir.Cast(int32, loc, n)


# ---- atomics: cuTile's dtype rules -------------------------------------------------------------

_INT_32_64 = ("int32", "int64", "uint32", "uint64")
_SUPPORTED = {"xchg": _INT_32_64 + ("float32", "float64"),
              "add": _INT_32_64 + ("float32", "float64", "float16", "bfloat16"),
              "max": _INT_32_64, "min": _INT_32_64, "and": _INT_32_64, "or": _INT_32_64,
              "xor": _INT_32_64, "cas": _INT_32_64 + ("float32", "float64")}


def _update(lw: Lowerer, x, at: ArrayType, kind: str, node, fname: str, what: str):
    """An atomic's operand converted to the array's dtype: exactly its dtype for the bitwise
    operations, an implicit conversion for the others (cuTile's rules)."""
    if kind in ("and", "or", "xor"):
        dt, weak = dtype_weak(x)
        if not weak and dt != at.dtype:
            raise _type_error(lw, node, f"{fname}(): Bitwise atomic read-modify-write operations "
                                        f"require the update dtype ({dt}) to exactly match the "
                                        f"target dtype ({at.dtype})",
                              f"convert it first: .astype({at.dtype.name})")
    return _implicit_view(lw, x, at, node, fname, f"{what} is incompatible with the target "
                                                  "dtype:")


_ATOMIC_ORDERS = ("RELAXED", "ACQUIRE", "RELEASE", "ACQ_REL")


def atomic_order_scope(lw: Lowerer, v: dict, node, kind: str) -> tuple:
    """``(memory_order, memory_scope)`` of an atomic from its ``memory_order=`` and
    ``memory_scope=`` arguments (default ACQ_REL, DEVICE), checked by cuTile's rules: an
    atomic has no WEAK order, and every order of an atomic needs a scope (not NONE)."""
    order = lt.MemoryOrder.ACQ_REL
    if v["memory_order"] is not None:
        order = enum_member(lw, v["memory_order"], lt.MemoryOrder, node, "memory_order")
    scope = lt.MemoryScope.DEVICE
    if v["memory_scope"] is not None:
        scope = enum_member(lw, v["memory_scope"], lt.MemoryScope, node, "memory_scope")
    opcode = "tile_atomic_cas" if kind == "cas" else "tile_atomic_rmw"
    if order.name not in _ATOMIC_ORDERS:
        raise _type_error(lw, node, f"Invalid memory order for {opcode}. Got {order}, expected "
                                    "one of " + ", ".join(str(lt.MemoryOrder[n])
                                                          for n in _ATOMIC_ORDERS),
                          "an atomic is at least RELAXED")
    if scope.name == "NONE":
        raise _type_error(lw, node, f"{opcode} with {order.name} memory ordering requires a "
                                    "memory scope", "memory_scope=ct.MemoryScope.DEVICE")
    return order, scope


def _check_dtype(lw: Lowerer, at: ArrayType, kind: str, node, fname: str, what: str) -> None:
    if at.dtype.name not in _SUPPORTED[kind]:
        raise _type_error(lw, node, f"{fname}(): Unsupported {what} dtype: {at.dtype}",
                          f"{fname} supports {', '.join(_SUPPORTED[kind])}")


def _atomic_op(lw: Lowerer, node, arr: ir.Expr, idx: list, vals: list, kind: str,
               order=lt.MemoryOrder.ACQ_REL, scope=lt.MemoryScope.DEVICE) -> ir.Expr:
    shape = broadcast_shapes(lw, [shape_of(x) for x in idx + vals], node)
    args = [arr] + [broadcast(lw, x, shape, node) if is_tile(x) else
                    tile_op(lw, node, TileType(x.type, shape), "full", [x])
                    for x in idx + vals]
    op = "cas" if kind == "cas" else _RMW[kind]
    return tile_op(lw, node, TileType(arr.type.dtype, shape), "atomic", args, op=op,
                   order=order.value, scope=scope.value)


def tv_atomic(lw: Lowerer, view: ir.Expr, kind: str, node: ast.Call) -> ir.Expr:
    """``tv.atomic_store_<kind>(index, update)``: one atomic per element of the tile at
    ``index`` (elements outside the array are left out); nothing is returned."""
    fname = f"atomic_store_{kind}"
    v = bind_args(lw, node, fname, ["index", "update"], {})
    t: TiledViewType = view.type
    _check_dtype(lw, t, kind, node, fname, "tiled view")
    idx = _tile_index(lw, view, v["index"], node, fname)
    x = _fit_tile(lw, view, v["update"], node, fname, "Update")
    x = _update(lw, x, t, kind, node, fname, "Update")
    loc = lw.loc(node)
    shape = t.block_shape
    elems = []
    for k, (i, s) in enumerate(zip(idx, t.steps)):
        axis = tuple(n if d == k else 1 for d, n in enumerate(shape))
        r = tile_op(lw, node, TileType(int64, (shape[k],)), "arange",
                    [ir.BinOp(int64, loc, "*", i, ir.Const(int64, loc, s)),
                     ir.Const(int64, loc, 1)])
        elems.append(tile_op(lw, node, TileType(int64, axis), "reshape", [r]))
    return _atomic_op(lw, node, view, elems, [x], kind, lt.MemoryOrder.RELAXED)


# ---- Array.get_raw_memory and RawArrayMemory ---------------------------------------------------

def _offsets(lw: Lowerer, v, node, fname: str):
    x = tile_or_scalar(lw, v, node)
    dt = dtype_weak(x)[0]
    if not dt.is_int:
        raise _type_error(lw, node, f"{fname}(): offsets must be integers, got {dt}",
                          "offsets count elements from the array's first one")
    return x if is_tile(x) else ty.convert(x, int64)


def raw_load(lw: Lowerer, mem: ir.Expr, node: ast.Call) -> ir.Expr:
    """``mem.load_offset(offset, mask=, padding_value=)``: the elements at ``offset``
    (``padding_value`` where ``mask`` is False), a tile of the offsets' shape."""
    fname = "load_offset"
    v = bind_args(lw, node, fname, ["offset", "mask", "padding_value", "latency"],
                  {"mask": None, "padding_value": ir.Const(int64, lw.loc(node), 0, weak=True),
                   "latency": None})
    at: ArrayType = mem.type
    off = _offsets(lw, v["offset"], node, fname)
    shape = shape_of(off)
    mask = _gather_mask(lw, v["mask"], shape, node, fname)
    pad = tile_or_scalar(lw, v["padding_value"], node)
    pad = _fitted(lw, _implicit_view(lw, pad, at, node, fname, "the padding value"), shape,
                  node, fname, "padding value")
    _latency(lw, v["latency"], node, fname)
    return tile_op(lw, node, TileType(at.dtype, shape), "gather", [mem, off, mask, pad],
                   check_bounds=False)


def raw_store(lw: Lowerer, mem: ir.Expr, node: ast.Call) -> ir.Expr:
    """``mem.store_offset(offset, value, mask=)``: ``value`` (broadcast to the offsets' shape,
    never the other way) at ``offset`` where ``mask`` allows."""
    fname = "store_offset"
    v = bind_args(lw, node, fname, ["offset", "value", "mask", "latency"],
                  {"mask": None, "latency": None})
    at: ArrayType = mem.type
    if at.readonly:
        raise lw.error(node, f"{fname}() to a read-only (constant) array")
    off = _offsets(lw, v["offset"], node, fname)
    shape = shape_of(off)
    mask = _gather_mask(lw, v["mask"], shape, node, fname)
    val = tile_or_scalar(lw, v["value"], node)
    if is_tile(val) and not _broadcastable_to(val.type.shape, shape):
        raise _type_error(lw, node, f"{fname}(): the value's shape {val.type.shape} is not "
                                    f"broadcastable to the offsets' shape {shape}",
                          "the value broadcasts to the offsets, not the other way")
    val = broadcast(lw, _implicit_view(lw, val, at, node, fname, "the stored value"), shape,
                    node)
    if not is_tile(val):
        val = tile_op(lw, node, TileType(at.dtype, shape), "full", [val])
    _latency(lw, v["latency"], node, fname)
    return tile_op(lw, node, void, "scatter", [mem, val, off, mask], check_bounds=False)


def raw_atomic(lw: Lowerer, mem: ir.Expr, kind: str, node: ast.Call) -> ir.Expr:
    """``mem.atomic_<kind>_offset(offset, update(s), mask=, memory_order=, memory_scope=)``:
    one atomic per offset where ``mask`` allows; the old values (``expected`` where a
    compare-and-swap is masked off)."""
    fname = f"atomic_{kind}_offset"
    names = ["expected", "desired"] if kind == "cas" else ["update"]
    v = bind_args(lw, node, fname, ["offset"] + names + ["mask", "memory_order",
                                                         "memory_scope"],
                  {"mask": None, "memory_order": None, "memory_scope": None})
    at: ArrayType = mem.type
    if at.readonly:
        raise lw.error(node, f"{fname}() on a read-only (constant) array")
    _check_dtype(lw, at, kind, node, fname, "array")
    off = _offsets(lw, v["offset"], node, fname)
    vals = [tile_or_scalar(lw, v[n], node) for n in names]
    shape = shape_of(off)
    for n, x in zip(names, vals):
        if is_tile(x) and not _broadcastable_to(x.type.shape, shape):
            raise _type_error(lw, node, f"{fname}(): the {n}'s shape {x.type.shape} is not "
                                        f"broadcastable to the offsets' shape {shape}")
    vals = [_update(lw, x, at, kind, node, fname, n.capitalize()) for n, x in zip(names, vals)]
    vals = [ty.convert(x, at.dtype) if not is_tile(x) and isinstance(x, ir.Expr) else x
            for x in vals]
    if v["mask"] is not None and not (isinstance(v["mask"], Py) and v["mask"].obj is None):
        mask = _gather_mask(lw, v["mask"], shape, node, fname)
        # a masked-off element is an offset the atomic skips (it returns 0, or ``expected``)
        off = where(lw, mask, off, ir.Const(int64, lw.loc(node), -1, weak=True), node)
    order, scope = atomic_order_scope(lw, v, node, kind)
    return _atomic_op(lw, node, mem, [off], vals, kind, order, scope)


def describe(t) -> str | None:
    """How messages name a view type (None for other types)."""
    if isinstance(t, (TiledViewType, RawMemoryType)):
        return repr(t)
    return None

