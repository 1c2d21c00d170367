"""The pass pipeline over a lowered module (compiler.lower runs it): :func:`run`, top to
bottom, with the reason for each place in a comment.

Both backends consume the result, so a pass here changes what the CUDA C++ says and what the
simulator executes alike.
"""

from __future__ import annotations

from ..errors import KernelCompileError
from ..lang.types import TileType, void
from . import nodes as ir
from . import tiling
from .kloop import fuse_k_loops
from .resources import check_static_shared
from .verify import verify


def run(module: ir.Module) -> None:
    """The pipeline, top to bottom."""
    for f in module.kernel.all_functions():
        # Tile operations become statements of their own (`auto t = tt::tile::op(...)`: one
        # line of C++ per tile op), which also fixes their order: every thread of the block must
        # execute the same sequence of collective operations, and C++ leaves the order of
        # evaluation of a call's arguments unspecified.
        hoist_tile_ops(f)
        # Layouts are chosen on the flat form (every tile op the value of an assignment), and
        # the conversions they insert are hoisted in turn.
        if module.threads and assign_layouts(f, module.threads):
            hoist_tile_ops(f)
        # A matmul's k loop becomes one operation only once its accumulator is known to stay in
        # fragments (the layouts above), and on the flat form, whose loop body is exactly the
        # loads, casts and mma the match looks for.
        if module.threads:
            fuse_k_loops(f, module.threads)
    # Static shared memory over the 48 KiB a block may declare is refused at the declaration
    # that crosses it (ptxas would report it against the generated C++, after NVRTC ran).
    check_static_shared(module)
    # Last, every operation against its typing rule (ir/ops.py): a pass that broke one is a
    # compiler bug, reported here rather than as wrong C++ or a crash in the simulator.
    verify(module)


def hoist_tile_ops(f: ir.Function) -> None:
    """Bind every tile operation nested inside another expression to a temporary first."""
    if not any(isinstance(x, ir.TileOp) for s in ir.walk_stmts(f.body) for e in ir.stmt_exprs(s)
               for x in ir.walk_expr(e)):
        return
    taken = set(f.locals) | {p.name for p in f.params}
    counter = [0]

    def fresh() -> str:
        while f"_t{counter[0]}" in taken:
            counter[0] += 1
        name = f"_t{counter[0]}"
        taken.add(name)
        return name

    def expr(e: ir.Expr, pre: list, top: bool) -> ir.Expr:
        if isinstance(e, (ir.Logical, ir.Select)):
            lazy = [e.right] if isinstance(e, ir.Logical) else [e.if_true, e.if_false]
            for side in lazy:
                if any(isinstance(x, ir.TileOp) for x in ir.walk_expr(side)):
                    raise KernelCompileError(
                        "a tile operation inside `and`/`or` or a conditional expression",
                        loc=side.loc, hint="tile operations are executed by every thread of "
                        "the block; compute the value first, then test it")
        for k, v in vars(e).items():
            if k in ("type", "loc", "func", "attrs"):
                continue
            if isinstance(v, ir.Expr):
                setattr(e, k, expr(v, pre, False))
            elif isinstance(v, list):
                v[:] = [expr(x, pre, False) if isinstance(x, ir.Expr) else
                        tuple(expr(y, pre, False) for y in x) if isinstance(x, tuple) else x
                        for x in v]
        if isinstance(e, ir.TileOp) and not top and e.type != void:
            name = fresh()
            f.locals[name] = e.type
            pre.append(ir.Assign(e.loc, name, e))
            return ir.Var(e.type, e.loc, name)
        return e

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            pre: list[ir.Stmt] = []
            if isinstance(s, ir.Assign):
                s.value = expr(s.value, pre, True)
            elif isinstance(s, ir.ExprStmt):
                s.value = expr(s.value, pre, True)
            elif isinstance(s, ir.Return) and s.value is not None:
                s.value = expr(s.value, pre, True)
            elif isinstance(s, ir.Store):
                s.indices = [expr(i, pre, False) for i in s.indices]
                s.value = expr(s.value, pre, False)
            elif isinstance(s, ir.If):
                s.cond = expr(s.cond, pre, False)
                s.then, s.orelse = block(s.then), block(s.orelse)
            elif isinstance(s, ir.For):
                s.start = expr(s.start, pre, False)
                s.stop = expr(s.stop, pre, False)
                s.step = expr(s.step, pre, False)
                s.body = block(s.body)
            elif isinstance(s, ir.While):
                if any(isinstance(x, ir.TileOp) for x in ir.walk_expr(s.cond)):
                    # `while cond:` -> `while True: (cond's tile operations); if not cond:
                    # break; body` (a `continue` comes back to the test, as before)
                    loc, test = s.cond.loc, []
                    cond = expr(s.cond, test, False)
                    stop = ir.If(loc, ir.UnaryOp(cond.type, loc, "not", cond), [ir.Break(loc)],
                                 [])
                    s.cond = ir.Const(cond.type, loc, True)
                    s.body = test + [stop] + block(s.body)
                else:
                    s.body = block(s.body)
            elif isinstance(s, ir.Print):
                s.items = [expr(i, pre, False) if isinstance(i, ir.Expr) else i
                           for i in s.items]
            out += pre
            out.append(s)
        return out

    f.body = block(f.body)


