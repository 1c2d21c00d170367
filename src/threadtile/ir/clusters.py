"""Which kernels may pair their blocks in clusters that share B's tiles (EXPERIMENTAL).

Two blocks of a cluster along x (blocks 2c and 2c + 1 of ``bid(0)``) whose Hopper k loops
read the same B tiles can each copy half of them, multicast into both (tile/kloop_sm90.h,
``TT_CLUSTER``). That holds, for every block of every launch, when

- every ``mma_loop`` on the Hopper main loop (16-bit operands; the tfloat32 loop takes no
  clusters) is a statement of the kernel's own body, outside any branch or loop, and the
  kernel has no ``return``, ``break`` or ``continue``: both blocks reach each loop, in the
  same order;
- each loop's B array, its column index ``j``, its range ``lo``, ``hi`` (and a batched loop's
  B batch) do not depend on ``bid(0)``, directly or through the variables assigned from it;
- B's boxes split evenly between the two blocks.

builds.py asks for such a build only with ``THREADTILE_CLUSTERS=1``; it has not yet run on a
GPU (docs/performance.md, "Still ahead").
"""

from __future__ import annotations

from . import kloop, tiling
from . import nodes as ir

CLUSTER = 2  # blocks a cluster along x
_BID_X = ("blockIdx.x", "ctaid.x")


def _depends(e: ir.Expr, tainted: set[str]) -> bool:
    return any((isinstance(x, ir.Special) and x.reg in _BID_X) or
               (isinstance(x, ir.Var) and x.name in tainted) for x in ir.walk_expr(e))


def pairable(module: ir.Module) -> bool:
    """Whether the kernel's blocks may pair in clusters of CLUSTER along x (module
    docstring)."""
    f = module.kernel
    if f is None or not module.threads:
        return False
    stmts = list(ir.walk_stmts(f.body))
    if any(isinstance(s, (ir.Return, ir.Break, ir.Continue)) for s in stmts):
        return False
    # the variables bid(0) reaches, through any assignment (to a fixed point: loops)
    tainted: set[str] = set()
    while True:
        more = {s.name for s in stmts if isinstance(s, ir.Assign) and s.name not in tainted
                and _depends(s.value, tainted)}
        more |= {s.var for s in stmts if isinstance(s, ir.For) and s.var not in tainted and
                 any(_depends(e, tainted) for e in (s.start, s.stop, s.step))}
        if not more:
            break
        tainted |= more
    loops = [x for s in stmts for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
             if isinstance(x, ir.TileOp) and x.op == "mma_loop" and x.attrs.get("hopper")]
    top = {id(s.value) for s in f.body if isinstance(s, ir.Assign)}
    if not loops:
        return False
    for op in loops:
        a, b = kloop.loaded(op)
        if id(op) not in top or a.dtype.itemsize != 2:
            return False
        _, _, _, j, lo, hi, _, *batch = op.args
        shared = [op.args[1], j, lo, hi] + batch[1:]
        if any(_depends(e, tainted) for e in shared):
            return False
        boxes = b.shape[1] // tiling.sm90_boxes(a, b, module.threads)[1][0]
        if boxes % CLUSTER:
            return False
    return True
