"""Loads of mma operands straight into shared memory (ir/passes.py runs it after the layouts).

A tile loaded only to be the B operand of one ``mma`` on tensor cores (attention's K and V, a
weight tile; the accumulator in fragments, or a blocked tile of few rows, as flash decoding's
query heads of one KV head) needs no registers: its load becomes a ``load_operand`` that
copies it from global to its own shared-memory buffer (tile/operands.h: cp.async where the
rows allow), and the ``mma`` reads its fragments there. The tile keeps the layout memory
gives it: ``smem`` (its rows are memory rows) or ``smemt`` (the load's order swaps the last
two axes: memory rows are its columns, as K^T in attention).

The form matched, in one block of statements::

    t = load(arr, i..., shape=(1, X, 1, Y) ones anywhere, order=any)
    b = reshape(t)          # optional: drops the ones
    ...
    c = mma(a, b, c)        # 16-bit operands; c in fragments (whole row strips per warp)
                            # or a blocked tile on tensor cores (few rows: flash decoding)

where one of the array axes of the tile's X and Y axes (``order`` maps tile axes to array
axes) is the array's last: memory rows run along it (``attrs["row_axis"]`` is the other,
the array axis the buffer's rows step along). Attention's K in a (batch, seq, heads, dim)
cache, ``load(K, (b, h, 0, j), shape=(1, 1, D, TN), order=(0, 2, 3, 1))``, is one.

``t`` and ``b`` read nowhere else. The load then moves up its block as far as nothing it reads
is assigned and no statement writes memory, so that the copy overlaps the work before the
``mma`` (the ``mma`` waits only for the copies issued before its own: ``attrs["wait"]`` counts
those issued after it). Each operand variable gets its own buffer (``attrs["offset"]``, bytes
after the scratch), except a twin (ir/webs.py: the same name in another loop), which shares
its original's where the two are placed alike.

An A operand loaded once before its loops (attention's Q) may be read by several such ``mma``
(a loop over the unmasked key tiles and one over the masked ones): it goes into one buffer
where every read of it is such an A operand.

The A operand of such an ``mma`` (the accumulator in fragments) may be rows gathered from a
2-d array, as a mixture of experts gathers its tokens::

    a = gather(arr, (rows[:, None], k * TK + arange(TK)[None, :]))   # rows: a 1-d int tile

(the index tiles as the frontend builds them: each a reshape of a 1-d tile, broadcast to the
result's shape; the column tile ``s + arange(TK)``, any cast of the arange, ``s`` a scalar;
the mask true, the padding a scalar). It becomes ``gather_operand(arr, rows, s, pad)``: each
row's run of columns copied into the operand's own buffer (16-byte cp.async pieces; the
padding for a row or column outside the array, with the gather's bounds rule), read by the
``mma`` as attention's Q is. The copies move up their block as the loads above do.
"""

from __future__ import annotations

from ..lang.types import ArrayType, TileType
from . import nodes as ir
from . import tiling
from .tiling import tensor_core

SMEM, SMEMT, BLOCKED = "smem", "smemt", "blocked"
# the operands' buffers of one kernel at most (the scratch and other blocks need the rest of
# a multiprocessor's 227 KiB): loads past it stay loads
BUDGET = 128 * 1024
_WRITES = ("store", "scatter", "scatter_fragments", "atomic", "printf", "mma_loop")
COPIES = ("load_operand", "gather_operand")  # each a commit group of cp.async copies


WGMMA_N = (32, 64, 128, 192, 256)  # tile/wgmma.h's instructions


def swapped(t: TileType) -> bool:
    """Whether an operand's memory rows are its columns (layouts smemt, smemtw)."""
    return t.layout.startswith(SMEMT)


def pitch(t: TileType) -> int:
    """Elements per buffer row: rows of whole 128-byte lines as they are (their 16-byte pieces
    swizzled by the row: tile/operands.h ``XS``), other rows padded by 16 bytes; either way
    the fragments' reads are free of bank conflicts."""
    cols = t.shape[0] if swapped(t) else t.shape[1]
    if cols * t.dtype.itemsize % 128 == 0:
        return cols
    return cols + 16 // t.dtype.itemsize


def memory_rows(t: TileType) -> int:
    """An operand buffer's rows as memory has them (its columns where ``swapped``)."""
    return t.shape[1] if swapped(t) else t.shape[0]


