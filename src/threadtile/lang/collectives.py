"""``threadtile.coop``: block- and warp-wide primitives called inside thread-level kernels,
with the names of NVIDIA's cuda.coop and CUB's algorithms behind them (docs/coop.md).

Every thread of the block (``coop.block.*``) or of the logical warp (``coop.warp.*``) calls a
primitive together, as it reaches a ``syncthreads()``: the simulator raises
``BarrierDivergenceError`` at the call where some do not. Block primitives take the block
shape as ``threads_per_block=`` (an int or an ``(x, y, z)`` tuple), a compile-time constant
as cuda.coop's factories take it; a launch with another block is refused. Values are numbers
(``int8`` to ``uint64``, ``float32``, ``float64``), or local arrays of items per thread
(``cuda.local.array(n, dtype)``) in the *blocked* arrangement: thread ``t`` holds the items
``t * n`` to ``t * n + n - 1`` of the block's sequence.

Operators (``op``) are Python device functions of two values returning one (module-level
functions or ``@jit(device=True)`` ones), or the builtins ``min`` and ``max``; scans take
associative operators, not necessarily commutative ones.
"""

from __future__ import annotations

from .thread import _intrinsic, context
from .types import scalar_of

_TPB = """``threads_per_block`` is the block shape (an int or a tuple), a compile-time
constant."""


class _Namespace:
    def __init__(self, name: str, members: dict):
        self._name = name
        for k, v in members.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"threadtile.coop.{self._name}"


def _b(name: str, doc: str):
    return _two_phase(_intrinsic(f"coop.block.{name}", doc + "\n\n" + _TPB + _FACTORY_DOC))


def _w(name: str, doc: str):
    return _two_phase(_intrinsic(f"coop.warp.{name}", doc + "\n\n" + _FACTORY_DOC.strip()))


_FACTORY_DOC = """
Called on the host with a dtype first, as cuda.coop's factories are
(``coop.block.reduce(np.int32, 128, max_op)``), it makes a :class:`Primitive` that the kernel
calls with the values alone (``block_reduce(x)``)."""

# cuda.coop's factory parameters after the dtype, by the names this module's calls take them
# (binary_op/scan_op: op, compare_op: compare, initial_value: initial)
_FACTORIES = {
    "coop.block.sum": ("threads_per_block", "items_per_thread"),
    "coop.block.reduce": ("threads_per_block", "op", "items_per_thread"),
    "coop.block.inclusive_sum": ("threads_per_block", "items_per_thread"),
    "coop.block.exclusive_sum": ("threads_per_block", "items_per_thread"),
    "coop.block.inclusive_scan": ("threads_per_block", "op", "items_per_thread"),
    "coop.block.exclusive_scan": ("threads_per_block", "op", "initial", "items_per_thread"),
    "coop.block.radix_sort_keys": ("threads_per_block", "items_per_thread"),
    "coop.block.radix_sort_keys_descending": ("threads_per_block", "items_per_thread"),
    "coop.block.merge_sort_keys": ("threads_per_block", "items_per_thread", "compare"),
    "coop.block.load": ("threads_per_block", "items_per_thread", "algorithm"),
    "coop.block.store": ("threads_per_block", "items_per_thread", "algorithm"),
    "coop.block.exchange": ("threads_per_block", "items_per_thread", "kind"),
    "coop.warp.sum": ("threads_in_warp",),
    "coop.warp.reduce": ("op", "threads_in_warp"),
    "coop.warp.inclusive_sum": ("threads_in_warp",),
    "coop.warp.exclusive_sum": ("threads_in_warp",),
    "coop.warp.inclusive_scan": ("op", "threads_in_warp"),
    "coop.warp.exclusive_scan": ("op", "initial", "threads_in_warp"),
    "coop.warp.merge_sort_keys": ("items_per_thread", "compare", "threads_in_warp"),
}
_ALIASES = {"binary_op": "op", "scan_op": "op", "compare_op": "compare",
            "initial_value": "initial", "block_exchange_type": "kind"}


