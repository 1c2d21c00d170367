"""Loop-invariant tile operations out of their loops (ir/passes.py runs it on the flat form).

Users write index tiles, masks and broadcasts where they read naturally: inside the loop that
uses them (MoE's ``a_row_indices[:, None]`` broadcast to the gathered tile's shape, an
``arange`` of column offsets). Each iteration would recompute them, and a broadcast across
threads goes through shared memory behind two barriers. A tile operation is moved in front of
its loop when:

- it is a statement of the loop's own body (not inside a branch of it), the only assignment
  of its variable in the function;
- it cannot fail or have effects: an elementwise operation, a shape operation, ``full``,
  ``arange`` or ``item`` (integer division and modulo stay: a loop that never runs must not
  raise);
- nothing it reads is assigned in the loop (loop variable included).

Inner loops first, repeatedly, so that a chain of invariant operations leaves together, and
what leaves an inner loop may leave the outer one too.
"""

from __future__ import annotations

from ..lang.types import TileType
from . import nodes as ir

_PURE = ("full", "arange", "unary", "cast", "math", "where", "broadcast", "reshape", "permute",
         "item")
_RAISING = ("floordiv", "mod", "pow")


def hoist_invariants(f: ir.Function) -> bool:
    """Move loop-invariant tile operations in front of their loops; whether any moved."""
    counts: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            counts[s.name] = counts.get(s.name, 0) + 1
        if isinstance(s, ir.For):
            counts[s.var] = counts.get(s.var, 0) + 1
    return _block(f.body, counts)


def _block(stmts: list, counts: dict) -> bool:
    moved = False
    k = 0
    while k < len(stmts):
        s = stmts[k]
        for sub in ("then", "orelse", "body"):
            inner = getattr(s, sub, None)
            if isinstance(inner, list):
                moved |= _block(inner, counts)
        if isinstance(s, (ir.For, ir.While)):
            out = _invariants(s, counts)
            if out:
                stmts[k:k] = out
                k += len(out)
                moved = True
        k += 1
    return moved


def _invariants(loop, counts: dict) -> list:
    """The statements taken out of ``loop``'s body, in order."""
    assigned = {x.name for x in ir.walk_stmts(loop.body) if isinstance(x, ir.Assign)}
    if isinstance(loop, ir.For):
        assigned.add(loop.var)
    else:
        assigned |= {x.name for e in [loop.cond] for x in ir.walk_expr(e)
                     if isinstance(x, ir.Var)}  # (a while's test reads them each time)
    out = []
    changed = True
    while changed:
        changed = False
        for s in list(loop.body):
            if _movable(s, assigned, counts):
                loop.body.remove(s)
                out.append(s)
                assigned.discard(s.name)
                changed = True
    return out


def _movable(s: ir.Stmt, assigned: set, counts: dict) -> bool:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and
            counts.get(s.name) == 1):
        return False
    v = s.value
    pure = v.op in _PURE or (v.op == "binop" and v.attrs["op"] not in _RAISING and not (
        v.attrs["op"] == "div" and isinstance(v.type, TileType) and not v.type.dtype.is_float))
    if not pure:
        return False
    for e in v.args:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Var) and x.name in assigned:
                return False
            if isinstance(x, (ir.Call, ir.CallFunc, ir.Load)) or \
                    isinstance(x, ir.TileOp) and x is not v:
                return False
    return True