def buffer_bytes(t: TileType) -> int:
    """A buffer's bytes, whole 1024-byte units (the swizzle's atoms for wgmma: tile/operands.h;
    the padded rows of the other targets fit too)."""
    return -(-memory_rows(t) * pitch(t) * t.dtype.itemsize // 1024) * 1024


def _counts(f: ir.Function) -> tuple[dict, dict]:
    """(how many times each variable is read, how many times it is assigned) in ``f``."""
    reads: dict[str, int] = {}
    assigned: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            assigned[s.name] = assigned.get(s.name, 0) + 1
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Var):
                    reads[x.name] = reads.get(x.name, 0) + 1
    return reads, assigned


def smem_operands(f: ir.Function, threads: int) -> bool:
    """Rewrite the qualifying loads (module docstring); returns whether any was."""
    reads, assigned = _counts(f)
    offset = [0, {}]  # the next buffer's offset; the buffers placed (_place)
    changed = False
    # (the blocks listed first: a rewrite may insert into an enclosing block, attention's Q
    # before its loops, which would make a walk still going over that block skip a loop)
    for block, outer in list(_blocks(f.body, ())):
        changed |= _rewrite_block(f, block, outer, reads, assigned, threads, offset)
    return changed


def _blocks(stmts: list, outer: tuple):
    """(each block, the blocks around it, innermost last)."""
    yield stmts, outer
    for s in stmts:
        for sub in ("then", "orelse", "body"):
            inner = getattr(s, sub, None)
            if isinstance(inner, list):
                yield from _blocks(inner, outer + ((stmts, s),))


def _a_operand(f, m: ir.TileOp, s: ir.Stmt, block: list, outer: tuple, reads: dict,
               assigned: dict, offset: list, nw: int) -> None:
    """An A operand loaded (rows of K, as memory has them) in an enclosing block, read only
    by this mma, or by several whose B operands all go into shared memory too: into its own
    buffer there, once (attention's Q, loaded before the loop or loops)."""
    a = m.args[0]
    if not (isinstance(a, ir.Var) and a.type.layout == "blocked" and
            assigned.get(a.name) == 1 and a.type.shape[0] % tiling.MMA_M == 0):
        return  # (fewer than 16 rows: staged, or converted once into fragments)
    readers = _a_readers(f, a.name)
    if reads.get(a.name) != len(readers) or not all(
            x.args[1].type.layout != BLOCKED or
            _b_chain(x, st, blk, reads, assigned, nw) is not None
            for x, st, blk in readers if x is not m):
        return  # (read otherwise, or by a product whose B stays in registers)
    for up, stmt in outer:
        found = _load_chain(up[:up.index(stmt)], a.name, reads, assigned)
        if found is None:
            continue
        load_stmt, reshape_stmt, swap, row_axis = found
        if swap:
            return
        new = _replace(f, up, load_stmt, reshape_stmt, a, SMEM, offset, up.index(stmt),
                       row_axis)
        if new is not None:
            _retype(f, a.name, new.value.type)  # (its other readers)
        return


def _a_readers(f: ir.Function, name: str) -> list:
    """(each ``mma`` in fragments assigned to a variable that reads ``name`` as its A operand
    and not as B, its statement, its block)."""
    return [(st.value, st, blk) for blk, _ in _blocks(f.body, ()) for st in blk
            if isinstance(st, ir.Assign) and isinstance(x := st.value, ir.TileOp) and
            x.op == "mma" and x.type.layout == "mma" and isinstance(x.args[0], ir.Var) and
            x.args[0].name == name and
            not (isinstance(x.args[1], ir.Var) and x.args[1].name == name)]


def _retype(f: ir.Function, name: str, t: TileType) -> None:
    for x in ir.walk_function_exprs(f):
        if isinstance(x, ir.Var) and x.name == name:
            x.type = t


