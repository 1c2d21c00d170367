"""Tuples in kernels.

While lowering, a tuple is a :class:`~.values.Tup`: a Python list of lowered values (numbers,
arrays, compile-time objects, tuples), so unpacking, constant indexing, ``len`` and iteration
cost nothing at run time. A tuple becomes one IR value (a ``TupleType``) only where it crosses
a function boundary: a tuple argument of a kernel, a tuple passed to or returned by a device
function, an intrinsic that returns two values (``frexp``, ``match_all_sync``). ``make`` builds
that value (``ir.MakeTuple``); ``explode`` takes one apart again into a ``Tup`` of
``ir.TupleItem`` reads, binding a call to a temporary first so that it runs once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import ArrayType, Scalar, TileType, TupleType, Type, bool_, int64
from . import raising
from . import typing as ty
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


def is_tuple(v) -> bool:
    """Whether ``v`` is an IR value of a tuple type."""
    return isinstance(v, ir.Expr) and isinstance(v.type, TupleType)


def explode(lw: Lowerer, e: ir.Expr, weak: bool = False) -> Tup:
    """The tuple-valued ``e`` as a ``Tup`` of reads of its items (nested tuples too); with
    ``weak``, its numbers are loosely typed (a tile kernel's tuple argument, as its scalar
    arguments are)."""
    if not isinstance(e, (ir.Var, ir.TupleItem)):
        e = lw.hoist(e, "tup")
    t: TupleType = e.type
    items: list = []
    for k, it in enumerate(t.items):
        x = ir.TupleItem(it, e.loc, e, k)
        if isinstance(it, TupleType):
            items.append(explode(lw, x, weak))
        else:
            items.append(ty.mark_weak(x, True) if weak and isinstance(it, Scalar) else x)
    return Tup(items, t.names)


def with_constants(lw: Lowerer, v: Tup, dims: dict, node) -> Tup:
    """A tuple parameter's items, those its annotation marks ``Constant`` (``dims``:
    ``("item", path) -> value``, the specialization's) as compile-time numbers."""
    items = {k: c for (a, k), c in dims.items() if a == "item"}
    if not items:
        return v

    def walk(t: Tup, path: tuple) -> Tup:
        out = []
        for k, x in enumerate(t.items):
            p = path + (k,)
            if p in items:
                out.append(lw.py_to_value(items[p], node))
            else:
                out.append(walk(x, p) if isinstance(x, Tup) else x)
        return Tup(out, t.names, t.cls)

    return walk(v, ())


def make(lw: Lowerer, v: Tup, node) -> ir.MakeTuple:
    """``v`` as one tuple value. Python literals take their own types (``1`` int64, ``0.5``
    float64), as they do when a kernel receives them as arguments."""
    items: list[ir.Expr] = []
    for it in v.items:
        if isinstance(it, Tup):
            items.append(make(lw, it, node))
        elif isinstance(it, ir.Expr) and isinstance(it.type, (ArrayType, TupleType, TileType)):
            items.append(it)  # a tile too: a helper returns tiles as cuTile's inlined ones do
        elif isinstance(it, Py) and not isinstance(it.obj, (bool, int, float)):
            raise lw.error(node, f"a tuple holding {describe_value(it)} cannot be passed or "
                                 "returned", "tuples that cross a function hold numbers, "
                                 "arrays and tuples of them")
        else:
            x = lw.scalar(it, node)
            items.append(ty.mark_weak(x, False) if not isinstance(x, ir.Const) else
                         ir.Const(x.type, x.loc, x.value))
    t = TupleType(tuple(i.type for i in items), tuple(v.names))
    return ir.MakeTuple(t, lw.loc(node), items)


def static(v: Tup) -> bool:
    """Whether ``v`` holds compile-time Python objects (functions, dtypes...) besides numbers:
    such a tuple is passed to a device function as a compile-time value."""
    return any(static(x) if isinstance(x, Tup) else isinstance(x, Py) for x in v.items)


def py_value(v: Tup):
    """The Python tuple a static ``Tup`` stands for (numbers as their values)."""
    out = []
    for x in v.items:
        if isinstance(x, Tup):
            out.append(py_value(x))
        elif isinstance(x, Py):
            out.append(x.obj)
        elif isinstance(x, ir.Const):
            out.append(x.value)
        else:
            return None
    return tuple(out)


