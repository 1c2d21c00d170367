"""The k loop of a matrix multiply as one operation.

The pass finds, in a kernel with a fixed block,

    for k in range(lo, hi):                      # step 1
        a = load(A, (i, k), shape=(M, K))        # float32 arrays: astype(load(...), tfloat32)
        b = load(B, (k, j), shape=(K, N))
        acc = mma(a, b, acc)                     # acc kept in tensor-core fragments

where A and B are 2-d global arrays passed to the kernel, ``i`` and ``j`` do not change in the
loop, and neither ``k`` nor the tiles are used after it, and replaces the loop with

    acc = mma_loop(A, B, i, j, lo, hi, acc)

One operation, so that the CUDA backend can run the loop as a pipeline (copies of later steps in
flight while the tensor cores multiply this one: tile.h's ``mma_loop``) and the simulator runs
the same operation, as the loop it stands for, with the checks of each load and multiply at
their own lines. The op's attributes keep what the loop said: the two loads (``a``, ``b``:
shapes, padding, locations), the cast to tfloat32 if any (``cast``), the ``mma`` and the loop
variable (``var``), and which main loop the CUDA backend may take: ``hopper`` when the shapes
are those of the sm_90a main loop (TMA and wgmma; it needs the arrays' tensor maps), else the
staged loop (cp.async where its buffers fit: ir/tiling.py, ``staged_ok``; else one buffer).
"""

from __future__ import annotations

from ..lang.types import TileType, bfloat16, float16, float32, tfloat32
from . import nodes as ir
from . import tiling


def fuse_k_loops(f: ir.Function, threads: int) -> bool:
    """Replace the k loops of kernel ``f`` that qualify (module docstring) with ``mma_loop``
    operations. Only the kernel itself qualifies: the tensor maps are kernel parameters.
    Returns whether anything changed."""
    if not f.is_kernel:
        return False
    arrays = {p.name for p in f.params if not p.is_constant}
    changed = False

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        nonlocal changed
        out = []
        for s in stmts:
            fused = _fuse(f, s, arrays, threads) if isinstance(s, ir.For) else None
            if fused is not None:
                out.append(fused)
                changed = True
                continue
            if isinstance(s, ir.If):
                s.then, s.orelse = block(s.then), block(s.orelse)
            elif isinstance(s, (ir.For, ir.While)):
                s.body = block(s.body)
            out.append(s)
        return out

    f.body = block(f.body)
    return changed


def _fuse(f: ir.Function, s: ir.For, arrays: set[str], threads: int) -> ir.Assign | None:
    if not (isinstance(s.step, ir.Const) and s.step.value == 1):
        return None
    got = _match(s, arrays)
    if got is None:
        return None
    la, lb, mma, acc, cast = got
    ta, tb = mma.args[0].type, mma.args[1].type
    if not tiling.tensor_core(ta, tb):
        return None
    names = {s.var} | {x.name for x in s.body if x.name != acc}
    if _used_outside(f.body, s, names):
        return None
    hopper = tiling.sm90_bytes(la.type, lb.type, threads) > 0
    args = [la.args[0], lb.args[0], la.args[1], lb.args[2], s.start, s.stop,
            ir.Var(mma.type, s.loc, acc)]
    attrs = {"a": la, "b": lb, "cast": cast, "mma": mma, "var": s.var, "hopper": hopper}
    return ir.Assign(s.loc, acc, ir.TileOp(mma.type, s.loc, "mma_loop", args, attrs))


def _match(s: ir.For, arrays: set[str]):
    """(load of A, load of B, the mma, the accumulator's name, the cast's dtype or None) of a
    loop body of the qualifying form, else None."""
    body = s.body
    if len(body) not in (3, 5) or not all(isinstance(x, ir.Assign) and
                                          isinstance(x.value, ir.TileOp) for x in body):
        return None
    loads = {x.name: x.value for x in body[:-1] if x.value.op == "load"}
    casts = {x.name: x.value for x in body[:-1] if x.value.op == "cast"}
    last = body[-1]
    m = last.value
    if len(loads) != 2 or len(casts) != len(body) - 3 or m.op != "mma" or \
            not isinstance(m.type, TileType) or m.type.layout != "mma":
        return None
    va, vb, vacc = m.args
    if not all(isinstance(v, ir.Var) for v in (va, vb, vacc)) or vacc.name != last.name or \
            va.name == vb.name:
        return None
    srcs = []
    for v in (va, vb):
        if v.name in casts:  # float32 loads cast to tfloat32: the load is the cast's only source
            c = casts[v.name]
            x = c.args[0]
            if not (isinstance(x, ir.Var) and x.name in loads and c.type.dtype == tfloat32 and
                    loads[x.name].type.dtype == float32):
                return None
            srcs.append(x.name)
        elif v.name in loads and not casts:
            srcs.append(v.name)
        else:
            return None
    if srcs[0] == srcs[1]:
        return None
    la, lb = loads[srcs[0]], loads[srcs[1]]
    for ld in (la, lb):
        arr = ld.args[0]
        at = arr.type
        if not (isinstance(arr, ir.Var) and arr.name in arrays and at.space == "global" and
                at.ndim == 2 and ld.attrs.get("order") == (0, 1) and
                ld.attrs.get("padding") in (None, "zero")):
            return None
    if la.type.dtype not in (float16, bfloat16, float32) or lb.type.dtype != la.type.dtype:
        return None
    k = s.var
    ka, kb = la.args[2], lb.args[1]
    if not (isinstance(ka, ir.Var) and ka.name == k and isinstance(kb, ir.Var) and kb.name == k):
        return None
    changing = {k} | {x.name for x in body}
    for e in (la.args[1], lb.args[2]):
        if any(isinstance(x, ir.Var) and x.name in changing or isinstance(x, ir.TileOp)
               for x in ir.walk_expr(e)):
            return None
    return la, lb, m, last.name, (tfloat32 if casts else None)


def _used_outside(body: list[ir.Stmt], loop: ir.For, names: set[str]) -> bool:
    for s in body:
        if s is loop:
            continue
        if isinstance(s, (ir.Assign, ir.For)) and (getattr(s, "name", None) in names or
                                                   getattr(s, "var", None) in names):
            return True
        for e in ir.stmt_exprs(s):
            if any(isinstance(x, ir.Var) and x.name in names for x in ir.walk_expr(e)):
                return True
        for sub in ("then", "orelse", "body"):
            if _used_outside(getattr(s, sub, []) or [], loop, names):
                return True
    return False


def operands(op: ir.TileOp) -> tuple[TileType, TileType]:
    """The tile types an ``mma_loop`` multiplies (after the cast to tfloat32, if any)."""
    return op.attrs["mma"].args[0].type, op.attrs["mma"].args[1].type
