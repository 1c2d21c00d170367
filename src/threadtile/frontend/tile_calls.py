"""Lowering of the calls of ``threadtile.tile`` functions: memory, reductions, the rest.

``lower_call`` is the entry point (from ``calls.lower_call``); the typing rules and the
operators live in ``tiles.py``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import KernelCompileError, TileCodeTypeError
from ..ir import nodes as ir
from ..lang import tile as lt
from ..lang.types import ArrayType, TileType, bool_, int32, int64, void
from . import static, tile_dtypes, tile_more, tile_parts, tile_print, user_reduce
from . import typing as ty
from .array_views import _check_dtype, _update, atomic_order_scope
from .arrays import extent_type
from .tile_gather import INDEXED
from .tile_mma import matmul, mma
from .tiles import (
    MATH_FUNCS,
    array_arg,
    bind_args,
    binop,
    broadcast,
    broadcast_shapes,
    cast,
    compare,
    dtype_of,
    dtype_weak,
    enum_member,
    full_like,
    is_pow2,
    is_tile,
    math,
    need_block,
    no_tf32,
    norm_axes,
    permutation,
    permute,
    reshape,
    scalar_arg,
    shape_of,
    static_bool,
    static_int,
    static_shape,
    tile_op,
    tile_or_scalar,
    transpose,
    unary,
    where,
)
from .tiles import call_method as tiles_call_method
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer

# ---------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------

def _index(lw: Lowerer, v, ndim: int, node, fname: str) -> list[ir.Expr]:
    items = v.items if isinstance(v, Tup) else [v]
    if len(items) != ndim:
        raise lw.error(node, f"{fname}(): the index has {len(items)} entries for a {ndim}-d "
                             "array")
    out = []
    for it in items:
        s = scalar_arg(lw, it, node)
        if not (s.type.is_int or s.type == bool_):
            raise lw.error(node, f"{fname}(): tile indices must be integers, got {s.type}")
        out.append(ty.convert(s, int64))
    return out


def _order(lw: Lowerer, v, ndim: int, node) -> tuple:
    if isinstance(v, Py) and v.obj == "C" or v == "C":
        return tuple(range(ndim))
    if isinstance(v, Py) and v.obj == "F":
        return tuple(reversed(range(ndim)))
    return permutation(lw, v, ndim, node)


# the memory orders cuTile defines for a tile load and a tile store
_VALID_ORDERS = {"load": ("RELAXED", "ACQUIRE", "WEAK"), "store": ("RELAXED", "RELEASE", "WEAK")}


def _memory_order(lw: Lowerer, vals: dict, node, fname: str, allowed: tuple) -> None:
    """``memory_order=``: one cuTile defines for the operation (else its TileTypeError), and
    one threadtile implements (``allowed``)."""
    mo = vals.get("memory_order")
    if mo is None or isinstance(mo, Py) and mo.obj is None:
        return
    order = enum_member(lw, mo, lt.MemoryOrder, node, "memory_order")
    valid = _VALID_ORDERS[fname]
    if order.name not in valid:
        raise lw.error(node, f"Invalid memory order for tile_{fname}. Got {order}, expected one "
                             f"of {', '.join(str(lt.MemoryOrder[n]) for n in valid)}",
                       f"a {fname} has no {order.name.lower()} semantics", cls=TileCodeTypeError)
    if order.name not in allowed:
        raise lw.unsupported(node, f"{fname}(memory_order={order.name})",
                             f"{fname} supports {', '.join(allowed)} here")


def load(lw: Lowerer, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, "load", ["array", "index", "shape", "order", "padding_mode",
                                  "check_bounds", "latency", "allow_tma", "memory_order",
                                  "memory_scope"],
              {"order": "C", "padding_mode": None, "check_bounds": None, "latency": None,
               "allow_tma": None, "memory_order": None, "memory_scope": None})
    arr = array_arg(lw, v["array"], node, "load")
    nd = arr.type.ndim
    idx = _index(lw, v["index"], nd, node, "load")
    shape = static_shape(lw, v["shape"], node)
    scalar = shape == () and nd > 0  # cuTile: the (1, ..., 1) tile at index, as a 0-d tile
    if scalar:
        shape = (1,) * nd
    if len(shape) != nd:
        raise lw.error(node, f"load(): a {len(shape)}-d tile shape for a {nd}-d array",
                       "give one tile dimension per array axis (use 1 for an axis you do not "
                       "tile, then reshape)")
    order = _order(lw, v["order"], nd, node)
    _memory_order(lw, v, node, "load", ("WEAK", "RELAXED"))
    pad = v["padding_mode"]
    padding = None
    if pad is not None and not (isinstance(pad, Py) and pad.obj is None):
        padding = enum_member(lw, pad, lt.PaddingMode, node, "padding_mode").value
        if padding == "undetermined":
            padding = None
    t = tile_op(lw, node, TileType(arr.type.dtype, shape), "load", [arr] + idx,
                shape=shape, order=order, padding=padding)
    return tile_op(lw, node, TileType(arr.type.dtype, ()), "reshape", [t]) if scalar else t


def store(lw: Lowerer, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, "store", ["array", "index", "tile", "order", "check_bounds", "latency",
                                   "allow_tma", "memory_order", "memory_scope"],
              {"order": "C", "check_bounds": None, "latency": None, "allow_tma": None,
               "memory_order": None, "memory_scope": None})
    arr = array_arg(lw, v["array"], node, "store")
    if arr.type.readonly:
        raise lw.error(node, "store() to a read-only (constant) array")
    nd = arr.type.ndim
    idx = _index(lw, v["index"], nd, node, "store")
    order = _order(lw, v["order"], nd, node)
    _memory_order(lw, v, node, "store", ("WEAK", "RELAXED"))
    t = v["tile"]
    if not is_tile(t):
        s = lw.scalar(t, node)
        t = tile_op(lw, node, TileType(arr.type.dtype, (1,) * nd), "full",
                [ty.convert(s, arr.type.dtype)])
    if t.type.ndim != nd:
        if t.type.size == 1:
            t = tile_op(lw, node, TileType(t.type.dtype, (1,) * nd), "reshape", [t])
        else:
            raise lw.error(node, f"store(): a {t.type.ndim}-d tile into a {nd}-d array",
                           "reshape the tile to the array's rank")
    t = cast(lw, t, arr.type.dtype, node)
    return tile_op(lw, node, void, "store", [arr, t] + idx, shape=t.type.shape, order=order)


_ATOMIC_OPS = {"atomic_add": "add", "atomic_max": "max", "atomic_min": "min",
               "atomic_and": "and_", "atomic_or": "or_", "atomic_xor": "xor",
               "atomic_xchg": "exch", "atomic_cas": "cas"}


def atomic(lw: Lowerer, name: str, node: ast.Call) -> ir.Expr:
    op = _ATOMIC_OPS[name]
    vals_names = ["expected", "desired"] if op == "cas" else ["update"]
    v = bind_args(lw, node, name, ["array", "indices"] + vals_names +
              ["check_bounds", "memory_order", "memory_scope"],
              {"check_bounds": None, "memory_order": None, "memory_scope": None})
    arr = array_arg(lw, v["array"], node, name)
    at: ArrayType = arr.type
    if at.space not in ("global", "shared"):
        raise lw.error(node, f"{name}() works on global and shared arrays")
    kind = {"exch": "xchg", "and_": "and", "or_": "or"}.get(op, op)
    _check_dtype(lw, at, kind, node, name, "array")  # cuTile's dtypes for each atomic
    raw = v["indices"]
    items = raw.items if isinstance(raw, Tup) else [raw]
    if len(items) != at.ndim:
        raise lw.error(node, f"{name}(): {len(items)} indices for a {at.ndim}-d array")
    idx = []
    for it in items:
        it = tile_or_scalar(lw, it, node)
        dt = dtype_weak(it)[0]
        if not (dt.is_int or dt == bool_):
            raise lw.error(node, f"{name}(): indices must be integers, got {dt}")
        idx.append(cast(lw, it, int64, node))
    # the values convert to the array's dtype by cuTile's rules: implicitly, and exactly its
    # dtype for the bitwise operations
    upd = [_update(lw, tile_or_scalar(lw, v[n], node), at, kind, node, name, n.capitalize())
           for n in vals_names]
    shape = broadcast_shapes(lw, [shape_of(x) for x in idx + upd], node)
    need_block(lw, node, f"{name}()")
    order, scope = atomic_order_scope(lw, v, node, kind)
    args = [arr] + [broadcast(lw, x, shape, node) for x in idx + upd]
    return tile_op(lw, node, TileType(at.dtype, shape), "atomic", args, op=op,
               order=order.value, scope=scope.value)


def printf(lw: Lowerer, node: ast.Call) -> ir.Expr:
    if not node.args:
        raise lw.error(node, "printf() needs a format string")
    fmt = lw.expr(node.args[0])
    if not (isinstance(fmt, Py) and isinstance(fmt.obj, str)):
        raise lw.error(node, "printf(): the format must be a string literal")
    specs = _format_specs(fmt.obj)
    if specs is None:
        raise lw.error(node, f"printf(): unsupported format {fmt.obj!r}",
                       "use %d %i %u %x %X %o %f %F %e %E %g %G (with flags, width, "
                       "precision)")
    args = [scalar_arg(lw, lw.expr(a), a) for a in node.args[1:]]
    if len(args) != len(specs):
        raise lw.error(node, f"printf(): the format has {len(specs)} conversions for "
                             f"{len(args)} arguments")
    conv = []
    for a, (s, kind) in zip(args, specs):
        if kind == "i" and a.type.is_float:
            raise lw.error(node, f"printf(): %{s[-1]} needs an integer, got {a.type}")
        conv.append(kind)
    return tile_op(lw, node, void, "printf", args, fmt=fmt.obj, kinds=tuple(conv))


def _format_specs(fmt: str):
    """[(spec, 'i' | 'f')] for each conversion of a C format, or None if unsupported."""
    out, k = [], 0
    while k < len(fmt):
        if fmt[k] != "%":
            k += 1
            continue
        j = k + 1
        if j < len(fmt) and fmt[j] == "%":
            k = j + 1
            continue
        while j < len(fmt) and fmt[j] in "-+ #0123456789.lhLzjt":
            j += 1
        if j >= len(fmt) or fmt[j] not in "diuxXofFeEgG":
            return None
        out.append((fmt[k:j + 1], "f" if fmt[j] in "fFeEgG" else "i"))
        k = j + 1
    return out


# ---------------------------------------------------------------------------------------------
# reductions and scans
# ---------------------------------------------------------------------------------------------

def reduce(lw: Lowerer, kind: str, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, kind, ["x", "axis", "keepdims", "rounding_mode", "flush_to_zero",
                                "propagate_nan"],
              {"axis": None, "keepdims": ir.Const(bool_, lw.loc(node), False),
               "rounding_mode": None, "flush_to_zero": None, "propagate_nan": None})
    x = v["x"]
    if not is_tile(x):
        raise lw.error(node, f"{kind}() needs a tile", "use the builtin for numbers")
    no_tf32(lw, x, node, "reduction")
    _flush_to_zero(lw, v["flush_to_zero"], x, node, kind)
    nd = x.type.ndim
    keep = static_bool(lw, v["keepdims"], node, "keepdims")
    t = x.type.dtype
    if kind in ("argmax", "argmin"):
        ax = v["axis"]
        if ax is not None and not (isinstance(ax, Py) and ax.obj is None) and \
                isinstance(ax, Tup):
            raise lw.error(node, f"{kind}() takes one axis or None")
        axes = norm_axes(lw, ax, nd, node)
        out_t = int32
    else:
        axes = norm_axes(lw, v["axis"], nd, node)
        out_t = int32 if t == bool_ else t
        if t == bool_:
            x = cast(lw, x, int32, node)
    if keep:
        shape = tuple(1 if k in axes else d for k, d in enumerate(x.type.shape))
    else:
        shape = tuple(d for k, d in enumerate(x.type.shape) if k not in axes)
    flat = kind in ("argmax", "argmin") and len(axes) == nd and nd > 1
    pn = v["propagate_nan"]
    nan = pn is not None and not (isinstance(pn, Py) and pn.obj is None) and \
        static_bool(lw, pn, node, "propagate_nan")
    return tile_op(lw, node, TileType(out_t, shape), "reduce", [x], kind=kind, axes=axes,
                   flat=flat, nan=nan)


def _ftz_asked(lw: Lowerer, ftz, node) -> bool:
    """Whether a call's ``flush_to_zero`` (None, or a compile-time bool) is True."""
    if ftz is None or (isinstance(ftz, Py) and ftz.obj is None):
        return False
    return static_bool(lw, ftz, node, "flush_to_zero")


