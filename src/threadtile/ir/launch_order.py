"""Blocks whose work grows with ``bid(0)`` launched heaviest first (ir/passes.py sets it, the
CUDA backend applies it: backends/cuda/emit.py).

A GPU starts a grid's blocks in order, ``x`` fastest. Where a block's main loop runs more
iterations the larger its ``bid(0)`` (causal attention: query tile i sees the keys up to its
last query, ``range(cdiv(min((i + 1) TM, seq), TN))``), the heaviest blocks start last and run on
alone at the end of the grid while the multiprocessors empty: a list schedule of causal
attention's blocks on an H200 (64-row tiles, 32 heads, 3 blocks a multiprocessor) keeps 81% of
the machine busy. Started heaviest first, every head's last tile before any head's
second-last and so on, the short blocks fill the tail: 97%.

The CUDA backend then gives the block that the GPU starts L-th (``L = x + X y``, grid
``(X, Y, Z)``) the indices ``bid(0) = X - 1 - L // Y`` and ``bid(1) = L % Y``: a permutation of
the grid's blocks (``bid(2)`` and ``num_blocks`` as launched), so the results are the same and
only the order in which blocks start changes. The simulator runs blocks as launched.

Only in blocks of two warpgroups or more (:data:`MIN_THREADS`): cuTile's FMHA sample, causal,
H200, TFLOP/s, as launched -> heaviest first: 128x128 tiles (8 warps, one block a
multiprocessor) D128 378 -> 392, GQA 335 -> 377, 128x64 tiles +4 to +12%; 64x64 tiles (4
warps, three blocks a multiprocessor) D128 430 -> 320. Its (batch, heads, seq, dim) arrays keep
a head's K and V in one run of memory, and the blocks running together, from every head at
once, no longer share them in L2; a 4-warp block is also a smaller part of its
multiprocessor's work, so a tail of heavy ones costs less (session 32, docs/performance.md).

And only where nothing can depend on that order or see it: a kernel of tile operations whose
blocks share no atomics, no ``while`` loop (a block spinning on another's flag), no callee
reading the block's index and no fused k loop (tile/kloop_sm90.h may pair neighbouring blocks
in clusters); where some ``for`` loop's trip count is non-decreasing in
``bid(0)`` and grows with it, and none shrinks with it (:func:`heavy_first`). The trip count's
direction is read from its expressions: sums, differences, products and floor divisions by
positive constants, ``min``/``max``, casts, and locals assigned once, of ``bid(0)`` and values
that do not depend on it.
"""

from __future__ import annotations

from . import nodes as ir

BID = "blockIdx.x"
MIN_THREADS = 256  # the blocks the order is for (module docstring)
_ATOMIC_CALLS = ("atomic", "grid_sync", "cluster")  # name prefixes of cross-block operations


def heavy_first(f: ir.Function, threads: int) -> bool:
    """Whether kernel ``f``, of blocks of ``threads`` threads, qualifies (module
    docstring)."""
    if not f.is_kernel or threads < MIN_THREADS:
        return False
    for g in f.callees:
        if any(isinstance(x, ir.Special) and x.reg.startswith("blockIdx")
               for s in ir.walk_stmts(g.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)):
            return False
    defs: dict[str, list[ir.Expr]] = {}
    loops: list[ir.For] = []
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.While):
            return False
        if isinstance(s, ir.Assign):
            defs.setdefault(s.name, []).append(s.value)
        if isinstance(s, ir.For):  # (two values: never a single definition)
            defs.setdefault(s.var, []).extend([s.start, s.stop])
            loops.append(s)
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Call) and x.name.startswith(_ATOMIC_CALLS) or \
                        isinstance(x, ir.TileOp) and x.op.startswith(("atomic", "mma_loop")):
                    return False  # (a fused k loop may pair neighbouring blocks in clusters)
    for p in f.params:  # a parameter assigned in the body has its argument as one more value
        if p.name in defs:
            defs[p.name].append(ir.Const(p.type, f.loc, 0))
    d = _Directions(defs)
    grows = False
    for loop in loops:
        first, last = d.of(loop.start), d.of(loop.stop)
        if first is None or last is None:
            return False
        if first == last == 0:
            continue
        step = loop.step
        if not (isinstance(step, ir.Const) and isinstance(step.value, int) and step.value > 0):
            return False
        count = _add(last, -first)
        if count is None or count < 0:
            return False
        grows = grows or count > 0
    return grows


def _add(a: int | None, b: int | None) -> int | None:
    """The direction of a sum of values going ``a`` and ``b`` (1 up, -1 down, 0 constant)."""
    if a is None or b is None or a * b < 0:
        return None
    return a or b


def _positive(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and isinstance(e.value, int) and e.value > 0


class _Directions:
    """How expressions of one kernel move with ``bid(0)``, through its locals."""

    def __init__(self, defs: dict[str, list[ir.Expr]]):
        self.defs = defs
        self.reads: dict[str, bool] = {}

    def of(self, e: ir.Expr) -> int | None:
        """1 where ``e`` is non-decreasing in ``bid(0)`` and may grow with it, -1
        non-increasing, 0 independent of it, None unknown."""
        if not self.reads_bid(e):
            return 0
        if isinstance(e, ir.Special):
            return 1 if e.reg == BID else None
        if isinstance(e, ir.Var):
            values = self.defs.get(e.name, [])
            return self.of(values[0]) if len(values) == 1 else None
        if isinstance(e, ir.Cast):
            ints = getattr(e.type, "is_int", False) and getattr(e.value.type, "is_int", False)
            return self.of(e.value) if ints else None
        if isinstance(e, ir.BinOp):
            a, b = self.of(e.left), self.of(e.right)
            if e.op == "+":
                return _add(a, b)
            if e.op == "-":
                return _add(a, None if b is None else -b)
            if e.op in ("*", "//") and b == 0 and _positive(e.right):
                return a
            if e.op == "*" and a == 0 and _positive(e.left):
                return b
            return None
        if isinstance(e, ir.Call) and e.name in ("min", "max") and len(e.args) == 2:
            return _add(self.of(e.args[0]), self.of(e.args[1]))
        return None

    def reads_bid(self, e: ir.Expr) -> bool:
        """Whether ``e`` may depend on ``bid(0)`` or the thread (through locals too)."""
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Special) and x.reg.startswith(("blockIdx.x", "threadIdx",
                                                               "laneid")):
                return True
            if isinstance(x, ir.Var) and x.name in self.defs:
                if x.name not in self.reads:
                    self.reads[x.name] = False  # (a cycle adds nothing to its other values)
                    self.reads[x.name] = any(self.reads_bid(v) for v in self.defs[x.name])
                if self.reads[x.name]:
                    return True
        return False
