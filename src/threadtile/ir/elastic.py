"""Grid-stride kernels, whose grid along x the launch may choose (:func:`grid_stride`).

A persistent tile kernel walks its tiles in a grid-stride loop::

    for t in range(ct.bid(0), total, ct.num_blocks(0)):
        ...

and the host launches as many blocks as the GPU has multiprocessors (cuTile's MatMul sample:
``grid = min(NUM_SMS, tiles)``). Whatever the number of blocks along x, such a loop visits
every ``t`` in ``range(0, total)`` exactly once, so where nothing else in the kernel depends
on that number, a launch may run more blocks than asked for and compute the same result. The
launcher (runtime/launcher.py ``CompiledKernel.launch``) then fills one wave: as many blocks as
the device holds resident at once. A block of a small tile (64x128, 4 warps) launched at one a
multiprocessor leaves the multiprocessor half idle; two or three there overlap one's loads
with another's products, as a plain (one tile a block) launch does (docs/performance.md).

The proof, on the kernel's IR (every function it calls included):

- ``blockIdx.x`` and ``gridDim.x`` are read only as the start and the step of such loops
  (directly, or through a local assigned once at the top of the kernel);
- no ``break`` leaves such a loop and no ``return`` sits inside one (the tiles a block visits
  would then depend on the others), and none sits inside another (the pairs of indices the
  two visit together would depend on the grid);
- outside them nothing writes memory or prints (every block would repeat it);
- no atomics, no ``while`` loops (a block waiting on another's progress may need the grid it
  was given resident at once) and no grid-wide barrier anywhere.

``THREADTILE_ELASTIC=0`` launches every grid as given.
"""

from __future__ import annotations

import os

from . import nodes as ir

__all__ = ["grid_stride", "enabled"]

_BID, _NB = "blockIdx.x", "gridDim.x"
# tile operations that write memory or print (ir/memorder.py's writers, and printf)
_EFFECTS = ("store", "scatter", "scatter_fragments", "atomic", "printf")


def enabled() -> bool:
    """Whether launches may fill a wave (``THREADTILE_ELASTIC`` unset or not ``0``)."""
    return os.environ.get("THREADTILE_ELASTIC", "1") != "0"


def _special(e: ir.Expr, reg: str) -> bool:
    while isinstance(e, ir.Cast):
        e = e.value
    return isinstance(e, ir.Special) and e.reg == reg


def _bound(body: list[ir.Stmt], assigned: dict[str, int], reg: str) -> set[str]:
    """Locals assigned once in the whole function, at its top level, from ``reg``."""
    return {s.name for s in body if isinstance(s, ir.Assign) and
            assigned.get(s.name) == 1 and _special(s.value, reg)}


def _is(e: ir.Expr, reg: str, names: set[str]) -> bool:
    while isinstance(e, ir.Cast):
        e = e.value
    return _special(e, reg) or (isinstance(e, ir.Var) and e.name in names)


def _walk(e: ir.Expr):
    """``e``'s expressions, those in a tile operation's ``attrs`` included (a fused k loop
    keeps its loads there)."""
    for x in ir.walk_expr(e):
        yield x
        if isinstance(x, ir.TileOp):
            for v in x.attrs.values():
                if isinstance(v, ir.Expr):
                    yield from _walk(v)


def _reads(e: ir.Expr, names: set[str]) -> bool:
    """Whether ``e`` reads blockIdx.x or gridDim.x, directly or through ``names``."""
    return any((isinstance(x, ir.Special) and x.reg in (_BID, _NB)) or
               (isinstance(x, ir.Var) and x.name in names) for x in _walk(e))


def _writes(f: ir.Function) -> bool:
    """Whether ``f`` or a function it calls writes memory or prints."""
    return any(isinstance(s, (ir.Store, ir.Print)) or any(_effect(e) for e in ir.stmt_exprs(s))
               for g in f.all_functions() for s in ir.walk_stmts(g.body))


def _effect(e: ir.Expr) -> bool:
    return any((isinstance(x, ir.TileOp) and x.op in _EFFECTS) or
               (isinstance(x, ir.Call) and (x.name.startswith("atomic") or
                                            x.name == "cg.grid_sync")) or
               (isinstance(x, ir.CallFunc) and _writes(x.func))
               for x in _walk(e))


def _forbidden(e: ir.Expr) -> bool:
    """Atomics and grid-wide barriers: blocks that depend on one another's progress."""
    return any((isinstance(x, ir.Call) and (x.name.startswith("atomic") or
                                            x.name == "cg.grid_sync")) or
               (isinstance(x, ir.TileOp) and x.op == "atomic") for x in _walk(e))


def _leaves(body: list[ir.Stmt]) -> bool:
    """Whether a ``break`` of this loop (not of one nested in it) or any ``return`` is in it."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Return)):
            return True
        if isinstance(s, ir.If) and (_leaves(s.then) or _leaves(s.orelse)):
            return True
        if isinstance(s, (ir.For, ir.While)) and any(
                isinstance(t, ir.Return) for t in ir.walk_stmts(s.body)):
            return True
    return False


def grid_stride(module: ir.Module) -> bool:
    """Whether every block of ``module``'s kernel does its work in grid-stride loops over x
    (the module docstring), so that a launch may give it more blocks along x."""
    f = module.kernel
    for g in f.all_functions():
        for s in ir.walk_stmts(g.body):
            if isinstance(s, ir.While):
                return False
            if any(_forbidden(e) for e in ir.stmt_exprs(s)):
                return False
        if g is not f and any(_reads(e, set()) for e in ir.walk_function_exprs(g)):
            return False
    assigned: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            assigned[s.name] = assigned.get(s.name, 0) + 1
        elif isinstance(s, ir.For):
            assigned[s.var] = assigned.get(s.var, 0) + 2  # (never a binding of bid)
    bids, nbs = _bound(f.body, assigned, _BID), _bound(f.body, assigned, _NB)
    names = bids | nbs
    loops = 0

    def block(body: list[ir.Stmt], inside: bool) -> bool:
        nonlocal loops
        for s in body:
            if isinstance(s, ir.Assign) and s.name in names and not inside:
                continue  # the binding itself (top level, checked by _bound)
            if isinstance(s, ir.For):
                # (one inside another would pair their indices by the grid: refused below)
                if not inside and _is(s.start, _BID, bids) and _is(s.step, _NB, nbs) and \
                        not _reads(s.stop, names):
                    if _leaves(s.body) or not block(s.body, True):
                        return False
                    loops += 1
                    continue
                if any(_reads(e, names) for e in (s.start, s.stop, s.step)):
                    return False
                if not block(s.body, inside):
                    return False
                continue
            if isinstance(s, ir.If):
                if _reads(s.cond, names) or not block(s.then, inside) or \
                        not block(s.orelse, inside):
                    return False
                continue
            if isinstance(s, ir.Print) and not inside:
                return False
            if isinstance(s, ir.Store) and not inside:
                return False
            for e in ir.stmt_exprs(s):
                if _reads(e, names) or (not inside and _effect(e)):
                    return False
        return True

    return block(f.body, False) and loops > 0
