"""``simulate(mode="python")``: the kernel's own Python function, run once per thread.

Each thread of a block is an OS thread running ``kernel.py_func`` unchanged, so ``print``,
``breakpoint()``/pdb and any Python work inside the kernel, as in numba's simulator. The
kernel-language names (``threadIdx``, ``syncthreads``, ``shared.array``...) ask
``threadtile.lang.thread.context.current``, which is this module's :class:`_Thread` for the
OS thread that runs it. Blocks run one after another.

Synchronization is checked as the lockstep mode checks it: all threads of a block waiting at a
``syncthreads()`` must wait at the same one, a thread that returned while others wait at a
barrier is missing from it, and threads waiting on each other across a barrier and a warp
operation (a deadlock on the GPU) are reported instead of hanging.
"""

from __future__ import annotations

import math
import sys
import threading
import types
from pathlib import Path

import numpy as np

from ... import errors
from ...ir.nodes import Loc
from ...lang import bf16 as lang_bf16
from ...lang import collectives, vectors
from ...lang import thread as lt
from ...lang.substitutes import substitute
from ...lang.types import scalar_of
from . import bf16, checks, coop, ops
from .lockstep import launch_dims
from .memory import apply_rmw

_print_lock = threading.Lock()
_OURS = {__file__, lt.__file__, coop.__file__, collectives.__file__}
_atomic_lock = threading.Lock()


class _Abort(BaseException):
    """Unwinds the threads of a block after another thread of it failed."""


# ---------------------------------------------------------------------------------------------
# Device functions: a python-mode kernel calls the Python functions behind them
# ---------------------------------------------------------------------------------------------

def _gpu_print(*items, **_kw) -> None:
    """``print`` inside a kernel: numbers formatted as the GPU's printf formats them."""
    out = []
    for v in items:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, (bool, np.bool_)):
            out.append("True" if v else "False")
        elif isinstance(v, (int, np.integer)):
            out.append(str(int(v)))
        elif isinstance(v, (float, np.floating)):
            out.append(f"{float(v):f}")
        else:
            out.append(str(v))
    with _print_lock:
        sys.stdout.write(" ".join(out) + "\n")


# math functions whose CPython versions raise where the GPU's return an IEEE value (sin(inf)
# is NaN, log(0) is -inf): on ValueError or OverflowError, NumPy's ufunc of the same name
_NP_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
             "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


