"""Operators on tuples, with cuTile's semantics: ``+`` concatenates, ``==``/``!=`` compare item
by item, ``x in t``/``x not in t`` test membership.

A tuple is a ``Tup`` while lowering (tuples.py), so these are folded at compile time wherever
the items are constants, and otherwise become one boolean built from the items' comparisons:

- ``(a, b) == (c, d)`` is ``a == c and b == d``; tuples of different lengths are unequal (a
  constant), nested tuples compare recursively; the items must be numbers (or 0-d tiles),
  tuples or compile-time objects: a tile of more than one element is cuTile's
  ``TileTypeError: Tuple comparison is not supported for non-scalar elements``, an array
  ``... for elements of type ...``; ``<`` and friends are ``... is not supported for tuples``;
- ``x in (a, b, c)`` compares ``x`` with each item in turn and stops at the first comparison
  known to be true at compile time (as cuTile does), so ``2 in (2, t)`` is true whatever ``t``
  is; a comparison that gives a tile of more than one element is ``'in' requires scalar
  operands``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import Scalar, TileType, bool_
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


def binop(lw: Lowerer, op: str, a, b, node):
    """``a + b`` of two tuples: their items, one after the other."""
    if op == "+" and isinstance(a, Tup) and isinstance(b, Tup):
        return Tup(a.items + b.items)
    raise lw.error(node, f"Operator '{op}' is not supported between {describe_value(a)} and "
                         f"{describe_value(b)}", "tuples concatenate with + (tuple + tuple); "
                                                 "index a tuple for its items",
                   cls=TileCodeTypeError)


def _const(lw: Lowerer, node, value: bool) -> ir.Const:
    return ir.Const(bool_, lw.loc(node), value)


def _and(lw: Lowerer, node, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const):
        return b if a.value else a
    if isinstance(b, ir.Const):
        return a if b.value else b
    return ir.Logical(bool_, lw.loc(node), "and", a, b)


def _or(lw: Lowerer, node, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const):
        return a if a.value else b
    if isinstance(b, ir.Const):
        return b if b.value else a
    return ir.Logical(bool_, lw.loc(node), "or", a, b)


def _not(lw: Lowerer, node, c: ir.Expr) -> ir.Expr:
    if isinstance(c, ir.Const):
        return _const(lw, node, not c.value)
    return ir.UnaryOp(bool_, lw.loc(node), "not", c)


def _check_item(lw: Lowerer, v, node) -> None:
    """An item a tuple comparison can compare: a number, a 0-d tile, a tuple, a compile-time
    object (a dtype, a string)."""
    if isinstance(v, (Tup, Py)):
        return
    if isinstance(v, ir.Expr) and isinstance(v.type, TileType):
        if v.type.shape:
            raise lw.error(node, "Tuple comparison is not supported for non-scalar elements: "
                                 f"an item is a tile of shape {tuple(v.type.shape)}",
                           "compare the tiles themselves (==), then reduce with ct.all or "
                           "ct.any", cls=TileCodeTypeError)
        return
    if isinstance(v, ir.Expr) and isinstance(v.type, Scalar):
        return
    raise lw.error(node, "Tuple comparison is not supported for elements of type "
                         f"{describe_value(v)}", "tuples compare numbers, 0-d tiles, tuples "
                                                 "and compile-time values", cls=TileCodeTypeError)


def _equal(lw: Lowerer, a, b, node) -> ir.Expr:
    """``a == b`` as a boolean (a constant where it is known)."""
    if isinstance(a, Tup) and isinstance(b, Tup):
        return equal(lw, a, b, node)
    if isinstance(a, Tup) or isinstance(b, Tup):  # a tuple is never equal to a non-tuple
        return _const(lw, node, False)
    return lw.truth(lw.compare("==", a, b, node), node)


def equal(lw: Lowerer, a: Tup, b: Tup, node) -> ir.Expr:
    """Two tuples equal: of one length, item by item."""
    if len(a.items) != len(b.items):
        return _const(lw, node, False)
    for v in a.items + b.items:
        _check_item(lw, v, node)
    res: ir.Expr = _const(lw, node, True)
    for x, y in zip(a.items, b.items):
        res = _and(lw, node, res, _equal(lw, x, y, node))
    return res


def contains(lw: Lowerer, x, t, node) -> ir.Expr:
    """``x in t``: true where ``x`` equals an item of the tuple ``t``."""
    if not isinstance(t, Tup):
        raise lw.error(node, f"'in' needs a tuple on its right, got {describe_value(t)}",
                       "kernels test membership in tuples only", cls=TileCodeTypeError)
    res: ir.Expr = _const(lw, node, False)
    for item in t.items:
        if isinstance(x, Tup) or isinstance(item, Tup):
            c = equal(lw, x, item, node) if isinstance(x, Tup) and isinstance(item, Tup) \
                else _const(lw, node, False)
        else:
            for v in (x, item):
                if isinstance(v, ir.Expr) and isinstance(v.type, TileType) and v.type.shape:
                    raise lw.error(node, "'in' requires scalar operands, but got shape "
                                         f"{tuple(v.type.shape)}", "compare the tile with each "
                                         "value (==) and combine the results",
                                   cls=TileCodeTypeError)
            c = lw.truth(lw.compare("==", x, item, node), node)
        if isinstance(c, ir.Const) and c.value:
            return c
        res = _or(lw, node, res, c)
    return res


def compare(lw: Lowerer, op: str, a, b, node) -> ir.Expr:
    """``a op b`` where a tuple takes part (or ``op`` is ``in``/``not in``)."""
    if op in ("in", "not in"):
        c = contains(lw, a, b, node)
        return c if op == "in" else _not(lw, node, c)
    if op not in ("==", "!="):
        raise lw.error(node, f"Operator '{op}' is not supported for tuples",
                       "tuples compare with == and != only", cls=TileCodeTypeError)
    c = _equal(lw, a, b, node)
    return c if op == "==" else _not(lw, node, c)



def _starred(lw: Lowerer, s: ast.Starred) -> Tup:
    v = lw.expr(s.value)
    if not isinstance(v, Tup):
        raise lw.error(s, f"Expected a tuple after *, got {describe_value(v)}",
                       "only a tuple unpacks with *", cls=TileCodeTypeError)
    return v


def display(lw: Lowerer, elts: list[ast.expr]) -> Tup:
    """``(a, *t, b)``: the items, with each starred tuple's items in its place."""
    items: list = []
    for e in elts:
        if isinstance(e, ast.Starred):
            items += _starred(lw, e).items
        else:
            items.append(lw.expr(e))
    return Tup(items)


def expand_starred(lw: Lowerer, node: ast.Call) -> ast.Call:
    """``f(x, *t)`` as ``f(x, t[0], t[1])`` for the calls that read their arguments' syntax
    (tile operations, builtins): each starred tuple is lowered once, held under a fresh
    compile-time name, and its items are read from there."""
    if not any(isinstance(a, ast.Starred) for a in node.args):
        return node
    args: list[ast.expr] = []
    for a in node.args:
        if not isinstance(a, ast.Starred):
            args.append(a)
            continue
        v = _starred(lw, a)
        name = lw.spec.fresh("star")
        lw.statics[name] = v
        for k in range(len(v.items)):
            sub = ast.Subscript(ast.Name(name, ast.Load()), ast.Constant(k), ast.Load())
            args.append(ast.copy_location(sub, a))
            ast.fix_missing_locations(sub)
    out = ast.Call(node.func, args, node.keywords)
    return ast.copy_location(out, node)
