"""The k loop of a matrix multiply as one operation.

The pass finds, in a kernel with a fixed block,

    for k in range(lo, hi):                      # step 1
        a = load(A, (i, k), shape=(M, K))        # float32 arrays: astype(load(...), tfloat32)
        b = load(B, (k, j), shape=(K, N))
        acc = mma(a, b, acc)                     # acc kept in tensor-core fragments

where A and B are 2-d global arrays passed to the kernel (not array variables: an item picked
from a list of arrays at run time stays a loop of loads and mmas, which measured faster than
the staged loop on AllGatherMatmul's float32 tiles), ``i`` and ``j`` do not change in the
loop, and neither ``k`` nor the tiles are used after it, and replaces the loop with

    acc = mma_loop(A, B, i, j, lo, hi, acc)

A batched loop, 3-d arrays loaded as ``load(A, (z, i, k), shape=(1, M, K))`` and reshaped to
2-d (in either order with the cast), becomes ``mma_loop(A, B, i, j, lo, hi, acc, za, zb)``
(``batch``), which the CUDA backend runs as the 2-d loop on the batch's 2-d views (the Hopper
main loop on tensor maps of the 3-d arrays' rows, where a tile cannot cross batches).

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
            fused = _fuse(f, s, arrays, threads, out[-1] if out else None) \
                if isinstance(s, ir.For) else None
            if fused is not None:
                out.append(fused)
                changed = True
                continue
            ir.rewrite_nested(s, block)
            out.append(s)
        return out

    f.body = block(f.body)
    return changed


def _fuse(f: ir.Function, s: ir.For, arrays: set[str], threads: int,
          before: ir.Stmt | None) -> ir.Assign | None:
    if not (isinstance(s.step, ir.Const) and s.step.value == 1):
        return None
    got = match(s, arrays)
    if got is None:
        return None
    la, lb, mma, acc, cast, batch = got
    ta, tb = mma.args[0].type, mma.args[1].type
    if not tiling.tensor_core(ta, tb) or ta.shape[0] % tiling.MMA_M:
        return None
    names = {s.var} | {x.name for x in s.body if x.name != acc}
    if _used_outside(f.body, s, names):
        return None
    # a batched loop (3-d loads) multiplies the 2-d tiles of a batch
    a2, b2 = step_tiles(la, lb, batch)
    hopper = tiling.sm90_bytes(a2, b2, threads) > 0
    if a2.dtype in tiling.FLOAT8_TYPES and not hopper:
        return None  # runs as written (mma_loop has no staged loop for 8-bit operands)
    i, j = (la.args[1], lb.args[2]) if batch is None else (la.args[2], lb.args[3])
    args = [la.args[0], lb.args[0], i, j, s.start, s.stop, ir.Var(mma.type, s.loc, acc)]
    if batch is not None:
        args += list(batch)
    # the accumulator zeros from the statement just before the loop: the tfloat32 loop then
    # starts from zeros in its own layout (tile/kloop_sm90_tf32.h, Zero)
    zero = isinstance(before, ir.Assign) and before.name == acc and \
        isinstance(before.value, ir.TileOp) and before.value.op == "full" and \
        isinstance(before.value.args[0], ir.Const) and before.value.args[0].value == 0
    attrs = {"a": la, "b": lb, "cast": cast, "mma": mma, "var": s.var, "hopper": hopper,
             "batch": batch is not None, "zero": zero}
    return ir.Assign(s.loc, acc, ir.TileOp(mma.type, s.loc, "mma_loop", args, attrs))


def match(s: ir.For, arrays: set[str], fragments: bool = True):
    """(load of A, load of B, the mma, the accumulator's name, the cast's dtype or None, the
    two batch indices or None) of a loop body of the qualifying form, else None. Each operand
    of the mma is a load, or a load taken through a reshape that drops a leading axis of 1
    (3-d loads of a batch) and a cast to tfloat32 of float32 values (or the mma's widening of
    8-bit floats to float16), in either order. ``fragments``: the accumulator must have been
    given the tensor cores' layout (False: before layouts are chosen, ir/colsplit.py)."""
    body = s.body
    if not body or not all(isinstance(x, ir.Assign) and isinstance(x.value, ir.TileOp)
                           for x in body):
        return None
    last = body[-1]
    m = last.value
    if m.op != "mma" or not isinstance(m.type, TileType) or \
            (fragments and m.type.layout != "mma"):
        return None
    defs = {x.name: x.value for x in body[:-1]}
    if len(defs) != len(body) - 1:
        return None
    va, vb, vacc = m.args
    if not all(isinstance(v, ir.Var) for v in (va, vb, vacc)) or vacc.name != last.name or \
            va.name == vb.name:
        return None
    chains = [_chain(v.name, defs) for v in (va, vb)]
    if None in chains or len({n for c in chains for n in c[3]}) != len(defs):
        return None  # every statement of the body is on one operand's chain
    (la, ca, ra, _), (lb, cb, rb, _) = chains
    if (ca is None) != (cb is None) or ra != rb:
        return None
    if ca is not None and ca.type.dtype != cb.type.dtype:
        return None
    cast = ca.type.dtype if ca is not None else None
    nd = 3 if ra else 2
    for ld in (la, lb):
        arr = ld.args[0]
        at = arr.type
        if not (isinstance(arr, ir.Var) and arr.name in arrays and at.space == "global" and
                at.ndim == nd and ld.attrs.get("order") == tuple(range(nd)) and
                ld.attrs.get("padding") in (None, "zero") and ld.type.shape[:nd - 2] ==
                (1,) * (nd - 2)):
            return None
    if la.type.dtype not in (float16, bfloat16, float32) + tiling.FLOAT8_TYPES or \
            lb.type.dtype != la.type.dtype or \
            (cast is not None and (cast, la.type.dtype) not in _CASTS) or \
            (cast is None and la.type.dtype in tiling.FLOAT8_TYPES):
        return None
    k = s.var
    if not (_is_var(la.args[nd], k) and _is_var(lb.args[nd - 1], k)):
        return None
    changing = {k} | {x.name for x in body}
    fixed = [la.args[nd - 1], lb.args[nd]] + ([la.args[1], lb.args[1]] if ra else [])
    for e in fixed:
        if any(isinstance(x, ir.Var) and x.name in changing or isinstance(x, ir.TileOp)
               for x in ir.walk_expr(e)):
            return None
    batch = (la.args[1], lb.args[1]) if ra else None
    return la, lb, m, last.name, cast, batch


