"""A loop's next scores product issued before this iteration's second product, both left
running while the softmax computes (ir/passes.py runs it after ir/prefetch.py).

Attention's loop multiplies twice an iteration: the scores ``s = q @ k_j`` (a fresh product:
its accumulator a zero tile), then, after the softmax made ``p`` of them, ``acc += p @ v_j``.
On Hopper both are wgmma, which run on their own once issued; as written each is waited for
at once, so the tensor cores idle while the block's warps compute the softmax, and the warps
idle while the tensor cores multiply. Where ir/prefetch.py already copies ``k`` an iteration
ahead::

    if a < b: k = copy(K, a)                      if a < b: k = copy(K, a)
    for j in range(a, b):                         if a < b: s = mma_async(q, k, zeros)
        v = copy(V, j)                            for j in range(a, b):
        s = mma(q, k, zeros)                          v = copy(V, j)        (two buffers)
        k = copy(K, j + 1)                 -->        s = mma_wait(s, pending=1)
        p = softmax(s) ...                            k = copy(K, j + 1)
        acc = acc * alpha                             p = softmax(s) ...
        acc = mma(p, v, acc)                          acc = mma_wait(acc, pending=0)
                                                      acc = acc * alpha
                                                      if j + 1 < b: s = mma_async(q, k, zeros)
                                                      acc = mma_async(p, v, acc)
                                                  acc = mma_wait(acc, pending=0)

The next iteration's scores (``k`` has landed: its copy was issued before the softmax) and
this one's ``p @ v`` are issued back to back; the next iteration waits for the scores alone
(wgmma's groups complete in issue order: all but the last one), so its softmax runs while
``p @ v`` multiplies, and waits for that product only where ``acc`` is next read. FlashAttention
3 overlaps its softmax this way. ``v``'s copy at the top of the next iteration would overwrite
the buffer ``p @ v`` may still read: it alternates between two buffers by the parity of ``j``
(``attrs["ring"]``, the second buffer's offset), where the shared memory has room for it
without fewer blocks a multiprocessor.

The same computation, reordered: the scores product moves past statements that neither read
nor write what it reads or writes. Only where the body holds exactly two ``mma`` (none nested),
the first a fresh product whose A is loop-invariant and whose B is the operand ir/prefetch.py
copies ahead, read nowhere else; the second accumulating into a variable the loop carries,
its B a copy of the body read by it alone; the scores variable read only between the two
products (not outside the loop) and the accumulator not read after the second. Elsewhere
mma_async is mma and mma_wait nothing (tile/operands.h): the simulator runs the products
where they are issued.
"""

from __future__ import annotations

import os

from ..lang.types import bool_, void
from . import nodes as ir
from .operands import _blocks, _counts
from .prefetch import _subst

# the bytes of shared memory a multiprocessor gives its blocks (H100/H200: 227 KiB), and the
# reserve a block takes beside its own (1 KiB) and its scratch (a guess: the operands' region
# is what this pass knows)
SM_SHARED = 227 * 1024
BLOCK_RESERVE = 2 * 1024


def overlap_products(f: ir.Function, budget: int) -> bool:
    """Overlap the qualifying loops' products with their softmax (module docstring), the
    operand buffers kept within ``budget`` bytes; returns whether any loop changed."""
    if os.environ.get("THREADTILE_OVERLAP", "1") == "0":
        return False
    changed = False
    for block, _ in list(_blocks(f.body, ())):
        for loop in [s for s in block if isinstance(s, ir.For)]:
            changed |= _overlap(f, block, loop, budget)
    return changed


def _is(s: ir.Stmt, op: str) -> bool:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and s.value.op == op


def _reads(x: ir.Stmt | list, name: str) -> bool:
    stmts = x if isinstance(x, list) else [x]
    return any(isinstance(y, ir.Var) and y.name == name
               for s in stmts for t in ir.walk_stmts([s]) for e in ir.stmt_exprs(t)
               for y in ir.walk_expr(e))


def _count(stmts: list, name: str) -> int:
    return sum(1 for t in ir.walk_stmts(stmts) for e in ir.stmt_exprs(t)
               for y in ir.walk_expr(e) if isinstance(y, ir.Var) and y.name == name)


def _zero(s: ir.Stmt, name: str) -> bool:
    v = s.value if isinstance(s, ir.Assign) else None
    return (isinstance(s, ir.Assign) and s.name == name and isinstance(v, ir.TileOp) and
            v.op == "full" and isinstance(v.args[0], ir.Const) and v.args[0].value == 0)


