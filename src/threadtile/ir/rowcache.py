"""Tiles a loop loads, kept in shared memory for later loops that load them again
(:func:`cache_rows`).

cuTile's LayerNorm sample reads each row of X three times, a loop over its chunks per pass::

    for j in range(num_tiles):                          # the mean
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        ...
    for j in range(num_tiles):                          # the variance
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        ...
    for j in range(num_tiles):                          # the output
        tx = ct.load(X, index=(bid_m, j), shape=(1, TILE_N), padding_mode=PAD_ZERO)
        ...

The second and third reads come from L2 at best. Here the first loop's iteration ``j`` also
writes its tile into slot ``j`` of a cache in shared memory (``put``), and the later loops read
slot ``j`` back (``get``) instead of memory while ``j`` is under the slots the block has: each
thread its own registers of the tile, so no barrier is needed (tile/rowcache.h). The launch
sizes the cache from the array's extent along the loop's axis, up to ``THREADTILE_ROWCACHE_BYTES``
(jit.py, :func:`launch_bytes`); a block with fewer slots loads the rest as before.

A load is cached where:

- both loops are ``for`` loops of step 1 over the same range, siblings in one statement list,
  the first without ``break`` or ``return``;
- both loads are statements of their loop's own body (not nested in an ``if`` or a loop), of
  the same array parameter, shape, order, padding and tile type, at the same indices (each
  loop's own variable standing for the other's);
- the names the range and the indices read are parameters or locals assigned once;
- nothing in the first loop, between the loops or in the later one writes the array (other
  arrays are taken not to overlap it, as ir/memorder.py takes them).

The loads keep their IR; the CUDA backend reads their ``rowcache`` attribute (the simulator
loads from memory, which holds the same values). ``THREADTILE_ROWCACHE_BYTES=0`` turns it off.
"""

from __future__ import annotations

import os

from ..lang.types import ArrayType, TileType
from . import nodes as ir

__all__ = ["cache_rows", "launch_bytes", "max_bytes", "plan"]

DEFAULT_BYTES = 64 * 1024


def max_bytes() -> int:
    """The most bytes of cache a launch gives a block (``THREADTILE_ROWCACHE_BYTES``)."""
    return int(os.environ.get("THREADTILE_ROWCACHE_BYTES", DEFAULT_BYTES))


def _same(a, b, ren: dict[str, str]) -> bool:
    """Structural equality of two expressions, ``ren`` mapping b's loop variable to a's."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ir.Var):
        return a.name == ren.get(b.name, b.name) and a.type == b.type
    if isinstance(a, ir.Expr):
        for k, v in vars(a).items():
            if k in ("loc", "attrs"):
                continue
            if not _same(v, getattr(b, k), ren):
                return False
        return a.attrs == b.attrs if isinstance(a, ir.TileOp) else True
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, ren) for x, y in zip(a, b))
    return a == b


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Var)}


def _writes(stmts: list[ir.Stmt], array: str) -> bool:
    """Whether any of ``stmts`` (nested ones included) writes ``array`` or calls a function."""
    for s in ir.walk_stmts(stmts):
        if isinstance(s, ir.Store) and isinstance(s.array, ir.Var) and s.array.name == array:
            return True
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.CallFunc):
                    return True
                if isinstance(x, ir.TileOp) and x.op in ("store", "scatter", "atomic",
                                                         "scatter_fragments") and \
                        isinstance(x.args[0], ir.Var) and x.args[0].name == array:
                    return True
                if isinstance(x, ir.Call) and x.name.startswith("atomic"):
                    return True
    return False


def _leaves(body: list[ir.Stmt]) -> bool:
    for s in ir.walk_stmts(body):
        if isinstance(s, (ir.Break, ir.Return)):
            return True
    return False


def _loads(loop: ir.For) -> list[ir.Assign]:
    """The loop body's own statements that load a tile of an array parameter."""
    return [s for s in loop.body if isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp)
            and s.value.op == "load" and isinstance(s.value.args[0], ir.Var) and
            isinstance(s.value.type, TileType) and s.value.type.layout == "blocked" and
            "rowcache" not in s.value.attrs]


def _thread_bytes(t: TileType, threads: int) -> int:
    """A thread's bytes of tile type ``t`` (tile/layout.h: N slots of the element)."""
    n = t.size // threads if t.size >= threads else 1
    return n * (1 if t.dtype.kind == "b" else t.dtype.itemsize)