# the casts a loop's operands may take between load and mma: float32 to tfloat32, and the
# 8-bit floats' widening to float16 that the frontend puts before their mma (exact)
_CASTS = {(tfloat32, float32)} | {(float16, t) for t in tiling.FLOAT8_TYPES}


def _is_var(e: ir.Expr, name: str) -> bool:
    """Whether a tile index is the variable ``name``, or its widening to the indices' int64
    (a cuTile kernel's int32 loop variable: its array shapes are int32)."""
    if isinstance(e, ir.Cast) and e.type.is_int and e.value.type.is_int and \
            e.value.type.bits <= e.type.bits:
        e = e.value
    return isinstance(e, ir.Var) and e.name == name


def _chain(name: str, defs: dict):
    """(the load, the cast or None, whether a reshape, the names) from an operand back to its
    load through at most one cast (``_CASTS``) and one reshape dropping a leading 1."""
    cast, reshape, names = None, False, []
    while True:
        x = defs.get(name)
        if x is None:
            return None
        names.append(name)
        if x.op == "load":
            return x, cast, reshape, names
        src = x.args[0] if x.args else None
        if not isinstance(src, ir.Var):
            return None
        if x.op == "cast" and cast is None and \
                (x.type.dtype, src.type.dtype) in _CASTS:
            cast = x
        elif x.op == "reshape" and not reshape and src.type.shape[:1] == (1,) and \
                src.type.shape[1:] == x.type.shape and len(x.type.shape) == 2:
            reshape = True
        else:
            return None
        name = src.name


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


def _drop_batch(t: TileType) -> TileType:
    return TileType(t.dtype, t.shape[1:], t.layout)


def step_tiles(la: ir.TileOp, lb: ir.TileOp, batch) -> tuple[TileType, TileType]:
    """The 2-d tiles a matched loop (``match``: its loads and batch indices) multiplies each
    step: a batched loop's without the batch axis."""
    return (la.type, lb.type) if batch is None else (_drop_batch(la.type), _drop_batch(lb.type))


def is_float8(op: ir.TileOp) -> bool:
    """Whether an ``mma_loop`` multiplies 8-bit floats (tile/kloop_sm90_f8.h)."""
    return loaded(op)[0].dtype in tiling.FLOAT8_TYPES


def loaded(op: ir.TileOp) -> tuple[TileType, TileType]:
    """The 2-d tiles an ``mma_loop`` loads each step (a batched loop's without the batch axis)."""
    a, b = op.attrs["a"].type, op.attrs["b"].type
    return (_drop_batch(a), _drop_batch(b)) if op.attrs.get("batch") else (a, b)


def operands(op: ir.TileOp) -> tuple[TileType, TileType]:
    """The tile types an ``mma_loop`` multiplies (after the cast to tfloat32, if any)."""
    return op.attrs["mma"].args[0].type, op.attrs["mma"].args[1].type
