"""Two buffers for the mma operands a loop copies each iteration (ir/operands.py runs it,
in kernels whose blocks hold a multiprocessor: ``operands.holds_multiprocessor``).

A ``for`` loop whose body starts with ``load_operand`` or ``gather_operand`` copies
(ir/operands.py put them there)
waits for each copy in the same iteration that issues it. Where the copies' indices depend
only on the loop variable, values the loop does not change, and scalars the body computes
from those, the copies of iteration j + 1 are issued at the top of iteration j, into the
operand's second buffer, while iteration j's products read the first::

    k_next = load_operand(K, idx(start), stage=0, issue=start < stop)     # before the loop
    for j in range(start, stop):
        k = k_next                                                      # the buffer's view
        k_next = load_operand(K, idx(j + 1), stage=(j + 1 - start) & 1, issue=j + 1 < stop)
        ...
        c = mma(a, k, c)        # waits for k's copy; those issued after it stay in flight

A copy not issued (the last iteration's) still commits an empty group, so each ``mma`` waits
for a fixed number of groups. The simulator runs the same statements: the copies are the
loads they were, one iteration early, and none is made where ``issue`` is false.

The loop qualifies when its step is 1, its bounds are pure expressions of values the loop
does not change, its body has no nested loop, no store, break, continue, return, print or
call, and every ``load_operand`` in it is at its top level; the two buffers of every copy fit
the operands' budget.
"""

from __future__ import annotations

import dataclasses

from ..lang.types import TileType, bool_
from . import nodes as ir

_IMPURE = (ir.Load, ir.CallFunc, ir.TileOp, ir.RawMemory, ir.Special)
# intrinsics that only compute from their operands (others read memory, the clock, the warp)
_PURE_CALLS = {"min", "max", "abs", "floordiv", "pymod", "cdiv"}
_COPIES = ("load_operand", "gather_operand")  # (ir/operands.py)
_FLOW = (ir.Store, ir.Return, ir.Break, ir.Continue, ir.Print, ir.ArrayDecl, ir.For, ir.While)


def pipeline_loops(f: ir.Function, offset: list, budget: int, buffer_bytes) -> bool:
    """Pipeline every qualifying loop of ``f`` (module docstring); ``offset`` is the next free
    byte of the operands' buffers. Returns whether any loop changed."""
    assigned: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            assigned[s.name] = assigned.get(s.name, 0) + 1
    changed = False
    for block in _blocks(f.body):
        for s in list(block):
            if isinstance(s, ir.For):
                changed |= _pipeline(f, block, s, assigned, offset, budget, buffer_bytes)
    return changed


def _blocks(body: list):
    yield body
    for s in body:
        for sub in ("then", "orelse", "body"):
            inner = getattr(s, sub, None)
            if isinstance(inner, list):
                yield from _blocks(inner)


def _pure(e: ir.Expr) -> bool:
    return not any(isinstance(x, _IMPURE) or isinstance(x, ir.Call) and x.name not in _PURE_CALLS
                   for x in ir.walk_expr(e))


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Var)}


def _subst(e: ir.Expr, env: dict[str, ir.Expr], final: dict | None = None) -> ir.Expr:
    """A copy of ``e`` with each read of a name in ``env`` replaced by its value, itself
    substituted, and of a name in ``final`` by a copy of its value as it is."""
    final = final or {}
    if isinstance(e, ir.Var) and e.name in final:
        return _subst(final[e.name], {})
    if isinstance(e, ir.Var) and e.name in env:
        return _subst(env[e.name], env, final)
    changes = {}
    for fld in dataclasses.fields(e):
        v = getattr(e, fld.name)
        if fld.name in ("type", "loc", "func", "attrs"):
            continue
        if isinstance(v, ir.Expr):
            changes[fld.name] = _subst(v, env, final)
        elif isinstance(v, list):
            changes[fld.name] = [_subst(x, env, final) if isinstance(x, ir.Expr) else x
                                 for x in v]
    out = dataclasses.replace(e, **changes)
    if isinstance(e, ir.TileOp):
        out.attrs = dict(e.attrs)
    return out