def cache_rows(f: ir.Function, threads: int) -> None:
    """Mark the loads of ``f`` (a kernel) that later loops read again (the module docstring):
    the first one's ``put``, the later ones' ``get``, in their ``rowcache`` attributes. One
    cache a kernel: the first loop that qualifies."""
    if not f.is_kernel or f.uses_dynamic_shared or max_bytes() <= 0:
        return
    assigned: dict[str, int] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            assigned[s.name] = assigned.get(s.name, 0) + 1
        elif isinstance(s, ir.For):
            assigned[s.var] = assigned.get(s.var, 0) + 1
    params = {p.name for p in f.params if isinstance(p.type, ArrayType)}
    scalars = {p.name for p in f.params}

    def fixed(e: ir.Expr, var: str) -> bool:
        return all(n == var or n in scalars or assigned.get(n) == 1 for n in _names(e))

    def try_block(body: list[ir.Stmt]) -> bool:
        for i, first in enumerate(body):
            if not (isinstance(first, ir.For) and isinstance(first.step, ir.Const) and
                    first.step.value == 1 and not _leaves(first.body) and
                    fixed(first.start, "") and fixed(first.stop, "")):
                continue
            candidates = [s for s in _loads(first) if s.value.args[0].name in params and
                          all(fixed(a, first.var) for a in s.value.args[1:]) and
                          not _writes(first.body, s.value.args[0].name)]
            if not candidates:
                continue
            gets: dict[int, list[ir.Assign]] = {}
            between: list[ir.Stmt] = []
            for later in body[i + 1:]:
                if isinstance(later, ir.For) and isinstance(later.step, ir.Const) and \
                        later.step.value == 1 and _same(first.start, later.start, {}) and \
                        _same(first.stop, later.stop, {}):
                    ren = {later.var: first.var}
                    for s in _loads(later):
                        for k, c in enumerate(candidates):
                            arr = c.value.args[0].name
                            if s.value.type == c.value.type and _same(c.value, s.value, ren) \
                                    and not _writes(between + [later], arr):
                                gets.setdefault(k, []).append(s)
                                break
                between.append(later)
            if not gets:
                continue
            kept = [candidates[k] for k in sorted(gets)]
            sizes = [_thread_bytes(c.value.type, threads) * threads for c in kept]
            slot = sum(sizes)
            off = 0
            for k, c, size in zip(sorted(gets), kept, sizes):
                info = {"slot_bytes": slot, "offset": off, "var": first.var,
                        "start": first.start}
                c.value.attrs["rowcache"] = {"role": "put", **info}
                for s in gets[k]:
                    later_var = next(x.var for x in body[i + 1:] if isinstance(x, ir.For) and
                                     any(y is s for y in x.body))
                    s.value.attrs["rowcache"] = {"role": "get", **info, "var": later_var}
                off += size
            return True
        return any(try_block(s.body) for s in body if isinstance(s, ir.For)) or \
            any(try_block(s.then) or try_block(s.orelse) for s in body if isinstance(s, ir.If))

    try_block(f.body)


def plan(module: ir.Module) -> tuple[str, int, int, int] | None:
    """(the cached array's parameter name, the axis the first loop walks, the tile's extent
    along it, the slot's bytes) of the kernel's cache, or None: what :func:`launch_bytes`
    sizes the cache by."""
    f = module.kernel
    for x in ir.walk_function_exprs(f):
        if isinstance(x, ir.TileOp) and x.op == "load" and \
                x.attrs.get("rowcache", {}).get("role") == "put":
            rc = x.attrs["rowcache"]
            axis = next((k for k, a in enumerate(x.args[1:]) if rc["var"] in _names(a)), 0)
            return x.args[0].name, axis, x.attrs["shape"][axis], rc["slot_bytes"]
    return None


def launch_bytes(p: tuple[str, int, int, int], extent: int) -> int:
    """The dynamic shared memory a launch adds for cache plan ``p`` when the cached array's
    extent along its axis is ``extent``: a slot per tile along it, within max_bytes(), and 16
    bytes for the alignment of the cache's start."""
    slot = p[3]
    slots = min(-(-extent // p[2]), max_bytes() // slot)
    return slots * slot + 16 if slots > 0 else 0