def _overlap(f: ir.Function, block: list, loop: ir.For, budget: int) -> bool:
    body = loop.body
    if sum(1 for x in ir.walk_stmts(body) if _is(x, "mma")) != 2:
        return False
    first, last = [s for s in body if _is(s, "mma")]
    at_f, at_l = body.index(first), body.index(last)
    q, k, z = first.value.args
    p, v, acc = last.value.args
    s = first.name
    # a fresh product: its accumulator the zero tile assigned just before it
    if not (at_f > 0 and isinstance(z, ir.Var) and _zero(body[at_f - 1], z.name)):
        return False
    # B copied an iteration ahead right after it (ir/prefetch.py), A not assigned in the loop
    ahead = body[at_f + 1] if at_f + 1 < len(body) else None
    assigned = {x.name for x in ir.walk_stmts(body) if isinstance(x, ir.Assign)}
    if not (isinstance(k, ir.Var) and ahead is not None and _is(ahead, "load_operand") and
            ahead.name == k.name and ahead.value.attrs.get("ahead") and
            isinstance(q, ir.Var) and q.name not in assigned):
        return False
    # the second accumulates into a variable the loop carries; its B a copy of the body
    if not (isinstance(acc, ir.Var) and acc.name == last.name and isinstance(v, ir.Var) and
            isinstance(p, ir.Var)):
        return False
    copy_v = next((x for x in body[:at_f] if _is(x, "load_operand") and x.name == v.name),
                  None)
    reads, _ = _counts(f)
    if copy_v is None or reads.get(v.name) != 1 or reads.get(k.name) != 1:
        return False
    # the scores read between the products alone, the accumulator not after the second
    names = {s, z.name}
    if any(_reads(x, n) for n in names for x in body[:at_f - 1] + body[at_l:]) or \
            any(_count(f.body, n) != _count(body, n) for n in names) or \
            any(_reads(x, acc.name) for x in body[at_l + 1:]) or \
            any(isinstance(x, ir.Assign) and x.name in names
                for x in ir.walk_stmts(body[at_l:])):
        return False
    ring = _ring(f, copy_v.value, budget)
    if ring is None:
        return False
    copy_v.value.attrs["ring"] = (ring, loop.var)

    loc, t = loop.loc, f.locals[loop.var]
    prev = f.fresh_name(v.name + "_prev")
    f.locals[prev] = v.type

    def var(name: str, typ) -> ir.Var:
        return ir.Var(typ, loc, name)

    def wait(name: str, typ, pending: int) -> ir.Assign:
        return ir.Assign(loc, name, ir.TileOp(typ, loc, "mma_wait", [var(name, typ)],
                                              {"pending": pending}))

    def product(b: str, run: bool) -> ir.Assign:
        op = ir.TileOp(acc.type, last.loc, "mma", [var(p.name, p.type), var(b, v.type),
                                                   var(acc.name, acc.type)],
                       dict(last.value.attrs, **{"async": run}))
        op.attrs["wait"] = first.value.attrs.get("wait", 0)
        return ir.Assign(last.loc, acc.name, op)

    j, start = var(loop.var, t), _subst(loop.start, "", loop.start)
    # this iteration's scores issued, then the last iteration's p @ v (none in the first),
    # then the scores waited for: the other product runs on while the softmax computes
    first.value.attrs["async"] = True
    later = ir.Compare(bool_, loc, ">", j, start)
    # (the first iteration commits an empty group in its place: the wait below counts groups,
    # and ptxas serializes every product where a path has a different count)
    empty = ir.ExprStmt(loc, ir.TileOp(void, loc, "mma_commit", []))
    body.insert(at_f + 1, ir.If(loc, later, [product(prev, True)], [empty]))
    body.insert(at_f + 2, wait(s, first.value.type, 1))
    # ... waited for where the accumulator is read next; this iteration's p @ v is the next
    # one's (its v in the other buffer), the last one's after the loop
    body.remove(last)
    first_read = next((x for x in body[at_f + 3:] if _reads(x, acc.name)), None)
    if first_read is not None:
        body.insert(body.index(first_read), wait(acc.name, acc.type, 0))
    body.append(ir.Assign(loc, prev, var(v.name, v.type)))
    runs = ir.Compare(bool_, loc, "<", _subst(loop.start, "", loop.start),
                      _subst(loop.stop, "", loop.stop))
    at = block.index(loop)
    block.insert(at + 1, ir.If(loc, runs, [product(prev, False)]))
    return True


def _ring(f: ir.Function, copy: ir.TileOp, budget: int) -> int | None:
    """The offset of the copy's second buffer: after every operand buffer of ``f``, where the
    region stays within the budget and the multiprocessor still takes as many blocks (two at
    most counted) as before; else None."""
    from ..backends.cuda.tiles import buffer_bytes  # noqa: PLC0415  (the layouts' sizes)

    ends = [x.attrs["offset"] + buffer_bytes(x.type) for s in ir.walk_stmts(f.body)
            for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.TileOp) and x.op in ("load_operand", "gather_operand")]
    used = max(ends)
    at = -(-used // 1024) * 1024
    size = buffer_bytes(copy.type)
    if at + size > budget:
        return None

    def blocks(n: int) -> int:
        return SM_SHARED // (n + BLOCK_RESERVE)

    return at if blocks(at + size) >= min(blocks(used), 2) else None
