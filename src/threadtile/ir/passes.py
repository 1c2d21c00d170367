"""The pass pipeline over a lowered module (compiler.lower runs it): :func:`run`, top to
bottom, with the reason for each place in a comment.

Both backends consume the result, so a pass here changes what the CUDA C++ says and what the
simulator executes alike.
"""

from __future__ import annotations

from ..errors import KernelCompileError
from ..lang.types import void
from . import nodes as ir
from .colsplit import split_wide_products
from .fraglayout import assign_layouts
from .kloop import fuse_k_loops
from .licm import hoist_invariants
from .memorder import order_memory
from .operands import fragment_scatters, smem_operands
from .partials import reduce_partials
from .prefetch import prefetch_operands
from .resources import check_static_shared
from .verify import verify
from .webs import split_webs


def run(module: ir.Module) -> None:
    """The pipeline, top to bottom."""
    summaries: dict = {}
    for f in module.kernel.all_functions():
        # Tile operations become statements of their own (`auto t = tt::tile::op(...)`: one
        # line of C++ per tile op), which also fixes their order: every thread of the block must
        # execute the same sequence of collective operations, and C++ leaves the order of
        # evaluation of a call's arguments unspecified.
        hoist_tile_ops(f)
        # A tile name each of several loops assigns before reading it, and nothing else
        # reads, becomes one variable per loop (ir/webs.py): the passes below place a tile
        # by its single assignment.
        split_webs(f)
        # A product whose accumulator no block holds in registers (256x256 float32) runs
        # in column slices (ir/colsplit.py), before layouts and the block's size are chosen
        # for each slice.
        split_wide_products(f)
        # A running sum read only reduced is kept reduced (ir/partials.py), on the flat form
        # and before layouts are chosen: the full accumulator's registers never exist.
        if module.threads:
            reduce_partials(f, module.threads)
        # Loop-invariant tile operations leave their loops (index tiles, broadcasts, masks
        # written where they read naturally), on the flat form, before layouts are chosen
        # for what stays in the loop.
        hoist_invariants(f)
        # Layouts are chosen on the flat form (every tile op the value of an assignment), and
        # the conversions they insert are hoisted in turn.
        if module.threads and assign_layouts(f, module.threads):
            hoist_tile_ops(f)
        # A matmul's k loop becomes one operation only once its accumulator is known to stay in
        # fragments (the layouts above), and on the flat form, whose loop body is exactly the
        # loads, casts and mma the match looks for.
        if module.threads:
            fuse_k_loops(f, module.threads)
        # The operands left to a plain mma in fragments load straight into shared memory, once
        # the k loops (whose own main loops stage their operands) have taken theirs.
        if module.threads:
            smem_operands(f, module.threads)
            fragment_scatters(f)
        # ... and where a loop multiplies by one first thing, its copy for the next iteration
        # is issued as soon as this one's product has read the buffer (ir/prefetch.py).
        if module.threads:
            prefetch_operands(f)
        # A block's tile memory operations keep their program order: a barrier wherever two
        # of them on one array give an element to different threads (ir/memorder.py), placed
        # on the final operations, which both backends then see.
        if module.threads:
            order_memory(f, summaries)
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