def assign_layouts(f: ir.Function, threads: int) -> bool:
    """Keep matrix-multiply accumulators in registers, in the tensor cores' fragment layout.

    A variable assigned only ``full(...)`` and ``mma(..., acc)`` results (the accumulator of a
    k loop) gets the "mma" layout: its ``full`` fills fragments, its ``mma``s accumulate in
    place, and every other read of it converts to the blocked layout (``layout`` ops, through
    shared memory once, after the loop). Without this each ``mma`` would move the whole
    accumulator through shared memory. Returns whether anything changed."""
    assigns: dict[str, list[ir.Assign]] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign) and isinstance(s.value.type, TileType):
            assigns.setdefault(s.name, []).append(s)
    params = {p.name for p in f.params}
    cands: dict[str, TileType] = {}
    for name, ss in assigns.items():
        # (`acc = acc`, what `acc.astype(acc.dtype)` leaves, changes nothing)
        vals = [s.value for s in ss if not (isinstance(s.value, ir.Var) and
                                            s.value.name == name)]
        if name in params or not all(isinstance(v, ir.TileOp) and v.op in ("mma", "full")
                                     for v in vals):
            continue
        mmas = [v for v in vals if v.op == "mma"]
        if mmas and all(tiling.fragments_ok(*(x.type for x in v.args), threads) for v in mmas):
            t = f.locals[name]
            cands[name] = TileType(t.dtype, t.shape, "mma")
    if not cands:
        return False
    for name, t in cands.items():
        f.locals[name] = t
        for s in assigns[name]:
            s.value.type = t
    sinks = _fragment_epilogue(f, cands, assigns)
    frag = {**cands, **sinks}

    def fix(e: ir.Expr, keep: bool) -> ir.Expr:
        if isinstance(e, ir.Var) and e.name in frag:
            e.type = frag[e.name]
            if keep:
                return e
            blocked = TileType(e.type.dtype, e.type.shape)
            return ir.TileOp(blocked, e.loc, "layout", [e], {})
        if isinstance(e, ir.TileOp) and e.op == "store" and _fragment_store(e, frag):
            e.args[1].type = frag[e.args[1].name]
            e.args[:] = [e.args[0], e.args[1]] + [fix(x, False) for x in e.args[2:]]
            return e
        if isinstance(e, ir.TileOp) and e.op == "cast" and isinstance(e.type, TileType) and \
                e.type.layout == "mma":
            e.args[0].type = cands[e.args[0].name]
            return e
        if isinstance(e, ir.TileOp) and e.op == "mma" and isinstance(e.type, TileType) and \
                e.type.layout == "mma":
            e.args[0] = fix(e.args[0], False)
            e.args[1] = fix(e.args[1], False)
            acc = e.args[2]
            if isinstance(acc, ir.Var) and acc.name in cands:
                acc.type = cands[acc.name]
            else:  # a blocked accumulator from elsewhere: converted in
                acc = ir.TileOp(e.type, acc.loc, "layout", [fix(acc, False)], {})
            e.args[2] = acc
            return e
        for k, v in vars(e).items():
            if k in ("type", "loc", "func", "attrs"):
                continue
            if isinstance(v, ir.Expr):
                setattr(e, k, fix(v, False))
            elif isinstance(v, list):
                v[:] = [fix(x, False) if isinstance(x, ir.Expr) else
                        tuple(fix(y, False) for y in x) if isinstance(x, tuple) else x
                        for x in v]
        return e

    for s in ir.walk_stmts(f.body):
        for k, v in vars(s).items():
            if k in ("body", "then", "orelse", "loc", "type", "init"):
                continue
            if isinstance(v, ir.Expr):
                # `acc = full(...)` / `acc = mma(...)` keep the layout; `x = acc` converts
                setattr(s, k, fix(v, False) if not (isinstance(s, ir.Assign) and s.name in cands)
                        else fix(v, True))
            elif isinstance(v, list):
                v[:] = [fix(x, False) if isinstance(x, ir.Expr) else x for x in v]
    return True


def _fragment_store(op: ir.TileOp, frag: dict) -> bool:
    """Whether a store can write a fragment-layout tile as it is (tile.h store_fragments): a
    2-d tile into a 2-d global array, axes in order."""
    arr, tile = op.args[0], op.args[1]
    return (isinstance(tile, ir.Var) and tile.name in frag and arr.type.space == "global" and
            arr.type.ndim == 2 and len(op.args) == 4 and
            tuple(op.attrs.get("order", (0, 1))) == (0, 1))


def _fragment_epilogue(f: ir.Function, cands: dict, assigns: dict) -> dict:
    """The epilogue of a matrix multiply in fragments: a variable assigned once, a cast of an
    accumulator, and read only by stores that take fragments gets the "mma" layout too (so
    ``store(C, acc.astype(C.dtype))`` converts and writes registers, with no trip through
    shared memory). Marks the casts; returns {name: type} of those variables."""
    reads: dict[str, int] = {}
    stored: dict[str, int] = {}
    for st in ir.walk_stmts(f.body):
        for e in ir.stmt_exprs(st):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Var):
                    reads[x.name] = reads.get(x.name, 0) + 1
                if isinstance(x, ir.TileOp) and x.op == "store" and \
                        isinstance(x.args[1], ir.Var):
                    n = x.args[1].name
                    ok = _fragment_store(x, {n: None})
                    stored[n] = stored.get(n, 0) + (1 if ok else 10 ** 9)
    sinks: dict[str, TileType] = {}
    for name, ss in assigns.items():
        if name in cands or len(ss) != 1:
            continue
        v = ss[0].value
        if isinstance(v, ir.TileOp) and v.op == "cast" and isinstance(v.args[0], ir.Var) and \
                v.args[0].name in cands and reads.get(name, 0) == stored.get(name, -1):
            t = TileType(v.type.dtype, v.type.shape, "mma")
            sinks[name] = f.locals[name] = v.type = t
    return sinks