def _a_gather(f, m: ir.TileOp, s: ir.Stmt, block: list, reads: dict, assigned: dict,
              offset: list) -> None:
    """The A operand gathered by rows in this block (module docstring) as a
    ``gather_operand`` into its own buffer, moved up the block as far as its reads allow."""
    a = m.args[0]
    if not (isinstance(a, ir.Var) and a.type.layout == "blocked" and reads.get(a.name) == 1
            and assigned.get(a.name) == 1 and a.type.shape[0] % tiling.MMA_M == 0):
        return
    defs = _single_defs(f, assigned)
    g = defs.get(a.name)
    if g is None or g not in block or block.index(g) > block.index(s):
        return
    got = _row_gather(g.value, defs, assigned)
    if got is None:
        return
    rows, col0 = got
    arr, pad = g.value.args[0], g.value.args[-1]
    t = TileType(a.type.dtype, a.type.shape, SMEM)
    at = _place(f, a.name, t, None, offset)
    if at is None:
        return
    op = ir.TileOp(t, g.value.loc, "gather_operand", [arr, rows, col0, pad],
                   {"offset": at, "check_bounds": g.value.attrs["check_bounds"]})
    f.locals[a.name] = t
    a.type = t
    new = ir.Assign(g.loc, a.name, op)
    at_pos = block.index(g)
    block.remove(g)
    names = {x.name for e in op.args for x in ir.walk_expr(e) if isinstance(x, ir.Var)}
    while at_pos > 0 and _crossable(block[at_pos - 1], names):
        at_pos -= 1
    block.insert(at_pos, new)
    _drop_unread(f, [x.name for x in g.value.args[1:3] if isinstance(x, ir.Var)])


_PURE = ("broadcast", "reshape", "binop", "cast", "arange", "layout")


def fragment_scatters(f: ir.Function) -> bool:
    """A scatter of whole rows of a tile kept in fragments (an accumulator, or its cast), as
    a mixture of experts writes its tokens' rows back::

        scatter(arr, (rows[:, None], s + arange(N)[None, :]), x)    # x: (M, N), 2-d arr

    (the index tiles as ``gather_operand`` takes them, the mask true) becomes
    ``scatter_fragments(arr, x, rows, s)``: each lane writes its pairs of adjacent columns to
    its rows (tile/mma.h), where the layout pass had converted ``x`` to the blocked layout
    through the scratch and each thread scattered its elements with two int64 indices.
    Returns whether any changed."""
    reads, assigned = _counts(f)
    defs = _single_defs(f, assigned)
    changed = False
    for body, _ in _blocks(f.body, ()):
        for s in body:
            sc = s.value if isinstance(s, ir.ExprStmt) else None
            if not (isinstance(sc, ir.TileOp) and sc.op == "scatter" and len(sc.args) == 5):
                continue
            arr, val, i0, i1, mask = sc.args
            t = val.type
            if not (isinstance(arr.type, ArrayType) and arr.type.space == "global" and
                    arr.type.ndim == 2 and isinstance(mask, ir.Const) and mask.value is True
                    and isinstance(val, ir.Var) and isinstance(t, TileType) and t.ndim == 2):
                continue
            src = val
            if t.layout == BLOCKED:  # the layout pass's conversion out of fragments
                d = defs.get(val.name)
                if d is None or reads.get(val.name) != 1 or not (
                        isinstance(d.value, ir.TileOp) and d.value.op == "layout"):
                    continue
                src = d.value.args[0]
            if not (isinstance(src, ir.Var) and src.type.layout == "mma"):
                continue
            got = _row_runs(i0, i1, t.shape, defs, assigned)
            if got is None:
                continue
            rows, col0 = got
            s.value = ir.TileOp(sc.type, sc.loc, "scatter_fragments", [arr, src, rows, col0],
                                {"check_bounds": sc.attrs["check_bounds"]})
            _drop_unread(f, [x.name for x in (val, i0, i1) if isinstance(x, ir.Var)])
            changed = True
    return changed


def _drop_unread(f, names: list) -> None:
    """Remove the statements of ``names`` (and, in turn, of the variables only they read)
    where nothing reads them any more and each is a pure tile operation: the index tiles a
    gather that became a ``gather_operand`` no longer uses."""
    while names:
        reads = _counts(f)[0]
        nxt = []
        for body, _ in _blocks(f.body, ()):
            for x in list(body):
                if isinstance(x, ir.Assign) and x.name in names and not reads.get(x.name) and \
                        isinstance(x.value, ir.TileOp) and x.value.op in _PURE:
                    body.remove(x)
                    nxt += [y.name for a in x.value.args for y in ir.walk_expr(a)
                            if isinstance(y, ir.Var) and isinstance(y.type, TileType)]
        names = nxt


def _single_defs(f, assigned: dict) -> dict:
    """The statements of the function's variables assigned once, by name."""
    return {x.name: x for x in ir.walk_stmts(f.body)
            if isinstance(x, ir.Assign) and assigned.get(x.name) == 1}