def _flush_to_zero(lw: Lowerer, ftz, x, node, kind: str) -> None:
    """``flush_to_zero=True`` (subnormal results become zero) is for float32 tiles; reductions
    and scans keep subnormals (within the results' tolerance); exp2 flushes them."""
    if _ftz_asked(lw, ftz, node) and x.type.dtype.name != "float32":
        raise lw.error(node, f"{kind}(): Flush to zero can only be used for float32 type, "
                             f"but got {x.type.dtype}", cls=TileCodeTypeError)


def scan(lw: Lowerer, kind: str, node: ast.Call) -> ir.Expr:
    v = bind_args(lw, node, kind, ["x", "axis", "reverse", "rounding_mode", "flush_to_zero"],
              {"axis": ir.Const(int64, lw.loc(node), 0, weak=True),
               "reverse": ir.Const(bool_, lw.loc(node), False), "rounding_mode": None,
               "flush_to_zero": None})
    x = v["x"]
    if not is_tile(x):
        raise lw.error(node, f"{kind}() needs a tile")
    no_tf32(lw, x, node, "scan")
    _flush_to_zero(lw, v["flush_to_zero"], x, node, kind)
    if x.type.dtype == bool_:
        x = cast(lw, x, int32, node)
    (axis,) = norm_axes(lw, v["axis"], x.type.ndim, node)
    rev = static_bool(lw, v["reverse"], node, "reverse")
    return tile_op(lw, node, x.type, "scan", [x], kind=kind[3:], axis=axis, reverse=rev)


