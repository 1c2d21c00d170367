"""Calls of lang/tile_more.py's functions in kernels: cuTile's ``ct.ensure_constant``,
``ct.assert_``, ``ct.divmod`` (and the builtin ``divmod``) and ``ct.bitwise_*``.

- ``ensure_constant(v)`` is ``v`` when it is a compile-time value, else cuTile's
  ``TileStaticAssertionError`` ("Argument of ensure_constant() is not a compile-time constant").
- ``assert_(cond, message)`` reduces a bool tile to "all true" (a ``min`` over every axis) and
  is then ``assert cond, message``: raising.py's ``raise`` operation, which the simulator
  raises on the host at the kernel's line and which stops the kernel on the GPU.
- ``divmod(x, y)`` is the tuple ``(x // y, x % y)`` of the operators (Python's rounding and sign
  rule); floating-point operands are cuTile's ``TileTypeError``.
- ``bitwise_and/or/xor/lshift/rshift(x, y)`` are ``& | ^ << >>``; ``bitwise_not(x)`` is ``~x``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import StaticAssertionFailed, TileCodeTypeError
from ..ir import nodes as ir
from ..lang.tile_more import NAMES  # noqa: F401  (tile_calls.py dispatches on it)
from ..lang.types import TileType, bool_, int32
from . import operators, raising
from .tiles import cast, is_tile, item, tile_op
from .values import Py, Tup

if TYPE_CHECKING:
    from .lower import Lowerer

_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "bitwise_lshift": "<<",
            "bitwise_rshift": ">>"}


def _positional(lw: Lowerer, node: ast.Call, fname: str, n: int) -> list:
    if len(node.args) != n or node.keywords:
        raise lw.error(node, f"{fname}() takes {n} positional argument{'s' * (n != 1)}",
                       cls=TileCodeTypeError)
    return [lw.expr(a) for a in node.args]


def is_constant(lw: Lowerer, v) -> bool:
    """Whether ``v`` is known while the kernel compiles."""
    if isinstance(v, Py) or isinstance(v, ir.Const):
        return True
    if isinstance(v, Tup):
        return all(is_constant(lw, x) for x in v.items)
    return isinstance(v, ir.Var) and (v.name in lw.literal_locals or v.name in lw.const_locals)


def lower_call(lw: Lowerer, fname: str, node: ast.Call):
    if fname == "ensure_constant":
        (v,) = _positional(lw, node, fname, 1)
        if not is_constant(lw, v):
            raise lw.error(node, "Argument of ensure_constant() is not a compile-time constant",
                           "it depends on a value known only when the kernel runs",
                           cls=StaticAssertionFailed)
        return v
    if fname == "assert_":
        return assert_(lw, node)
    if fname == "divmod":
        return divmod_(lw, node)
    if fname == "bitwise_not":
        (x,) = _positional(lw, node, fname, 1)
        if not is_tile(x) and lw.scalar(x, node).type == bool_:  # of a bool: its logical not
            return operators.unary(lw, ast.copy_location(ast.UnaryOp(ast.Not(), node.args[0]),
                                                         node))
        return operators.unary(lw, ast.copy_location(ast.UnaryOp(ast.Invert(), node.args[0]),
                                                     node))
    x, y = _positional(lw, node, fname, 2)
    return lw.binop(_BITWISE[fname], x, y, node)


def divmod_(lw: Lowerer, node: ast.Call) -> Tup:
    """``divmod(x, y)``: ``(x // y, x % y)``."""
    x, y = _positional(lw, node, "divmod", 2)
    for v in (x, y):
        t = v.type.dtype if is_tile(v) else getattr(lw.scalar(v, node), "type", None)
        if t is not None and (t.is_float or t.is_complex):
            raise lw.error(node, "divmod() is not implemented for floating point values",
                           "use x // y and x % y", cls=TileCodeTypeError)
    return Tup([lw.binop("//", x, y, node), lw.binop("%", x, y, node)])


def assert_(lw: Lowerer, node: ast.Call):
    """``ct.assert_(cond, message=None)``: the statements go before the call's, which has no
    value (None)."""
    if len(node.args) not in (1, 2) or any(k.arg != "message" for k in node.keywords):
        raise lw.error(node, "assert_(cond, /, message=None)", cls=TileCodeTypeError)
    cond = lw.expr(node.args[0])
    msg = node.args[1] if len(node.args) == 2 else next(
        (k.value for k in node.keywords), None)
    if is_tile(cond):
        if cond.type.dtype != bool_:
            raise lw.error(node.args[0], f"assert_() needs a bool tile, got {cond.type}",
                           cls=TileCodeTypeError)
        flat = cast(lw, cond, int32, node)
        if flat.type.ndim:
            flat = tile_op(lw, node, TileType(int32, ()), "reduce", [flat], kind="min",
                           axes=tuple(range(flat.type.ndim)), flat=False)
        cond = ir.Compare(bool_, lw.loc(node), "!=", item(lw, flat, node),
                          ir.Const(int32, lw.loc(node), 0))
    test = ast.copy_location(ast.Assert(test=ast.Constant(True), msg=msg), node)
    lw.pre.extend(raising.assert_value(lw, test, cond, trap=True))
    return Py(None)