class Primitive:
    """A primitive made on the host the way cuda.coop makes them, with its dtype, block and
    operator fixed (``block_sum = coop.block.sum(np.float32, 128)``); inside a kernel
    ``block_sum(x)`` is ``coop.block.sum(x, threads_per_block=128)``. ``files`` is what
    cuda.coop's kernels link (``@cuda.jit(link=block_sum.files)``): nothing here."""

    files: tuple = ()

    def __init__(self, stub, dtype, args: tuple, kwargs: dict):
        self.name = stub._threadtile_intrinsic
        self.stub = stub
        self.dtype = dtype
        params = _FACTORIES.get(self.name)
        if params is None:
            raise TypeError(f"{self.name}() has no cuda.coop factory form here; call it in "
                            "the kernel with the values")
        if len(args) > len(params):
            raise TypeError(f"{self.name}(dtype, {', '.join(params)}) takes at most "
                            f"{len(params) + 1} arguments")
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            k = _ALIASES.get(k, k)
            if k in ("methods", "prefix_op", "temp_storage") and v is None:
                continue
            if k not in params and k not in ("threads_per_block", "begin_bit", "end_bit",
                                             "num_valid_items"):
                raise TypeError(f"{self.name}(): {k}= is not supported")
            bound[k] = v
        self.items_per_thread = int(bound.pop("items_per_thread", 1))
        if bound.get("initial") is None:
            bound.pop("initial", None)
        self.kwargs = bound

    def __call__(self, *args, **kwargs):
        return self.stub(*args, **{**self.kwargs, **kwargs})

    def __repr__(self) -> str:
        # what the kernel cache compares: an operator's function by identity (its source is
        # not a global the kernel reads), so a kernel calling one is lowered again each run
        parts = [f"{k}={v!r}" for k, v in sorted(self.kwargs.items())]
        return (f"threadtile.coop.Primitive({self.name}, {self.dtype}, items_per_thread="
                f"{self.items_per_thread}, {', '.join(parts)})")


def _two_phase(stub):
    def f(*args, **kwargs):
        if context.current is None and args and scalar_of(args[0]) is not None:
            return Primitive(stub, scalar_of(args[0]), args[1:], kwargs)
        return stub(*args, **kwargs)
    f.__name__ = f.__qualname__ = stub.__name__
    f.__doc__ = stub.__doc__
    f._threadtile_intrinsic = stub._threadtile_intrinsic
    return f


block = _Namespace("block", {
    "sum": _b("sum", """sum(value, threads_per_block=...) -> the sum over the block of every
thread's ``value`` (a number, or a local array of items: all of them), in every thread."""),
    "reduce": _b("reduce", """reduce(value, op, threads_per_block=...) -> ``op`` folded over the
block's values (a number or a local array of items per thread), in every thread. ``op``: a
device function ``op(a, b)``, ``min`` or ``max``; CUB's order of application (a tree) is
unspecified, so a float result may differ from a sequential fold by rounding."""),
    "inclusive_sum": _b("inclusive_sum", """inclusive_sum(value, threads_per_block=...) -> the
sum of the values of threads ``0..t`` (thread ``t``'s own included). With arrays,
``inclusive_sum(items, out)`` writes each item's prefix into ``out`` (which may be
``items``) and returns nothing."""),
    "exclusive_sum": _b("exclusive_sum", """exclusive_sum(value, threads_per_block=...) -> the sum
of the values of threads ``0..t-1`` (0 in thread 0); ``exclusive_sum(items, out)`` for
arrays."""),
    "inclusive_scan": _b("inclusive_scan", """inclusive_scan(value, op, threads_per_block=...)
-> ``op(...op(op(v0, v1), v2)..., vt)``: the associative ``op`` over the values of threads
``0..t`` in order; ``inclusive_scan(items, out, op)`` for arrays."""),
    "exclusive_scan": _b("exclusive_scan", """exclusive_scan(value, op, initial, threads_per_block
=...) -> ``initial`` combined with the values of threads ``0..t-1`` in order (``initial`` in
thread 0); ``exclusive_scan(items, out, op, initial)`` for arrays."""),
    "radix_sort_keys": _b("radix_sort_keys", """radix_sort_keys(keys, threads_per_block=...,
begin_bit=0, end_bit=bits of the dtype): sorts the block's keys (a local array per thread,
blocked) in place, ascending and stable, by bits ``[begin_bit, end_bit)``. Floats order as
IEEE numbers with -0.0 equal to 0.0; NaNs order by their bits (a positive NaN after inf, a
negative one before -inf), as CUB's radix sort orders them."""),
    "radix_sort_keys_descending": _b("radix_sort_keys_descending", """radix_sort_keys_descending(
keys, threads_per_block=..., begin_bit=0, end_bit=...): as radix_sort_keys, descending (equal
keys keep their order)."""),
    "radix_sort_pairs": _b("radix_sort_pairs", """radix_sort_pairs(keys, values,
threads_per_block=..., begin_bit=0, end_bit=...): sorts the keys ascending, moving each
value with its key."""),
    "radix_sort_pairs_descending": _b("radix_sort_pairs_descending", """radix_sort_pairs_descending(
keys, values, threads_per_block=..., ...): as radix_sort_pairs, descending."""),
    "merge_sort_keys": _b("merge_sort_keys", """merge_sort_keys(keys, compare, threads_per_block
=...): sorts the block's keys in place by ``compare(a, b)`` (true when ``a`` goes before
``b``: a strict weak order), stably."""),
    "merge_sort_pairs": _b("merge_sort_pairs", """merge_sort_pairs(keys, values, compare,
threads_per_block=...): as merge_sort_keys, moving each value with its key."""),
    "load": _b("load", """load(src, items, threads_per_block=..., algorithm="direct",
num_valid_items=None, oob_default=None): the block's tile of the 1-d array ``src`` (from its
element 0: pass a slice such as ``a[base:]``) into each thread's ``items``. ``"direct"``,
``"vectorize"`` and ``"transpose"`` give the blocked arrangement (thread ``t`` gets elements
``t*n .. t*n+n-1``), ``"striped"`` the striped one (item ``k`` of thread ``t`` is element
``k*threads + t``). With ``num_valid_items``, elements at or past it are not read (the items
keep their values, or get ``oob_default``)."""),
    "store": _b("store", """store(dst, items, threads_per_block=..., algorithm="direct",
num_valid_items=None): each thread's ``items`` into the block's tile of ``dst``, in the
arrangement ``algorithm`` names (as load's); elements at or past ``num_valid_items`` are not
written."""),
    "exchange": _b("exchange", """exchange(items, out, kind, threads_per_block=...): the block's
items rearranged: ``kind="striped_to_blocked"`` or ``"blocked_to_striped"`` (``out`` may be
``items``)."""),
})