# ---------------------------------------------------------------------------------------------
# the entry point: calls of threadtile.tile functions
# ---------------------------------------------------------------------------------------------

# cuTile's programmatic-dependent-launch calls -> the intrinsics (ir/ops.py)
GRID_DEPENDENCY = {"grid_dependency_control_wait": "griddepcontrol.wait",
                   "grid_dependency_control_launch_dependents": "griddepcontrol.launch_dependents"}


def lower_call(lw: Lowerer, name: str, node: ast.Call, obj=None):
    fname = name[len("tile."):]
    loc = lw.loc(node)
    if fname == "unsupported":
        raise lw.unsupported(node, f"cuTile's {obj._tile_unsupported}()",
                             "threadtile does not implement it yet (docs/tiles.md lists what "
                             "is supported)")
    if fname in tile_more.NAMES:  # ensure_constant, assert_, divmod, bitwise_*
        return tile_more.lower_call(lw, fname, node)
    if fname in ("static_eval", "static_assert", "static_iter"):
        return static.lower_call(lw, fname, node)
    user_reduce.restrict_call(lw, fname, node)
    if fname == "reduce":
        return user_reduce.lower_reduce(lw, node)
    if fname == "scan":
        return user_reduce.lower_scan(lw, node)
    if fname in ("bid", "num_blocks"):
        (a,) = [lw.expr(x) for x in node.args] or [None]
        if a is None or node.keywords:
            raise lw.error(node, f"{fname}() takes one axis: 0, 1 or 2")
        axis = static_int(lw, a, node, "the axis")
        if axis not in (0, 1, 2):
            raise lw.error(node, f"{fname}() axis must be 0, 1 or 2, got {axis}")
        reg = "blockIdx" if fname == "bid" else "gridDim"
        return ir.Special(int32, loc, f"{reg}.{'xyz'[axis]}")
    if fname == "num_tiles":
        v = bind_args(lw, node, "num_tiles", ["array", "axis", "shape", "order"], {"order": "C"})
        arr = array_arg(lw, v["array"], node, "num_tiles")
        nd = arr.type.ndim
        axis = static_int(lw, v["axis"], node, "the axis") % nd
        shape = static_shape(lw, v["shape"], node) or (1,) * nd  # (): one element a tile
        order = _order(lw, v["order"], nd, node)
        d = ir.ArrayDim(int64, loc, arr, "shape", order[axis])
        s = ir.Const(int64, loc, shape[axis])
        n = ir.BinOp(int64, loc, "//", ir.BinOp(int64, loc, "+", d, ir.Const(
            int64, loc, shape[axis] - 1)), s)
        # an int32 in a cuTile kernel, as its shapes are (arrays.extent_type)
        t = extent_type(lw, arr)
        return n if t == int64 else ir.Cast(t, loc, n)
    if fname == "cdiv":
        a, b = [lw.expr(x) for x in node.args]
        one = ir.Const(int64, loc, 1, weak=True)
        return lw.binop("//", lw.binop("-", lw.binop("+", a, b, node), one, node), b, node)
    if fname == "assume_divisible_by":
        return lw.expr(node.args[0])
    if fname in GRID_DEPENDENCY:
        bind_args(lw, node, fname, [], {})
        return ir.Call(void, loc, GRID_DEPENDENCY[fname], [])
    if fname == "load":
        return load(lw, node)
    if fname == "store":
        return store(lw, node)
    if fname in INDEXED:
        return INDEXED[fname](lw, node)
    if fname in ("full", "zeros", "ones"):
        params = ["shape", "fill_value", "dtype"] if fname == "full" else ["shape", "dtype"]
        v = bind_args(lw, node, fname, params, {})
        t = dtype_of(lw, v["dtype"], node)
        shape = static_shape(lw, v["shape"], node)
        if fname != "full":
            return full_like(lw, shape, 0 if fname == "zeros" else 1, t, node)
        val = ty.convert(scalar_arg(lw, v["fill_value"], node), t)
        return tile_op(lw, node, TileType(t, shape), "full", [val])
    if fname == "arange":
        v = bind_args(lw, node, "arange", ["size", "dtype", "start", "step"],
                  {"start": ir.Const(int64, loc, 0, weak=True),
                   "step": ir.Const(int64, loc, 1, weak=True)})
        try:
            n = static_int(lw, v["size"], node, "arange() size")
        except KernelCompileError as e:
            raise lw.error(node, "Expected an integer constant for the size of arange(), got "
                                 f"{describe_value(v['size'])}", e.hint,
                           cls=TileCodeTypeError) from None
        if not is_pow2(n):
            raise lw.error(node, f"arange({n}): Result tile shape must be power of 2, got ({n},)",
                           cls=TileCodeTypeError)
        t = dtype_of(lw, v["dtype"], node)
        args = [ty.convert(scalar_arg(lw, v[k], node), t) for k in ("start", "step")]
        return tile_op(lw, node, TileType(t, (n,)), "arange", args)
    if fname == "astype":
        v = bind_args(lw, node, "astype", ["x", "dtype", "rounding_mode"], {"rounding_mode": None})
        return tile_dtypes.astype(lw, v["x"], dtype_of(lw, v["dtype"], node),
                                  v["rounding_mode"], node)
    if fname == "astile":
        return tile_dtypes.astile(lw, node)
    if fname in ("bitcast", "pack_to_bytes", "unpack_from_bytes"):
        return tile_dtypes.bytes_call(lw, fname, node)
    if fname == "where":
        v = bind_args(lw, node, "where", ["cond", "x", "y"], {})
        return where(lw, v["cond"], v["x"], v["y"], node)
    binops = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
              "mod": "%", "pow": "**", "maximum": "max", "minimum": "min"}
    cmps = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
            "greater": ">", "greater_equal": ">="}
    if fname in binops or fname in cmps:
        v = bind_args(lw, node, fname, ["x", "y", "rounding_mode", "flush_to_zero",
                                    "propagate_nan"],
                  {"rounding_mode": None, "flush_to_zero": None, "propagate_nan": None})
        x, y = v["x"], v["y"]
        if not (is_tile(x) or is_tile(y)):
            if fname in cmps:
                return lw.compare(cmps[fname], x, y, node)
            if fname in ("maximum", "minimum"):
                x, y = lw.scalar(x, node), lw.scalar(y, node)
                t, w = ty.unify(x.type, ty.is_weak(x), y.type, ty.is_weak(y))
                return ty.mark_weak(ir.Call(t, loc, fname[:3], [ty.convert(x, t),
                                                                 ty.convert(y, t)]), w)
            return lw.binop(binops[fname], x, y, node)
        if fname in cmps:
            return compare(lw, cmps[fname], x, y, node)
        r = binop(lw, binops[fname], x, y, node)
        if fname == "truediv" and _approx(lw, v["rounding_mode"], node, "truediv") and \
                r.type.dtype.name == "float32":
            r.attrs["op"] = "div_approx"  # the hardware's fast division (div.approx.f32)
        return r
    if fname == "negative":
        (x,) = [lw.expr(a) for a in node.args]
        return unary(lw, "-", x, node) if is_tile(x) else lw.binop(
            "-", ir.Const(int64, loc, 0, weak=True), x, node)
    if fname in MATH_FUNCS or fname in ("abs", "isnan"):
        v = bind_args(lw, node, fname, ["x", "rounding_mode", "flush_to_zero"],
                  {"rounding_mode": None, "flush_to_zero": None})
        x = v["x"]
        approx = fname == "exp" and _approx(lw, v["rounding_mode"], node, "exp")
        if not is_tile(x):
            return lw.scalar_math(fname, "np" if fname != "abs" else "builtin", node)
        if fname == "exp2" and x.type.dtype.name == "float32" and \
                _ftz_asked(lw, v["flush_to_zero"], node):
            fname = "exp2_ftz"  # the hardware's ex2.approx.ftz: subnormal results are zero
        return math(lw, fname, x, node, approx=approx)
    if fname in ("sum", "max", "min", "prod", "argmax", "argmin"):
        return reduce(lw, fname, node)
    if fname in ("cumsum", "cumprod"):
        return scan(lw, fname, node)
    if fname in ("extract", "insert", "cat"):
        return tile_parts.call(lw, fname, node)
    if fname == "reshape":
        v = bind_args(lw, node, "reshape", ["x", "shape"], {})
        x = tile_or_scalar(lw, v["x"], node)
        if not is_tile(x):  # a number is a 0-d tile (cuTile's scalars are)
            x = ty.mark_weak(tile_op(lw, node, TileType(x.type, ()), "full", [x]),
                             ty.is_weak(x))
        return reshape(lw, x, v["shape"], node)
    if fname == "permute":
        v = bind_args(lw, node, "permute", ["x", "axes"], {})
        x = _need_tile(lw, v["x"], node, fname)
        return permute(lw, x, permutation(lw, v["axes"], x.type.ndim, node), node)
    if fname == "transpose":
        v = bind_args(lw, node, "transpose", ["x", "axis0", "axis1"],
                      {"axis0": None, "axis1": None})
        return transpose(lw, _need_tile(lw, v["x"], node, fname), v["axis0"], v["axis1"], node)
    if fname == "expand_dims":
        v = bind_args(lw, node, "expand_dims", ["x", "axis"], {})
        x = _need_tile(lw, v["x"], node, fname)
        nd = x.type.ndim + 1
        axis = static_int(lw, v["axis"], node, "the axis")
        if not -nd <= axis < nd:
            raise lw.error(node, f"expand_dims(): axis {axis} out of range")
        shape = list(x.type.shape)
        shape.insert(axis % nd, 1)
        return tile_op(lw, node, TileType(x.type.dtype, tuple(shape)), "reshape", [x])
    if fname == "broadcast_to":
        v = bind_args(lw, node, "broadcast_to", ["x", "shape"], {})
        x = tile_or_scalar(lw, v["x"], node)
        shape = static_shape(lw, v["shape"], node)
        if broadcast_shapes(lw, [shape_of(x), shape], node) != shape:
            raise lw.error(node, f"cannot broadcast {shape_of(x)} to {shape}")
        if not is_tile(x):
            return tile_op(lw, node, TileType(x.type, shape), "full", [ty.convert(x, x.type)])
        return broadcast(lw, x, shape, node)
    if fname == "mma":
        v = bind_args(lw, node, "mma", ["x", "y", "acc", "use_fast_acc"], {"use_fast_acc": None})
        fast = v["use_fast_acc"]
        if fast is not None and not (isinstance(fast, Py) and fast.obj is None) and \
                static_bool(lw, fast, node, "use_fast_acc") and is_tile(v["x"]) and \
                not v["x"].type.dtype.name.startswith("float8"):
            # (an 8-bit mma's faster, less exact accumulation: here it is always exact)
            raise lw.error(node, "mma(): use_fast_acc is only supported for fp8 inputs "
                                 f"(float8_e4m3fn, float8_e5m2), got {v['x'].type.dtype}",
                           cls=TileCodeTypeError)
        return mma(lw, v["x"], v["y"], v["acc"], node)
    if fname == "matmul":
        v = bind_args(lw, node, "matmul", ["x", "y"], {})
        return matmul(lw, v["x"], v["y"], node)
    if fname in _ATOMIC_OPS:
        return atomic(lw, fname, node)
    if fname == "printf":
        return tile_print.printf(lw, node)
    if fname == "print":
        return tile_print.lower_print(lw, node)
    raise lw.error(node, f"threadtile.tile.{fname}() is not supported yet")


