"""Lockstep execution of one launch: blocks in batches, every thread of a batch as a NumPy lane.

A launch runs its blocks in batches of consecutive blocks (as many as fit in about 128k lanes).
Lane ``l`` of a batch is thread ``l % T`` of the batch's block ``l // T``, where ``T`` is the
number of threads per block and a thread's linear id is ``x + y * bx + z * bx * by``, as on the
GPU. Warps are 32 consecutive threads of one block. Batching blocks is sound because every
block of a batch keeps its own shared memory (a block axis in front), its own barrier count,
and the race check treats accesses of different blocks as unordered; blocks of different
batches are just as unordered on a GPU.

The generated code (``codegen.py``) calls :class:`Batch` for what needs more than one lane:
barriers, warp shuffles and votes, shared/local array declarations, and ``print``.
"""

from __future__ import annotations

import sys

import numpy as np

from ... import errors
from ...ir import coop as ircoop
from ...ir import nodes as ir
from ...ir.resources import DYNAMIC_SHARED_OPTIN
from ...lang.types import ArrayType, Scalar, TupleType
from ...runtime import abi
from ...runtime.arrays import describe_host
from ...runtime.devices import SIMULATED_ATTRIBUTES
from ...runtime.memory import simulated_view
from . import checks, memory, ops, record
from .codegen import Program, translate

LANES = 1 << 17  # lanes per batch: large enough that NumPy's per-call overhead is amortized
SHARED_LIMIT = DYNAMIC_SHARED_OPTIN["sm_90"]  # the most one block may have (sm_90, opt-in)

_I32, _I64 = np.int32, np.int64


class LaunchState:
    """What outlives a batch: the checks' view of the launch, global arrays, printed lines."""

    def __init__(self, prog: Program, launch: checks.Launch, shared_bytes: int):
        self.prog = prog
        self.launch = launch
        self.shared_bytes = shared_bytes
        self.prints: list[tuple[int, int, str]] = []
        self.seq = 0


_LANE_CACHE: dict = {}