def _row_gather(g: ir.Expr, defs: dict, assigned: dict):
    """(the rows' index tile, the first column as a scalar expression) where ``g`` gathers
    whole rows' runs of columns of a 2-d global array (module docstring), else None."""
    if not (isinstance(g, ir.TileOp) and g.op == "gather" and len(g.args) == 5):
        return None
    arr, i0, i1, mask, pad = g.args
    t = g.type
    if not (isinstance(arr.type, ArrayType) and arr.type.space == "global" and t.ndim == 2
            and t.dtype.bits == 16 and t.shape[1] * t.dtype.itemsize % 16 == 0):
        return None
    if not (isinstance(mask, ir.Const) and mask.value is True) or isinstance(pad.type, TileType):
        return None
    return _row_runs(i0, i1, t.shape, defs, assigned)


def _row_runs(i0: ir.Expr, i1: ir.Expr, shape: tuple, defs: dict, assigned: dict):
    """(the rows' index tile, the first column as a scalar expression) where the index tiles
    ``i0``, ``i1`` of a gather or scatter of ``shape`` are ``rows[:, None]`` and
    ``s + arange(N)[None, :]`` as the frontend builds them, else None."""
    rows = _axis_source(i0, defs, 0, shape)
    cols = _axis_source(i1, defs, 1, shape)
    if rows is None or cols is None or not rows.type.dtype.is_int:
        return None
    col0 = _offset_arange(cols, defs, assigned, shape[1])
    return None if col0 is None else (rows, col0)


def _axis_source(e: ir.Expr, defs: dict, axis: int, shape: tuple):
    """The tile of ``shape[axis]`` elements an index tile of the gather takes along ``axis``
    only: ``e`` a broadcast of a tile of that shape with ones elsewhere (or that tile), which
    is a reshape of a 1-d tile (returned) or is returned itself."""
    want = tuple(d if k == axis else 1 for k, d in enumerate(shape))
    if not (isinstance(e, ir.Var) and isinstance(e.type, TileType)):
        return None
    if e.type.shape == shape and e.name in defs:
        b = defs[e.name].value
        if not (isinstance(b, ir.TileOp) and b.op == "broadcast"):
            return None
        e = b.args[0]
    if not (isinstance(e, ir.Var) and isinstance(e.type, TileType) and e.type.shape == want):
        return None
    r = defs.get(e.name)
    if r is not None and isinstance(r.value, ir.TileOp) and r.value.op == "reshape" and \
            isinstance(r.value.args[0], ir.Var) and r.value.args[0].type.shape == (shape[axis],):
        return r.value.args[0]
    return e


def _offset_arange(e: ir.Var, defs: dict, assigned: dict, n: int):
    """``s`` where the tile ``e`` (n elements along one axis) is ``s + arange(n)`` (start 0,
    step 1; the arange possibly reshaped or cast to another integer type; ``s`` a scalar whose
    variables are assigned once), else None."""
    d = defs.get(e.name)
    if d is None or e.type.size != n or not e.type.dtype.is_int:
        return None
    v = d.value
    if not (isinstance(v, ir.TileOp) and v.op == "binop" and v.attrs.get("op") == "add"):
        return None
    for s, t in (v.args, v.args[::-1]):
        if isinstance(s.type, TileType) or not _is_arange(t, defs, n):
            continue
        if all(assigned.get(x.name, 0) <= 1 for x in ir.walk_expr(s) if isinstance(x, ir.Var)):
            return s
    return None


def _is_arange(t: ir.Expr, defs: dict, n: int) -> bool:
    while isinstance(t, ir.Var) and t.name in defs:
        v = defs[t.name].value
        if isinstance(v, ir.TileOp) and (v.op == "cast" and v.type.dtype.is_int or
                                         v.op == "reshape" and v.type.size == n):
            t = v.args[0]
            continue
        return (isinstance(v, ir.TileOp) and v.op == "arange" and v.type.shape == (n,) and
                all(isinstance(a, ir.Const) for a in v.args) and
                (v.args[0].value, v.args[1].value) == (0, 1))
    return False


def _place(f: ir.Function, name: str, t: TileType, row_axis: int | None,
           offset: list) -> int | None:
    """The offset of the buffer of ``name`` (a tile of type ``t``, copied along array axis
    ``row_axis``; None: gathered rows): its twin's (ir/webs.py), where one of the same family
    is placed alike, else a new one; None past the budget."""
    key = (f.twins.get(name, name), t, row_axis)
    if key in offset[1]:
        return offset[1][key]
    if offset[0] + buffer_bytes(t) > BUDGET:
        return None
    at = offset[0]
    offset[0] += buffer_bytes(t)
    offset[1][key] = at
    return at