def _pipeline(f, block: list, loop: ir.For, assigned: dict, offset: list, budget: int,
              buffer_bytes) -> bool:
    step = loop.step
    if not (isinstance(step, ir.Const) and step.value == 1):
        return False
    body = loop.body
    inside = set()
    for s in ir.walk_stmts(body):
        if isinstance(s, _FLOW):
            return False
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.CallFunc) or \
                        isinstance(x, ir.Call) and x.name not in _PURE_CALLS or \
                        isinstance(x, ir.TileOp) and x.op in ("store", "scatter", "atomic",
                                                              "printf", "mma_loop"):
                    return False
        if isinstance(s, ir.Assign):
            inside.add(s.name)
    loads = [s for s in body if isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp)
             and s.value.op in _COPIES]
    nested = [s for s in ir.walk_stmts(body) if isinstance(s, ir.Assign)
              and isinstance(s.value, ir.TileOp) and s.value.op in _COPIES]
    if not loads or len(nested) != len(loads):
        return False
    for bound in (loop.start, loop.stop):
        if not _pure(bound) or _names(bound) & (inside | {loop.var}):
            return False
    # the body's scalars the copies' indices read: assigned once, before the copy, purely
    env: dict[str, ir.Expr] = {}
    for s in body:
        if s in loads:
            break
        if isinstance(s, ir.Assign) and assigned.get(s.name) == 1 and \
                not isinstance(s.value.type, TileType) and _pure(s.value):
            env[s.name] = s.value
    for s in loads:
        for a in s.value.args[1:]:
            if not _pure(a):
                return False
            seen = _subst(a, env)
            if _names(seen) & inside:
                return False
    need = sum(buffer_bytes(s.value.type) for s in loads)
    if offset[0] + need > budget:
        return False
    jt = f.locals.get(loop.var)
    jt = jt if jt is not None else loop.start.type
    loc = loop.loc

    def const(v):
        return ir.Const(jt, loc, v)

    def plus1(e):
        return ir.BinOp(jt, loc, "+", e, const(1))

    nxt = plus1(ir.Var(jt, loc, loop.var))
    b = bool_
    pro_issue = ir.Compare(b, loc, "<", _subst(loop.start, {}), _subst(loop.stop, {}))
    body_issue = ir.Compare(b, loc, "<", plus1(ir.Var(jt, loc, loop.var)), _subst(loop.stop, {}))
    stage = ir.BinOp(jt, loc, "&", ir.BinOp(jt, loc, "-", nxt, _subst(loop.start, {})),
                     const(1))
    prologue, heads, prefetch = [], [], []
    renames = {}
    for s in loads:
        op: ir.TileOp = s.value
        t = op.type
        cur = f"{s.name}_next"
        while cur in f.locals:
            cur += "_"
        f.locals[cur] = t
        renames[s.name] = cur
        op.attrs["offset2"] = offset[0]
        offset[0] += buffer_bytes(t)
        first = ir.TileOp(t, op.loc, op.op,
                          [op.args[0]] + [_subst(a, env, {loop.var: loop.start})
                                          for a in op.args[1:]] + [const(0), pro_issue],
                          dict(op.attrs, pipelined=True))
        again = ir.TileOp(t, op.loc, op.op,
                          [op.args[0]] + [_subst(a, env, {loop.var: nxt})
                                          for a in op.args[1:]] + [stage, body_issue],
                          dict(op.attrs, pipelined=True))
        prologue.append(ir.Assign(s.loc, cur, first))
        heads.append(ir.Assign(s.loc, s.name, ir.Var(t, s.loc, cur)))
        prefetch.append(ir.Assign(s.loc, cur, again))
    # each mma on a pipelined operand also lets this iteration's copies stay in flight
    for s in ir.walk_stmts(body):
        v = s.value if isinstance(s, ir.Assign) else None
        if isinstance(v, ir.TileOp) and v.op == "mma" and \
                any(isinstance(x, ir.Var) and x.name in renames for x in v.args[:2]):
            v.attrs["wait"] = v.attrs.get("wait", 0) + len(loads)
    loop.body = heads + prefetch + [s for s in body if s not in loads]
    at = block.index(loop)
    block[at:at] = prologue
    return True
