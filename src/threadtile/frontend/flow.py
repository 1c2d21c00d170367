"""Which names a piece of a function assigns, and whether a block always leaves: what the
Lowerer's definite-assignment check needs.

A variable read where some path to the read has not assigned it is an error at compile time:
Python raises ``UnboundLocalError`` there, while a GPU would read whatever the register holds.
The check follows ``if``/``else`` exactly (a branch that returns, breaks or continues does not
count); a loop is taken to assign what its body assigns, since later iterations and the code
after a loop that ran see those values (inside a tile kernel's loop body, only from the
body's own assignment on: :func:`loop_body`). A name no path has assigned is cuTile's
``TileSyntaxError`` ("Undefined variable"), one that some paths assign its ``TileTypeError``
("Use of potentially undefined variable"): :func:`unbound`.
"""

from __future__ import annotations

import ast
import contextlib
from typing import TYPE_CHECKING

from ..errors import TileCodeSyntaxError, TileCodeTypeError

if TYPE_CHECKING:
    from .lower import Lowerer

_LEAVES = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def assigned_in(stmts: list[ast.stmt]) -> set[str]:
    """Every name ``stmts`` (nested statements included) assign."""
    out: set[str] = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


@contextlib.contextmanager
def loop_body(lw: Lowerer, stores: set[str], bound: set[str] = frozenset()):
    """Lowering a loop's body, which assigns ``stores`` (``bound``: the names a ``for`` binds
    each iteration). A thread-level kernel's body reads everything it assigns as assigned
    (Python's and numba's rule: a later iteration sees an earlier one's values). A tile
    kernel's body sees only what is assigned before the loop, what the loop binds, and what
    the body has assigned so far: cuTile's loop-carried values start from an assignment
    before the loop, so reading one of ``stores`` before the body assigns it is
    :func:`carried_unset`'s error. After the loop, ``stores`` count as assigned either way."""
    carried = lw.carried_unset
    if getattr(lw.spec, "tile_kernel", False):
        lw.defined |= bound
        lw.carried_unset = carried | (stores - lw.defined)
    else:
        lw.defined |= stores
    try:
        yield
    finally:
        lw.carried_unset = carried
        lw.defined |= stores


def terminates(stmts: list[ast.stmt]) -> bool:
    """Whether control never falls off the end of ``stmts`` (it returns, breaks, continues)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, _LEAVES):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and terminates(last.body) and terminates(last.orelse)
    return False


def own_statements(stmts: list[ast.stmt]):
    """The statements of ``stmts`` and of the ifs among them, not of nested loops (whose
    ``break`` is their own)."""
    for s in stmts:
        yield s
        if isinstance(s, ast.If):
            yield from own_statements(s.body)
            yield from own_statements(s.orelse)


def own_stores(tree: ast.AST):
    """The names ``tree`` assigns in its own scope: every ``Name`` stored to, except the
    targets of comprehensions (local to the comprehension, as in Python)."""
    skip: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.comprehension):
            skip |= {id(x) for x in ast.walk(n.target)}
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in skip:
            yield n


def assigned_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in tree.args.args}
    names |= {n.id for n in own_stores(tree)}
    return names


def literal_locals(tree: ast.FunctionDef) -> dict[str, int]:
    """Local names bound once, to an integer literal, by a statement of the function's own
    body (``N = 100``): numba types them as literals, so they may size a shared or local
    array."""
    stores: dict[str, int] = {}
    for n in own_stores(tree):
        stores[n.id] = stores.get(n.id, 0) + 1
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    out = {}
    for s in tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], ast.Name) and isinstance(s.value, ast.Constant) and type(
                s.value.value) is int:
            name = s.targets[0].id
            if stores.get(name) == 1 and name not in params:
                out[name] = s.value.value
    return out


def single_stores(tree: ast.FunctionDef) -> set[str]:
    """Names the function assigns in exactly one place (and not its parameters)."""
    stores: dict[str, int] = {}
    for n in own_stores(tree):
        stores[n.id] = stores.get(n.id, 0) + 1
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    return {n for n, c in stores.items() if c == 1 and n not in params}


def branch_stores(tree: ast.FunctionDef) -> set[str]:
    """Names the function assigns inside a loop or a branch of an ``if``."""
    out: set[str] = set()
    for n in walk_scope(tree.body):
        if isinstance(n, (ast.For, ast.While, ast.If)):
            inner = ast.Module(body=n.body + n.orelse, type_ignores=[])
            out |= {x.id for x in own_stores(inner)}
    return out


def walk_scope(nodes):
    """The nodes of one function scope: nested defs and lambdas contribute their name and
    defaults, not their bodies."""
    todo = list(nodes)
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += n.decorator_list + n.args.defaults + [d for d in n.args.kw_defaults if d]
        elif isinstance(n, ast.Lambda):
            todo += n.args.defaults + [d for d in n.args.kw_defaults if d]
        else:
            todo += list(ast.iter_child_nodes(n))


def carried_unset(lw: Lowerer, node: ast.Name, name: str):
    """The error for a tile kernel's loop body reading ``name`` before the body assigns it,
    when nothing before the loop did (:func:`loop_body`)."""
    return lw.error(node, f"Use of potentially undefined variable `{name}`: the loop assigns "
                          f"'{name}' after this read and nothing assigns it before the loop, so "
                          "its first iteration reads an undefined value (a tile kernel's "
                          "loop-carried values start from an assignment before the loop)",
                    f"assign '{name}' before the loop", cls=TileCodeTypeError)


def unbound(lw: Lowerer, node: ast.Name, name: str, on_some_path: bool):
    """The error for reading local ``name`` where it is not assigned on every path to the read
    (``on_some_path``: some path assigns it) or on none."""
    if not on_some_path:
        return lw.error(node, f"Undefined variable {name} used: local variable '{name}' is "
                              "read before any assignment to it (Python raises "
                              "UnboundLocalError here)", f"assign '{name}' first; a global of "
                        "that name is hidden by the assignment", cls=TileCodeSyntaxError)
    return lw.error(node, f"Use of potentially undefined variable `{name}`: local variable "
                          f"'{name}' is not assigned on every path to this line (Python raises "
                          "UnboundLocalError here; a GPU would read an undefined value)",
                    f"assign '{name}' before the branch or loop that sets it, or in every "
                    "branch", cls=TileCodeTypeError)
