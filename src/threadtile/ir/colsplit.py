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
    c = load(C, (i2, j3), shape=(M, N))          # the epilogue: elementwise operations
    acc = alpha * acc + beta * c                 #   of its tiles with scalars, casts,
    store(Out, (..., j2), cast(acc))             #   reshapes adding 1s, loads of its shape

and reads ``acc`` nowhere else, the three parts become the body of a loop over P column slices
(the fewest, a power of two, that bring the accumulator to ``ACC_BYTES``): B's loads take
shape (K, N / P) at column tile ``j * P + p``, the epilogue's loads and the store's tile
(..., N / P) at ``j3 * P + p`` and ``j2 * P + p`` (an epilogue that reads a tile of another
shape, a bias row broadcast, keeps the whole tile). The slices load and store the same
elements as the whole tile (padding and masking at the array's edges alike, since a tile
index counts tiles of the load's own shape); A's tiles are read P times, from L2. Each slice
is an ordinary product of (M, N / P) on the paths its shape takes (the Hopper loop for
256x128), the block sized for it (compiler.py ``auto_threads``), and the kernel's code that
of one slice (a loop, not copies: NVRTC's time unchanged).
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
                 store: ir.TileOp, loads: list[ir.TileOp], parts: int):
        # wide: the names whose tiles are cut, with their whole types; loads: the epilogue's
        self.stmts, self.wide, self.b_load, self.store = stmts, wide, b_load, store
        self.loads = loads
        self.parts = parts
        self.length = len(stmts)

    def loop(self, f: ir.Function) -> ir.For:
        """``for p in range(parts):`` over the segment, its wide tiles' last axis cut to
        N / parts and the column tile indices of B's load, the epilogue's loads and the
        store scaled to the slice's: ``j * parts + p``. One loop, not copies: the kernel's
        code (and NVRTC's time) stays that of one slice."""
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
        for op in (self.b_load, self.store, *self.loads):
            op.attrs["shape"] = op.attrs["shape"][:-1] + (op.attrs["shape"][-1] // self.parts,)
            j = op.args[-1]
            p = ir.Var(int32, loc, var)
            op.args[-1] = ir.BinOp(j.type, loc, "+", ir.BinOp(
                j.type, loc, "*", j, ir.Const(j.type, loc, self.parts)),
                p if j.type == int32 else ir.Cast(j.type, loc, p))
        # a slice past the first whose columns lie wholly outside the output (or outside an
        # epilogue's array read without padding) is skipped: the whole tile stored only its
        # columns inside (a store or an unpadded load wholly outside is an error in the
        # simulator; the first slice, where the whole tile starts, still reports one)
        cond: ir.Expr = ir.Compare(bool_, loc, "==", ir.Var(int32, loc, var),
                                   ir.Const(int32, loc, 0))
        inside: ir.Expr | None = None
        for op in (self.store, *(x for x in self.loads if x.attrs.get("padding") is None)):
            arr, col = op.args[0], op.args[-1]
            start: ir.Expr = ir.BinOp(col.type, loc, "*", copy.deepcopy(col),
                                      ir.Const(col.type, loc, op.attrs["shape"][-1]))
            if col.type != int64:
                start = ir.Cast(int64, loc, start)
            dim = ir.ArrayDim(int64, loc, ir.Var(arr.type, loc, arr.name), "shape",
                              arr.type.ndim - 1)
            test = ir.Compare(bool_, loc, "<", start, dim)
            inside = test if inside is None else ir.Logical(bool_, loc, "and", inside, test)
        cond = ir.Logical(bool_, loc, "or", cond, inside)
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
    # the epilogue: elementwise operations of the accumulator's tiles with scalars, casts,
    # reshapes between its shape and the same with leading axes of 1, loads of tiles of
    # that shape (C in alpha * acc + beta * C), then the store of one of them
    shape = s0.value.type.shape
    loads: list[ir.TileOp] = []
    j = i + 2
    while j < len(stmts):
        x = stmts[j]
        v = x.value if isinstance(x, ir.Assign) else None
        if not (isinstance(v, ir.TileOp) and _shaped(v.type, shape)):
            break
        if v.op == "load":
            if not _column_load(v):
                break
            loads.append(v)
        elif v.op not in _ELEMENTWISE or not _of_wide(v, wide, shape):
            break
        wide.add(x.name)
        j += 1
    if j >= len(stmts):
        return None
    st = stmts[j]
    store = st.value if isinstance(st, ir.ExprStmt) else None
    if not (isinstance(store, ir.TileOp) and store.op == "store" and
            isinstance(store.args[0], ir.Var) and
            isinstance(store.args[1], ir.Var) and store.args[1].name in wide and
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
    return _Segment(seg, {n: f.locals[n] for n in wide}, lb, store, loads, parts)


# the epilogue's elementwise operations (reshape: between shapes that differ by leading 1s)
_ELEMENTWISE = ("binop", "unary", "math", "where", "cast", "reshape")


def _shaped(t, shape: tuple[int, int]) -> bool:
    """Whether ``t`` is a tile of ``shape``, or of it with leading axes of 1."""
    return isinstance(t, TileType) and t.ndim >= 2 and t.shape[-2:] == shape and \
        all(d == 1 for d in t.shape[:-2])


def _of_wide(v: ir.TileOp, wide: set[str], shape: tuple[int, int]) -> bool:
    """Whether an elementwise operation reads the accumulator's tiles (one at least) and
    scalars only."""
    tiles = [a for a in v.args if isinstance(a.type, TileType)]
    return bool(tiles) and all(isinstance(a, ir.Var) and a.name in wide and
                               _shaped(a.type, shape) for a in tiles)


def _column_load(v: ir.TileOp) -> bool:
    """Whether an epilogue's load reads a tile of a kernel's array that a column slice can
    take (its indices evaluated once a slice, the array's axes in order)."""
    return isinstance(v.args[0], ir.Var) and \
        v.attrs.get("order") == tuple(range(len(v.attrs["shape"]))) and \
        all(_pure(a) for a in v.args[1:])
