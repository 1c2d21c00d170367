"""A matmul whose accumulator no block can hold in registers, run in column slices
(ir/passes.py runs it on the flat form, before layouts and the block's size are chosen).

A float32 accumulator of 256x256 tiles takes 256 KiB: a multiprocessor's whole register file,
so no block size keeps it in registers (at 16 warps, 128 registers a thread for the
accumulator alone, the most a thread of such a block may have). ptxas spills it, and the
product ran at 8-20 TFLOP/s on an H200 (bench/tile_sweep.py, plain, persistent and batched
256x256 tiles; cuTile on the same source 7-21). Where a kernel says

    acc = full((M, N), c)
    for k in range(lo, hi):                      # the k loop ir/kloop.py fuses
        a = load(A, (i, k), shape=(M, K))
        b = load(B, (k, j), shape=(K, N))        # (casts, the reshape of a batch's 3-d load)
        acc = mma(a, b, acc)
    store(Out, (..., j2), cast(acc))             # casts and reshapes adding leading 1s

and reads ``acc`` nowhere else, the three parts become the body of a loop over P column slices
(the fewest, a power of two, that bring the accumulator to ``ACC_BYTES``): B's loads take
shape (K, N / P) at column tile ``j * P + p`` and the store's tile (..., N / P) at
``j2 * P + p``. The slices load and store the same elements as the whole tile (padding and
masking at the array's edges alike, since a tile index counts tiles of the load's own shape);
A's tiles are read P times, from L2. Each slice is an ordinary product of (M, N / P) on the
paths its shape takes (the Hopper loop for 256x128), the block sized for it (compiler.py
``auto_threads``), and the kernel's code that of one slice (a loop, not copies: NVRTC's time
unchanged).
"""

from __future__ import annotations

import copy

from ..lang.types import TileType, bool_, int32, int64
from . import nodes as ir
from .kloop import match

# The largest accumulator a block keeps in registers: half of a multiprocessor's 64 Ki
# registers (128x256 float32, 128 a thread on 8 warps, runs at 93% of cuBLAS).
ACC_BYTES = 128 * 1024


def split_wide_products(f: ir.Function) -> bool:
    """Run the k loops of kernel ``f`` whose accumulators exceed ``ACC_BYTES`` in column
    slices (module docstring). Returns whether anything changed."""
    if not f.is_kernel:
        return False
    arrays = {p.name for p in f.params if not p.is_constant}
    changed = False

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        nonlocal changed
        out: list[ir.Stmt] = []
        i = 0
        while i < len(stmts):
            seg = _segment(f, stmts, i, arrays)
            if seg is not None:
                out.append(seg.loop(f))
                i += seg.length
                changed = True
                continue
            s = stmts[i]
            ir.rewrite_nested(s, block)
            out.append(s)
            i += 1
        return out

    f.body = block(f.body)
    return changed