def _replace(f, block: list, load_stmt, reshape_stmt, var: ir.Var, layout: str, offset: list,
             before: int, row_axis: int) -> ir.Assign | None:
    """The load (and reshape) of ``var`` as one ``load_operand``, placed at ``before`` (None
    where its buffer would pass the budget)."""
    ld = load_stmt.value
    t = TileType(var.type.dtype, var.type.shape, layout)
    at = _place(f, var.name, t, row_axis, offset)
    if at is None:
        return None
    op = ir.TileOp(t, ld.loc, "load_operand", list(ld.args),
                   dict(ld.attrs, offset=at, row_axis=row_axis))
    f.locals[var.name] = t
    var.type = t
    new = ir.Assign(load_stmt.loc, var.name, op)
    anchor = block[before] if before < len(block) else None
    for old in (reshape_stmt, load_stmt):
        if old is not None:
            block.remove(old)
    block.insert(block.index(anchor) if anchor is not None else len(block), new)
    return new


def _b_chain(m: ir.TileOp, s: ir.Stmt, block: list, reads: dict, assigned: dict, nw: int):
    """The load (and reshape) of the B operand of ``m`` (statement ``s`` of ``block``) that
    can go into shared memory (``_load_chain``'s answer), else None."""
    a, b = m.args[0], m.args[1]
    if not (isinstance(b, ir.Var) and reads.get(b.name) == 1 and assigned.get(b.name) == 1):
        return None
    at = a.type
    fragments = m.type.layout == "mma"
    if at.dtype.bits != 16 or at.shape[1] % 16:
        return None
    if fragments and not tiling.whole_strips(at.shape[0], nw):
        return None
    if not fragments and not (at.layout == BLOCKED and tensor_core(at, b.type)):
        return None
    return _load_chain(block[:block.index(s)], b.name, reads, assigned)


def _rewrite_block(f, block: list, outer: tuple, reads: dict, assigned: dict, threads: int,
                   offset: list) -> bool:
    nw = threads // 32
    changed = False
    for s in list(block):
        m = s.value if isinstance(s, ir.Assign) else None
        if not (isinstance(m, ir.TileOp) and m.op == "mma" and m.type.layout in ("mma", BLOCKED)):
            continue
        b = m.args[1]
        fragments = m.type.layout == "mma"
        found = _b_chain(m, s, block, reads, assigned, nw)
        if found is None:
            continue
        load_stmt, reshape_stmt, swap, row_axis = found
        new = _replace(f, block, load_stmt, reshape_stmt, b, SMEMT if swap else SMEM, offset,
                       block.index(s), row_axis)
        if new is None:
            continue
        # up the block as far as its reads allow
        block.remove(new)
        names = {x.name for e in new.value.args for x in ir.walk_expr(e)
                 if isinstance(x, ir.Var)}
        at_pos = block.index(s)
        while at_pos > 0 and _crossable(block[at_pos - 1], names):
            at_pos -= 1
        block.insert(at_pos, new)
        if fragments:
            _a_operand(f, m, s, block, outer, reads, assigned, offset, nw)
            _a_gather(f, m, s, block, reads, assigned, offset)
            _for_wgmma(f, m, threads)
        changed = True
    if changed:
        count_waits(block)
    return changed


def _for_wgmma(f, m: ir.TileOp, threads: int) -> None:
    """Lay the operands of ``m`` out for Hopper's wgmma where it can take them (sm_90a builds
    use it; others keep mma.sync on the same buffers): A in registers with B as loaded
    (N-major), or A and B both K-major in their buffers; 16-bit, M a multiple of 64 per
    warpgroup, N one of wgmma's, memory rows of 128-byte multiples."""
    a, b = m.args[0], m.args[1]
    at, bt = a.type, b.type
    (mm, k), n = at.shape, bt.shape[1]
    wg = threads // 128
    if threads % 128 or mm % (64 * max(wg, 1)) or n not in WGMMA_N or k % 16 or \
            at.dtype.name not in ("float16", "bfloat16"):
        return
    row_bytes = (bt.shape[0] if swapped(bt) else n) * bt.dtype.itemsize
    if row_bytes % 128:
        return
    if at.layout == "mma" and bt.layout == SMEM:
        _relayout(f, [b], SMEM + "w")
    elif at.layout in (SMEM, SMEM + "w") and bt.layout == SMEMT and \
            (k * at.dtype.itemsize) % 128 == 0:  # (an A read by several: laid out once)
        _relayout(f, [a], SMEM + "w")
        _relayout(f, [b], SMEMT + "w")


