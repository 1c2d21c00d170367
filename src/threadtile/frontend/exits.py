"""``with`` blocks over generator-based context managers (``contextlib.contextmanager``), and
the ``return``s of inlined functions: code that must run on the way out of a block.

``with cm(args) as v: BODY`` inlines the generator ``cm`` wraps (frontend/inline.py) with
BODY in place of its one ``yield``: the code before the ``yield`` runs on entry, the yielded
value is bound to ``v``, and the code after it runs on the way out, however BODY leaves. So
that ``break``, ``continue`` and ``return`` in BODY leave through that code, BODY is lowered
as a loop run once: each exit records which it was and breaks out of that loop; after the
generator's remaining code the recorded exit is taken. Nested ``with`` blocks nest this, so
their cleanups run innermost first, as in Python.

cuTile's rules for the generator: exactly one reachable ``yield`` (TileTypeError otherwise),
placed outside loops and conditionals (it may be inside another ``with``), and no ``return``
(TileSyntaxError).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
from typing import TYPE_CHECKING

from ..errors import TileCodeSyntaxError, TileCodeTypeError
from ..ir import nodes as ir
from . import flow, inline
from .returns import ast_const, ast_if_eq, ast_name, ast_pos, ast_run_once, ast_set
from .source import get_source
from .values import Py, Tup, describe_value, pyname

if TYPE_CHECKING:
    from .lower import Lowerer

_LEAVES = (ast.Return, ast.Break, ast.Continue, ast.Raise)
_CONTEXTMANAGER_CODE = contextlib.contextmanager(lambda: (yield)).__code__


class AsBind(ast.stmt):
    """``v = <yielded value>`` of a ``with ... as v`` (a compile-time value stays one)."""

    _fields = ("target", "value")


# ---- with ----------------------------------------------------------------------------------

def generator_of(obj):
    """The generator function a ``contextlib.contextmanager`` function wraps, or None."""
    code = getattr(obj, "__code__", None)
    wrapped = getattr(obj, "__wrapped__", None)
    if code is _CONTEXTMANAGER_CODE and inspect.isfunction(wrapped):
        return wrapped
    return None


def _find_yields(stmts: list[ast.stmt], nested: bool, out: list) -> None:
    """The reachable ``yield`` statements: (node, inside a loop or conditional)."""
    for s in stmts:
        for n in flow.walk_scope([s]):
            if isinstance(n, (ast.Yield, ast.YieldFrom)) and not isinstance(s, (
                    ast.If, ast.For, ast.While, ast.With, ast.Try)):
                out.append((s, n, nested))
        if isinstance(s, ast.If):
            _find_yields(s.body, True, out)
            _find_yields(s.orelse, True, out)
        elif isinstance(s, (ast.For, ast.While)):
            _find_yields(s.body, True, out)
            _find_yields(s.orelse, True, out)
        elif isinstance(s, ast.With):
            _find_yields(s.body, nested, out)
        elif isinstance(s, ast.Try):
            for b in [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]:
                _find_yields(b, True, out)
        if isinstance(s, _LEAVES):
            return  # what follows is unreachable


def _the_yield(lw: Lowerer, gen, src, node) -> ast.stmt:
    tree = src.tree
    for n in flow.walk_scope(tree.body):
        if isinstance(n, ast.Return):
            loc = src.loc(n, gen.__name__)
            raise TileCodeSyntaxError(
                "Returning from a generator-based context manager is not supported "
                f"({gen.__name__}() returns here; let it reach its end)", loc=loc,
                source_line=src.source_line(loc.line))
    found: list = []
    _find_yields(tree.body, False, found)
    name = gen.__name__
    if not found:
        raise lw.error(node, f"Expected a generator function, but no reachable `yield` "
                             f"statement has been found in {name}()",
                       "a context manager runs its code up to a `yield`, the with block, and "
                       "its code after the `yield`", cls=TileCodeTypeError)
    if len(found) > 1:
        first = src.loc(found[0][0], name).line
        loc = src.loc(found[1][0], name)
        raise TileCodeTypeError(f"Generator-based context manager must have one `yield` "
                                f"statement (another `yield` found on line {first})", loc=loc,
                                source_line=src.source_line(loc.line))
    stmt, y, nested = found[0]
    if nested or not (isinstance(stmt, ast.Expr) and stmt.value is y) or isinstance(
            y, ast.YieldFrom):
        loc = src.loc(stmt, name)
        raise TileCodeTypeError("`yield` statement of a generator-based context manager must "
                                "be placed outside of loops and conditional statements (as a "
                                "statement of its own)", loc=loc,
                                source_line=src.source_line(loc.line))
    return stmt


def _exits_to_flag(stmts: list[ast.stmt], ex: str, rv: str, in_loop: bool
                   ) -> tuple[list[ast.stmt], set[int]]:
    """``break``/``continue`` of the with block (not of loops inside it) and ``return`` ->
    record the exit in ``ex`` (1, 2, 3) and leave the run-once loop."""
    out: list[ast.stmt] = []
    kinds: set[int] = set()
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)) and not in_loop:
            k = 1 if isinstance(s, ast.Break) else 2
            kinds.add(k)
            out += [ast_set(ex, ast_const(k, s), s), ast.Break(**ast_pos(s))]
            break
        if isinstance(s, ast.Return):
            kinds.add(3)
            if s.value is not None:
                kinds.add(4)
                out.append(ast_set(rv, s.value, s))
            out.append(ast_set(ex, ast_const(3, s), s))
            if in_loop:  # leave the loop, then the run-once loop
                out.append(ast.Break(**ast_pos(s)))
                break
            out.append(ast.Break(**ast_pos(s)))
            break
        if isinstance(s, ast.If):
            s.body, k1 = _exits_to_flag(s.body, ex, rv, in_loop)
            s.orelse, k2 = _exits_to_flag(s.orelse, ex, rv, in_loop)
            kinds |= k1 | k2
        elif isinstance(s, (ast.For, ast.While)):
            s.body, k = _exits_to_flag(s.body, ex, rv, True)
            kinds |= k
            if 3 in k:
                out.append(s)
                s = ast_if_eq(ex, 3, [ast.Break(**ast_pos(s))], s)
        elif isinstance(s, ast.With):
            s.body, k = _exits_to_flag(s.body, ex, rv, in_loop)
            kinds |= k
        out.append(s)
    return out, kinds


def lower_with(lw: Lowerer, node: ast.With) -> list:
    if len(node.items) > 1:  # with a() as x, b() as y: ...
        inner = ast.With(node.items[1:], node.body, **ast_pos(node))
        node = ast.With(node.items[:1], [inner], **ast_pos(node))
    item = node.items[0]
    ce = item.context_expr
    f = lw.expr(ce.func) if isinstance(ce, ast.Call) else lw.expr(ce)
    obj = f.obj if isinstance(f, Py) else None
    self_args = []
    if isinstance(obj, inline.BoundMethod):  # `with obj.method(...)` of a dataclass value
        obj, self_args = obj.func, [obj.self_value]
    gen = generator_of(obj)
    if gen is None or not isinstance(ce, ast.Call):
        what = pyname(f.obj) if isinstance(f, Py) else describe_value(f)
        raise lw.error(ce, f"a with statement over {what}: kernels enter only generator-based "
                           "context managers (functions decorated with "
                           "@contextlib.contextmanager)", cls=TileCodeTypeError)
    src = get_source(gen)
    ystmt = _the_yield(lw, gen, src, ce)
    ystmt._tt_yield = True
    args, kwargs = inline.call_args(lw, ce)
    args = self_args + args
    try:
        tree = copy.deepcopy(src.tree)
    finally:
        del ystmt._tt_yield
    tree.decorator_list = []
    prefix = lw.spec.fresh("cm")
    ex, rv = f"{prefix}_exit", f"{prefix}_rv"
    lw.local_names |= {ex, rv}
    body, kinds = _exits_to_flag(copy.deepcopy(node.body), ex, rv, False)
    caller = (lw.src, lw.fn, lw.fname)

    def place(yielded: ast.expr | None) -> inline.Splice:  # the with block, at the yield
        entry: list[ast.stmt] = []
        if item.optional_vars is not None:
            entry.append(AsBind(item.optional_vars, yielded or ast_const(None, ce), **ast_pos(ce)))
        if kinds:
            entry.append(ast_set(ex, ast_const(0, ce), ce))
            block = entry + [ast_run_once(body, ce)]
        else:
            block = entry + body
        return inline.Splice(block, *caller, **ast_pos(node))

    checks: list[ast.stmt] = []
    for k, stmt in ((1, ast.Break), (2, ast.Continue)):
        if k in kinds:
            checks.append(ast_if_eq(ex, k, [stmt(**ast_pos(node))], node))
    if 3 in kinds:
        ret = ast.Return(ast_name(rv, node) if 4 in kinds else None, **ast_pos(node))
        checks.append(ast_if_eq(ex, 3, [ret], node))
    out = inline.inline_generator(lw, tree, src, gen, args, kwargs, ce, place)
    return out + lw.lower_body(checks)


def lower_as_bind(lw: Lowerer, node: AsBind) -> list:
    """``as v``: the yielded value; a compile-time one (``yield 20``) stays compile-time where
    ``v`` is assigned nowhere else."""
    v = lw.expr_value(node.value)
    t = node.target
    if isinstance(t, ast.Name) and t.id in lw.single_stores and (
            isinstance(v, (ir.Const, Py)) or isinstance(v, Tup) and all(
                isinstance(x, (ir.Const, Py)) for x in v.items)):
        lw.defined.add(t.id)
        lw.statics[t.id] = v
        return []
    return lw.assign(t, v, node)


def lower_splice(lw: Lowerer, node: inline.Splice) -> list:
    saved = (lw.src, lw.fn, lw.fname)
    lw.src, lw.fn, lw.fname = node.src, node.fn, node.fname
    lw.depth -= 1
    try:
        return lw.lower_body(node.body)
    finally:
        lw.depth += 1
        lw.src, lw.fn, lw.fname = saved