class _Segment:
    """The accumulator's ``full``, its k loop and the statements up to its store."""

    def __init__(self, stmts: list[ir.Stmt], wide: dict[str, TileType], b_load: ir.TileOp,
                 store: ir.TileOp, parts: int):
        # wide: the names whose tiles are cut, with their whole types
        self.stmts, self.wide, self.b_load, self.store = stmts, wide, b_load, store
        self.parts = parts
        self.length = len(stmts)

    def loop(self, f: ir.Function) -> ir.For:
        """``for p in range(parts):`` over the segment, its wide tiles' last axis cut to
        N / parts and the column tile indices of B's load and of the store scaled to the
        slice's: ``j * parts + p``. One loop, not copies: the kernel's code (and NVRTC's
        time) stays that of one slice."""
        for n, t in self.wide.items():
            f.locals[n] = _cut(t, self.parts)
        for s in ir.walk_stmts(self.stmts):
            if isinstance(s, ir.Assign) and s.name in self.wide:
                s.value.type = _cut(s.value.type, self.parts)
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.Var) and x.name in self.wide:
                        x.type = _cut(self.wide[x.name], self.parts)
        loc = self.stmts[0].loc
        var = f.fresh_name("col_slice", "_")
        f.locals[var] = int32
        for op in (self.b_load, self.store):
            op.attrs["shape"] = op.attrs["shape"][:-1] + (op.attrs["shape"][-1] // self.parts,)
            j = op.args[-1]
            p = ir.Var(int32, loc, var)
            op.args[-1] = ir.BinOp(j.type, loc, "+", ir.BinOp(
                j.type, loc, "*", j, ir.Const(j.type, loc, self.parts)),
                p if j.type == int32 else ir.Cast(j.type, loc, p))
        # a slice past the first whose columns lie wholly outside the output is skipped: the
        # whole tile stored only its columns inside (a store wholly outside is an error in
        # the simulator; the first slice, where the whole tile starts, still reports one)
        out, col = self.store.args[0], self.store.args[-1]
        width = self.store.attrs["shape"][-1]
        start: ir.Expr = ir.BinOp(col.type, loc, "*", copy.deepcopy(col),
                                  ir.Const(col.type, loc, width))
        if col.type != int64:
            start = ir.Cast(int64, loc, start)
        dim = ir.ArrayDim(int64, loc, ir.Var(out.type, loc, out.name), "shape",
                          out.type.ndim - 1)
        inside = ir.Compare(bool_, loc, "<", start, dim)
        cond = ir.Logical(bool_, loc, "or", ir.Compare(
            bool_, loc, "==", ir.Var(int32, loc, var), ir.Const(int32, loc, 0)), inside)
        return ir.For(loc, var, ir.Const(int32, loc, 0), ir.Const(int32, loc, self.parts),
                      ir.Const(int32, loc, 1), [ir.If(loc, cond, self.stmts, [])])


def _cut(t: TileType, parts: int) -> TileType:
    return TileType(t.dtype, t.shape[:-1] + (t.shape[-1] // parts,), t.layout)


def _pure(e: ir.Expr) -> bool:
    """Whether an index expression may be evaluated once a slice (no calls, no tiles)."""
    return all(isinstance(x, (ir.Var, ir.Const, ir.Cast, ir.BinOp, ir.UnaryOp, ir.ArrayDim,
                              ir.Special)) for x in ir.walk_expr(e))


def _parts(t: TileType) -> int:
    """Column slices that bring accumulator ``t`` (M, N) to ``ACC_BYTES``, each at least 64
    columns wide; 1 where none need or none can."""
    m, n = t.shape
    parts = 1
    while m * (n // parts) * t.dtype.itemsize > ACC_BYTES and n % (2 * parts) == 0 and \
            n // (2 * parts) >= 64:
        parts *= 2
    return parts if m * (n // parts) * t.dtype.itemsize <= ACC_BYTES else 1


def _segment(f: ir.Function, stmts: list[ir.Stmt], i: int, arrays: set[str]) -> _Segment | None:
    s0 = stmts[i]
    if not (isinstance(s0, ir.Assign) and isinstance(s0.value, ir.TileOp) and
            s0.value.op == "full" and isinstance(s0.value.type, TileType) and
            s0.value.type.ndim == 2):
        return None
    parts = _parts(s0.value.type)
    if parts == 1 or i + 1 >= len(stmts) or not isinstance(stmts[i + 1], ir.For):
        return None
    loop = stmts[i + 1]
    got = match(loop, arrays, fragments=False)
    if got is None or got[3] != s0.name or got[2].type != s0.value.type:
        return None
    la, lb, mma, acc, _cast, _batch = got
    # the names on B's way to the product, and the product's
    wide = {acc}
    for x in loop.body:
        v = x.value
        if v is lb or (v.op in ("cast", "reshape") and isinstance(v.args[0], ir.Var) and
                       v.args[0].name in wide and v.args[0].name != acc):
            wide.add(x.name)
    if mma.args[1].name not in wide or mma.args[0].name in wide:
        return None
    # casts and reshapes that add leading axes of 1, then the store
    last, j = acc, i + 2
    while j < len(stmts):
        x = stmts[j]
        if isinstance(x, ir.Assign) and isinstance(x.value, ir.TileOp) and \
                x.value.op in ("cast", "reshape") and isinstance(x.value.args[0], ir.Var) and \
                x.value.args[0].name == last and (
                    x.value.op == "cast" or _adds_ones(x.value.args[0].type, x.value.type)):
            wide.add(x.name)
            last = x.name
            j += 1
            continue
        break
    if j >= len(stmts):
        return None
    st = stmts[j]
    store = st.value if isinstance(st, ir.ExprStmt) else None
    if not (isinstance(store, ir.TileOp) and store.op == "store" and
            isinstance(store.args[0], ir.Var) and
            isinstance(store.args[1], ir.Var) and store.args[1].name == last and
            store.attrs.get("order") == tuple(range(len(store.attrs["shape"]))) and
            _pure(store.args[-1]) and _pure(lb.args[-1])):
        return None
    seg = stmts[i:j + 1]
    # nothing outside the segment reads or writes what it assigns
    names = {x.name for x in ir.walk_stmts(seg) if isinstance(x, ir.Assign)} | {loop.var}
    inside = {id(x) for x in ir.walk_stmts(seg)}
    for x in ir.walk_stmts(f.body):
        if id(x) in inside:
            continue
        if isinstance(x, ir.Assign) and x.name in names or \
                isinstance(x, ir.For) and x.var in names:
            return None
        if any(isinstance(v, ir.Var) and v.name in names
               for e in ir.stmt_exprs(x) for v in ir.walk_expr(e)):
            return None
    return _Segment(seg, {n: f.locals[n] for n in wide}, lb, store, parts)


def _adds_ones(src: TileType, dst: TileType) -> bool:
    """Whether a reshape from ``src`` to ``dst`` only puts axes of 1 in front."""
    k = dst.ndim - src.ndim
    return k >= 0 and dst.shape[k:] == src.shape and all(d == 1 for d in dst.shape[:k])
