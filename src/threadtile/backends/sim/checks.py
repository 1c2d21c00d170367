"""The simulator's checks: race detection over shadow memory, and the errors it raises.

Race detection keeps, for every element of every global or shared array a launch touches, the
last write and up to two reads that are still *concurrent* with later accesses. Two accesses
are concurrent unless something orders them:

- the same thread made both (program order);
- the same block made both and a ``syncthreads()`` of that block came between them (its
  barrier count, the *epoch*, differs);
- the same warp made both and a ``syncwarp()`` of that warp came between them.

Nothing orders accesses of two different blocks within one launch (blocks may run in any order,
or at the same time), so those are always concurrent; launches are ordered, so shadows start
empty at each launch. Two concurrent accesses to one element race when at least one writes and
they are not both atomic. Two reads are enough to remember: if any earlier concurrent read was
by another thread than a later writer, one of two distinct remembered readers is, so no race
between a read and a write can hide behind the limit; what the limit loses is only *which*
reader gets named.

Memory fences get one concession, for the classic threadfence reduction (each block writes a
partial result, calls ``threadfence()`` and takes a ticket with an atomic; the block with the
last ticket reads every partial): a write followed by a fence in the writing thread is
*published*, and a later read of it by another thread does not race with it. The simulator does
not check that the reader really waited for the writer (by a flag or an atomic ticket); it only
knows that, in its own run, the write came first. A tile atomic with
``memory_order=RELEASE`` (cuTile's unlock: ``ct.atomic_xchg(lock, i, 0, memory_order=RELEASE)``)
publishes every access its block made before it, reads included: a later write by another
thread races with none of them either (readers then keep their fence counts too). That is what
a lock between blocks needs: each block's critical section is ordered after the previous
holder's release.

Per element the shadow holds up to 10 numbers: the writer's thread, stamp,
``site << 1 | atomic`` and fence count, then (thread, stamp, site) of two readers (and their
fence counts, where releases publish reads). A thread is
its global linear id ``block * threads_per_block + thread``; a stamp is the block's barrier
count, with the warp's ``syncwarp`` count in its low 32 bits (``block_epoch << 32 |
warp_epoch``) when the kernel calls ``syncwarp``; a fence count is how many fences the thread
had made.
"""

from __future__ import annotations

import linecache
import warnings
from dataclasses import dataclass

import numpy as np

from ... import errors
from ...ir.nodes import Loc

_LOW32 = np.int64(0xFFFFFFFF)

ALL_CHECKS = frozenset({"race", "bounds", "barrier", "uninit"})


@dataclass(frozen=True)
class Site:
    """One place in the kernel that touches memory or synchronizes: its Loc, how the array is
    written there (``ms``, ``a``...), and what it does (read, write, atomic, barrier...)."""

    loc: Loc
    array: str
    kind: str