def _relayout(f, vs: list, layout: str) -> None:
    for v in vs:
        t = TileType(v.type.dtype, v.type.shape, layout)
        f.locals[v.name] = t
        for s in ir.walk_stmts(f.body):
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.Var) and x.name == v.name:
                        x.type = t
            if isinstance(s, ir.Assign) and s.name == v.name:
                s.value.type = t


def _load_chain(before: list, name: str, reads: dict, assigned: dict):
    """(the load statement, the reshape statement or None, whether memory rows are the
    operand's columns, the array axis memory rows step along) for the operand ``name``
    assigned in ``before``, else None."""
    defs = {s.name: s for s in before if isinstance(s, ir.Assign)}
    s = defs.get(name)
    if s is None or not isinstance(s.value, ir.TileOp):
        return None
    reshape = None
    if s.value.op == "reshape":
        src = s.value.args[0]
        if not isinstance(src, ir.Var) or reads.get(src.name) != 1 or \
                assigned.get(src.name) != 1 or src.name not in defs:
            return None
        if tuple(d for d in src.type.shape if d != 1) != tuple(s.value.type.shape):
            return None
        reshape, s = s, defs[src.name]
    ld = s.value
    if not (isinstance(ld, ir.TileOp) and ld.op == "load"):
        return None
    arr = ld.args[0].type
    shape = tuple(ld.attrs["shape"])
    r = len(shape)
    order = tuple(ld.attrs.get("order") or range(r))
    if r < 2 or arr.space != "global":
        return None
    axes = [i for i, d in enumerate(shape) if d != 1]
    if len(axes) < 2 and all(d == 1 for d in shape[:-2]):
        axes = [r - 2, r - 1]  # (1, ..., 1, X, 1) or smaller: the last two
    if len(axes) != 2:
        return None
    rows, cols = order[axes[0]], order[axes[1]]  # the array axes of the operand's two
    if r - 1 not in (rows, cols):
        return None
    swap = rows == r - 1
    t = ld.type
    mem_cols = shape[axes[0]] if swap else shape[axes[1]]
    if mem_cols * t.dtype.itemsize % 16:
        return None
    return s, reshape, swap, cols if swap else rows


def _crossable(s: ir.Stmt, names: set) -> bool:
    """Whether a load may move above ``s``: ``s`` assigns nothing it reads, writes no memory,
    calls nothing and leaves the block's flow alone."""
    if isinstance(s, (ir.Store, ir.Return, ir.Break, ir.Continue, ir.Print, ir.ArrayDecl,
                      ir.For, ir.While)):
        return False
    for x in ir.walk_stmts([s]):
        if isinstance(x, (ir.Store, ir.Return, ir.Break, ir.Continue, ir.Print, ir.ArrayDecl)):
            return False
        if isinstance(x, ir.Assign) and x.name in names:
            return False
        for e in ir.stmt_exprs(x):
            for y in ir.walk_expr(e):
                if isinstance(y, (ir.Call, ir.CallFunc)) or \
                        isinstance(y, ir.TileOp) and y.op in _WRITES + COPIES:
                    return False
    return True


def count_waits(block: list, ahead: frozenset = frozenset()) -> None:
    """Each ``mma`` on a shared-memory operand waits for all copies but those issued after
    its operand's (in this block, before the ``mma``). An operand in ``ahead`` was copied an
    iteration early, after this ``mma`` in the previous iteration (ir/prefetch.py): it counts
    as copied before every copy of the block before the ``mma`` (the copies after it in the
    previous iteration have no counterpart after the first copy, before the loop)."""
    issued: list[str] = []
    for s in block:
        v = s.value if isinstance(s, ir.Assign) else None
        if isinstance(v, ir.TileOp) and v.op in COPIES:
            issued.append(s.name)
        elif isinstance(v, ir.TileOp) and v.op == "mma":
            # the later of its operands' copies (groups complete in the order they were issued)
            ks = [issued.index(x.name) if x.name in issued else -1 for x in v.args[:2]
                  if isinstance(x, ir.Var) and (x.name in issued or x.name in ahead)]
            if ks:
                v.attrs["wait"] = len(issued) - max(ks) - 1
