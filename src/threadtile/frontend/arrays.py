"""Arrays in kernels: their attributes, indexing, and the views slicing makes.

An index is an int64 per axis; a slice gives an ``ir.Slice`` view whose layout says whether it
is still C-contiguous (what lets the CUDA backend index it without strides).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.records import RecordType
from ..lang.types import ArrayType, Scalar, TileType, bool_, int32, int64, scalar_of
from . import array_views, dataclassdunders, records
from . import typing as ty
from .array_views import static_of
from .values import Py, ScalarMethod, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


def extent_type(lw: Lowerer, arr: ir.Expr) -> Scalar:
    """The integer type of an array's extents and strides in kernel code: int32 in a cuTile
    kernel, except for a parameter annotated ``ct.IndexedWithInt64`` (or a list of them);
    numba's int64 elsewhere."""
    root = arr.value if isinstance(arr, ir.TupleItem) else arr
    wide = isinstance(root, ir.Var) and root.name in lw.wide_arrays
    return int32 if getattr(lw.spec, "tile_kernel", False) and not wide else int64


def _dim(lw: Lowerer, arr: ir.Expr, attr: str, k: int, loc) -> ir.Expr:
    """``arr.shape[k]`` or ``arr.strides[k]``: a constant where the parameter's annotation
    makes it static (``ct.ArrayAnnotation(static_shape_dims=...)``). An int32 in a cuTile
    kernel (``@ct.kernel``: cuTile's ``Array.shape`` and ``Array.strides`` are int32, unless
    the parameter is annotated ``ct.IndexedWithInt64``), numba's int64 elsewhere."""
    t = extent_type(lw, arr)
    d = static_of(lw, arr)
    if d and (v := d.get((attr, k))) is not None:
        return ir.Const(t, loc, v, weak=True)
    dim = ir.ArrayDim(int64, loc, arr, attr, k)
    return dim if t == int64 else ir.Cast(t, loc, dim)


def array_attr(lw: Lowerer, arr: ir.Expr, attr: str, node):
    at: ArrayType = arr.type
    loc = lw.loc(node)
    view = array_views.attr(lw, arr, attr, node)  # cuTile's slice, tiled_view, raw memory
    if view is not None:
        return view
    if attr == "shape":
        return Tup([_dim(lw, arr, "shape", k, loc) for k in range(at.ndim)])
    if attr == "strides" and lw.spec.threads is not None:
        # cuTile's Array.strides, in a kernel with tile code: in elements (numba's are in bytes)
        return Tup([_dim(lw, arr, "strides", k, loc) for k in range(at.ndim)])
    if attr == "ndim":
        return ir.Const(int64, loc, at.ndim, weak=True)
    if attr == "size":
        size: ir.Expr = ir.ArrayDim(int64, loc, arr, "shape", 0)
        for k in range(1, at.ndim):
            size = ir.BinOp(int64, loc, "*", size, ir.ArrayDim(int64, loc, arr, "shape", k))
        return size
    if attr == "dtype":
        return Py(at.dtype)
    if attr in ("copy", "reshape", "view"):  # called in calls._scalar_method
        return Py(ScalarMethod(arr, attr))
    if isinstance(at.dtype, RecordType):  # r.x: a field (or an error listing the fields)
        return records.field_value(lw, arr, attr, node)
    raise lw.unsupported(node, f"array attribute '{attr}'",
                         "arrays in kernels have .shape, .size, .ndim, .dtype, .copy() and "
                         ".reshape()")


def view_as(lw: Lowerer, arr: ir.Expr, node: ast.Call) -> ir.ViewAs:
    """``arr.view(dtype)``: the bytes of a C-contiguous array as another dtype's elements."""
    at: ArrayType = arr.type
    if node.keywords or len(node.args) != 1:
        raise lw.error(node, "view() takes one dtype")
    v = lw.expr(node.args[0])
    dt = scalar_of(v.obj) if isinstance(v, Py) else None
    if dt is None or isinstance(at.dtype, RecordType):
        raise lw.error(node, "view() takes a number dtype (np.int32, threadtile.float32...) of "
                             "an array of numbers")
    if at.layout != "C" or at.ndim == 0:
        raise lw.error(node, "view() of an array that may not be C-contiguous",
                       "numba views contiguous arrays only")
    a, b = at.dtype.itemsize, dt.itemsize
    if b > a and b % a or a > b and a % b:
        raise lw.error(node, f"view({dt}) of {at.dtype} elements: the sizes ({a} and {b} "
                             "bytes) do not divide")
    return ir.ViewAs(ArrayType(dt, at.ndim, "C", at.space, at.readonly), lw.loc(node), arr)