def _gpu_math_function(f):
    if f.__name__ in ("floor", "ceil", "trunc"):  # an int64, as compiled: NaN and infinities
        ufunc = getattr(np, f.__name__)           # convert as the GPU converts them

        def to_int(x):
            try:
                r = f(x)
                if -(1 << 63) <= r < (1 << 63):
                    return r
            except (ValueError, OverflowError):
                pass
            with np.errstate(all="ignore"):  # clamped to int64 (CPython's int is unbounded)
                return ops.float_to_int(ufunc(np.float64(x)), np.int64)
        to_int.__name__ = f.__name__
        return to_int
    ufunc = getattr(np, _NP_NAMES.get(f.__name__, f.__name__), None)
    if not isinstance(ufunc, np.ufunc):
        return f

    def call(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(ufunc(*[float(a) for a in args]))
    call.__name__ = f.__name__
    return call


_GPU_MATH = types.SimpleNamespace(**{
    name: _gpu_math_function(v) if callable(v) else v
    for name, v in vars(math).items() if not name.startswith("_")})


def _gpu_math(v):
    """``math`` as a kernel sees it on the GPU (its functions return NaN or infinities where
    CPython's raise), for ``math`` itself or a function imported from it; else None."""
    if v is math:
        return _GPU_MATH
    if callable(v) and getattr(math, getattr(v, "__name__", ""), None) is v:
        return getattr(_GPU_MATH, v.__name__)
    return None


def _nan_ignoring(pick):
    """min or max of numbers as compiled kernels take them (fmin/fmax: a NaN operand is
    ignored, NaN only when all are); anything else (one iterable, key=...) as Python's."""
    def call(*args, **kw):
        if kw or len(args) < 2 or not all(isinstance(a, (int, float, np.number)) for a in args) \
                or not any(isinstance(a, (float, np.floating)) for a in args):
            return pick(*args, **kw)
        r = args[0]
        for b in args[1:]:
            if r != r:  # NaN
                r = b
            elif b == b:
                r = pick(r, b)
        return r
    call.__name__ = pick.__name__
    return call


_GPU_MIN, _GPU_MAX = _nan_ignoring(min), _nan_ignoring(max)


def runnable(fn, _memo: dict | None = None):
    """A copy of ``fn`` whose global and closure references to ``@jit`` functions are those
    functions' Python code (a ``Kernel`` object refuses to be called from Python), and whose
    ``print`` formats like the GPU's. (Kernels cannot recurse, so the walk ends.)"""
    memo = {} if _memo is None else _memo
    if id(fn) in memo:
        return memo[id(fn)]
    g = dict(fn.__globals__)
    # the copy is made (and remembered) first: a kernel whose code names itself, as an
    # attribute does (``coop.block.exchange`` in a kernel called ``exchange``), finds it
    cells = tuple(types.CellType() for _ in fn.__closure__) if fn.__closure__ else None
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, cells)
    new.__kwdefaults__ = fn.__kwdefaults__
    memo[id(fn)] = new
    for name in _names(fn.__code__):
        v = substitute(g.get(name))
        if getattr(v, "_threadtile_kernel", False):
            g[name] = runnable(v.py_func, memo)
        elif _is_records(v):  # a global record array (constant memory): fields as attributes
            g[name] = _wrap(v, False)
        elif (ours := _numba_object(v)) is not None:
            g[name] = ours
        elif (gm := _gpu_math(v)) is not None:
            g[name] = gm
    g["print"] = _gpu_print
    for name, ours in (("min", _GPU_MIN), ("max", _GPU_MAX)):
        g.setdefault(name, ours)  # (a module's own min stays its own)
    for cell, mine in zip(fn.__closure__ or (), cells or ()):
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell stays empty
            continue
        v = substitute(v)
        if getattr(v, "_threadtile_kernel", False):
            v = runnable(v.py_func, memo)
        elif _is_records(v):
            v = _wrap(v, False)
        elif (ours := _numba_object(v)) is not None:
            v = ours
        mine.cell_contents = v
    return new


def _is_records(v) -> bool:
    return isinstance(v, np.ndarray) and v.dtype.names is not None


def _numba_object(v):
    """threadtile's object for one of numba's that the kernel reads (its bfloat16 functions,
    its vector types), or None."""
    return lang_bf16.from_numba(v) or vectors.from_numba(v)


def _names(code) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


# ---------------------------------------------------------------------------------------------
# Checked arrays
# ---------------------------------------------------------------------------------------------

class _Checked(np.ndarray):
    """An array whose integer indices are bounds-checked as on the GPU: negative ones are
    out of bounds, not counted from the end."""

    def __getitem__(self, idx):
        _check_index(self, idx)
        return super().__getitem__(idx)

    def __setitem__(self, idx, value):
        _check_index(self, idx)
        super().__setitem__(idx, value)


_NUMPY_DIR = str(Path(np.__file__).parent)


def _check_index(a: np.ndarray, idx) -> None:
    parts = idx if isinstance(idx, tuple) else (idx,)
    for axis, i in enumerate(parts):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool) and axis < a.ndim:
            if not 0 <= i < a.shape[axis]:
                th = lt.context.current
                frame = sys._getframe(2)
                if th is None or frame.f_code.co_filename.startswith(_NUMPY_DIR):
                    return  # NumPy itself (printing the array counts from the end), or the host
                loc = Loc(frame.f_code.co_filename, frame.f_lineno, 0, None,
                          frame.f_code.co_name)
                who = f" by thread {th.tid} of block {th.bid}" if th is not None else ""
                raise checks.make_error(
                    errors.OutOfBoundsError,
                    f"index {int(i)} of axis {axis}{who} is outside shape "
                    f"{a.shape}" + (" (negative indices do not wrap on a GPU)" if i < 0
                                    else ""), loc, block=getattr(th, "bid", None),
                    thread=getattr(th, "tid", None), index=tuple(
                        int(p) for p in parts if isinstance(p, (int, np.integer))),
                    shape=a.shape)


def _wrap(a, bounds: bool):
    if isinstance(a, np.ndarray) and a.dtype.names is not None:
        # records: NumPy's record views give fields as attributes (r.x) as kernels do; a 0-d
        # array is a record passed by itself, and r[0] is its first field (numba's rule)
        rec = a.view(np.recarray)
        return rec[()] if a.ndim == 0 else rec
    if bounds and isinstance(a, np.ndarray):
        return a.view(_Checked)
    return a


