"""Which names a piece of a function assigns, and whether a block always leaves: what the
Lowerer's definite-assignment check needs.

A variable read where some path to the read has not assigned it is an error at compile time:
Python raises ``UnboundLocalError`` there, while a GPU would read whatever the register holds.
The check follows ``if``/``else`` exactly (a branch that returns, breaks or continues does not
count); a loop is taken to assign what its body assigns, since later iterations and the code
after a loop that ran see those values.
"""

from __future__ import annotations

import ast

_LEAVES = (ast.Return, ast.Break, ast.Continue, ast.Raise)


def assigned_in(stmts: list[ast.stmt]) -> set[str]:
    """Every name ``stmts`` (nested statements included) assign."""
    out: set[str] = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


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