class Launch:
    """What every check needs to name threads and order accesses within one launch."""

    def __init__(self, grid: tuple, block: tuple, sites: list[Site], warp_sync: bool,
                 checks: frozenset):
        self.grid = grid
        self.block = block
        self.T = block[0] * block[1] * block[2]
        self.sites = sites
        self.warp_sync = warp_sync  # the kernel calls syncwarp: warp epochs matter
        self.race = "race" in checks
        self.bounds = "bounds" in checks
        self.barrier = "barrier" in checks
        self.uninit = "uninit" in checks
        self.fence = None  # fences made per global thread id, when the kernel makes any
        self.releases = False  # the kernel's tile atomics release (see the module docstring)
        # block epoch every block passed at the last grid sync: stamps below it are ordered
        # before every later access, whichever block made them
        self.grid_floor = 0
        self.warned: set = set()  # pairs of sites whose benign race was reported
        # shadow fields: thread ids, stamps and sites fit int32 unless warp epochs are packed
        # into stamps or the grid has 2**31 threads
        nthreads = self.T * grid[0] * grid[1] * grid[2]
        self.shadow_dtype = np.int64 if warp_sync or nthreads >= 1 << 31 else np.int32

    # -- naming ------------------------------------------------------------------------------

    def thread_of(self, gtid: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(block, thread) of a global linear thread id, each as (x, y, z)."""
        gtid = int(gtid)
        b, t = divmod(gtid, self.T)
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        thread = (t % bx, (t // bx) % by, t // (bx * by))
        block = (b % gx, (b // gx) % gy, b // (gx * gy))
        return block, thread

    # -- ordering ----------------------------------------------------------------------------

    def concurrent(self, t1, s1, t2, s2, same_block: bool = False):
        """Per lane: stored access (t1, s1) is by another thread and not ordered before the
        current access (t2, s2). ``t1 < 0`` means nothing stored (its stamp is -1 too).

        The early exits matter: most accesses meet either an element no other thread touched
        (global arrays) or one last touched before the latest barrier (shared arrays)."""
        if self.grid_floor:
            floor = self.grid_floor << 32 if self.warp_sync else self.grid_floor
            t1 = np.where(s1 < floor, -1, t1)  # made before the last grid sync
        if same_block and not self.warp_sync:
            unordered = s1 == s2  # one block: the same stamp is the same barrier interval
            if not unordered.any():
                return unordered
            return unordered & (t1 != t2)
        other = (t1 >= 0) & (t1 != t2)
        if not other.any():
            return other
        if self.warp_sync:
            T = self.T
            same_warp = ((t1 // T) == (t2 // T)) & (((t1 % T) // 32) == ((t2 % T) // 32))
            unordered = ((s1 >> 32) == (s2 >> 32)) & (~same_warp | ((s1 & _LOW32) ==
                                                                     (s2 & _LOW32)))
        else:
            unordered = s1 == s2
        if same_block:  # shared memory: both accesses are of the block that owns it
            return other & unordered
        return other & (((t1 // self.T) != (t2 // self.T)) | unordered)


def _fenced_read(L: Launch, slot: list, offs, tid) -> None:
    """A reader slot's fence counts, where this read's thread holds the slot now."""
    mine = slot[0][offs] == tid
    if mine.any():
        slot[3][offs[mine]] = L.fence[tid[mine]]


class Shadow:
    """Race-detection state of one memory (a global array, or one batch's shared array).

    One vector per field, so that a check gathers only the fields it needs (gathering whole
    rows of a 2-d table costs more than all the rest of a check), in three groups made at
    first need: the writer (an input array never written in the launch has none), the first
    reader, the second reader. Fields are int32 unless the launch needs int64 (2**31 threads,
    or stamps that carry warp epochs)."""

    __slots__ = ("size", "dt", "same_block", "w", "r1", "r2")

    def __init__(self, size: int, same_block: bool, dt=np.int64):
        self.size, self.dt, self.same_block = size, dt, same_block
        self.w = self.r1 = self.r2 = None

    def _new(self, n: int) -> list:
        """``n`` fields: the first two (thread, stamp) start at -1, meaning nothing recorded
        (no stamp is negative); the others are read only where a thread is recorded."""
        ids = np.full((2, self.size), -1, self.dt)
        return [ids[0], ids[1]] + list(np.empty((n - 2, self.size), self.dt))

    def read(self, L: Launch, mem, offs, tid, stamp, site: int, index_at) -> None:
        """Record reads of elements ``offs`` by threads ``tid``; raise on a concurrent write."""
        if self.w is not None:
            wt_, ws_, wx_, wf_ = self.w
            wt = wt_[offs]
            bad = L.concurrent(wt, ws_[offs], tid, stamp, self.same_block)
            if bad.any() and L.fence is not None:  # writes a fence has published since
                k = np.flatnonzero(bad)
                bad[k[L.fence[wt[k]] > wf_[offs[k]]]] = False
            if bad.any():
                k = int(np.argmax(bad))
                wx = int(wx_[offs[k]])
                raise_race(L, "read", site, tid[k], wx >> 1, wt[k],
                           "atomic" if wx & 1 else "write", mem.describe(int(offs[k])),
                           index_at(k))
        # slot 1: take it unless it holds a concurrent read by another thread, or this very
        # read already (the same thread between the same barriers: nothing new to record)
        if self.r1 is None:
            self.r1 = self._new(4 if L.releases else 3)
        r1t, r1s, r1l = self.r1[:3]
        t1, s1 = r1t[offs], r1s[offs]
        keep1 = L.concurrent(t1, s1, tid, stamp, self.same_block)
        upd = ~(keep1 | ((t1 == tid) & (s1 == stamp)))
        if upd.all():  # the usual first read of fresh elements: no subsets to cut
            r1t[offs] = tid
            r1s[offs] = stamp
            r1l[offs] = site
            cand = r1t[offs] != tid  # another lane of this same read won slot 1
        elif upd.any():
            o, ut = offs[upd], tid[upd]
            r1t[o] = ut
            r1s[o] = stamp[upd]
            r1l[o] = site
            lost = np.zeros(len(offs), bool)
            lost[upd] = r1t[o] != ut
            cand = keep1 | lost
        else:
            cand = keep1
        if L.releases:
            _fenced_read(L, self.r1, offs, tid)
        if not cand.any():
            return
        # slot 2: a second thread, when slot 1 holds another one
        if self.r2 is None:
            self.r2 = self._new(4 if L.releases else 3)
        r2t, r2s, r2l = self.r2[:3]
        t2, s2 = r2t[offs], r2s[offs]
        keep2 = L.concurrent(t2, s2, tid, stamp, self.same_block)
        upd2 = cand & ~(keep2 | ((t2 == tid) & (s2 == stamp)))
        if upd2.any():
            o = offs[upd2]
            r2t[o] = tid[upd2]
            r2s[o] = stamp[upd2]
            r2l[o] = site
        if L.releases:
            _fenced_read(L, self.r2, offs, tid)

    def write(self, L: Launch, mem, offs, tid, stamp, site: int, atomic: bool,
              index_at, new=None) -> None:
        """Record writes (or atomic read-modify-writes); raise on a concurrent access.

        ``new``: the raw values a plain store writes (one per ``offs``). A store of the value
        an element already holds cannot be told apart from no store by any reader nor by the
        final memory, so its races are benign: a :class:`RaceWarning`, not an error."""
        none = np.zeros(len(offs), bool)
        bad_w = bad_r1 = bad_r2 = none
        if self.w is not None:
            wt = self.w[0][offs]
            bad_w = L.concurrent(wt, self.w[1][offs], tid, stamp, self.same_block)
            if atomic and bad_w.any():
                bad_w &= (self.w[2][offs] & 1) == 0
        if self.r1 is not None:
            r1t = self.r1[0][offs]
            bad_r1 = L.concurrent(r1t, self.r1[1][offs], tid, stamp, self.same_block)
        if self.r2 is not None:
            r2t = self.r2[0][offs]
            bad_r2 = L.concurrent(r2t, self.r2[1][offs], tid, stamp, self.same_block)
        if L.releases:  # accesses a release has published since (see the module docstring)
            if bad_w.any():
                bad_w = bad_w & ~(L.fence[wt] > self.w[3][offs])
            if bad_r1.any():
                bad_r1 = bad_r1 & ~(L.fence[r1t] > self.r1[3][offs])
            if bad_r2.any():
                bad_r2 = bad_r2 & ~(L.fence[r2t] > self.r2[3][offs])
        bad = bad_w | bad_r1 | bad_r2
        kind = "atomic" if atomic else "write"
        if bad.any() and new is not None:
            same = same_bits(new, mem.flat[offs])
            benign = bad & same
            if benign.any():
                k = int(np.argmax(benign))
                _warn_once(L, self, k, offs, bad_w, bad_r1, site, tid, mem, index_at,
                           wt if bad_w[k] else None, r1t if bad_r1[k] else None,
                           None if bad_w[k] or bad_r1[k] else r2t)
                bad = bad & ~same
        if bad.any():
            k = int(np.argmax(bad))
            o = offs[k]
            if bad_w[k]:
                x = int(self.w[2][o])
                other, osite, okind = wt[k], x >> 1, "atomic" if x & 1 else "write"
            elif bad_r1[k]:
                other, osite, okind = r1t[k], int(self.r1[2][o]), "read"
            else:
                other, osite, okind = r2t[k], int(self.r2[2][o]), "read"
            raise_race(L, kind, site, tid[k], osite, other, okind, mem.describe(int(o)),
                       index_at(k))
        if self.w is None:
            self.w = self._new(4)
        wt_, ws_, wx_, wf_ = self.w
        wt_[offs] = tid
        ws_[offs] = stamp
        wx_[offs] = (site << 1) | int(atomic)
        if L.fence is not None:
            wf_[offs] = L.fence[tid]
        if not atomic and len(offs) > 1:
            # two lanes of this very store on one element: the scatter kept one of them
            dup = wt_[offs] != tid
            if dup.any() and new is not None:
                # benign where every lane storing to an element stores the same bits
                last = np.empty_like(mem.flat)
                last[offs] = new
                differ = ~same_bits(last[offs], new)
                if not differ.any():
                    k = int(np.argmax(dup))
                    a = int(np.flatnonzero(offs == offs[k])[-1])
                    _warn(L, site, tid[k], site, tid[a], "write", mem.describe(int(offs[k])),
                          index_at(k))
                dup = np.isin(offs, offs[differ])
            if dup.any():
                # name the first two lanes (in thread order) that wrote that element
                a, b = np.flatnonzero(offs == offs[int(np.argmax(dup))])[:2]
                raise_race(L, "write", site, tid[b], site, tid[a], "write",
                           mem.describe(int(offs[b])), index_at(b))


def same_bits(a, b) -> np.ndarray:
    """Per element: ``a`` and ``b`` (of one dtype) hold the same bits (a NaN equals itself)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    n = a.dtype.itemsize
    if a.dtype == b.dtype and n in (1, 2, 4, 8):
        u = np.dtype(f"u{n}")
        return a.view(u) == b.view(u)
    return a == b


def _warn_once(L: Launch, sh: Shadow, k: int, offs, bad_w, bad_r1, site: int, tid, mem,
               index_at, wt, r1t, r2t) -> None:
    o = offs[k]
    if wt is not None:
        x = int(sh.w[2][o])
        other, osite, okind = wt[k], x >> 1, "atomic" if x & 1 else "write"
    elif r1t is not None:
        other, osite, okind = r1t[k], int(sh.r1[2][o]), "read"
    else:
        other, osite, okind = r2t[k], int(sh.r2[2][o]), "read"
    _warn(L, site, tid[k], osite, other, okind, mem.describe(int(o)), index_at(k))


def _warn(L: Launch, site: int, tid, other_site: int, other_tid, other_kind: str,
          mem_name: str, index) -> None:
    """A benign race (errors.RaceWarning), once per pair of sites in a launch."""
    key = (site, other_site)
    if key in L.warned:
        return
    L.warned.add(key)
    s = L.sites[site]
    kinds = {"read": "read", "write": "write", "atomic": "atomic update"}
    elem = _elem(s.array, index)
    msg = (f"write of {elem} by {describe_thread(L, tid)} races with a "
           f"{kinds[other_kind]} of it by {describe_thread(L, other_tid)}, but stores the "
           f"value it already holds, so no thread sees a difference (a benign race; a "
           f"different value would be a RaceError)\n{where(s.loc)}")
    warnings.warn(errors.RaceWarning(msg), stacklevel=1)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

def where(loc: Loc) -> str:
    """``loc`` as a traceback frame with its source line and carets."""
    line = linecache.getline(loc.filename, loc.line) or None
    fmt = getattr(errors, "format_location", None)
    if fmt is not None:
        return "\n".join(fmt(loc, line))
    return f"  {loc}:" + (f"\n    {line.strip()}" if line else "")


def make_error(cls, summary: str, loc: Loc | None, details: str = "", **attrs):
    """An instance of ``cls`` whose text is a one-line summary, the kernel's line as a traceback
    frame, then any details; ``attrs`` (block, thread, array, index...) become attributes."""
    text = summary + ("\n" + where(loc) if loc is not None else "") + (
        "\n" + details if details else "")
    err = cls(text)
    err.loc = loc
    err.line = loc.line if loc is not None else None
    err.filename = loc.filename if loc is not None else None
    for k, v in attrs.items():
        setattr(err, k, v)
    return err


def _fmt3(t: tuple) -> str:
    return f"({t[0]}, {t[1]}, {t[2]})"


def describe_thread(L: Launch, gtid) -> str:
    block, thread = L.thread_of(gtid)
    return f"thread {_fmt3(thread)} of block {_fmt3(block)}"


def _elem(name: str, index) -> str:
    return f"{name}[{', '.join(str(i) for i in index)}]"


def raise_race(L: Launch, kind: str, site: int, tid, other_site: int, other_tid, other_kind,
               mem_name: str, index) -> None:
    """A race between the current access and a remembered one; both are named."""
    s, o = L.sites[site], L.sites[other_site]
    block, thread = L.thread_of(tid)
    oblock, othread = L.thread_of(other_tid)
    what = {"read": "read", "write": "write", "atomic": "atomic update"}
    same_block = block == oblock
    why = ("with no syncthreads() between them" if same_block else
           "in different blocks of one launch (blocks are not ordered)")
    elem = _elem(s.array, index)
    if mem_name.split("[")[0] != s.array:
        elem += f" ({mem_name})"
    msg = (f"{what[kind]} of {elem} by {describe_thread(L, tid)} races with a "
           f"{what[other_kind]} of it by {describe_thread(L, other_tid)}, {why}")
    details = f"the {what[other_kind]} it races with:\n{where(o.loc)}"
    raise make_error(errors.RaceError, msg, s.loc, details, block=block, thread=thread,
                     array=s.array, index=tuple(index), kind=kind, memory=mem_name,
                     other=Access(o.loc, oblock, othread, o.array, other_kind)) from None


@dataclass(frozen=True)
class Access:
    """The other side of a race: where, which thread, which array, what it did."""

    loc: Loc
    block: tuple
    thread: tuple
    array: str
    kind: str

    @property
    def line(self) -> int:
        return self.loc.line


def raise_oob(L: Launch, site: int, tid, index, shape, what: str = "") -> None:
    s = L.sites[site]
    block, thread = L.thread_of(tid)
    act = {"read": "read of", "write": "write to", "atomic": "atomic update of",
           "view": "view of"}.get(s.kind, "access to")
    neg = any(i < 0 for i in index)
    msg = (f"{act} {_elem(s.array, index)} by {describe_thread(L, tid)}: "
           f"{what or 'index out of bounds'} for shape {tuple(int(n) for n in shape)}")
    if neg:
        msg += " (negative indices do not wrap on a GPU)"
    raise make_error(errors.OutOfBoundsError, msg, s.loc, block=block, thread=thread,
                     array=s.array, index=tuple(index),
                     shape=tuple(int(n) for n in shape)) from None


def raise_uninit(L: Launch, site: int, tid, index, mem_name: str) -> None:
    s = L.sites[site]
    block, thread = L.thread_of(tid)
    msg = (f"read of {_elem(s.array, index)} by {describe_thread(L, tid)}: no thread of block "
           f"{_fmt3(block)} has written {mem_name} yet")
    raise make_error(errors.UninitializedReadError, msg, s.loc, block=block, thread=thread,
                     array=s.array, index=tuple(index)) from None


SPIN_LIMIT = 1 << 22  # iterations of one while loop in one batch before the simulator stops


def raise_spin(B, site: int, m) -> None:
    """A while loop still running after SPIN_LIMIT iterations: a loop waiting for a lock or a
    flag another block sets (which, in the same batch of blocks run in lockstep, never comes),
    or a loop that does not end."""
    L = B.launch
    s = L.sites[site]
    lanes = np.flatnonzero(np.broadcast_to(np.asarray(m, bool), (B.L,)))
    lane = int(lanes[0]) if len(lanes) else 0
    block, thread = L.thread_of(int(B.gtid[lane]))
    raise make_error(
        errors.KernelRuntimeError,
        f"a while loop has run {SPIN_LIMIT:,} times in block {_fmt3(block)} and goes on",
        s.loc, "If it waits for another block (a spin lock, a flag), the simulator cannot run "
        "it: it runs a batch of blocks in lockstep, so a block waiting on another of its batch "
        "never sees it move. Otherwise the loop does not end.", block=block,
        thread=thread) from None


def raise_divergence(L: Launch, site: int, gblock: int, missing: list[int], arrived: int,
                     what: str, reason: str, scope: str = "block") -> None:
    """``missing`` are global thread ids of threads that should have been at this barrier."""
    s = L.sites[site]
    T = L.T
    block, _ = L.thread_of(gblock * T)
    names = [L.thread_of(t)[1] for t in missing]
    shown = ", ".join(_fmt3(t) for t in names[:8]) + (" ..." if len(names) > 8 else "")
    if scope == "grid":
        shown = ", ".join(_fmt3(t) for t in names[:8]) + (" ..." if len(names) > 8 else "")
        msg = (f"{what} reached by {arrived} thread(s) of the grid but not by "
               f"{len(names)} other(s) of block {_fmt3(block)}: {shown}")
    else:
        msg = (f"{what} reached by {arrived} thread(s) of block {_fmt3(block)} but not by "
               f"{len(names)} other(s): {shown}")
    raise make_error(errors.BarrierDivergenceError, msg, s.loc, f"They {reason}.", block=block,
                     thread=names[0] if names else None, missing=names) from None
