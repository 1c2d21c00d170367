"""A running sum that is only read reduced is kept reduced (ir/passes.py runs it on the flat
form, before layouts are chosen).

cuTile's LayerNorm backward sums its partial gradients the way one writes it::

    dw = ct.zeros((TILE_M, TILE_N), ct.float32)          dw_sum = ct.zeros((TILE_N,), ...)
    for i in range(num_tiles):                           for i in range(num_tiles):
        dw += ct.load(DW, (i, bid), (TILE_M, TILE_N)) -->    dw_sum += ct.sum(ct.load(...), 0)
    ct.store(FINAL_DW, bid, ct.sum(dw, axis=0))          ct.store(FINAL_DW, bid, dw_sum)

Its (32, 1024) float32 accumulators are 64 registers a thread each on 512 threads: with the
load in flight, ptxas spilled 2 KiB a thread, and the kernel ran at 0.39x cuTile's speed. A
sum is linear, so the sum of the running total is the running total of the sums: the pass
keeps the reduced value instead, the invariant ``acc_sum == sum(acc)`` at every point of the
function, whatever its control flow.

It applies to a local tile ``acc`` when

- every assignment of it is either an update ``acc = acc + x`` (or ``x + acc``; ``x`` of
  ``acc``'s type and not reading it) or a value that does not read it;
- every other read of it is a ``sum`` of it (``tile.reduce``, kind ``sum``), all with the same
  axes and result type, of ``acc``'s dtype (float: the order of the additions changes, as any
  reduction's may; integers wrap alike);
- an update sits in a loop, and the reduction is worth doing there: the reduced axes are the
  leading ones and each thread holds the inputs of its own results (tile.h's ``reduce_cols``,
  no communication between threads), or ``acc`` is large (:data:`BIG_BYTES` a thread or more),
  where an exchange through shared memory each iteration costs less than what spills.

Then each update becomes ``acc_sum = acc_sum + sum(x)``, each other assignment ``acc = v``
also sets ``acc_sum = sum(acc)`` (zeros: ``acc_sum = zeros``, and ``acc`` is dropped), and
each ``sum(acc)`` reads ``acc_sum``. The simulator executes the same statements.
"""

from __future__ import annotations

from ..lang.types import TileType
from . import nodes as ir
from .tiling import in_thread_columns

BIG_BYTES = 256  # a thread's share of an accumulator at which a reduction each step pays


def reduce_partials(f: ir.Function, threads: int) -> bool:
    """Keep qualifying running sums reduced (module docstring); whether any changed."""
    # (one walk finds the names updated as `acc = acc + x`; only those are looked at whole)
    params = {p.name for p in f.params}
    updated = {s.name for s in ir.walk_stmts(f.body) if isinstance(s, ir.Assign) and
               s.name not in params and isinstance(f.locals.get(s.name), TileType) and
               _update_term(s, s.name, f.locals[s.name]) is not None}
    changed = False
    for name in sorted(updated):
        changed |= _rewrite(f, name, f.locals[name], threads)
    return changed


def _is_var(e: ir.Expr, name: str) -> bool:
    return isinstance(e, ir.Var) and e.name == name


def _reads(e: ir.Expr, name: str) -> bool:
    return any(_is_var(x, name) for x in ir.walk_expr(e))


def _update_term(s: ir.Assign, name: str, t: TileType) -> ir.Expr | None:
    """``x`` where ``s`` is ``name = name + x`` or ``name = x + name``, else None."""
    v = s.value
    if not (isinstance(v, ir.TileOp) and v.op == "binop" and v.attrs.get("op") == "add" and
            len(v.args) == 2 and v.type == t):
        return None
    a, b = v.args
    x = b if _is_var(a, name) else a if _is_var(b, name) else None
    if x is None or x.type != t or _reads(x, name):
        return None
    return x


def _rewrite(f: ir.Function, name: str, t: TileType, threads: int) -> bool:
    updates, inits, sums = [], [], []
    in_loop = False

    def visit(body: list, depth: int) -> bool:
        nonlocal in_loop
        for s in body:
            if isinstance(s, ir.Assign) and s.name == name:
                x = _update_term(s, name, t)
                if x is not None:
                    updates.append((s, x))
                    in_loop |= depth > 0
                    continue
                if _reads(s.value, name):
                    return False
                inits.append(s)
                continue
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and \
                    s.value.op == "reduce" and len(s.value.args) == 1 and \
                    _is_var(s.value.args[0], name):
                sums.append(s)
            elif any(_reads(e, name) for e in ir.stmt_exprs(s)):
                return False
            if isinstance(s, ir.For) and s.var == name:
                return False
            for sub, deeper in (("then", 0), ("orelse", 0), ("body", 1)):
                inner = getattr(s, sub, None)
                if isinstance(inner, list) and not visit(inner, depth + deeper):
                    return False
        return True

    if not visit(f.body, 0) or not updates or not sums or not in_loop:
        return False
    first = sums[0].value
    r = first.type
    if any(s.value.attrs != first.attrs or s.value.type != r for s in sums) or \
            first.attrs.get("kind") != "sum" or not isinstance(r, TileType) or \
            r.dtype != t.dtype:
        return False
    axes = tuple(first.attrs["axes"])
    share = t.size * t.dtype.itemsize // max(threads, 1)
    if not (in_thread_columns(t.shape, axes, threads) or share >= BIG_BYTES):
        return False
    total = f.fresh_name(f"{name}_sum")
    f.locals[total] = r

    def reduced(x: ir.Expr, loc) -> ir.Expr:
        return ir.TileOp(r, loc, "reduce", [x], dict(first.attrs))

    for k, (s, x) in enumerate(updates):
        part = f.fresh_name(f"{name}_part{k}")
        f.locals[part] = r
        _replace(f.body, s, [
            ir.Assign(s.loc, part, reduced(x, s.loc)),
            ir.Assign(s.loc, total, ir.TileOp(r, s.loc, "binop", [
                ir.Var(r, s.loc, total), ir.Var(r, s.loc, part)], {"op": "add"}))])
    kept = False
    for s in inits:
        v = s.value
        if isinstance(v, ir.TileOp) and v.op == "full" and isinstance(v.args[0], ir.Const) \
                and v.args[0].value == 0:
            _replace(f.body, s, [ir.Assign(s.loc, total, ir.TileOp(r, s.loc, "full",
                                                                   [v.args[0]], dict(v.attrs)))])
        else:
            kept = True
            _replace(f.body, s, [s, ir.Assign(s.loc, total,
                                              reduced(ir.Var(t, s.loc, name), s.loc))])
    for s in sums:
        s.value = ir.Var(r, s.value.loc, total)
    if not kept:
        del f.locals[name]
    return True


def _replace(body: list, old: ir.Stmt, new: list) -> bool:
    """Replace statement ``old`` (by identity) in ``body`` or a block inside it by ``new``."""
    for k, s in enumerate(body):
        if s is old:
            body[k:k + 1] = new
            return True
        for sub in ("then", "orelse", "body"):
            inner = getattr(s, sub, None)
            if isinstance(inner, list) and _replace(inner, old, new):
                return True
    return False
