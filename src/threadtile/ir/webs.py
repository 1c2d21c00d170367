"""One variable per loop for a tile name whose loops never share its values (ir/passes.py runs
it on the flat form, first).

A causal attention kernel is often written as two loops over the key tiles, the unmasked ones
and then the masked ones, each with the same names: ``k = ct.load(...)``, ``qk = ct.mma(q, k,
qk0)``, ``p = ...``, ``v = ...``. Each name is then assigned in both loops, and the passes that
place a tile by its single assignment (ir/operands.py: an operand loaded straight into shared
memory; ir/licm.py: an invariant out of its loop) leave it alone: the loops' operands stay in
registers. Yet the two loops' values never meet: each iteration assigns the name before it
reads it, and nothing reads it outside the loops.

A tile variable ``v`` is *private* to a loop when the first statement of the loop's body to
mention ``v`` (reading or writing it, at any depth) is an assignment of ``v`` in the body
itself, not inside a branch, whose value does not read ``v``, and the loop's header (bounds,
condition) does not read it: every read in the loop then sees a value of the same iteration.
Where every read of ``v`` in the function lies in loops it is private to (the outermost of
nested ones), and there are two or more such loops, the second and later loops get a variable
of their own (``v_w1``, ``v_w2``...). Assignments outside those loops, never read, keep ``v``.
``Function.twins`` records each new name with the one it was split from: their values' live
ranges are disjoint, so ir/operands.py gives a twin its original's shared-memory buffer.
"""

from __future__ import annotations

from ..lang.types import TileType
from . import nodes as ir


def split_webs(f: ir.Function) -> bool:
    """Give loop-private tile variables one variable per loop (module docstring); whether any
    name was split."""
    loops = [s for s in ir.walk_stmts(f.body) if isinstance(s, (ir.For, ir.While))]
    if len(loops) < 2:
        return False
    assigned: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            assigned[s.name] = assigned.get(s.name, 0) + 1
    params = {p.name for p in f.params}
    changed = False
    for name, n in assigned.items():
        if n < 2 or name in params or not isinstance(f.locals.get(name), TileType):
            continue
        private = _outermost([L for L in loops if _private(L, name)])
        if len(private) < 2 or not _reads_inside(f.body, name, private):
            continue
        for k, loop in enumerate(private[1:], 1):
            new = f.fresh_name(f"{name}_w{k}", "_")
            f.locals[new] = f.locals[name]
            f.twins[new] = name
            _rename(loop.body, name, new)
        changed = True
    return changed


def _reads(e: ir.Expr, name: str) -> bool:
    return any(isinstance(x, ir.Var) and x.name == name for x in ir.walk_expr(e))


def _mentions(s: ir.Stmt, name: str) -> bool:
    """Whether ``s`` (nested statements included) reads or assigns ``name``."""
    for t in ir.walk_stmts([s]):
        if isinstance(t, ir.Assign) and t.name == name:
            return True
        if any(_reads(e, name) for e in ir.stmt_exprs(t)):
            return True
    return False


def _private(loop: ir.Stmt, name: str) -> bool:
    if any(_reads(e, name) for e in ir.stmt_exprs(loop)):  # the header
        return False
    for s in loop.body:
        if isinstance(s, ir.Assign) and s.name == name:
            return not _reads(s.value, name)
        if _mentions(s, name):
            return False
    return False


def _outermost(loops: list) -> list:
    """The loops of ``loops`` not inside another of them, in source order."""
    inner = {id(t) for L in loops for t in ir.walk_stmts(L.body)}
    return [L for L in loops if id(L) not in inner]


def _reads_inside(body: list, name: str, loops: list) -> bool:
    """Whether every read of ``name`` in ``body`` lies in one of ``loops``."""
    for s in body:
        if any(s is L for L in loops):
            continue
        if any(_reads(e, name) for e in ir.stmt_exprs(s)):
            return False
        for sub in ("then", "orelse", "body"):
            inner = getattr(s, sub, None)
            if isinstance(inner, list) and not _reads_inside(inner, name, loops):
                return False
    return True


def _rename(body: list, old: str, new: str) -> None:
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign) and s.name == old:
            s.name = new
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Var) and x.name == old:
                    x.name = new
