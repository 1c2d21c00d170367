"""``for`` loops: over ``range``, and over what numba kernels iterate besides.

``for i in range(...)`` is one ``ir.For``. Every other loop counts a hidden index ``k`` from 0
to its length and binds the target to the item at ``k`` first thing in the body:

- an array: its items along the first axis (``a[k]``: numbers for a 1-d array, views else);
- ``range(...)`` inside ``zip``/``enumerate``/``reversed``: ``start + k * step``;
- ``enumerate(seq, start=0)``: ``(start + k, item)``; ``zip(a, b, ...)``: the items, as long
  as the shortest; ``reversed(seq)``: the item at ``length - 1 - k``;
- a tuple of numbers: the item at ``k`` (a selection); a tuple holding arrays or tuples is
  unrolled, its body lowered once per item.

What the loop reads is evaluated once, before it (Python evaluates the iterable once): bounds
that are not constants and arrays that are not variables are bound to temporaries.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import ArrayType, Scalar, TupleType, bool_, int64
from . import flow, static, tuples, user_reduce, versions
from . import typing as ty
from .tile_print import is_tile_kernel
from .values import Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


class _Seq:
    """What a loop iterates: ``length`` (int64) and ``item(k)``, the value at index ``k``."""

    def __init__(self, length: ir.Expr, item: Callable[[ir.Expr], object]):
        self.length = length
        self.item = item


def lower_for(lw: Lowerer, node: ast.For):
    if node.orelse:
        raise lw.unsupported(node, "for ... else", "use a flag variable")
    # a value assigned in the body is there from the second iteration on, and after the loop
    # when it ran (Python raises only when the loop never ran); in a tile kernel's body only
    # from its assignment there on (flow.loop_body)
    bound = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    with flow.loop_body(lw, flow.assigned_in([node]), bound):
        return _lower_for(lw, node)


def _lower_for(lw: Lowerer, node: ast.For):
    it = node.iter
    if static.is_static_iter(lw, it):  # ct.static_iter(...): unrolled at compile time
        return static.lower_for(lw, node)
    if _called(lw, it, builtins.range):
        user_reduce.restrict(lw, node, "loop")
        if not isinstance(node.target, ast.Name):
            raise lw.error(node.target, "range() gives numbers, which cannot be unpacked")
        return _range_loop(lw, node, it)
    seq = _sequence(lw, it)
    if isinstance(seq, list):  # a tuple to unroll
        return _unrolled(lw, node, seq)
    user_reduce.restrict(lw, node, "loop")
    loc = lw.loc(node)
    k = lw.spec.fresh("k")
    lw.observe(k, int64, False, node)
    lw.defined.add(k)
    lw.loop_depth += 1
    with versions.loop(lw, node, not flow.terminates(node.body)):
        saved, lw.pre = lw.pre, []
        bind = lw.assign(node.target, seq.item(ir.Var(int64, loc, k)), node)
        bind, lw.pre = lw.pre + bind, saved
        body = bind + lw.lower_body(node.body)
    lw.loop_depth -= 1
    zero, one = ir.Const(int64, loc, 0), ir.Const(int64, loc, 1)
    return ir.For(loc, k, zero, ty.convert(seq.length, int64), one, body)


def _called(lw: Lowerer, node: ast.expr, fn) -> bool:
    return isinstance(node, ast.Call) and lw.is_builtin(node.func, fn)


def _range_arg(lw: Lowerer, node: ast.expr) -> ir.Expr:
    v = lw.expr(node)
    if isinstance(v, ir.Expr) and isinstance(v.type, ArrayType):  # cuTile's words
        raise lw.error(node, f"range(): Expected a scalar, got {describe_value(v)}",
                       cls=TileCodeTypeError)
    return lw.scalar(v, node)


def _range_args(lw: Lowerer, it: ast.Call) -> list[ir.Expr]:
    args = [_range_arg(lw, a) for a in it.args]
    if not 1 <= len(args) <= 3 or it.keywords:
        raise lw.error(it, "range() takes 1 to 3 positional arguments")
    for a, an in zip(args, it.args):
        if not a.type.is_int and a.type != bool_:
            raise lw.error(an, f"range() arguments must be integers: Expected a signed "
                               f"integer, got {a.type}", cls=TileCodeTypeError)
    zero = ir.Const(int64, lw.loc(it), 0, weak=True)
    one = ir.Const(int64, lw.loc(it), 1, weak=True)
    start, stop, step = ([zero, args[0], one] if len(args) == 1 else
                         [args[0], args[1], one] if len(args) == 2 else args)
    if isinstance(step, ir.Const) and step.value == 0:
        raise lw.error(it, "range() step must not be zero")
    if isinstance(step, ir.Const) and step.value < 0 and is_tile_kernel(lw):
        raise lw.error(it, f"Step must be positive, got {step.value}",
                       "cuTile's loops count up: range(start, stop, -k) is refused",
                       cls=TileCodeTypeError)
    return [start, stop, step]


def _range_loop(lw: Lowerer, node: ast.For, it: ast.Call) -> ir.For | list:
    args = _range_args(lw, it)
    start, stop, step = args
    known = [_known(lw, a) for a in args]  # (`n = len(arrays)` before the loop is known too)
    if _indexes_a_tuple(lw, node) and all(type(v) is int for v in known) and not any(
            isinstance(n, (ast.Break, ast.Continue)) for n in static.own_statements(node.body)):
        return static.unroll_range(lw, node, range(*known))
    t, w = start.type, ty.is_weak(start)
    for a in (stop, step):
        t, w = ty.unify(t, w, a.type, ty.is_weak(a))
    if w or t.kind == "u" and any(isinstance(a, ir.Const) and a.value < 0 for a in args):
        t = int64  # range(n, 0, -1) with n unsigned counts down in a signed variable
    name = node.target.id
    # a tile kernel's loop over Python numbers counts in a loosely typed int (cuTile's int32
    # range variable fits what it is stored into: ct.scatter(y, i, i) with y int32)
    lw.observe(name, t, w and lw.spec.threads is not None, node)
    versions.bind_value(lw, name, t, node)
    vt = lw.var_types.get(name, (t, False))[0]
    lw.loop_depth += 1
    with versions.loop(lw, node, not flow.terminates(node.body)):
        body = lw.lower_body(node.body)
    lw.loop_depth -= 1
    return ir.For(lw.loc(node), name, ty.convert(start, vt), ty.convert(stop, vt),
                  ty.convert(step, vt), body)


def _known(lw: Lowerer, a: ir.Expr):
    """The value of a range() argument known while compiling, or None."""
    if isinstance(a, ir.Const):
        return a.value
    if isinstance(a, ir.Var):
        return lw.const_locals.get(a.name, lw.literal_locals.get(a.name))
    return None


def _indexes_a_tuple(lw: Lowerer, node: ast.For) -> bool:
    """Whether the body of ``for i in range(...)`` indexes a tuple with ``i`` (cuTile's
    ``for i in range(len(arrays)): ct.load(arrays[i], ...)`` over a list of arrays): such a
    loop, over constant bounds, is unrolled so that each ``arrays[i]`` is one array."""
    i = node.target.id
    for n in ast.walk(ast.Module(node.body, [])):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and \
                n.slice.id == i and (root := _tuple_root(n.value)) is not None:
            name = root.id
            if name in lw.tuples or isinstance(lw.runtime_params.get(name), TupleType):
                # (a tuple of numbers is indexed at run time: tuples.index)
                v = lw.expr(n.value)  # a name, or `pair[0]`: constant indices of one
                if isinstance(v, Tup) and any(
                        not (isinstance(x, ir.Expr) and isinstance(x.type, Scalar))
                        for x in v.items):
                    return True
    return False


def _tuple_root(e: ast.expr) -> ast.Name | None:
    """The name under ``e`` where ``e`` is one (``arrays``) or indexes one by constants
    (``pair[0]``, ``cfg[1][0]``); None otherwise."""
    while isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and \
            type(e.slice.value) is int:
        e = e.value
    return e if isinstance(e, ast.Name) else None


def _once(lw: Lowerer, e: ir.Expr, prefix: str = "it") -> ir.Expr:
    """``e``, evaluated once before the loop."""
    if isinstance(e, (ir.Const, ir.Var)):
        return e
    return lw.hoist(e, prefix)


def _i64(e: ir.Expr) -> ir.Expr:
    return ty.convert(e, int64)


def _bin(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        v = {"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value,
             "//": a.value // b.value if b.value else 0}[op]
        return ir.Const(int64, a.loc, v)
    return ir.BinOp(int64, a.loc, op, _i64(a), _i64(b))


def _sequence(lw: Lowerer, node: ast.expr) -> _Seq | list:
    loc = lw.loc(node)
    if _called(lw, node, builtins.range):
        start, stop, step = (_once(lw, _i64(a)) for a in _range_args(lw, node))
        # len(range) = ceil((stop - start) / step), at least 0
        if isinstance(step, ir.Const):
            bias = ir.Const(int64, loc, step.value - (1 if step.value > 0 else -1))
        else:
            bias = _bin("-", step, ir.Select(int64, loc, ir.Compare(
                bool_, loc, ">", step, ir.Const(int64, loc, 0)), ir.Const(int64, loc, 1),
                ir.Const(int64, loc, -1)))
        n = _bin("//", _bin("+", _bin("-", stop, start), bias), step)
        n = ir.Call(int64, loc, "max", [n, ir.Const(int64, loc, 0)]) if not isinstance(
            n, ir.Const) else ir.Const(int64, loc, max(n.value, 0))
        return _Seq(n, lambda k: _bin("+", start, _bin("*", k, step)))
    if _called(lw, node, builtins.reversed):
        if len(node.args) != 1 or node.keywords:
            raise lw.error(node, "reversed() takes one sequence")
        inner = _as_seq(lw, _sequence(lw, node.args[0]), node)
        n = _once(lw, inner.length, "n")
        return _Seq(n, lambda k: inner.item(_bin("-", _bin("-", n, ir.Const(int64, loc, 1)),
                                                      k)))
    if _called(lw, node, builtins.enumerate):
        args = list(node.args) + [kw.value for kw in node.keywords if kw.arg == "start"]
        if not 1 <= len(args) <= 2 or any(kw.arg != "start" for kw in node.keywords):
            raise lw.error(node, "enumerate() takes a sequence and an optional start")
        inner = _as_seq(lw, _sequence(lw, args[0]), node)
        start = _once(lw, _i64(lw.scalar(lw.expr(args[1]), args[1]))) if len(args) == 2 \
            else ir.Const(int64, loc, 0)
        return _Seq(inner.length, lambda k: Tup([_bin("+", start, k), inner.item(k)]))
    if _called(lw, node, builtins.zip):
        if node.keywords or not node.args:
            raise lw.error(node, "zip() takes one or more sequences (and no strict=)")
        seqs = [_as_seq(lw, _sequence(lw, a), a) for a in node.args]
        n = seqs[0].length
        for s in seqs[1:]:
            m = s.length
            n = ir.Const(int64, loc, min(n.value, m.value)) if isinstance(
                n, ir.Const) and isinstance(m, ir.Const) else ir.Call(int64, loc, "min",
                                                                      [_i64(n), _i64(m)])
        return _Seq(n, lambda k: Tup([s.item(k) for s in seqs]))
    v = lw.expr(node)
    if isinstance(v, Tup):
        if all(isinstance(x, ir.Expr) and isinstance(x.type, Scalar) for x in v.items) and \
                v.items:
            items = Tup([_once(lw, x) for x in v.items])
            return _Seq(ir.Const(int64, loc, len(items.items)),
                        lambda k: tuples.index(lw, items, k, node))
        return v.items
    if isinstance(v, ir.Expr) and isinstance(v.type, ArrayType):
        arr = _once(lw, v, "a")
        return _Seq(ir.ArrayDim(int64, loc, arr, "shape", 0),
                    lambda k: lw.index(arr, [k], node))
    raise lw.error(node, f"cannot loop over {describe_value(v)}",
                   "kernels loop over range(), arrays, tuples, and enumerate/zip/reversed "
                   "of those")


def _as_seq(lw: Lowerer, s, node) -> _Seq:
    if isinstance(s, list):
        raise lw.error(node, "a tuple holding arrays or tuples can only be looped over "
                             "directly (for x in t), not inside enumerate/zip/reversed")
    return s


def _unrolled(lw: Lowerer, node: ast.For, items: list) -> list[ir.Stmt]:
    if any(isinstance(n, (ast.Break, ast.Continue)) for n in flow.own_statements(node.body)):
        raise lw.error(node, "break/continue in a loop over a tuple of arrays or tuples",
                       "the loop is unrolled at compile time; use a flag variable")
    out: list[ir.Stmt] = []
    t = node.target
    if isinstance(t, ast.Name) and t.id in lw.tuples and items and isinstance(items[0], Tup) \
            and len(items[0].items) != len(lw.tuples[t.id][0]):
        # the loop binds its variable before every read in it: an earlier loop's tuples of
        # another length (`for v in (a2, b2)` then `for v in (a3, b3)`) are forgotten
        del lw.tuples[t.id]
    for it in items:
        out += lw.assign(node.target, it, node)
        out += lw.lower_body(node.body)
    return out