def call_method(lw: Lowerer, m, node: ast.Call):
    """``x.method(...)`` of a tile (``tiles.TileMethod``)."""
    if m.name in ("extract", "insert"):
        return tile_parts.call(lw, m.name, node, m.base)
    if m.name == "astype":
        v = bind_args(lw, node, "astype", ["dtype", "rounding_mode"], {"rounding_mode": None})
        return tile_dtypes.astype(lw, m.base, dtype_of(lw, v["dtype"], node),
                                  v["rounding_mode"], node)
    return tiles_call_method(lw, m, node)


def _need_tile(lw: Lowerer, x, node, fname: str) -> ir.Expr:
    if not is_tile(x):
        raise lw.error(node, f"{fname}() needs a tile, got {describe_value(x)}")
    return x


def _approx(lw: Lowerer, mode, node, fname: str) -> bool:
    """Whether ``rounding_mode`` asks for the hardware's approximation. ``exp``: None or
    ``FULL`` (within 2 ulp, the default) or ``APPROX`` (the fast exponential: a few ulp near
    zero, growing with |x|, results below 2**-126 flushed to zero). ``truediv``: ``APPROX``
    (float32 tiles: the fast division, within 2 ulp for divisors below 2**126; others
    divide as IEEE), any other mode the IEEE division."""
    if mode is None:
        return False
    m = enum_member(lw, mode, lt.RoundingMode, node, "rounding_mode")
    if fname == "exp" and m not in (lt.RoundingMode.FULL, lt.RoundingMode.APPROX):
        raise lw.error(node, f"exp(): rounding_mode={m} is not supported",
                       "use RoundingMode.FULL (the default) or RoundingMode.APPROX")
    return m is lt.RoundingMode.APPROX