warp = _Namespace("warp", {
    "sum": _w("sum", """sum(value, threads_in_warp=32) -> the sum over the logical warp's lanes,
in every lane. ``threads_in_warp``: a power of two up to 32; every lane of the logical warp
must call it."""),
    "reduce": _w("reduce", """reduce(value, op, threads_in_warp=32) -> ``op`` folded over the
logical warp's values, in every lane (``op``: a device function, ``min`` or ``max``)."""),
    "inclusive_sum": _w("inclusive_sum", """inclusive_sum(value, threads_in_warp=32) -> the sum of
lanes ``0..lane`` of the logical warp."""),
    "exclusive_sum": _w("exclusive_sum", """exclusive_sum(value, threads_in_warp=32) -> the sum of
lanes ``0..lane-1`` (0 in lane 0)."""),
    "inclusive_scan": _w("inclusive_scan", """inclusive_scan(value, op, threads_in_warp=32) ->
``op`` over lanes ``0..lane`` in order."""),
    "exclusive_scan": _w("exclusive_scan", """exclusive_scan(value, op, initial,
threads_in_warp=32) -> ``initial`` combined with lanes ``0..lane-1`` in order."""),
    "merge_sort_keys": _w("merge_sort_keys", """merge_sort_keys(keys, compare,
threads_per_block=..., threads_in_warp=32): sorts each logical warp's keys (a local array per
lane, blocked) by ``compare`` (CUB keeps one storage per warp, so it needs the block size
too)."""),
})

# each name's parameters in order and how many are required (the frontend and python-mode
# simulation bind calls by them), and the keyword-only parameters any may take
_V = ("value",)
SIGNATURES = {
    "coop.block.sum": (_V, 1),
    "coop.block.reduce": (("value", "op"), 2),
    "coop.block.inclusive_sum": (("value", "out"), 1),
    "coop.block.exclusive_sum": (("value", "out"), 1),
    "coop.block.inclusive_scan": (("value", "out", "op"), 2),
    "coop.block.exclusive_scan": (("value", "out", "op", "initial"), 3),
    "coop.block.radix_sort_keys": (("keys",), 1),
    "coop.block.radix_sort_keys_descending": (("keys",), 1),
    "coop.block.radix_sort_pairs": (("keys", "values"), 2),
    "coop.block.radix_sort_pairs_descending": (("keys", "values"), 2),
    "coop.block.merge_sort_keys": (("keys", "compare"), 2),
    "coop.block.merge_sort_pairs": (("keys", "values", "compare"), 3),
    "coop.block.load": (("src", "items"), 2),
    "coop.block.store": (("dst", "items"), 2),
    "coop.block.exchange": (("items", "out", "kind"), 3),
    "coop.warp.sum": (_V, 1),
    "coop.warp.reduce": (("value", "op"), 2),
    "coop.warp.inclusive_sum": (_V, 1),
    "coop.warp.exclusive_sum": (_V, 1),
    "coop.warp.inclusive_scan": (("value", "op"), 2),
    "coop.warp.exclusive_scan": (("value", "op", "initial"), 3),
    "coop.warp.merge_sort_keys": (("keys", "compare"), 2),
}
KEYWORDS = {
    "threads_per_block", "threads_in_warp", "begin_bit", "end_bit", "algorithm",
    "num_valid_items", "oob_default"}
