"""Operand copies issued one iteration ahead (ir/passes.py runs it after ir/operands.py).

A loop whose body copies an mma operand into shared memory and multiplies by it first thing
waits for the copy every iteration (attention's K: the scores need it at once; on the H200 a
sixth of the prefill kernel's warp time went to that wait). V's copy, read by the second
product, has the softmax to land in. Where the first ``mma`` of a ``for`` loop's body reads
an operand copied at the top of the body::

    for j in range(a, b):                      k = load_operand(K, ... a ...)
        k = load_operand(K, ... j ...)         for j in range(a, b):
        v = load_operand(V, ... j ...)  -->        v = load_operand(V, ... j ...)
        s = mma(q, k, z)                           s = mma(q, k, z)
        ...                                        k = load_operand(K, ... j + 1 ...)
                                                   ...

the copy for the next iteration is issued into the same buffer as soon as the product has
read it (the copy's barrier waits for every warp's product), so it lands while this
iteration's softmax and second product run; no second buffer, no registers. The copy before
the loop runs where the loop runs an iteration (``if a < b``), and the last iteration copies
its own tile again (index ``min(j + 1, b - 1)``): every copy reads a tile the loop as written
reads (a tile wholly outside the array would be undefined without a padding mode), and the
simulator runs the same statements. The CUDA backend waits for the last copy after the loop
(tile/operands.h ``operand_drain``: no copy is still landing when the block exits).

Only where that is the same computation: a step of 1, bounds without side effects (``min``,
``max`` and ``abs`` allowed: the loops of a causal kernel split at the diagonal), the loop
variable not assigned in the body, no break, continue or return, no memory written in the
loop (a store could change what the early copy reads), the copy's indices functions of the
loop variable and values the loop does not assign, and the operand assigned there alone and
read by that ``mma`` alone; and every operand of that ``mma`` copied in the body so (else it
waits for a copy anyway). The copies marked ``attrs["ahead"]``; each ``mma``'s count of
later copies to leave pending (``attrs["wait"]``, ir/operands.py) recounted for the rotated
order.
"""

from __future__ import annotations

import copy

from ..lang.types import bool_
from . import nodes as ir
from .operands import _WRITES, COPIES, _blocks, _counts, count_waits


def prefetch_operands(f: ir.Function) -> bool:
    """Issue the qualifying copies one iteration ahead (module docstring); returns whether any
    loop changed."""
    changed = False
    for block, _ in list(_blocks(f.body, ())):
        for loop in [s for s in block if isinstance(s, ir.For)]:
            changed |= _rotate(f, block, loop)
    return changed


def _is(s: ir.Stmt, ops: tuple) -> bool:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and s.value.op in ops


_PURE_CALLS = ("min", "max", "abs")  # a loop's bounds may be written with them


def _pure(e: ir.Expr) -> bool:
    return not any(isinstance(x, (ir.CallFunc, ir.Load, ir.TileOp)) or
                   isinstance(x, ir.Call) and x.name not in _PURE_CALLS
                   for x in ir.walk_expr(e))


def _rotate(f: ir.Function, block: list, loop: ir.For) -> bool:
    body = loop.body
    t = f.locals.get(loop.var)
    if not (isinstance(loop.step, ir.Const) and loop.step.value == 1 and _pure(loop.start) and
            _pure(loop.stop) and loop.start.type == t == loop.stop.type):
        return False
    assigned_here = {x.name for x in ir.walk_stmts(body) if isinstance(x, ir.Assign)}
    if loop.var in assigned_here or any(isinstance(x, ir.Var) and x.name in assigned_here
                                        for x in ir.walk_expr(loop.stop)):
        return False
    for x in ir.walk_stmts(body):
        if isinstance(x, (ir.Store, ir.Break, ir.Continue, ir.Return, ir.Print, ir.ArrayDecl)):
            return False
        for e in ir.stmt_exprs(x):
            if any(isinstance(y, (ir.Call, ir.CallFunc)) or
                   isinstance(y, ir.TileOp) and y.op in _WRITES for y in ir.walk_expr(e)):
                return False
    first = next((s for s in body if _is(s, ("mma",))), None)
    if first is None:
        return False
    reads, assigned = _counts(f)
    read_by_first = {a.name for a in first.value.args[:2] if isinstance(a, ir.Var)}
    at = body.index(first)
    moved = []
    for s in body[:at]:
        if not (_is(s, ("load_operand",)) and s.name in read_by_first and
                reads.get(s.name) == 1 and assigned.get(s.name) == 1):
            continue
        names = {x.name for e in s.value.args for x in ir.walk_expr(e) if isinstance(x, ir.Var)}
        if names & assigned_here:
            continue  # (an index computed in the body: not known an iteration early)
        moved.append(s)
    # an operand of that product copied in the body and left there: the product waits for it
    # every iteration anyway (a mixture of experts' gathered rows beside its weights)
    waited = {s.name for s in body[:at] if _is(s, COPIES) and s.name in read_by_first}
    if not moved or waited - {s.name for s in moved}:
        return False
    # the next iteration's index, the last iteration's own at the end: min(j + 1, stop - 1)
    loc, j = loop.loc, ir.Var(t, loop.loc, loop.var)
    plus = ir.BinOp(t, loc, "+", j, ir.Const(t, loc, 1))
    nxt = ir.Select(t, loc, ir.Compare(bool_, loc, "<", plus, loop.stop), plus, j)
    first_copies = []
    for k, s in enumerate(moved):
        body.remove(s)
        ahead = ir.Assign(s.loc, s.name, _subst(s.value, loop.var, nxt))
        ahead.value.attrs = dict(s.value.attrs, ahead=True)
        body.insert(body.index(first) + 1 + k, ahead)
        first_copies.append(ir.Assign(s.loc, s.name, _subst(s.value, loop.var, loop.start)))
    # the first iteration's copies, where there is one (else tile `start` may lie outside)
    runs = ir.Compare(bool_, loc, "<", _subst(loop.start, "", loop.start),
                      _subst(loop.stop, "", loop.stop))
    block.insert(block.index(loop), ir.If(loc, runs, first_copies))
    count_waits(body, frozenset(s.name for s in moved))
    return True


def _subst(e: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    """A copy of ``e`` with each read of variable ``name`` replaced by a copy of ``value``
    (``name`` "": a copy of ``e``)."""
    if isinstance(e, ir.Var) and name and e.name == name:
        return _subst(value, "", value)
    out = copy.copy(e)
    for k, v in vars(e).items():
        if k in ("type", "loc"):
            continue
        if isinstance(v, ir.Expr):
            setattr(out, k, _subst(v, name, value))
        elif isinstance(v, list):
            setattr(out, k, [_subst(x, name, value) if isinstance(x, ir.Expr) else x
                             for x in v])
        elif isinstance(v, dict):
            setattr(out, k, dict(v))
    return out
