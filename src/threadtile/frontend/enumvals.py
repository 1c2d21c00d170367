"""Enum members in kernels (cuTile's): ``Color.RED`` is a compile-time value, ``Color(1)`` and
``Status("ok")`` look a member up by a constant value while the kernel compiles, ``==`` and
``!=`` of members fold to constants, and so does ordering of ``IntEnum`` members (which are
ints). A plain ``Enum`` has no order: ``Color.RED < Color.GREEN`` is a ``ct.TileTypeError``,
as it is a ``TypeError`` in Python.
"""

from __future__ import annotations

import ast
import enum
import operator
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError, TileCodeValueError
from ..ir import nodes as ir
from ..lang.types import bool_
from .values import Py

if TYPE_CHECKING:
    from .lower import Lowerer

_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _constant(lw: Lowerer, v):
    """The Python value of a compile-time ``v``, or ``_NONE`` when it is known only at run
    time."""
    if isinstance(v, Py):
        return v.obj
    if isinstance(v, ir.Const):
        return v.value
    if isinstance(v, ir.Var):
        for table in (lw.literal_locals, lw.const_locals):
            if v.name in table:
                return table[v.name]
    return _NONE


_NONE = object()


def make(lw: Lowerer, cls: enum.EnumMeta, node: ast.Call) -> Py:
    """``Color(value)``: the member whose value is the constant ``value``."""
    if len(node.args) != 1 or node.keywords:
        raise lw.error(node, "Enum constructor takes exactly one positional argument",
                       cls=TileCodeTypeError)
    val = _constant(lw, lw.expr(node.args[0]))
    if val is _NONE:
        raise lw.error(node.args[0], "Enum constructor argument must be a constant",
                       f"{cls.__name__}(...) picks a member while the kernel compiles",
                       cls=TileCodeTypeError)
    try:
        return Py(cls(val))
    except ValueError:
        raise lw.error(node, f"{val!r} is not a valid {cls.__name__}",
                       cls=TileCodeValueError) from None


def compare(lw: Lowerer, op: str, a, b, node) -> ir.Const | None:
    """``a op b`` of two Enum members: Python's answer as a constant (ordering only for
    members that are numbers, such as ``IntEnum``'s), or None when either is not a member."""
    if not (isinstance(a, Py) and isinstance(b, Py) and isinstance(a.obj, enum.Enum)
            and isinstance(b.obj, enum.Enum)):
        return None
    if op in ("==", "!="):
        return ir.Const(bool_, lw.loc(node), (a.obj == b.obj) == (op == "=="))
    if op in _ORDER:
        try:
            return ir.Const(bool_, lw.loc(node), bool(_ORDER[op](a.obj, b.obj)))
        except TypeError:
            raise lw.error(node, f"'{op}' is not supported between instances of "
                                 f"'{type(a.obj).__name__}' and '{type(b.obj).__name__}'",
                           "only IntEnum members are ordered; compare their .value",
                           cls=TileCodeTypeError) from None
    return None
