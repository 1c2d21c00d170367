"""The thread-level kernel language: the names a kernel may use, with numba.cuda's spelling.

These objects are what ``import threadtile as cuda`` gives a kernel. The compiler recognises each
one by identity and lowers it to the IR; none of them does GPU work when called on the host.

Outside a kernel they are inert, except under ``simulate(mode="python")``, which runs the
kernel's own Python function once per thread: there each name asks the simulated thread that
is running (``context.current``) for its value.
"""

from __future__ import annotations

import threading

__all__ = [
    "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize",
    "shared", "local", "const", "syncthreads", "syncthreads_count", "syncthreads_and",
    "syncthreads_or", "syncwarp", "threadfence", "threadfence_block", "threadfence_system",
    "atomic", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "all_sync",
    "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync", "activemask",
    "lanemask_lt", "popc", "clz", "ffs", "brev", "fma", "cbrt", "selp", "fp16",
]


class Context(threading.local):
    """The simulated thread running on this OS thread (python-mode simulation), or None."""

    current = None


context = Context()


def _here(what: str):
    ctx = context.current
    if ctx is None:
        raise RuntimeError(
            f"{what} can only be used inside a kernel: decorate the function with @threadtile.jit "
            "and launch it as kernel[grid, block](...), or run it under threadtile.simulate()")
    return ctx


class Dim3Reg:
    """threadIdx / blockIdx / blockDim / gridDim: ``.x``, ``.y``, ``.z`` are int32 values."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"threadtile.{self._name}"

    @property
    def x(self) -> int:
        return _here(self._name).special(self._name, 0)

    @property
    def y(self) -> int:
        return _here(self._name).special(self._name, 1)

    @property
    def z(self) -> int:
        return _here(self._name).special(self._name, 2)


threadIdx = Dim3Reg("threadIdx")
blockIdx = Dim3Reg("blockIdx")
blockDim = Dim3Reg("blockDim")
gridDim = Dim3Reg("gridDim")


class LaneReg:
    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"threadtile.{self._name}"

    def __index__(self) -> int:
        return int(_here(self._name).special(self._name, 0))

    def __int__(self) -> int:
        return self.__index__()

    def __eq__(self, other):  # lets python-mode kernels compare laneid == 0
        return int(self) == other

    __hash__ = object.__hash__

    def __add__(self, o):
        return int(self) + o

    __radd__ = __add__

    def __mod__(self, o):
        return int(self) % o

    def __sub__(self, o):
        return int(self) - o

    def __rsub__(self, o):
        return o - int(self)

    def __lt__(self, o):
        return int(self) < o

    def __gt__(self, o):
        return int(self) > o

    def __floordiv__(self, o):
        return int(self) // o

    def __mul__(self, o):
        return int(self) * o

    __rmul__ = __mul__


laneid = LaneReg("laneid")
warpsize = 32


def _intrinsic(name: str, doc: str):
    def f(*args, **kwargs):
        ctx = _here(name)
        return ctx.call(name, args, kwargs) if kwargs else ctx.call(name, args)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    f._threadtile_intrinsic = name
    return f


grid = _intrinsic("grid", """grid(ndim) -> the absolute thread index: an int for ndim=1, else a
tuple of ndim ints (``threadIdx + blockIdx * blockDim`` per axis), as int64.""")
gridsize = _intrinsic("gridsize", """gridsize(ndim) -> the number of threads in the grid along each
axis (``blockDim * gridDim``): an int for ndim=1, else a tuple.""")

syncthreads = _intrinsic("syncthreads", "Barrier: every thread of the block waits here.")
syncthreads_count = _intrinsic("syncthreads_count", """syncthreads_count(pred) -> barrier; returns
how many threads of the block passed a true ``pred``.""")
syncthreads_and = _intrinsic("syncthreads_and", "Barrier; returns 1 if ``pred`` is true in all "
                             "threads of the block, else 0.")
syncthreads_or = _intrinsic("syncthreads_or", "Barrier; returns 1 if ``pred`` is true in any "
                            "thread of the block, else 0.")
syncwarp = _intrinsic("syncwarp", "syncwarp(mask=0xffffffff): barrier for the warp's lanes in "
                      "``mask``.")
threadfence = _intrinsic("threadfence", "Memory fence: this thread's writes are seen by the "
                         "whole device before its later writes.")
threadfence_block = _intrinsic("threadfence_block", "Memory fence at block scope.")
threadfence_system = _intrinsic("threadfence_system", "Memory fence at system scope.")

shfl_sync = _intrinsic("shfl_sync", "shfl_sync(mask, value, src_lane) -> ``value`` of lane "
                       "``src_lane`` of the warp.")
shfl_up_sync = _intrinsic("shfl_up_sync", "shfl_up_sync(mask, value, delta) -> ``value`` of lane "
                          "``laneid - delta`` (own value when that is below 0).")
shfl_down_sync = _intrinsic("shfl_down_sync", "shfl_down_sync(mask, value, delta) -> ``value`` "
                            "of lane ``laneid + delta`` (own value past 31).")
shfl_xor_sync = _intrinsic("shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask) -> ``value`` "
                           "of lane ``laneid ^ lane_mask``.")
all_sync = _intrinsic("all_sync", "all_sync(mask, pred) -> 1 if ``pred`` holds on every lane in "
                      "``mask``.")
any_sync = _intrinsic("any_sync", "any_sync(mask, pred) -> 1 if ``pred`` holds on any lane.")
eq_sync = _intrinsic("eq_sync", "eq_sync(mask, pred) -> 1 if ``pred`` is the same on all lanes.")
ballot_sync = _intrinsic("ballot_sync", "ballot_sync(mask, pred) -> uint32 with bit i set when "
                         "lane i's ``pred`` is true.")
match_any_sync = _intrinsic("match_any_sync", """match_any_sync(mask, value) -> uint32 mask of
the lanes in ``mask`` whose ``value`` has the same bits as this lane's.""")
match_all_sync = _intrinsic("match_all_sync", """match_all_sync(mask, value) -> (``mask`` if
every lane in ``mask`` has the same ``value`` else 0, whether they all have it).""")
activemask = _intrinsic("activemask", "activemask() -> uint32 mask of the warp's active lanes.")
lanemask_lt = _intrinsic("lanemask_lt", "lanemask_lt() -> uint32 mask of the lanes below this one.")
popc = _intrinsic("popc", "popc(x) -> number of set bits.")
clz = _intrinsic("clz", "clz(x) -> number of leading zero bits.")
ffs = _intrinsic("ffs", "ffs(x) -> 1-based position of the lowest set bit, 0 if none.")
brev = _intrinsic("brev", "brev(x) -> x with its bits reversed.")
fma = _intrinsic("fma", "fma(a, b, c) -> a * b + c with one rounding.")
cbrt = _intrinsic("cbrt", "cbrt(x) -> cube root.")
selp = _intrinsic("selp", "selp(pred, a, b) -> ``a if pred else b``, both evaluated.")