def _lanes(block: tuple, nb: int) -> dict:
    """The per-lane vectors that depend only on the block shape and the batch size, made once
    (every batch of a launch but the last has the same size) and read-only."""
    key = (block, nb)
    hit = _LANE_CACHE.get(key)
    if hit is not None:
        return hit
    bx, by, _ = block
    T = bx * block[1] * block[2]
    n = nb * T
    lanes = np.arange(n, dtype=_I64)
    tid = lanes % T if nb > 1 else lanes
    blk = lanes // T if nb > 1 else np.zeros(n, _I64)
    out = {"lanes": lanes, "tid": tid, "blk": blk}
    for axis, v, d in zip("xyz", (tid % bx, (tid // bx) % by, tid // (bx * by)), block):
        if d == 1:  # a flat axis: a uniform 0 keeps expressions of it scalar
            out["tid_" + axis], out["tid_" + axis + "64"] = _I32(0), _I64(0)
            continue
        out["tid_" + axis] = v.astype(_I32)
        out["tid_" + axis + "64"] = v
    out["laneid"] = (tid % 32).astype(_I32)
    out["warp"] = blk * ((T + 31) // 32) + tid // 32
    out["lanemask_lt"] = ((np.uint64(1) << out["laneid"].astype(np.uint64)) -
                          np.uint64(1)).astype(np.uint32)
    for v in out.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    if len(_LANE_CACHE) > 64:
        _LANE_CACHE.clear()
    _LANE_CACHE[key] = out
    return out


class Batch:
    """The lanes of ``nb`` consecutive blocks starting at linear block ``first``."""

    def __init__(self, st: LaunchState, first: int, nb: int):
        L = st.launch
        self.state = st
        self.launch = L
        gx, gy, _ = L.grid
        T = L.T
        self.T, self.nb = T, nb
        self.L = n = nb * T
        self.__dict__.update(_lanes(L.block, nb))
        gblk = first + self.blk
        self.gtid = gblk * T + self.tid
        cta = (gblk % gx, (gblk // gx) % gy, gblk // (gx * gy))
        for axis, v, nt, nc in zip("xyz", cta, L.block, L.grid):
            if nb == 1 or nc == 1:  # one block, or a flat grid axis: the same in every lane
                v = v[0]
            setattr(self, "ctaid_" + axis, v.astype(_I32))
            setattr(self, "ctaid_" + axis + "64", v.astype(_I64))
            setattr(self, "ntid_" + axis, _I32(nt))
            setattr(self, "ntid_" + axis + "64", _I64(nt))
            setattr(self, "nctaid_" + axis, _I32(nc))
            setattr(self, "nctaid_" + axis + "64", _I64(nc))
        self.nwarps = (T + 31) // 32
        self.bep = np.zeros(nb, _I64)  # barriers passed, per block
        self.wep = np.zeros(n, _I64)  # per lane: a clock of the syncwarps it took part in
        self.stamp = np.zeros(n, _I64)
        self.live = None  # lanes that have not returned from the kernel (None: all)
        self._arrays: dict = {}

    # -- arrays ----------------------------------------------------------------------------

    def decl(self, did: int) -> memory.ArrayRef:
        """The array of declaration ``did``: the same storage at every execution, as a
        ``__shared__`` or local C array is."""
        ref = self._arrays.get(did)
        if ref is None:
            d = self.state.prog.decls[did]
            ref = self._arrays[did] = self._make(d)
        return ref

    def _make(self, d: ir.ArrayDecl) -> memory.ArrayRef:
        elem = d.type.dtype
        shape = tuple(int(x) for x in d.shape)
        size = int(np.prod(shape)) if shape else 1
        strides = memory.c_strides(shape)
        dims = tuple(_I64(x) for x in shape)
        space = d.type.space
        if space == "shared" and d.dynamic:
            return self._dynamic(d)
        if space == "shared":
            mem = memory.Memory(np.zeros(self.nb * size, elem.numpy), d.name, "shared", elem,
                                shape, per_block=size, track_writes=self.launch.uninit)
            origin = self.blk * size if self.nb > 1 else _I64(0)
            return memory.ArrayRef(mem, origin, dims, strides)
        if d.init is not None:  # a constant array declared in the body
            flat = np.ascontiguousarray(d.init).reshape(-1)
            mem = memory.Memory(flat, d.name, "const", elem, shape)
            return memory.ArrayRef(mem, _I64(0), dims, strides)
        mem = memory.Memory(np.zeros(self.L * size, elem.numpy), d.name, "local", elem, shape)
        return memory.ArrayRef(mem, self.lanes * size, dims, strides)

    def _dynamic(self, d: ir.ArrayDecl) -> memory.ArrayRef:
        """Every dynamic shared array of a kernel starts at the same address of the block's
        dynamic shared memory (``extern __shared__``), whatever its dtype."""
        nbytes = self.state.shared_bytes
        region = -(-nbytes // 16) * 16
        buf = self._arrays.get("dyn")
        if buf is None:
            buf = self._arrays["dyn"] = np.zeros(max(self.nb * region, 16), np.uint8)
        dt = d.type.dtype.numpy
        key = ("dyn", dt.str)
        ref = self._arrays.get(key)
        if ref is None:
            item = dt.itemsize
            n = nbytes // item
            flat = buf[: self.nb * region].view(dt) if region else np.zeros(0, dt)
            mem = memory.Memory(flat, d.name, "shared", d.type.dtype, (n,),
                                per_block=region // item, track_writes=self.launch.uninit)
            origin = self.blk * (region // item) if self.nb > 1 else _I64(0)
            ref = self._arrays[key] = memory.ArrayRef(mem, origin, (_I64(n),), (_I64(1),))
        return ref

    # -- barriers ----------------------------------------------------------------------------

    def _restamp(self) -> None:
        if self.launch.warp_sync:
            self.stamp = (self.bep[self.blk] << 32) | self.wep
        else:
            self.stamp = self.bep[self.blk]

    def barrier(self, m, site: int, pred=None, kind: str | None = None,
                what: str = "syncthreads()", sync: bool = True):
        """``syncthreads()`` (and its _count/_and/_or forms) by the lanes of mask ``m``: every
        thread of a block that reaches it must reach it together. A block-wide primitive of
        threadtile.coop (``what``) is checked so too; ``sync``: it orders memory as a
        barrier does (its C++ holds one)."""
        if m is None:
            if sync:
                self.bep += 1
            cnt = np.full(self.nb, self.T)
        else:
            cnt = m.reshape(self.nb, self.T).sum(axis=1)
            partial = (cnt > 0) & (cnt < self.T)
            if partial.any() and self.launch.barrier:
                self._diverged(m, site, int(np.argmax(partial)), what)
            if sync:
                self.bep[cnt > 0] += 1
        if sync:
            self._restamp()
        if kind is None:
            return None
        p = np.broadcast_to(pred, (self.L,)).astype(bool)
        if m is not None:
            p = p & m
        yes = p.reshape(self.nb, self.T).sum(axis=1)
        if kind == "count":
            res = yes
        elif kind == "and":
            res = yes == cnt
        else:
            res = yes > 0
        return res.astype(_I32)[self.blk]

    def grid_sync(self, m, site: int) -> None:
        """``cg.this_grid().sync()``: every thread of the launch (all in this batch: ``run``
        makes one batch of a kernel that syncs its grid) meets here. Everything before it
        is ordered before everything after it, whichever blocks made the accesses: the race
        check forgets stamps below the new floor (``checks.Launch.concurrent``)."""
        if m is not None and self.launch.barrier:
            self._grid_divergence(m, site)
        floor = int(self.bep.max()) + 1
        self.bep[:] = floor
        self.launch.grid_floor = floor
        self._restamp()

    def _grid_divergence(self, m, site: int) -> None:
        """A thread that returned counts as arrived at a grid sync, as on the GPU (numba's
        examples return past the end of the data first); one on another path, or a block
        with no thread left to arrive, leaves the grid waiting forever."""
        away = ~m if self.live is None else ~m & self.live
        arrived = m.reshape(self.nb, self.T).any(axis=1)
        if away.any():
            b = int(np.argmax(away)) // self.T
            reason = ("are on another path (a branch or a loop trip count that differs between "
                      "threads). A grid sync() that some live threads of the launch skip "
                      "hangs on the GPU; make the condition uniform over the grid, or return "
                      "from the kernel before it in the threads that do not take part")
        elif not arrived.all():
            b = int(np.argmax(~arrived))
            reason = ("all returned before it, and the grid sync waits for every block of the "
                      "launch: launch only the blocks that take part")
        else:
            return
        lanes = np.arange(b * self.T, (b + 1) * self.T)
        missing = lanes[away[lanes]] if away.any() else lanes
        checks.raise_divergence(self.launch, site, int(self.gtid[lanes[0]] // self.T),
                                [int(self.gtid[x]) for x in missing], int(m.sum()),
                                "grid sync()", reason, scope="grid")

    def _diverged(self, m, site: int, b: int, what: str = "syncthreads()") -> None:
        lanes = np.arange(b * self.T, (b + 1) * self.T)
        missing = lanes[~m[lanes]]
        exited = self.live is not None and not self.live[missing].any()
        reason = (f"returned before it. Every thread of a block must reach each {what}: an "
                  "early return before a barrier is a bug on the GPU (the block may hang or "
                  "read stale shared memory)" if exited else
                  "are on another path (a branch or a loop trip count that differs between "
                  f"threads of the block). A {what} in code that not every thread of "
                  "the block runs is undefined on the GPU; make the condition uniform over "
                  "the block, or move the call out of it")
        checks.raise_divergence(self.launch, site, int(self.gtid[lanes[0]] // self.T),
                                [int(self.gtid[x]) for x in missing],
                                int(m[lanes].sum()), what, reason)

    def _participants(self, m, site: int, mask, what: str):
        """Lanes taking part in a warp-synchronous call: active and named in ``mask``. Every
        existing lane that an active lane's mask names must be active too."""
        active = np.ones(self.L, bool) if m is None else m
        lid = self.laneid.astype(np.uint32)
        mask = np.asarray(mask).astype(np.uint32)
        if mask.ndim:  # per-lane masks: a warp needs the union of its active lanes' masks
            union = np.zeros(self.nb * self.nwarps, np.uint32)
            np.bitwise_or.at(union, self.warp[active], mask[active])
            named = ((union[self.warp] >> lid) & 1).astype(bool)
            own = ((mask >> lid) & 1).astype(bool)
        else:
            named = own = ((mask >> lid) & 1).astype(bool)
        if self.launch.barrier:
            touched = np.bincount(self.warp[active], minlength=self.nb * self.nwarps) > 0
            missing = named & ~active & touched[self.warp]
            if missing.any():
                k = int(np.argmax(missing))
                w = self.warp[k]
                lanes = np.flatnonzero((self.warp == w) & missing)
                arrived = int((active & (self.warp == w)).sum())
                checks.raise_divergence(
                    self.launch, site, int(self.gtid[k] // self.T),
                    [int(self.gtid[x]) for x in lanes], arrived, what,
                    f"are named by the mask {int(mask.flat[0]):#010x}, and every lane a "
                    "*_sync call names must execute it together (use activemask() or a "
                    "mask of the lanes that really take this path)")
        return active & own

    def syncwarp(self, m, site: int, mask) -> None:
        part = self._participants(m, site, mask, "syncwarp()")
        self._join(part, mask)
        self._restamp()

    def _join(self, part, mask) -> None:
        """The lanes of ``part`` meet at a syncwarp: each group of them (one warp, one mask)
        leaves with one clock above every member's, so an access after it is ordered after
        what the group did before it (``checks.Launch.concurrent``). A clock per warp would
        order the lanes a partial mask leaves out too: ``syncwarp(0xFFFF)`` in the lower half
        of a warp does not order the upper half's reads after the lower half's writes."""
        lanes = np.flatnonzero(part)
        if not lanes.size:
            return
        masks = np.broadcast_to(np.asarray(mask).astype(np.uint32), (self.L,))[lanes]
        key = (self.warp[lanes].astype(_I64) << 32) | masks.astype(_I64)
        _, group = np.unique(key, return_inverse=True)
        top = np.zeros(int(group.max()) + 1, _I64)
        np.maximum.at(top, group, self.wep[lanes])
        self.wep[lanes] = top[group] + 1

    def fence(self, m) -> None:
        """``threadfence*()``: the writes the lanes of ``m`` made so far become published."""
        f = self.launch.fence
        if f is not None:
            f[self.gtid if m is None else self.gtid[m]] += 1

    # -- warp exchange -----------------------------------------------------------------------

    def shfl(self, m, site: int, kind: str, mask, v, delta):
        """``__shfl*_sync`` with width 32: a lane whose source is outside the warp (or past the
        block's last thread) gets its own value, as on the GPU."""
        self._participants(m, site, mask, f"shfl_{'' if kind == 'idx' else kind + '_'}sync()")
        vals = np.broadcast_to(v, (self.L,))
        lid = self.laneid
        if kind == "idx":
            src = delta & 31
            ok = True
        elif kind == "up":
            src = lid - delta
            ok = src >= 0
        elif kind == "down":
            src = lid + delta
            ok = src < 32
        else:
            src = lid ^ delta
            ok = (src >= 0) & (src < 32)
        shift = (src - lid).astype(_I64)
        ok = ok & (self.tid + shift < self.T) & (self.tid + shift >= 0)
        return vals[np.where(ok, self.lanes + shift, self.lanes)]

    def vote(self, m, site: int, kind: str, mask, pred):
        part = self._participants(m, site, mask, f"{kind}_sync()")
        nw = self.nb * self.nwarps
        p = np.broadcast_to(pred, (self.L,)).astype(bool) & part
        if kind == "ballot":
            bits = np.where(p, np.ldexp(1.0, self.laneid), 0.0)
            return np.bincount(self.warp, bits, nw).astype(np.uint64).astype(
                np.uint32)[self.warp]
        yes = np.bincount(self.warp, p, nw)[self.warp]
        n = np.bincount(self.warp, part, nw)[self.warp]
        res = {"all": yes == n, "any": yes > 0, "eq": (yes == 0) | (yes == n)}[kind]
        return res.astype(_I32)

    def match(self, m, site: int, kind: str, mask, v):
        """``match_any_sync`` (each lane: the lanes of its warp taking part that hold the same
        bits) and ``match_all_sync`` (``(the lanes taking part, True)`` where they all hold
        the same bits, else ``(0, False)``)."""
        part = self._participants(m, site, mask, f"match_{kind}_sync()")
        vals = np.broadcast_to(v, (self.L,))
        bits = vals.view(np.uint64 if vals.dtype.itemsize == 8 else np.uint32)
        same = np.zeros(self.L, np.uint32)
        taking = np.zeros(self.L, np.uint32)
        base = self.lanes - self.laneid  # lane 0 of each lane's warp
        for j in range(32):
            other = base + j
            inside = other < self.L
            o = np.where(inside, other, self.lanes)
            there = inside & part[o] & (self.warp[o] == self.warp)
            bit = np.uint32(1 << j)
            taking |= np.where(there, bit, np.uint32(0))
            same |= np.where(there & (bits[o] == bits), bit, np.uint32(0))
        if kind == "any":
            return same
        everyone = same == taking
        return np.where(everyone, taking, np.uint32(0)), everyone

    def activemask(self, m):
        if m is None:
            active = np.ones(self.L, bool)
        else:
            active = m
        bits = np.where(active, np.ldexp(1.0, self.laneid), 0.0)
        return np.bincount(self.warp, bits, self.nb * self.nwarps).astype(np.uint64).astype(
            np.uint32)[self.warp]

    # -- print -------------------------------------------------------------------------------

    def out(self, m, site: int, items: tuple) -> None:
        """One ``print`` by the lanes of ``m``; lines are written at the end of the launch,
        ordered by block, then thread, then time."""
        lanes = self.lanes if m is None else np.flatnonzero(m)
        cols = []
        for it in items:
            if isinstance(it, str):
                cols.append(it)
                continue
            v, t = it
            if v.__class__ is np.ndarray and v.ndim:
                cols.append([ops.format_item(x, t) for x in v[lanes]])
            else:
                cols.append(ops.format_item(v, t))
        st = self.state
        seq = st.seq
        st.seq += 1
        gt = self.gtid[lanes]
        for k in range(len(lanes)):
            text = "".join(c if isinstance(c, str) else c[k] for c in cols)
            st.prints.append((int(gt[k]), seq, text + "\n"))


# ---------------------------------------------------------------------------------------------
# A launch
# ---------------------------------------------------------------------------------------------

def cooperative_blocks(threads: int, shared_bytes: int) -> int:
    """The most blocks of ``threads`` threads and ``shared_bytes`` of shared memory that the
    simulated device holds resident at once (what a cooperative launch may have): per
    multiprocessor, the fewest that threads, the block limit and shared memory allow."""
    a = SIMULATED_ATTRIBUTES
    per_sm = min(a["MAX_THREADS_PER_MULTI_PROCESSOR"] // threads,
                 a["MAX_BLOCKS_PER_MULTIPROCESSOR"])
    if shared_bytes:  # the driver reserves 1 KiB per block on sm_80 and later
        per_sm = min(per_sm, a["MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"] // (shared_bytes + 1024))
    return per_sm * a["MULTIPROCESSOR_COUNT"]


def _static_shared(prog: Program) -> int:
    coop = ircoop.scratch_of(c for c, _ in prog.coop_ops)
    return sum(int(np.prod(d.shape)) * d.type.dtype.itemsize for d in prog.decls
               if d.type.space == "shared" and not d.dynamic) + sum(n for _, n in coop)


def static_shared(spec) -> int:
    """The static shared memory per block of a specialization, in bytes."""
    return _static_shared(program_for(spec))


def _bind_captured(prog: Program) -> None:
    """The captured global device arrays (frontend/captured.py), bound afresh at each launch
    (their race shadows start empty, as an argument's do) to the simulator's memory at the
    address they were compiled with."""
    for d in getattr(prog, "captured", ()):
        c = d.init
        item = d.type.dtype.itemsize
        cai = {"data": (c.ptr, False), "shape": d.shape, "typestr": d.type.dtype.numpy.str,
               "strides": tuple(s * item for s in c.strides), "version": 3}
        view = simulated_view(_Interface(cai))
        if view is None:
            raise errors.LaunchError(
                f"the global device array {d.name} read by the kernel (0x{c.ptr:x}, shape "
                f"{d.shape}) is not in the simulator's memory: make it with to_device() under "
                "simulate(), or pass it as an argument")
        prog.kernel.__globals__["v_" + d.name] = memory.from_numpy(view, d.name, d.type.dtype)


class _Interface:
    def __init__(self, cai: dict):
        self.__cuda_array_interface__ = cai


def program_for(spec) -> Program:
    """The translation of a specialization, made once and kept on it."""
    prog = getattr(spec, "_sim_program", None)
    if prog is None:
        prog = translate(spec.module)
        spec._sim_program = prog
    return prog


def launch_dims(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    t = tuple(int(x) for x in tuple(v))
    if not 1 <= len(t) <= 3:
        raise errors.LaunchError(f"{what} must have 1 to 3 dimensions, got {v!r}")
    t = t + (1,) * (3 - len(t))
    if any(x < 1 for x in t):
        raise errors.LaunchError(f"{what} dimensions must be positive, got {t}")
    return t


def _value(t, a, name: str):
    """What the generated code takes for a host argument ``a`` of kernel type ``t``: an array
    view, a NumPy scalar, or a tuple of those."""
    if isinstance(t, ArrayType):
        return memory.from_numpy(a, name, t.dtype)
    if isinstance(t, TupleType):
        return tuple(_value(x, v, f"{name}[{k}]") for k, (x, v) in enumerate(zip(t.items, a)))
    return ops.scalar(a, t if isinstance(t, Scalar) else None)


def run(kernel, launch, host_args: list, consts: dict, check_set: frozenset,
        infos: list | None = None) -> None:
    """Run one launch of ``kernel`` over the host (NumPy) arrays and scalars ``host_args``
    (``infos``: the arguments' ``ArgInfo`` records as given, whose types may differ from what
    the host arrays say, and which are checked against the kernel's parameters as a GPU
    launch checks them)."""
    grid = launch_dims(launch.grid, "grid")
    block = launch_dims(launch.block, "block")
    T = block[0] * block[1] * block[2]
    if T > 1024 or block[2] > 64:
        raise errors.LaunchError(f"a block has at most 1024 threads (and z <= 64); got "
                                 f"{block} = {T}")
    if infos is None:
        infos = [describe_host(a, i) for i, a in enumerate(host_args)]
    if getattr(kernel, "static_dims", None):  # annotated static extents and strides
        consts = {**consts, **kernel.static_consts(infos)}
    spec = kernel.specialization([i.type for i in infos], consts)
    if getattr(kernel, "auto_warps", False):  # the block its specialization picked
        block = (spec.module.threads, 1, 1)
        T = block[0]
    prog = program_for(spec)
    params = [p for p in prog.params if not p.is_constant]
    abi.check(kernel.__name__, [p.type for p in params], infos)
    want = getattr(prog, "coop_block", None)  # threadtile.coop's block primitives (coop.py)
    if want is not None and (msg := ircoop.block_mismatch(kernel.__name__, want, block)):
        raise errors.LaunchError(msg)
    shared_bytes = int(getattr(launch, "shared_bytes", 0) or 0)
    static = _static_shared(prog)
    if static + shared_bytes > SHARED_LIMIT:
        raise errors.LaunchError(f"{static} bytes of static and {shared_bytes} of dynamic "
                                 f"shared memory exceed the {SHARED_LIMIT} a block may have")
    L = checks.Launch(grid, block, prog.sites, prog.warp_sync, check_set)
    nblocks = grid[0] * grid[1] * grid[2]
    if prog.fences and L.race:
        L.fence = np.zeros(nblocks * T, _I64)
        L.releases = getattr(prog, "releases", False)
    st = LaunchState(prog, L, shared_bytes)
    values = [_value(p.type, a, p.name) for p, a in zip(params, host_args)]
    _bind_captured(prog)
    per = max(1, min(nblocks, LANES // T))
    per_block_bytes = static + shared_bytes
    if per_block_bytes:
        per = max(1, min(per, (256 << 20) // per_block_bytes))
    if getattr(prog, "array_rebinds", False) or getattr(prog, "waits", False):
        # one block per batch: an array variable bound under a branch on the block's own
        # values (cuTile's `a = x if ct.bid(0) == 0 else y`) is bound once; a block spinning
        # on a lock (a while loop doing atomics) finds it released by the blocks before it
        per = 1
    if getattr(prog, "grid_sync", False):
        # a grid barrier is met only by blocks that run together: the whole grid is one batch
        # (a cooperative launch refuses a grid that cannot be resident at once)
        most = cooperative_blocks(T, per_block_bytes)
        if nblocks > most:
            raise errors.LaunchError(
                f"{kernel.__name__}: a grid of {nblocks} blocks of {T} threads is more than "
                f"the {most} that can be resident at once, and the kernel syncs its grid "
                "(cg.this_grid().sync()), so it is launched cooperatively; use at most "
                "kernel.overloads[sig].max_cooperative_grid_blocks(blockdim) blocks")
        per = nblocks
    try:
        with np.errstate(all="ignore"):
            for first in range(0, nblocks, per):
                B = Batch(st, first, min(per, nblocks - first))
                prog.kernel(B, None, *values)
    finally:
        if st.prints:
            st.prints.sort(key=lambda r: (r[0], r[1]))
            sys.stdout.write("".join(text for _, _, text in st.prints))
            sys.stdout.flush()
    record.record(L, values)  # who wrote what, where threadtile.compare asks (record.py)