def reshape(lw: Lowerer, arr: ir.Expr, node: ast.Call) -> ir.Reshape:
    """``arr.reshape(shape)``, ``arr.reshape(n, m)``: a C-contiguous view of another shape."""
    at: ArrayType = arr.type
    if node.keywords:
        raise lw.error(node, "reshape() takes the shape by position")
    vals = [lw.expr(a) for a in node.args]
    if len(vals) == 1 and isinstance(vals[0], Tup):
        vals = list(vals[0].items)
    if not vals or any(isinstance(v, Tup) for v in vals):
        raise lw.error(node, "reshape() takes a shape: integers, or one tuple of them")
    dims = []
    for v, a in zip(vals, node.args if len(node.args) == len(vals) else [node] * len(vals)):
        v = lw.scalar(v, a)
        if not (v.type.is_int or v.type == bool_):
            raise lw.error(a, f"reshape()'s shape must be integers, got {v.type}")
        dims.append(ty.convert(v, int64))
    if at.layout != "C":
        raise lw.error(node, "reshape() of an array that may not be C-contiguous",
                       "numba reshapes contiguous arrays only; index the axes instead")
    if sum(isinstance(d, ir.Const) and d.value == -1 for d in dims) > 1:
        raise lw.error(node, "reshape() can only infer one dimension (one -1)")
    return ir.Reshape(ArrayType(at.dtype, len(dims), "C", at.space, at.readonly), lw.loc(node),
                      arr, dims)


def assign_subscript(lw: Lowerer, target: ast.Subscript, value) -> list[ir.Stmt]:
    """``a[i] = value``: an array's element, or a frozen dataclass's ``__setitem__``."""
    base = lw.expr(target.value)
    if dataclassdunders.is_instance(base):
        return dataclassdunders.setitem(lw, base, target, value)
    if isinstance(base, ir.Expr) and isinstance(base.type, TileType):  # cuTile's words
        raise lw.error(target, "Tiles are immutable: item assignment is not supported",
                       "make a new tile: ct.where(ct.arange(n) == i, v, t)",
                       cls=TileCodeTypeError)
    arr, idx = subscript_parts(lw, target, base, store=True)
    return lw.store(arr, idx, value, target)


def _no_tile_kernel_subscript(lw: Lowerer, arr: ir.Expr, node, store: bool) -> None:
    """A tile kernel moves a global array's data as tiles (cuTile's rule); its thread code
    indexes shared and local arrays only."""
    if not getattr(lw.spec, "tile_kernel", False) or arr.type.space != "global":
        return
    if store:
        raise lw.error(node, "Arrays do not support item assignment. Use store() to write a "
                             "tile", "ct.store(x, index=(i,), tile=t)", cls=TileCodeTypeError)
    raise lw.error(node, "Arrays are not directly subscriptable. Use load() to read a tile",
                   "ct.load(x, index=(i,), shape=()) reads one element as a 0-d tile",
                   cls=TileCodeTypeError)


def subscript_parts(lw: Lowerer, node: ast.Subscript, base=None, store: bool = False):
    arr = base if base is not None else lw.expr(node.value)
    if isinstance(arr, Tup) and arr.cls is not None:  # a frozen dataclass instance
        raise lw.error(node, f"'{arr.cls.__qualname__}' object does not support item "
                             "assignment", "a frozen dataclass is replaced, not changed: "
                             "dataclasses.replace(d, field=...)", cls=TileCodeTypeError)
    if isinstance(arr, Tup):  # `t[0] = 7` (reading t[0] is lower.py's visit_Subscript)
        raise lw.error(node, "Tuples are immutable: item assignment is not supported",
                       "build a new tuple: t = (7,) + t[1:]", cls=TileCodeTypeError)
    if not (isinstance(arr, ir.Expr) and isinstance(arr.type, ArrayType)):
        raise lw.unsupported(node.value, f"indexing {describe_value(arr)}")
    _no_tile_kernel_subscript(lw, arr, node, store)
    sl = node.slice
    key = records.field_key(node)
    if key is not None and isinstance(arr.type.dtype, RecordType):  # r['x']
        return records.field_view(lw, arr, key, node), []
    if isinstance(arr.type.dtype, RecordType) and arr.type.ndim == 0:  # r[0]: the first field
        k = lw.expr(sl)
        if isinstance(k, ir.Const) and isinstance(k.value, int):
            names = arr.type.dtype.numpy.names
            if not -len(names) <= k.value < len(names):
                raise lw.error(node, f"field {k.value} of a record of {len(names)} fields")
            return records.field_view(lw, arr, names[k.value], node), []
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    idx = []
    for p in parts:
        if isinstance(p, ast.Slice):
            idx.append(p)
        else:
            v = lw.expr(p)
            idx.extend(v.items if isinstance(v, Tup) else [v])
    return arr, idx