class _Namespace:
    def __init__(self, name: str, **members):
        self._name = name
        self.__dict__.update(members)

    def __repr__(self) -> str:
        return f"threadtile.{self._name}"


shared = _Namespace("shared", array=_intrinsic("shared.array", """shared.array(shape, dtype) ->
an array in the block's shared memory. ``shape`` is an int or a tuple of compile-time ints;
``shape=0`` makes a dynamic array sized by the launch's ``shared_bytes``
(``kernel[grid, block, stream, shared_bytes]``); all dynamic arrays of a kernel alias the same
memory, as in CUDA."""))
local = _Namespace("local", array=_intrinsic("local.array", """local.array(shape, dtype) -> a
per-thread array (registers or local memory) of compile-time shape."""))
const = _Namespace("const", array_like=_intrinsic("const.array_like", """const.array_like(arr) ->
a copy of the global NumPy array ``arr`` in constant memory, frozen at compile time."""))

_ATOMIC_DOC = """atomic.{op}(array, index, value) -> the old value of ``array[index]``, after
atomically setting it to ``old {sym} value``. ``index`` is an int or a tuple of ints."""
atomic = _Namespace(
    "atomic",
    add=_intrinsic("atomic.add", _ATOMIC_DOC.format(op="add", sym="+")),
    sub=_intrinsic("atomic.sub", _ATOMIC_DOC.format(op="sub", sym="-")),
    max=_intrinsic("atomic.max", _ATOMIC_DOC.format(op="max", sym="max")),
    min=_intrinsic("atomic.min", _ATOMIC_DOC.format(op="min", sym="min")),
    and_=_intrinsic("atomic.and_", _ATOMIC_DOC.format(op="and_", sym="&")),
    or_=_intrinsic("atomic.or_", _ATOMIC_DOC.format(op="or_", sym="|")),
    xor=_intrinsic("atomic.xor", _ATOMIC_DOC.format(op="xor", sym="^")),
    exch=_intrinsic("atomic.exch", """atomic.exch(array, index, value) -> the old value; stores
``value``."""),
    inc=_intrinsic("atomic.inc", """atomic.inc(array, index, limit) -> old; stores
``0 if old >= limit else old + 1`` (unsigned)."""),
    dec=_intrinsic("atomic.dec", """atomic.dec(array, index, limit) -> old; stores
``limit if old == 0 or old > limit else old - 1`` (unsigned)."""),
    cas=_intrinsic("atomic.cas", """atomic.cas(array, index, compare, value) -> the old value;
stores ``value`` only if the old value equals ``compare`` (bit for bit)."""),
    compare_and_swap=_intrinsic("atomic.compare_and_swap", """atomic.compare_and_swap(array,
compare, value) -> ``atomic.cas(array, 0, compare, value)`` on a 1-d array."""),
    nanmax=_intrinsic("atomic.nanmax", """atomic.nanmax(array, index, value) -> the old value;
stores the larger of the two, a NaN counting as missing (the other one is kept)."""),
    nanmin=_intrinsic("atomic.nanmin", """atomic.nanmin(array, index, value) -> the old value;
stores the smaller of the two, a NaN counting as missing."""),
)

# numba's half-precision intrinsics: float16 arithmetic, comparisons and math by name
_FP16 = {
    "hadd": "a + b", "hsub": "a - b", "hmul": "a * b", "hdiv": "a / b", "hneg": "-a",
    "habs": "|a|", "hfma": "a * b + c, rounded once", "heq": "a == b", "hne": "a != b",
    "hge": "a >= b", "hgt": "a > b", "hle": "a <= b", "hlt": "a < b", "hmax": "max(a, b)",
    "hmin": "min(a, b)", "hsin": "sin(a)", "hcos": "cos(a)", "hlog": "log(a)",
    "hlog2": "log2(a)", "hlog10": "log10(a)", "hexp": "exp(a)", "hexp2": "2 ** a",
    "hexp10": "10 ** a", "hsqrt": "sqrt(a)", "hrsqrt": "1 / sqrt(a)", "hrcp": "1 / a",
    "hceil": "ceil(a)", "hfloor": "floor(a)", "htrunc": "trunc(a)", "hrint": "a rounded to "
    "the nearest integer, ties to even",
}
fp16 = _Namespace("fp16", **{n: _intrinsic(f"fp16.{n}", f"fp16.{n}: {d}, in float16 (numba's "
                                            "cuda.fp16)") for n, d in _FP16.items()})
