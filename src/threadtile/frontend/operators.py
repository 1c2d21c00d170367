"""Operators on numbers: arithmetic with the promotion rules of typing.py, comparisons and
their chains, ``and``/``or``/``not``, conditional expressions; constants are folded.
Operators on tiles are handed to tiles.py."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as ir
from ..lang.types import ArrayType, Scalar, bool_, int64
from . import dicts, enumvals, raising, tile_mma, tile_print, tiles, tupleops, tuples
from . import typing as ty
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
          ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
          ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}
_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "//": lambda a, b: a // b, "%": lambda a, b: a % b, "&": lambda a, b: a & b,
         "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
         ">>": lambda a, b: a >> b, "/": lambda a, b: a / b, "**": lambda a, b: a ** b}
_CMPFOLD = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def lower_binop_node(lw: Lowerer, node: ast.BinOp):
    op = BINOPS.get(type(node.op))
    if op is None:
        raise lw.unsupported(node, f"operator {type(node.op).__name__}")
    return binop(lw, op, lw.expr(node.left), lw.expr(node.right), node)


def _checked_divisor(lw: Lowerer, b: ir.Expr, t, node) -> ir.Expr:
    """``b``, checked first for zero where the kernel asks (jit's debug=True: numba's Python
    error model raises ZeroDivisionError; the simulator raises it, the GPU thread stops)."""
    how = lw.spec.zero_division
    if how is None or lw._lazy or (isinstance(b, ir.Const) and b.value != 0) or \
            t.is_complex or (how == "int" and not t.is_int):
        return b
    if not isinstance(b, (ir.Var, ir.Const)):
        b = lw.hoist(b, "div")
    loc = lw.loc(node)
    zero = ir.Compare(bool_, loc, "==", b, ir.Const(b.type, loc, 0))
    lw.pre.append(ir.If(loc, zero, [raising.raise_stmt(lw, node, ZeroDivisionError,
                                                       ("division by zero",))], []))
    return b


def binop(lw: Lowerer, op: str, a, b, node) -> ir.Expr:
    if isinstance(a, Tup) or isinstance(b, Tup):
        return tupleops.binop(lw, op, a, b, node)
    if tiles.is_tile(a) or tiles.is_tile(b):
        if op == "@":
            return tile_mma.matmul(lw, a, b, node)
        return tiles.binop(lw, op, a, b, node)
    if op == "@":
        raise lw.error(node, "the @ operator multiplies tiles (threadtile.tile), not "
                             "numbers")
    if op == "+" and (s := tile_print.concat(a, b)) is not None:
        return s  # strings, and f-strings with runtime values (frontend/tile_print.py)
    if any(isinstance(v, Py) and isinstance(v.obj, str) for v in (a, b)):
        what = "string formatting" if op == "%" else f"the operator {op} on strings"
        raise lw.unsupported(node, what, "kernels print strings and numbers as they are: "
                                         "print('i =', i)")
    a, b = lw.scalar(a, node), lw.scalar(b, node)
    loc = lw.loc(node)
    aw, bw = ty.is_weak(a), ty.is_weak(b)
    if op in ("<<", ">>", "&", "|", "^"):
        for v in (a, b):
            if v.type.is_float or v.type.is_complex:
                raise lw.error(node, f"operator {op} needs integers, got {v.type}")
    if op in ("//", "%") and (a.type.is_complex or b.type.is_complex):
        raise lw.error(node, f"operator {op} is not defined on complex numbers",
                       "take the .real and .imag parts apart")
    if op == "**" and a.type.is_int and isinstance(b, ir.Const) and b.type.is_int \
            and b.value < 0:
        raise lw.error(node, "integers to negative integer powers are not allowed",
                       "make the base a float: 2.0 ** -1")
    if op == "**" and b.type.is_int and isinstance(b, ir.Const) and not a.type.is_int \
            and not a.type.is_complex:
        t = a.type if not aw else ty.literal_type(a.value)
        res = ir.BinOp(t, loc, "**", a, b)
    else:
        t, w = ty.arith_type(op, a.type, aw, b.type, bw)
        if op in ("/", "//", "%"):
            b = _checked_divisor(lw, b, t, node)
        if op in ("<<", ">>"):
            t, _w = (a.type if a.type != bool_ else int64), aw
        res = ir.BinOp(t, loc, op, ty.convert(a, t) if op not in ("<<", ">>") else a,
                       ty.convert(b, t) if op not in ("<<", ">>") else b)
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        try:
            v = _FOLD[op](a.value, b.value)
        except (ZeroDivisionError, OverflowError, ValueError):
            if res.type.is_float or res.type.is_complex:  # IEEE's inf or nan, at run time
                return ty.mark_weak(res, aw and bw)
            raise lw.error(node, f"constant expression divides by zero or overflows: "
                                 f"{a.value} {op} {b.value}") from None
        return ir.Const(res.type, loc, ty.py_value(v, res.type), weak=aw and bw)
    return ty.mark_weak(res, aw and bw)


def unary(lw: Lowerer, node: ast.UnaryOp):
    v = lw.expr(node.operand)
    if tiles.is_tile(v):
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}[type(node.op)]
        return tiles.unary(lw, op, v, node)
    v = lw.scalar(v, node.operand)
    loc = lw.loc(node)
    if isinstance(node.op, ast.Not):
        c = lw.truth(v, node)
        if isinstance(c, ir.Const):
            return ir.Const(bool_, loc, not c.value)
        return ir.UnaryOp(bool_, loc, "not", c)
    op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
    if op == "~" and (v.type.is_float or v.type.is_complex):
        raise lw.error(node, "operator ~ needs an integer")
    t = int64 if v.type == bool_ and op != "~" else v.type
    if isinstance(v, ir.Const):
        val = {"-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~x}[op](v.value)
        return ir.Const(t, loc, ty.py_value(val, t), weak=ty.is_weak(v))
    return ty.mark_weak(ir.UnaryOp(t, loc, op, ty.convert(v, t)), ty.is_weak(v))


def boolop(lw: Lowerer, node: ast.BoolOp):
    op = "and" if isinstance(node.op, ast.And) else "or"
    # the operands after the first run only in some threads: nothing may be hoisted out of them
    vals = [lw.truth(lw.expr(node.values[0]), node.values[0])]
    with lw.lazy():
        vals += [lw.truth(lw.expr(v), v) for v in node.values[1:]]
    res = vals[0]
    for v in vals[1:]:
        if isinstance(res, ir.Const):
            res = v if (res.value if op == "and" else not res.value) else res
            continue
        res = ir.Logical(bool_, lw.loc(node), op, res, v)
    return res


def compare_chain(lw: Lowerer, node: ast.Compare):
    left = lw.expr(node.left)
    res = None
    for opn, comp in zip(node.ops, node.comparators):
        op = CMPOPS.get(type(opn))
        if isinstance(opn, (ast.Is, ast.IsNot)):
            right = lw.expr(comp)
            if isinstance(left, Py) and isinstance(right, Py) or any(
                    isinstance(v, Py) and v.obj is None for v in (left, right)):
                # `Color.red is Color.red`: identity of Python objects; `start is None` with
                # `start` a number (a runtime value or a constant): never None
                same = isinstance(left, Py) and isinstance(right, Py) and left.obj is right.obj
                c = ir.Const(bool_, lw.loc(node), same if isinstance(opn, ast.Is) else not same)
                res = c if res is None else ir.Logical(bool_, lw.loc(node), "and", res, c)
                left = right
                continue
        if isinstance(opn, (ast.In, ast.NotIn)):
            right = lw.expr(comp)
            if dicts.is_dict(right):  # `"key" in kwargs`
                c = dicts.contains(lw, left, right.obj, isinstance(opn, ast.NotIn), node)
                res = c if res is None else ir.Logical(bool_, lw.loc(node), "and", res, c)
                left = right
                continue
        if op is None:
            raise lw.unsupported(node, f"comparison {type(opn).__name__}",
                                 "`is` is not supported in kernels; use == and !=")
        if res is None:
            right = lw.expr(comp)
        else:
            with lw.lazy():  # evaluated only where the comparisons before it held
                right = lw.expr(comp)
        c = compare(lw, op, left, right, node)
        res = c if res is None else (
            ir.Logical(bool_, lw.loc(node), "and", res, c) if not isinstance(res, ir.Const)
            else (c if res.value else res))
        left = right
    return res


def compare(lw: Lowerer, op, a, b, node) -> ir.Expr:
    if op in ("in", "not in") or isinstance(a, Tup) or isinstance(b, Tup):
        return tupleops.compare(lw, op, a, b, node)
    if tiles.is_tile(a) or tiles.is_tile(b):
        return tiles.compare(lw, op, a, b, node)
    if isinstance(a, Py) and isinstance(b, Py) and isinstance(a.obj, str) and \
            isinstance(b.obj, str) and op in _CMPFOLD:  # `mode == "max"`: a constant
        return ir.Const(bool_, lw.loc(node), bool(_CMPFOLD[op](a.obj, b.obj)))
    if (c := enumvals.compare(lw, op, a, b, node)) is not None:  # Python's answer, folded
        return c
    if (dicts.is_dict(a) or dicts.is_dict(b)) and op in ("==", "!="):
        return ir.Const(bool_, lw.loc(node), (a == b) == (op == "=="))
    if isinstance(a, Py) and isinstance(b, Py) and op in ("==", "!="):
        return tiles.static_compare(lw, op, a, b, node)  # `x.dtype == ct.float32`
    a, b = lw.scalar(a, node), lw.scalar(b, node)
    t, _ = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
    if t.is_complex and op not in ("==", "!="):
        raise lw.error(node, f"complex numbers have no order: {op} is not defined on them",
                       "compare their abs() or their .real parts")
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return ir.Const(bool_, lw.loc(node), bool(_CMPFOLD[op](a.value, b.value)))
    return ir.Compare(bool_, lw.loc(node), op, ty.convert(a, t), ty.convert(b, t))


def ifexp(lw: Lowerer, node: ast.IfExp):
    cond = lw.truth(lw.expr(node.test), node.test)
    both = _branches(lw, node) if not lw._lazy else None
    if both is not None and any(both[2]):
        if not isinstance(cond, ir.Const):
            return _branched_ifexp(lw, cond, node, *both)
        lw.pre.extend(both[2][0 if cond.value else 1])  # the branch taken runs, alone
    if both is not None:
        a, b, _ = both
    else:
        with lw.lazy():
            a, b = lw.expr(node.body), lw.expr(node.orelse)
    if isinstance(cond, ir.Const) and any(isinstance(v, Py) and tiles.static_value(v.obj)
                                          for v in (a, b)):
        return a if cond.value else b  # `ct.tfloat32 if x.dtype == ct.float32 else ...`
    if isinstance(cond, ir.Const) and all(isinstance(v, ir.Expr) and isinstance(
            v.type, ArrayType) for v in (a, b)):
        return a if cond.value else b  # `x.tiled_view(T) if USE_X else y.tiled_view(T)`
    if isinstance(a, Tup) and isinstance(b, Tup):  # `(x, y) if x < y else (y, x)`
        return tuples.select(lw, cond, a, b, node)
    if isinstance(cond, ir.Const) and (tiles.is_tile(a) or tiles.is_tile(b)):
        return a if cond.value else b
    if tiles.is_tile(a) or tiles.is_tile(b):
        return _tile_ifexp(lw, cond, a, b, node)
    a, b = lw.scalar(a, node.body), lw.scalar(b, node.orelse)
    if isinstance(cond, ir.Const):
        return a if cond.value else b
    t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
    return ty.mark_weak(ir.Select(t, lw.loc(node), cond, ty.convert(a, t),
                                  ty.convert(b, t)), w)


def _branches(lw: Lowerer, node: ast.IfExp) -> tuple | None:
    """Both branches of ``x if c else y`` lowered, each with the statements it needs first
    (a helper function inlined, a division checked): ``(a, b, [pre_a, pre_b])``; None where a
    branch that needs statements is not a number (it is lowered again as before)."""
    saved, pres, vals = lw.pre, [], []
    try:
        for branch in (node.body, node.orelse):
            lw.pre = []
            vals.append(lw.expr(branch))
            pres.append(lw.pre)
    finally:
        lw.pre = saved
    if any(pres) and not all(isinstance(v, ir.Expr) and isinstance(v.type, Scalar)
                             for v in vals):
        return None
    return vals[0], vals[1], pres


def _branched_ifexp(lw: Lowerer, cond: ir.Expr, node: ast.IfExp, a: ir.Expr, b: ir.Expr,
                    pres: list) -> ir.Expr:
    """``x if c else f(y)`` where a branch needs statements of its own: ``t = x`` or
    ``t = f(y)`` in an ``if`` statement, so that each branch runs only where ``c`` says."""
    t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
    loc = lw.loc(node)
    name = lw.spec.fresh("sel")
    lw.observe(name, t, False, None)
    lw.defined.add(name)
    lw.pre.append(ir.If(loc, cond, pres[0] + [ir.Assign(loc, name, ty.convert(a, t))],
                        pres[1] + [ir.Assign(loc, name, ty.convert(b, t))]))
    return ty.mark_weak(ir.Var(t, loc, name), w)


def _tile_ifexp(lw: Lowerer, cond: ir.Expr, a, b, node: ast.IfExp) -> ir.Expr:
    """``x if c else y`` with tiles and a runtime condition, as cuTile's if/else: both
    branches have one type (a Python literal takes the other's); the value is selected."""
    def loose(v) -> bool:
        return isinstance(v, ir.Const) and ty.is_weak(v)

    ta, tb = getattr(a, "type", None), getattr(b, "type", None)
    if not (ta == tb or loose(a) or loose(b)):
        from ..errors import TileCodeTypeError
        raise lw.error(node, f"the branches of this conditional expression have different "
                             f"types: {ty.describe(ta) if ta else describe_value(a)} and "
                             f"{ty.describe(tb) if tb else describe_value(b)}",
                       "give both branches the same type (convert one with .astype(), or "
                       "broadcast it with ct.broadcast_to)", cls=TileCodeTypeError)
    return tiles.where(lw, cond, a, b, node)