def indices(lw: Lowerer, arr: ir.Expr, idx: list, node) -> list[ir.Expr]:
    out = []
    for i in idx:
        if isinstance(i, ast.Slice):
            raise lw.unsupported(node, "slices in an assignment target")
        v = lw.scalar(i, node)
        if not (v.type.is_int or v.type == bool_):
            raise lw.error(node, f"array index must be an integer, got {v.type}",
                           "convert with int(...)")
        if isinstance(v, ir.Const) and v.value < 0 and arr.type.space != "global":
            raise lw.error(node, f"negative index {v.value}",
                           "indices are not wrapped on a GPU; write n - 1")
        out.append(ty.convert(v, int64))
    return out


def index(lw: Lowerer, arr: ir.Expr, idx: list, node):
    at: ArrayType = arr.type
    records.refuse_text(lw, arr, node)
    if len(idx) > at.ndim:
        raise lw.error(node, f"too many indices for a {at.ndim}-d array")
    if all(not isinstance(i, ast.Slice) for i in idx) and len(idx) == at.ndim:
        if isinstance(at.dtype, RecordType):
            return records.element(lw, arr, indices(lw, arr, idx, node), node)
        return ir.Load(at.dtype, lw.loc(node), arr, indices(lw, arr, idx, node))
    return slice_view(lw, arr, idx, node)


def slice_view(lw: Lowerer, arr: ir.Expr, idx: list, node):
    at: ArrayType = arr.type
    loc = lw.loc(node)
    parts: list = []
    contiguous = at.layout == "C"
    kept = 0
    for axis in range(at.ndim):
        i = idx[axis] if axis < len(idx) else ast.Slice()
        if not isinstance(i, ast.Slice):
            parts.append(indices(lw, arr, [i], node)[0])
            continue
        kept += 1
        step = slice_bound(lw, i.step, 1, node)
        if not (isinstance(step, ir.Const) and step.value > 0):
            raise lw.error(i, "slice steps must be positive constants")
        if step.value != 1 or (kept > 1 or axis < at.ndim - 1) and (
                i.lower is not None or i.upper is not None):
            contiguous = contiguous and step.value == 1 and axis == at.ndim - 1 and kept == 1
        start = slice_bound(lw, i.lower, 0, node)
        stop = slice_bound(lw, i.upper, None, node) if i.upper is not None else \
            ir.ArrayDim(int64, loc, arr, "shape", axis)
        parts.append((start, stop, step))
    nd = sum(1 for p in parts if isinstance(p, tuple))
    if nd == 0:
        raise lw.error(node, "indexing every axis with slices removed gives a scalar")
    # a view stays C-contiguous when only leading axes are indexed and the rest are whole,
    # or when a 1-d contiguous array is cut with step 1 (sh[:n])
    leading_ints = all(not isinstance(p, tuple) for p in parts[:len(parts) - nd])
    whole = all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and
                i.step is None for i in idx if isinstance(i, ast.Slice))
    c = at.layout == "C" and leading_ints and (whole or (nd == 1 and parts[-1][2].value == 1))
    return ir.Slice(ArrayType(at.dtype, nd, "C" if c else "A", at.space, at.readonly), loc,
                    arr, parts)


def slice_bound(lw: Lowerer, node, default, where):
    if node is None:
        return ir.Const(int64, lw.loc(where), default, weak=True)
    v = lw.scalar(lw.expr(node), node)
    if not v.type.is_int:
        raise lw.error(node, "slice bounds must be integers")
    return ty.convert(v, int64)