def unify(a: Type, aw: bool, b: Type, bw: bool) -> tuple[Type, bool] | None:
    """The common type of two values (numbers by the promotion rules, tuples item by item,
    arrays only when equal), or None where there is none."""
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return ty.unify(a, aw, b, bw)
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        if len(a.items) != len(b.items):
            return None
        items = []
        for x, y in zip(a.items, b.items):
            u = unify(x, False, y, False)
            if u is None:
                return None
            items.append(u[0])
        return TupleType(tuple(items), a.names if a.names == b.names else ()), False
    return (a, aw and bw) if a == b else None


def convert(e: ir.Expr, t: Type) -> ir.Expr:
    """``e`` as a value of type ``t`` (what ``unify`` gave for it)."""
    if e.type == t:
        return e
    if isinstance(t, Scalar):
        return ty.convert(e, t)
    if isinstance(t, TupleType):
        if isinstance(e, ir.MakeTuple):
            items = [convert(x, it) for x, it in zip(e.items, t.items)]
        else:  # a variable or parameter: its items, each converted
            items = [convert(ir.TupleItem(it, e.loc, e, k), want) for k, (it, want) in
                     enumerate(zip(e.type.items, t.items))]
        return ir.MakeTuple(t, e.loc, items)
    return e


def index(lw: Lowerer, v: Tup, k, node):
    """``t[k]``: a constant index (negative ones count from the end, as in Python) or a slice
    picks items at compile time; a variable index into a tuple of numbers selects one."""
    n = len(v.items)
    if v.cls is not None and not isinstance(k, slice):  # a frozen dataclass: __getitem__
        from .dataclassdunders import getitem
        return getitem(lw, v, k, node)
    if v.cls is not None:
        raise lw.error(node, f"'{v.cls.__qualname__}' object cannot be sliced",
                       cls=TileCodeTypeError)
    if isinstance(k, ir.Const) and isinstance(k.value, int) and not isinstance(k.value, bool):
        i = k.value + n if k.value < 0 else k.value
        if not 0 <= i < n:
            raise lw.error(node, f"Index {k.value} is out of range for a tuple of length {n}",
                           cls=TileCodeTypeError)
        return v.items[i]
    if isinstance(k, slice):
        return Tup(v.items[k], v.names[k] if v.names else ())
    if isinstance(k, ir.Expr) and isinstance(k.type, TileType) and not k.type.shape:
        k = lw.scalar(k, node)  # a 0-d tile: its number
    if isinstance(k, ir.Const) and isinstance(k.value, bool):  # t[True] is t[1], as in Python
        return index(lw, v, ir.Const(int64, k.loc, int(k.value)), node)
    if not (isinstance(k, ir.Expr) and isinstance(k.type, Scalar) and k.type.is_int):
        raise lw.error(node, "Tuple indices must be integers or slices, not "
                             f"{describe_value(k)}", cls=TileCodeTypeError)
    if n and all(isinstance(x, ir.Expr) and isinstance(x.type, ArrayType) for x in v.items):
        return _pick_array(lw, v, k, node)  # cuTile's list of arrays: `inp_list[peer]`
    if lw.spec.threads is not None:  # cuTile: a tile kernel indexes tuples by constants
        raise lw.error(node, "Tuple indices must be constant: the index is known only when "
                             "the kernel runs", "index with a literal, a Constant parameter or "
                             "a ct.static_iter() loop variable", cls=TileCodeTypeError)
    vals = [lw.scalar(x, node) if not isinstance(x, Tup) else None for x in v.items]
    if not vals or any(x is None or not isinstance(x.type, Scalar) for x in vals):
        raise lw.error(node, "a tuple of arrays or tuples can only be indexed by constants",
                       "index it with a literal, or unpack it")
    t, w = vals[0].type, ty.is_weak(vals[0])
    for x in vals[1:]:
        t, w = ty.unify(t, w, x.type, ty.is_weak(x))
    loc = lw.loc(node)
    k = _checked_index(lw, k, n, node)
    res = ty.convert(vals[-1], t)  # past the end (lazily lowered, unchecked): the last item
    for i in range(n - 2, -1, -1):
        cond = ir.Compare(bool_, loc, "==", k, ir.Const(k.type, loc, i))
        res = ir.Select(t, loc, cond, ty.convert(vals[i], t), res)
    return ty.mark_weak(res, w)