# ---------------------------------------------------------------------------------------------
# One block
# ---------------------------------------------------------------------------------------------

class _Block:
    """The threads of one block and what they share: shared memory, the barrier state."""

    def __init__(self, bid: tuple, block: tuple, grid: tuple, shared_bytes: int, check: set):
        self.bid, self.block, self.grid = bid, block, grid
        self.T = block[0] * block[1] * block[2]
        self.cond = threading.Condition()
        self.waiting: dict[int, tuple] = {}  # thread -> (kind, site, payload)
        self.results: dict[int, object] = {}
        self.exited: set[int] = set()
        self.error: BaseException | None = None
        self.shared: dict = {}
        self.dyn = np.zeros(max(-(-shared_bytes // 16) * 16, 16), np.uint8)
        self.shared_bytes = shared_bytes
        self.check = check
        self.grid_barrier: _GridBarrier | None = None  # a kernel that syncs its grid

    # -- waiting -------------------------------------------------------------------------------

    def wait(self, t: int, kind: str, site: tuple, payload=None):
        with self.cond:
            if self.error is not None:
                raise _Abort
            self.waiting[t] = (kind, site, payload)
            self._progress()
            while t in self.waiting and self.error is None:
                self.cond.wait()
            if self.error is not None:
                raise _Abort
            return self.results.pop(t, None)

    def exit(self, t: int, error: BaseException | None = None) -> None:
        with self.cond:
            self.exited.add(t)
            if error is not None and self.error is None:
                self.error = error
            self._progress()
            self.cond.notify_all()
        if self.grid_barrier is not None:
            self.grid_barrier.exit(error)

    def _fail(self, err: BaseException) -> None:
        if self.error is None:
            self.error = err
        self.cond.notify_all()

    def _progress(self) -> None:
        """Release whatever can be released; report a barrier nobody can pass."""
        released = True
        while released and self.error is None:
            released = self._release_warps() or self._release_barrier() or \
                self._release_coop()
        if self.error is None and self.waiting and len(self.waiting) + len(
                self.exited) == self.T and any(w[0] != "grid" for w in self.waiting.values()):
            self._fail(self._stuck())
        self.cond.notify_all()

    def _release_barrier(self) -> bool:
        bar = {t: w for t, w in self.waiting.items() if w[0] == "bar"}
        if len(bar) + len(self.exited) < self.T or not bar:
            return False
        if len(bar) < self.T:
            return False  # some thread returned: _stuck reports it
        sites = {w[1] for w in bar.values()}
        if len(sites) > 1:
            return False
        kind = next(iter(bar.values()))[2][0]
        preds = [bool(w[2][1]) for w in bar.values()]
        res = {"count": sum(preds), "and": int(all(preds)), "or": int(any(preds))}.get(kind)
        for t in bar:
            del self.waiting[t]
            self.results[t] = res
        return True

    def coop_wait(self, t: int, site: tuple, w: int, part, compute):
        """A threadtile.coop primitive (sim/coop.py): thread ``t``'s ``part`` waits for every
        thread of the block (``w`` 0) or of its logical warp of ``w`` lanes to reach the same
        call; then ``compute`` gives each its result."""
        return self.wait(t, "coop", site, (w, part, compute))

    def _release_coop(self) -> bool:
        groups: dict[int, dict] = {}
        for t, w in self.waiting.items():
            if w[0] == "coop":
                size = w[2][0]
                groups.setdefault(t // size if size else -1, {})[t] = w
        done = False
        for grp in groups.values():
            size = next(iter(grp.values()))[2][0] or self.T
            if len(grp) < size or len({w[1] for w in grp.values()}) > 1:
                continue  # someone is missing: still on its way, or _stuck reports it
            compute = next(iter(grp.values()))[2][2]
            try:
                res = compute({t: w[2][1] for t, w in grp.items()})
            except BaseException as e:  # noqa: BLE001  (the user's operator raised: the error)
                self._fail(e)
                return True
            for t in grp:
                del self.waiting[t]
                self.results[t] = res[t]
            done = True
        return done

    def _release_warps(self) -> bool:
        done = False
        warps: dict[int, dict] = {}
        for t, w in self.waiting.items():
            if w[0] == "warp":
                warps.setdefault(t // 32, {})[t] = w
        for wid, arr in warps.items():
            base = wid * 32
            named = 0
            for _, _, (mask, *_rest) in arr.values():
                named |= int(mask)
            need = {base + k for k in range(32) if named >> k & 1 and base + k < self.T}
            if not need <= set(arr):
                continue
            sites = {w[1] for t, w in arr.items() if t in need}
            if len(sites) > 1:
                continue
            self._exchange(base, {t: arr[t] for t in need})
            done = True
        return done

    def _exchange(self, base: int, arr: dict) -> None:
        op = next(iter(arr.values()))[2][1]
        vals = {t - base: w[2][2] for t, w in arr.items()}
        for t, w in arr.items():
            lane = t - base
            arg = w[2][3]
            if op == "syncwarp":
                res = None
            elif op in ("match_any", "match_all"):
                bits = {k: np.asarray(v).tobytes() for k, v in vals.items()}
                same = sum(1 << k for k, b in bits.items() if b == bits[lane])
                everyone = sum(1 << k for k in bits)
                res = same if op == "match_any" else (
                    (everyone, True) if same == everyone else (0, False))
            elif op in ("all", "any", "eq", "ballot"):
                ps = {k: bool(v) for k, v in vals.items()}
                res = {"all": int(all(ps.values())), "any": int(any(ps.values())),
                       "eq": int(len(set(ps.values())) == 1),
                       "ballot": sum(1 << k for k, p in ps.items() if p)}[op]
            else:
                src = {"idx": int(arg) & 31, "up": lane - int(arg), "down": lane + int(arg),
                       "xor": lane ^ int(arg)}[op]
                res = vals.get(src, vals[lane]) if 0 <= src < 32 else vals[lane]
            del self.waiting[t]
            self.results[t] = res

    def _stuck(self) -> BaseException:
        """Every live thread waits and none can go on: name who waits where."""
        by_site: dict[tuple, list[int]] = {}
        for t, w in self.waiting.items():
            by_site.setdefault(w[1], []).append(t)
        (site, first), *others = sorted(by_site.items(), key=lambda kv: min(kv[1]))
        loc = Loc(site[0], site[1], 0, None, site[3])
        parts = [f"{len(v)} thread(s) at line {s[1]} ({s[2]}), first {self.thread_of(min(v))}"
                 for s, v in [(site, first)] + others]
        if self.exited:
            parts.append(f"{len(self.exited)} thread(s) returned, first "
                         f"{self.thread_of(min(self.exited))}")
        missing = sorted(set(range(self.T)) - set(first))
        msg = (f"the threads of block {self.bid} cannot all reach the same barrier: " +
               "; ".join(parts))
        why = ("Every thread of a block must reach each syncthreads() (and every lane a *_sync "
               "mask names, the same warp operation) together.")
        return checks.make_error(errors.BarrierDivergenceError, msg, loc, why, block=self.bid,
                                 thread=self.thread_of(missing[0]) if missing else None,
                                 missing=[self.thread_of(t) for t in missing])

    def thread_of(self, t: int) -> tuple:
        bx, by, _ = self.block
        return (t % bx, (t // bx) % by, t // (bx * by))


class _GridBarrier:
    """``cg.this_grid().sync()`` across the blocks of a launch, which then run at the same
    time. A thread that returned counts as arrived, as on the GPU; a block all of whose
    threads returned while others wait is an error (the GPU waits for every block)."""

    def __init__(self, blocks: list[_Block]):
        self.blocks = blocks
        self.total = sum(b.T for b in blocks)
        self.cond = threading.Condition()
        self.arrived = 0
        self.exited = 0
        self.gen = 0
        self.error: BaseException | None = None

    def wait(self, th: _Thread, site: tuple) -> None:
        blk = th.blk
        with blk.cond:
            blk.waiting[th.t] = ("grid", site, None)
            blk._progress()
            if blk.error is not None:
                raise _Abort
        with self.cond:
            gen = self.gen
            self.arrived += 1
            self._release(site)
            while self.gen == gen and self.error is None:
                self.cond.wait()
            failed = self.error is not None
        with blk.cond:
            blk.waiting.pop(th.t, None)
        if failed:
            raise _Abort

    def exit(self, error: BaseException | None) -> None:
        with self.cond:
            self.exited += 1
            if error is not None and self.error is None:
                self.error = error
            self._release(None)
            self.cond.notify_all()

    def _release(self, site) -> None:
        if self.arrived == 0 or self.arrived + self.exited < self.total:
            return
        gone = [b for b in self.blocks if len(b.exited) == b.T]
        if gone and self.error is None:
            b = gone[0]
            loc = None if site is None else Loc(site[0], site[1], 0, None, site[3])
            self.error = checks.make_error(
                errors.BarrierDivergenceError,
                f"grid sync() reached by {self.arrived} thread(s) of the grid, but every "
                f"thread of block {b.bid} returned before it",
                loc, "The grid sync waits for every block of the launch: launch only the "
                "blocks that take part.", block=b.bid, thread=None, missing=[])
            for blk in self.blocks:
                with blk.cond:
                    blk._fail(self.error)
        self.arrived = 0
        self.gen += 1
        self.cond.notify_all()


class _Thread:
    """What ``context.current`` is in the OS thread that runs one simulated thread."""

    def __init__(self, blk: _Block, t: int):
        self.blk = blk
        self.t = t
        self.tid = blk.thread_of(t)
        self.bid = blk.bid

    def special(self, name: str, axis: int) -> int:
        if name == "threadIdx":
            return self.tid[axis]
        if name == "blockIdx":
            return self.bid[axis]
        if name == "blockDim":
            return self.blk.block[axis]
        if name == "gridDim":
            return self.blk.grid[axis]
        if name == "laneid":
            return self.t % 32
        raise AttributeError(name)

    def _site(self, what: str) -> tuple:
        """Where the kernel called ``what``: the first frame outside this module and the
        kernel-language module (whose intrinsic called us)."""
        f = sys._getframe(1)
        while f.f_code.co_filename in _OURS:
            f = f.f_back
        return (f.f_code.co_filename, f.f_lineno, what, f.f_code.co_name, f.f_lasti)

    def call(self, name: str, args: tuple, kwargs: dict | None = None):
        """Intrinsic ``name`` called with ``args`` (and keyword arguments, such as
        ``shared.array(shape=..., dtype=...)``, once the kernel language passes them)."""
        h = _CALLS.get(name)
        if h is None:
            if name.startswith("atomic."):
                return self._atomic(name[7:], *args, **(kwargs or {}))
            raise NotImplementedError(f"{name}() is not available in python-mode simulation")
        return h(self, *args, **(kwargs or {}))

    # -- synchronization -----------------------------------------------------------------------

    def _bar(self, kind, pred=True):
        what = "syncthreads()" if kind is None else f"syncthreads_{kind}()"
        return self.blk.wait(self.t, "bar", self._site(what)[:4] + (None,), (kind, pred))

    def _grid_sync(self) -> None:
        gb = self.blk.grid_barrier
        if gb is None:
            raise NotImplementedError("grid sync() needs cg.this_grid() in the kernel")
        gb.wait(self, self._site("grid sync()")[:4] + (None,))

    def _warp(self, op: str, mask, value=None, arg=None):
        what = {"idx": "shfl_sync()", "syncwarp": "syncwarp()"}.get(op, f"{op}_sync()" if op in (
            "all", "any", "eq", "ballot", "match_any", "match_all") else f"shfl_{op}_sync()")
        site = self._site(what)[:4] + (None,)
        return self.blk.wait(self.t, "warp", site, (mask, op, value, arg))

    def _atomic(self, op: str, arr, idx, *vals):
        with _atomic_lock:
            old = arr[idx]
            v = np.asarray(vals[0]).astype(arr.dtype)[()]
            extra = np.asarray(vals[1]).astype(arr.dtype)[()] if len(vals) > 1 else None
            arr[idx] = apply_rmw(op, arr.dtype.type(old), v, extra)
            return old

    def _shared(self, shape, dtype):
        dt = np.dtype(ops.value_dtype(_scalar(dtype)) if _scalar(dtype) else dtype)
        if shape in (0, (0,), ()):
            n = self.blk.shared_bytes // dt.itemsize
            return _wrap(self.blk.dyn[: n * dt.itemsize].view(dt), "bounds" in self.blk.check)
        key = self._site("shared.array")
        with self.blk.cond:  # the block's threads reach the declaration at the same time
            arr = self.blk.shared.get(key)
            if arr is None:
                arr = _wrap(np.zeros(shape, dt), "bounds" in self.blk.check)
                self.blk.shared[key] = arr
        return arr


def _scalar(dtype):
    return scalar_of(dtype)


def _grid(th: _Thread, n: int):
    b, bd = th.bid, th.blk.block
    vals = tuple(th.tid[k] + b[k] * bd[k] for k in range(n))
    return vals[0] if n == 1 else vals


def _gridsize(th: _Thread, n: int):
    vals = tuple(th.blk.block[k] * th.blk.grid[k] for k in range(n))
    return vals[0] if n == 1 else vals


def _local(th, shape, dtype):
    s = _scalar(dtype)
    return _wrap(np.zeros(shape, ops.value_dtype(s) if s else dtype), "bounds" in th.blk.check)


_CALLS = {
    "grid": _grid, "gridsize": _gridsize,
    "syncthreads": lambda th: th._bar(None),
    "syncthreads_count": lambda th, p: th._bar("count", p),
    "syncthreads_and": lambda th, p: th._bar("and", p),
    "syncthreads_or": lambda th, p: th._bar("or", p),
    "syncwarp": lambda th, mask=0xFFFFFFFF: th._warp("syncwarp", mask),
    "cg.grid_sync": lambda th: th._grid_sync(),
    "threadfence": lambda th: None, "threadfence_block": lambda th: None,
    "threadfence_system": lambda th: None,
    # (a simulated launch runs after the one before it has ended: nothing to wait for)
    "griddepcontrol.wait": lambda th: None, "griddepcontrol.launch_dependents": lambda th: None,
    "shfl_sync": lambda th, m, v, s: th._warp("idx", m, v, s),
    "shfl_up_sync": lambda th, m, v, d: th._warp("up", m, v, d),
    "shfl_down_sync": lambda th, m, v, d: th._warp("down", m, v, d),
    "shfl_xor_sync": lambda th, m, v, d: th._warp("xor", m, v, d),
    "all_sync": lambda th, m, p: th._warp("all", m, p),
    "any_sync": lambda th, m, p: th._warp("any", m, p),
    "eq_sync": lambda th, m, p: th._warp("eq", m, p),
    "ballot_sync": lambda th, m, p: th._warp("ballot", m, p),
    "activemask": lambda th: sum(1 << k for k in range(32) if (th.t // 32) * 32 + k <
                                 th.blk.T and (th.t // 32) * 32 + k not in th.blk.exited),
    "lanemask_lt": lambda th: (1 << (th.t % 32)) - 1,
    "popc": lambda th, x: int(ops.popc(np.asarray(x))),
    "clz": lambda th, x: int(ops.clz(np.asarray(x))),
    "ffs": lambda th, x: int(ops.ffs(np.asarray(x))),
    "brev": lambda th, x: ops.brev(np.asarray(x))[()],
    "fma": lambda th, a, b, c: a * b + c,
    "cbrt": lambda th, x: np.cbrt(x),
    "selp": lambda th, p, a, b: a if p else b,
    "match_any_sync": lambda th, m, v: th._warp("match_any", m, v),
    "match_all_sync": lambda th, m, v: th._warp("match_all", m, v),
    "atomic.compare_and_swap": lambda th, a, old, v: th._atomic("cas", a, 0, old, v),
    **{f"fp16.{n}": (lambda th, *a, f=f: f(*[np.float16(x) for x in a])) for n, f in {
        "hadd": lambda a, b: a + b, "hsub": lambda a, b: a - b, "hmul": lambda a, b: a * b,
        "hdiv": lambda a, b: a / b, "hneg": lambda a: -a, "habs": abs,
        "hfma": lambda a, b, c: np.float16(float(a) * float(b) + float(c)),
        "heq": lambda a, b: a == b, "hne": lambda a, b: a != b, "hge": lambda a, b: a >= b,
        "hgt": lambda a, b: a > b, "hle": lambda a, b: a <= b, "hlt": lambda a, b: a < b,
        "hmax": lambda a, b: b if b > a else a, "hmin": lambda a, b: b if b < a else a,
        "hsin": np.sin, "hcos": np.cos, "hlog": np.log, "hlog2": np.log2,
        "hlog10": np.log10, "hexp": np.exp, "hexp2": np.exp2,
        "hexp10": lambda a: np.float16(10.0 ** float(a)), "hsqrt": np.sqrt,
        "hrsqrt": lambda a: np.float16(1 / np.sqrt(np.float32(a))),
        "hrcp": lambda a: np.float16(1 / np.float32(a)), "hceil": np.ceil,
        "hfloor": np.floor, "htrunc": np.trunc, "hrint": np.rint}.items()},
    **{f"bf16.{n}": (lambda th, *a, n=n: bf16.python_call(n, *a)) for n in lang_bf16.NAMES},
    "shared.array": lambda th, shape, dtype: th._shared(shape, dtype),
    "local.array": _local,
    "const.array_like": lambda th, a: _wrap(np.array(a, copy=True), False),
    **{n: (lambda th, *a, _n=n, **kw: coop.python_call(th, _n, a, kw))
       for n in coop.SIGNATURES},
}


# ---------------------------------------------------------------------------------------------
# A launch
# ---------------------------------------------------------------------------------------------

def run(kernel, launch, host_args: list, consts: dict, check_set: frozenset) -> None:
    """Run ``kernel.py_func`` once per thread of every block, block after block."""
    grid = launch_dims(launch.grid, "grid")
    block = launch_dims(launch.block, "block")
    T = block[0] * block[1] * block[2]
    if T > 1024:
        raise errors.LaunchError(f"a block has at most 1024 threads; got {block} = {T}")
    fn = runnable(kernel.py_func)
    bounds = "bounds" in check_set
    it = iter(_wrap(a, bounds) for a in host_args)
    args = [consts[n] if n in consts else next(it) for n in kernel.param_names]
    shared_bytes = int(getattr(launch, "shared_bytes", 0) or 0)
    gx, gy, gz = grid
    blocks = [_Block((bx, by, bz), block, grid, shared_bytes, set(check_set))
              for bz in range(gz) for by in range(gy) for bx in range(gx)]
    if not _syncs_grid(kernel.py_func):
        for blk in blocks:
            _run_block(fn, args, blk)
        return
    # a grid barrier is met only by blocks that run together: every block at once
    gb = _GridBarrier(blocks)
    for blk in blocks:
        blk.grid_barrier = gb
    joins = [_run_block(fn, args, blk, wait=False) for blk in blocks]
    for join in joins:
        join()


def _syncs_grid(fn, _seen: set | None = None) -> bool:
    """Whether ``fn`` or a function it names calls ``cg.this_grid()`` (by name: python mode
    runs the source as it is)."""
    seen = set() if _seen is None else _seen
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    names = _names(fn.__code__)
    if "this_grid" in names:
        return True
    refs = [fn.__globals__.get(n) for n in names]
    refs += [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
    return any(_syncs_grid(getattr(v, "py_func", v), seen) for v in refs
               if isinstance(getattr(v, "py_func", v), types.FunctionType))


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _run_block(fn, args: list, blk: _Block, wait: bool = True):
    def body(t: int) -> None:
        lt.context.current = _Thread(blk, t)
        try:
            with np.errstate(all="ignore"):  # integers wrap silently on a GPU
                fn(*args)
        except _Abort:
            blk.exit(t)
        except BaseException as e:  # noqa: BLE001  (handed to the launching thread)
            if not isinstance(e, errors.ThreadtileError) and isinstance(e, Exception):
                # the kernel's own raise (or assert): named by its thread, as numba does
                e = errors.with_thread(e, blk.thread_of(t), blk.bid)
            blk.exit(t, e)
        else:
            blk.exit(t)
        finally:
            lt.context.current = None

    threads = [threading.Thread(target=body, args=(t,), daemon=True,
                                name=f"threadtile block {blk.bid} thread {blk.thread_of(t)}")
               for t in range(blk.T)]
    old = threading.stack_size()
    try:
        threading.stack_size(1 << 20)  # a kernel's Python frames are shallow
    except (ValueError, RuntimeError):
        pass
    try:
        for th in threads:
            th.start()
    finally:
        threading.stack_size(old)

    def join() -> None:
        for th in threads:
            th.join()
        if blk.error is not None:
            raise blk.error.with_traceback(blk.error.__traceback__)

    if not wait:
        return join
    join()
    return None

