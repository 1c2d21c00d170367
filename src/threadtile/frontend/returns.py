"""The ``return``s of an inlined function's body, as a loop run once: ``return v`` is
``ret = v; break`` (with a flag to leave the loops it is inside), and the small AST builders
that frontend/exits.py shares."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import flow
from .values import Py

if TYPE_CHECKING:
    from .lower import Lowerer


def ast_pos(node: ast.AST) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")
            if hasattr(node, k)}


def ast_name(id_: str, node, store: bool = False) -> ast.Name:
    return ast.Name(id_, ast.Store() if store else ast.Load(), **ast_pos(node))


def ast_set(id_: str, value: ast.expr, node) -> ast.Assign:
    return ast.Assign([ast_name(id_, node, True)], value, **ast_pos(node))


def ast_const(v, node) -> ast.Constant:
    return ast.Constant(v, **ast_pos(node))


def ast_if_eq(id_: str, k: int, then: list[ast.stmt], node) -> ast.If:
    test = ast.Compare(ast_name(id_, node), [ast.Eq()], [ast_const(k, node)], **ast_pos(node))
    return ast.If(test, then, [], **ast_pos(node))


def ast_run_once(body: list[ast.stmt], node) -> ast.While:
    pos = ast_pos(node)
    return ast.While(ast_const(True, node), body + [ast.Break(**pos)], [], **pos)


def _returns_to_breaks(stmts: list[ast.stmt], ret: str, done: str, in_loop: bool
                       ) -> tuple[list[ast.stmt], bool]:
    """``return v`` -> ``ret = v; break`` (plus ``done = True`` inside a loop, and after that
    loop ``if done: break``). Also whether ``done`` was used."""
    out: list[ast.stmt] = []
    used = False
    for s in stmts:
        if isinstance(s, ast.Return):
            if s.value is not None:
                out.append(ast_set(ret, s.value, s))
            if in_loop:
                out.append(ast_set(done, ast_const(True, s), s))
                used = True
            out.append(ast.Break(**ast_pos(s)))
            break
        if isinstance(s, ast.If):
            s.body, u1 = _returns_to_breaks(s.body, ret, done, in_loop)
            s.orelse, u2 = _returns_to_breaks(s.orelse, ret, done, in_loop)
            used |= u1 or u2
        elif isinstance(s, (ast.For, ast.While)):
            s.body, u = _returns_to_breaks(s.body, ret, done, True)
            s.orelse, u2 = _returns_to_breaks(s.orelse, ret, done, in_loop)
            used |= u or u2
            if u:
                out.append(s)
                s = ast_if_eq(done, True, [ast.Break(**ast_pos(s))], s)
        elif isinstance(s, ast.With):
            s.body, u = _returns_to_breaks(s.body, ret, done, in_loop)
            used |= u
        out.append(s)
    return out, used


def lower_returning(lw: Lowerer, body: list[ast.stmt], prefix: str, node):
    """An inlined body with returns before its end: its statements and its value."""
    ret, done = f"{prefix}_ret", f"{prefix}_done"
    has_value = any(isinstance(n, ast.Return) and n.value is not None
                    for n in flow.walk_scope(body))
    new, used = _returns_to_breaks(body, ret, done, False)
    at = body[0]
    stmts = ([ast_set(done, ast_const(False, at), at)] if used else []) + [ast_run_once(new, at)]
    lw.local_names |= {ret, done}
    out = lw.lower_body(stmts)
    if not has_value:
        return out, Py(None)
    return out, lw.read_name(ret, node)