def _pick_array(lw: Lowerer, v: Tup, k: ir.Expr, node) -> ir.Var:
    """``arrays[k]`` with ``k`` known only when the kernel runs (cuTile's list of arrays,
    AllGatherMatmul's ``inp_list[peer]``; numba's homogeneous tuple of arrays): a new array
    variable bound to item ``k`` by a chain of ifs before the statement. The arrays must share
    dtype, rank and memory space; where their layouts differ the variable is strided. An
    index out of range is Python's IndexError (the simulator raises it; on a GPU the thread
    stops)."""
    items = v.items
    t0 = items[0].type
    for x in items[1:]:
        if (x.type.dtype, x.type.ndim, x.type.space) != (t0.dtype, t0.ndim, t0.space):
            raise lw.error(node, "the arrays of a list or tuple indexed by a value known only "
                                 f"when the kernel runs must share dtype and rank: {t0} and "
                                 f"{x.type}", "index it with a constant, or pass arrays of "
                                 "one dtype and rank", cls=TileCodeTypeError)
    if lw._lazy:
        raise lw.error(node, "an array picked from a list by a runtime index inside `and`/`or`, "
                             "a conditional expression or a loop condition",
                       "assign it to a variable first: x = arrays[i]")
    layout = "C" if all(x.type.layout == "C" for x in items) else "A"
    t = ArrayType(t0.dtype, t0.ndim, layout, t0.space,
                  any(x.type.readonly for x in items))
    loc = lw.loc(node)
    picks = [x if x.type == t else _strided(x, t, loc) for x in items]
    k = _checked_index(lw, k, len(items), node)
    var = lw.hoist(picks[-1], "item")
    for i, x in enumerate(picks[:-1]):
        cond = ir.Compare(bool_, loc, "==", k, ir.Const(k.type, loc, i))
        lw.pre.append(ir.If(loc, cond, [ir.Assign(loc, var.name, x)]))
    return var


def _strided(x: ir.Expr, t: ArrayType, loc) -> ir.Expr:
    """A C-contiguous array as a strided one (the whole of it: a full slice)."""
    one = ir.Const(int64, loc, 1)
    parts = [(ir.Const(int64, loc, 0), ir.ArrayDim(int64, loc, x, "shape", d), one)
             for d in range(t.ndim)]
    return ir.Slice(t, loc, x, parts)


def _checked_index(lw: Lowerer, k: ir.Expr, n: int, node) -> ir.Expr:
    """A variable index into a tuple of ``n`` items, as Python takes it: a negative one counts
    from the end, and one out of range raises ``IndexError: tuple index out of range`` (the
    simulator raises it; on a GPU the thread stops). Inside ``and``/``or`` or a conditional
    expression, where no statement can go first, negative indices still count from the end
    but the range is not checked."""
    loc = lw.loc(node)
    if not lw._lazy and not isinstance(k, (ir.Var, ir.Const)):
        k = lw.hoist(k, "tidx")
    if k.type.kind == "i":
        neg = ir.Compare(bool_, loc, "<", k, ir.Const(k.type, loc, 0))
        k = ir.Select(k.type, loc, neg, ir.BinOp(k.type, loc, "+", k, ir.Const(k.type, loc, n)),
                      k)
    if not lw._lazy:
        k = lw.hoist(k, "tidx")
        bad = ir.Compare(bool_, loc, ">=", k, ir.Const(k.type, loc, n))
        if k.type.kind == "i":
            bad = ir.Logical(bool_, loc, "or", ir.Compare(bool_, loc, "<", k,
                                                          ir.Const(k.type, loc, 0)), bad)
        lw.pre.append(ir.If(loc, bad, [raising.raise_stmt(lw, node, IndexError,
                                                          ("tuple index out of range",))], []))
    return k


def select(lw: Lowerer, cond: ir.Expr, a: Tup, b: Tup, node) -> Tup:
    """``a if cond else b`` for two tuples of one shape: item by item, on one condition."""
    if len(a.items) != len(b.items):
        raise lw.error(node, f"a conditional expression between tuples of {len(a.items)} and "
                             f"{len(b.items)} items")
    if isinstance(cond, ir.Const):
        return a if cond.value else b
    if not isinstance(cond, ir.Var) and any(isinstance(x, (ir.CallFunc, ir.Call))
                                            for x in ir.walk_expr(cond)):
        cond = lw.hoist(cond, "c")  # evaluated once, not once per item
    items = []
    for x, y in zip(a.items, b.items):
        if isinstance(x, Tup) and isinstance(y, Tup):
            items.append(select(lw, cond, x, y, node))
            continue
        x, y = lw.scalar(x, node), lw.scalar(y, node)
        t, w = ty.unify(x.type, ty.is_weak(x), y.type, ty.is_weak(y))
        items.append(ty.mark_weak(ir.Select(t, lw.loc(node), cond, ty.convert(x, t),
                                            ty.convert(y, t)), w))
    return Tup(items, a.names if a.names == b.names else ())
