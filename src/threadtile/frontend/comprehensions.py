"""Tuple comprehensions in kernels: cuTile's ``tuple(f(x) for x in ct.static_iter(it))``.

The comprehension is unrolled while the kernel is compiled. Every ``for`` of it iterates over
a ``ct.static_iter(...)`` (evaluated at compile time, as a ``for`` loop's static_iter is: a
range of constants, a tuple, ``enumerate``/``zip`` of them), its targets are bound to each item
in turn, each ``if`` must be known at compile time (it keeps or drops the item), and the
element is lowered once per item kept: the result is a tuple (a ``Tup``) of those values.

Python's scoping of generator expressions holds: the targets are local to the comprehension
(they neither leak out nor overwrite a variable of the same name), the first iterable is
evaluated in the enclosing scope, and a later iterable or a condition sees only the targets of
the ``for`` clauses before it (a name bound only by a later clause is cuTile's
``TileSyntaxError: Undefined variable n used``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeSyntaxError, TileCodeTypeError
from ..ir import nodes as ir
from . import static
from .source import MISSING, resolve_name
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer

_UNSET = object()


def is_tuple_comprehension(node: ast.Call) -> bool:
    """``tuple(<generator expression>)`` (whether ``tuple`` is the builtin is the caller's)."""
    return len(node.args) == 1 and not node.keywords and isinstance(node.args[0],
                                                                    ast.GeneratorExp)


def _targets(lw: Lowerer, target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        out: set[str] = set()
        for e in target.elts:
            out |= _targets(lw, e)
        return out
    raise lw.error(target, "Tuple comprehension target must be a name or tuple unpacking",
                   cls=TileCodeSyntaxError)


def _reads(expr: ast.AST) -> list[ast.Name]:
    """The names ``expr`` reads from the comprehension's scope (not those a nested
    comprehension or lambda binds itself)."""
    inner = static._bound_inside(expr)
    return [n for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.id not in inner]


def _defined_outside(lw: Lowerer, name: str) -> bool:
    if name in lw.statics or name in lw.consts:
        return True
    if name in lw.local_names:
        return name in lw.defined
    return resolve_name(lw.fn, name) is not MISSING


def _check_scopes(lw: Lowerer, gen: ast.GeneratorExp, names: list[set[str]]) -> None:
    """Python's scoping of a generator expression (see the module's docstring)."""
    local = set().union(*names)
    for n in ast.walk(gen):
        if isinstance(n, ast.NamedExpr):
            raise lw.error(n, "Unsupported syntax: the walrus operator (:=) in a tuple "
                              "comprehension", "compute the value in the element or a "
                              "ct.static_eval()", cls=TileCodeSyntaxError)
    introduced: set[str] = set()
    for k, comp in enumerate(gen.generators):
        if comp.is_async:
            raise lw.error(comp.iter, "async in tuple comprehension is not supported",
                           cls=TileCodeSyntaxError)
        for n in _reads(comp.iter):
            bad = n.id not in introduced if k else not _defined_outside(lw, n.id)
            if n.id in local and bad:
                raise lw.error(n, f"Undefined variable {n.id} used (a tuple comprehension's "
                                  f"variable '{n.id}' is bound only by a later `for` clause)",
                               cls=TileCodeSyntaxError)
        introduced |= names[k]
        for cond in comp.ifs:
            for n in _reads(cond):
                if n.id in local and n.id not in introduced:
                    raise lw.error(n, f"Undefined variable {n.id} used (a tuple "
                                      f"comprehension's variable '{n.id}' is bound only by a "
                                      "later `for` clause)", cls=TileCodeSyntaxError)


def lower(lw: Lowerer, gen: ast.GeneratorExp, node: ast.Call) -> Tup:
    """``tuple(elt for target in ct.static_iter(it) if cond ...)``, unrolled."""
    for comp in gen.generators:
        if not static.is_static_iter(lw, comp.iter):
            raise lw.error(comp.iter, "All iterables in a tuple comprehension must be wrapped "
                                      "in ct.static_iter(), e.g. tuple(... for x in "
                                      "ct.static_iter(...))", cls=TileCodeSyntaxError)
        static._direct(lw, comp.iter, "static_iter")
        if len(comp.iter.args) != 1 or comp.iter.keywords:
            raise lw.error(comp.iter, "static_iter() takes one iterable",
                           cls=TileCodeSyntaxError)
    names = [_targets(lw, comp.target) for comp in gen.generators]
    _check_scopes(lw, gen, names)
    local = set().union(*names)
    saved = {n: lw.statics.get(n, _UNSET) for n in local}
    out: list = []
    # the targets' cells: a lambda made in the element reads a target's value when it is
    # called (its last one once the comprehension is done), as Python's closures do
    scopes = lw.__dict__.setdefault("comprehension_cells", [])
    scopes.append((local, {}))
    try:
        _unroll(lw, gen, 0, out)
    finally:
        scopes.pop()
        for n, v in saved.items():
            if v is _UNSET:
                lw.statics.pop(n, None)
            else:
                lw.statics[n] = v
    return Tup(out)


def _unroll(lw: Lowerer, gen: ast.GeneratorExp, k: int, out: list) -> None:
    if k == len(gen.generators):
        out.append(lw.expr(gen.elt))
        return
    comp = gen.generators[k]
    call: ast.Call = comp.iter
    items = static.evaluate(lw, call.args[0], call, "static_iter() iterable", items=True)
    for x in items:
        v = static.from_py(lw, x, call, "static_iter() iterable")
        stmts = static._bind(lw, comp.target, v, call)
        cells = lw.comprehension_cells[-1][1]
        for n in _targets(lw, comp.target):
            cells[n] = lw.statics[n]
        if stmts:
            if lw._lazy:
                raise lw.error(call, "a tuple comprehension over runtime values inside "
                                     "`and`/`or`, a conditional expression or a loop "
                                     "condition", "assign it to a variable first")
            lw.pre.extend(stmts)
        if all(_keep(lw, c) for c in comp.ifs):
            _unroll(lw, gen, k + 1, out)


def _keep(lw: Lowerer, cond: ast.expr) -> bool:
    c = lw.truth(lw.expr(cond), cond)
    if not isinstance(c, ir.Const):
        raise lw.error(cond, "Tuple comprehension if-conditions must be statically known; if "
                             "the condition can be evaluated at compile time, wrap it with "
                             "ct.static_eval()", cls=TileCodeTypeError)
    return bool(c.value)
