"""``raise`` and ``assert`` in kernels (docs/language.md, "Exceptions").

``raise E`` / ``raise E(constant args)`` becomes the ``raise`` operation: the simulator raises
``E`` on the host naming the thread and block (numba's simulator and numba's ``debug=True``
do the same); on the GPU the raising thread stops, as it does in numba without ``debug``.
``assert cond[, msg]`` is ``if not cond: raise AssertionError(msg)``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as ir
from ..ir import raises
from ..lang.types import int32, void
from .values import Py

if TYPE_CHECKING:
    from .lower import Lowerer


def lower_raise(lw: Lowerer, node: ast.Raise) -> list[ir.Stmt]:
    if node.exc is None:
        raise lw.unsupported(node, "a bare `raise`", "raise an exception class or instance")
    exc = node.exc
    call = exc if isinstance(exc, ast.Call) else None
    cls = lw.expr(call.func if call else exc)
    if not (isinstance(cls, Py) and isinstance(cls.obj, type)
            and issubclass(cls.obj, BaseException)):
        raise lw.error(exc, "a kernel raises an exception class, or one called with "
                            "constant arguments", "raise ValueError or raise ValueError('msg')")
    args = tuple(_constant(lw, a) for a in call.args) if call else ()
    if call and call.keywords:
        raise lw.error(call, "exception arguments are given by position")
    return [raise_stmt(lw, node, cls.obj, args)]


def lower_assert(lw: Lowerer, node: ast.Assert) -> list[ir.Stmt]:
    return assert_value(lw, node, lw.expr(node.test))


def assert_value(lw: Lowerer, node: ast.Assert, value, trap: bool = False) -> list[ir.Stmt]:
    """``assert`` of the lowered ``value`` (``node.test`` is not read); ``trap``: a failure
    stops the whole kernel on the GPU (cuTile's ``ct.assert_``)."""
    args = (_constant(lw, node.msg),) if node.msg is not None else ()
    cond = lw.truth(value, node.test)
    if isinstance(cond, ir.Const):
        return [] if cond.value else [raise_stmt(lw, node, AssertionError, args, trap)]
    failed = ir.UnaryOp(cond.type, lw.loc(node), "not", cond)
    return [ir.If(lw.loc(node), failed, [raise_stmt(lw, node, AssertionError, args, trap)], [])]


def _constant(lw: Lowerer, node: ast.expr):
    v = lw.expr(node)
    if isinstance(v, Py) and isinstance(v.obj, (str, bytes)):
        return v.obj
    if isinstance(v, ir.Const):
        return v.value
    raise lw.error(node, "exception arguments must be compile-time constants (numba's rule)",
                   "put the runtime values in an output array instead")


def raise_stmt(lw: Lowerer, node, cls: type, args: tuple, trap: bool = False) -> ir.Stmt:
    """The statement raising ``cls(*args)`` at ``node`` (args: constants)."""
    loc = lw.loc(node)
    k = raises.register(raises.Raised(cls, args, lw.fname, loc.filename, loc.line, trap))
    return ir.ExprStmt(loc, ir.Call(void, loc, "raise", [ir.Const(int32, loc, k)]))
