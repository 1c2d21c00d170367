"""The operations of the IR, as data.

Every thread-level intrinsic (an ``ir.Call``: math, barriers, warp operations, atomics) and
every tile operation (an ``ir.TileOp``) the frontend may produce has one entry here: its name,
how many operands it takes, the compile-time attributes it carries, and its typing rule (what
the operand and result types must be). The backends spell and run operations by tables keyed
by these names — ``backends/cuda/intrinsics.py`` and ``backends/cuda/tiles.py`` for the C++,
``backends/sim/intrinsics.py`` and ``backends/sim/tiles.py`` for the simulator — and a unit
test (tests/unit/test_ops.py) fails when a table lacks an operation or has one not listed here.
``ir/verify.py`` checks every operation of a module against its entry after the passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..lang.types import (
    ArrayType,
    Scalar,
    TileType,
    TupleType,
    bfloat16,
    bool_,
    int32,
    int64,
    uint32,
    void,
)
from . import nodes as ir

Rule = Callable[[ir.Expr], "str | None"]


@dataclass(frozen=True)
class OpSpec:
    """One operation: ``arity`` is (fewest, most) operands, most None for any number;
    ``attrs`` the compile-time attributes a ``TileOp`` must carry; ``rule`` says what is wrong
    with an operation's types (None when nothing is)."""

    name: str
    arity: tuple[int, int | None]
    rule: Rule
    attrs: tuple[str, ...] = ()
    doc: str = ""


def _types(e) -> list:
    return [a.type for a in e.args]


def _all_are(t_of: Callable, what: str) -> Rule:
    """Every operand of the result's type (``t_of(e)`` is the type they must have)."""
    def rule(e):
        want = t_of(e)
        if any(t != want for t in _types(e)):
            return f"operands must be {what} {want}"
        return None
    return rule


def _float_same(e):
    if not (isinstance(e.type, Scalar) and e.type.is_float):
        return "the result must be a float"
    return _all_are(lambda e: e.type, "of the result's type")(e)


def _same(e):
    return _all_are(lambda e: e.type, "of the result's type")(e)


def _sig(result, *args) -> Rule:
    """Fixed operand and result types (None: any)."""
    def rule(e):
        if result is not None and e.type != result:
            return f"the result must be {result}"
        for k, (a, t) in enumerate(zip(args, _types(e))):
            if a is not None and t != a:
                return f"operand {k} must be {a}, not {t}"
        return None
    return rule


def _bitcast(e):
    x = e.args[0].type
    if not (isinstance(x, Scalar) and isinstance(e.type, Scalar) and x.bits == e.type.bits):
        return "an operand and a result of the same width"
    return None


def _pred(e):
    if e.type != bool_ or not e.args[0].type.is_float:
        return "a float operand and a bool result"
    return None


def _selp(e):
    p, a, b = _types(e)
    if p != bool_ or a != e.type or b != e.type:
        return "(bool, a, b) with a and b of the result's type"
    return None


def _bits(e):
    x = e.args[0].type
    want = x if e.name == "brev" else int32
    if not (isinstance(x, Scalar) and x.is_int) or e.type != want:
        return f"an integer operand and a {want} result"
    return None


def _shfl(e):
    m, v, lane = _types(e)
    if m != uint32 or lane != int32 or v != e.type:
        return "(uint32 mask, value, int32 lane) -> the value's type"
    return None


def _atomic(e):
    target, *vals = e.args
    if not (isinstance(target, ir.Load) and target.array.type.dtype == e.type):
        return "the first operand is an element of an array of the result's type"
    if any(v.type != e.type for v in vals):
        return "the values must be of the array's dtype"
    return None


_MATH1 = ("sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
          "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc",
          "lgamma", "tgamma", "exp2", "rsqrt", "cbrt", "floor", "ceil", "trunc", "fabs", "rint")
_MATH2 = ("pow", "atan2", "hypot", "copysign", "fmod", "remainder", "nextafter", "fmin",
          "fmax")
ATOMICS = ("add", "sub", "max", "min", "and_", "or_", "xor", "exch", "inc", "dec", "cas",
           "nanmax", "nanmin")


def _float_int(second):
    """(a float, an integer of type ``second``) -> the float's type: ldexp, round_ndigits."""
    def rule(e):
        x, n = _types(e)
        if not (isinstance(e.type, Scalar) and e.type.is_float) or x != e.type or n != second:
            return f"(a float, {second}) -> the float's type"
        return None
    return rule


def _pair(second_of):
    """One float operand -> a tuple (the operand's type, ``second_of(type)``): frexp, modf."""
    def rule(e):
        x = e.args[0].type
        if not (isinstance(x, Scalar) and x.is_float) or e.type != TupleType(
                (x, second_of(x))):
            return f"a float operand and a ({x}, {second_of(x)}) result"
        return None
    return rule


def _match(e):
    m, v = _types(e)
    want = uint32 if e.name == "match_any_sync" else TupleType((uint32, bool_))
    if m != uint32 or not (isinstance(v, Scalar) and v.bits in (32, 64)) or e.type != want:
        return f"(uint32 mask, a 32- or 64-bit value) -> {want}"
    return None


# complex numbers (docs/language.md, "Complex numbers"); "cmath.<name>" are Python's cmath
# functions of one complex operand
CMATH1 = ("sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
          "cosh", "tanh", "asinh", "acosh", "atanh")


def _complex_of(e):
    """(the parts' float type) x 2 -> complex: ``complex(a, b)``, ``cmath.rect``."""
    t = e.type
    if not (isinstance(t, Scalar) and t.is_complex) or any(a != t.real_type for a in _types(e)):
        return "two floats -> the complex type of their precision"
    return None


def _part(e):
    """complex -> its float type: ``z.real``, ``z.imag``, ``abs(z)``, ``cmath.phase(z)``."""
    x = e.args[0].type
    if not (isinstance(x, Scalar) and x.is_complex) or e.type != x.real_type:
        return "a complex operand -> its parts' float type"
    return None


def _complex_same(e):
    if not (isinstance(e.type, Scalar) and e.type.is_complex):
        return "the result must be complex"
    return _same(e)


def _complex_pred(e):
    if e.type != bool_ or not e.args[0].type.is_complex:
        return "a complex operand and a bool result"
    return None


def _complex_ops() -> list[OpSpec]:
    out = [OpSpec("complex", (2, 2), _complex_of, doc="complex(real, imag)"),
           OpSpec("rect", (2, 2), _complex_of, doc="cmath.rect(r, phi)")]
    out += [OpSpec(n, (1, 1), _part, doc="a part of a complex number") for n in (
        "real", "imag", "cabs", "phase")]
    out += [OpSpec("conj", (1, 1), _complex_same, doc="the complex conjugate")]
    out += [OpSpec(n, (1, 1), _complex_pred, doc="complex predicate") for n in (
        "cisnan", "cisinf", "cisfinite")]
    out += [OpSpec(f"cmath.{n}", (1, 1), _complex_same, doc="cmath function") for n in CMATH1]
    return out


def _intrinsics() -> dict[str, OpSpec]:
    out: list[OpSpec] = []
    out += [OpSpec(n, (1, 1), _float_same, doc="math, float32 or float64") for n in _MATH1]
    out += [OpSpec(n, (2, 2), _float_same, doc="math, float32 or float64") for n in _MATH2]
    out += [OpSpec("fma", (3, 3), _float_same, doc="a * b + c, rounded once")]
    out += [OpSpec("ldexp", (2, 2), _float_int(int32), doc="x * 2**n")]
    out += [OpSpec("round_ndigits", (2, 2), _float_int(int64),
                   doc="x rounded to n decimal digits, ties to even (Python's round(x, n))")]
    out += [OpSpec("frexp", (1, 1), _pair(lambda t: int32),
                   doc="(mantissa in [0.5, 1), exponent); the exponent of inf and nan is 0")]
    out += [OpSpec("modf", (1, 1), _pair(lambda t: t), doc="(fractional part, integer part)")]
    out += [OpSpec(n, (1, 1), _pred, doc="float predicate") for n in ("isnan", "isinf",
                                                                       "isfinite")]
    out += [OpSpec(n, (2, 2), _same, doc="Python's min/max of two numbers") for n in ("min",
                                                                                     "max")]
    out += [OpSpec("abs", (1, 1), _same, doc="absolute value")]
    out += [OpSpec("selp", (3, 3), _selp, doc="p ? a : b with both a and b evaluated")]
    out += [OpSpec("raise", (1, 1), _sig(void, int32),
                   doc="raise the exception of ir/raises.py's record (its index): the simulator "
                       "raises it on the host, the GPU stops the thread")]
    out += [OpSpec("bitcast", (1, 1), _bitcast, doc="the operand's bits as the result's type")]
    out += [OpSpec(f"bf16_round_{m}", (1, 1), _sig(bfloat16), doc=f"a number to bfloat16, "
                   f"rounded {d}") for m, d in (("rz", "towards zero"), ("rd", "down"),
                                                ("ru", "up"))]
    out += [OpSpec(n, (1, 1), _bits, doc="bit counting/reversal") for n in ("popc", "clz",
                                                                           "ffs", "brev")]
    out += [OpSpec(n, (0, 0), _sig(void), doc="barrier / fence") for n in (
        "syncthreads", "threadfence", "threadfence_block", "threadfence_system")]
    out += [OpSpec("cg.this_grid", (0, 0), _sig(void),
                   doc="marks a cooperative kernel (cg.this_grid()); does nothing")]
    out += [OpSpec("cg.grid_sync", (0, 0), _sig(void), doc="barrier of the whole grid")]
    out += [OpSpec("griddepcontrol.wait", (0, 0), _sig(void),
                   doc="wait for the grid this one depends on (programmatic dependent launch)"),
            OpSpec("griddepcontrol.launch_dependents", (0, 0), _sig(void),
                   doc="let the dependent grid start (programmatic dependent launch)")]
    out += [OpSpec(n, (0, 0), _sig(uint32), doc="lane mask") for n in ("activemask",
                                                                       "lanemask_lt")]
    out += [OpSpec(n, (1, 1), _sig(int32, bool_), doc="barrier with a predicate") for n in (
        "syncthreads_count", "syncthreads_and", "syncthreads_or")]
    out += [OpSpec("syncwarp", (1, 1), _sig(void, uint32), doc="warp barrier over a mask")]
    out += [OpSpec(n, (3, 3), _shfl, doc="warp shuffle") for n in (
        "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")]
    out += [OpSpec(n, (2, 2), _sig(int32, uint32, bool_), doc="warp vote") for n in (
        "all_sync", "any_sync", "eq_sync")]
    out += [OpSpec("ballot_sync", (2, 2), _sig(uint32, uint32, bool_), doc="warp vote")]
    out += [OpSpec(n, (2, 2), _match, doc="lanes of the mask holding the same bits") for n in (
        "match_any_sync", "match_all_sync")]
    out += [OpSpec(f"atomic.{n}", (3, 3) if n == "cas" else (2, 2), _atomic,
                   doc="read-modify-write of one array element; the old value") for n in ATOMICS]
    out += _complex_ops()
    out += _coop_ops()
    return {s.name: s for s in out}


# -- threadtile.coop's block- and warp-wide primitives (ir/coop.py) -------------------------

def _coop_dtype(t) -> Scalar | None:
    return t.dtype if isinstance(t, ArrayType) else t


def _coop_local(t) -> bool:
    return isinstance(t, ArrayType) and t.space == "local" and t.ndim == 1


def _coop_value(e):
    """reduce/scan: a scalar (the result's type) or local arrays of items of one dtype, the
    initial value (scans) of that dtype too; a reduction gives the dtype, a scalar scan the
    dtype, a scan of arrays nothing."""
    from .coop import DTYPES  # (coop imports this module's neighbours)
    ts = _types(e)
    items = e.attrs["items"]
    dt = _coop_dtype(ts[0])
    if dt not in DTYPES:
        return f"a number of one of {', '.join(t.name for t in DTYPES)}, not {dt}"
    n_arrays = 0 if not items else (1 if e.name.endswith("reduce") else 2)
    if any(not _coop_local(t) or t.dtype != dt for t in ts[:n_arrays]):
        return f"{n_arrays} local 1-d arrays of {dt}"
    if any(t != dt for t in ts[n_arrays or 1:]):
        return f"the values must be {dt}"
    want = void if items and e.name.endswith("scan") else dt
    if e.type != want:
        return f"the result must be {want}"
    return None


def _coop_arrays(k_global: int):
    """sort/exchange/load/store: local 1-d arrays of items (past ``k_global`` global arrays),
    then integer operands (valid items, bits) or the out-of-bounds value; no result."""
    def rule(e):
        from .coop import DTYPES
        ts = _types(e)
        if e.type != void:
            return "no result"
        for t in ts[:k_global]:
            if not (isinstance(t, ArrayType) and t.ndim == 1 and t.space != "local"):
                return "a 1-d global or shared array first"
        arrays = [t for t in ts[k_global:] if isinstance(t, ArrayType)]
        if not arrays or any(not _coop_local(t) for t in arrays):
            return "local 1-d arrays of items"
        if any(t.dtype not in DTYPES for t in arrays):
            return f"arrays of one of {', '.join(t.name for t in DTYPES)}"
        return None
    return rule


def _coop_ops() -> list[OpSpec]:
    value = ("block", "items", "op")
    return [
        OpSpec("coop.block.reduce", (1, 1), _coop_value, value,
               "the block's reduction, in every thread (cub::BlockReduce)"),
        OpSpec("coop.block.scan", (1, 3), _coop_value, (*value, "inclusive"),
               "the block's prefix scan (cub::BlockScan)"),
        OpSpec("coop.warp.reduce", (1, 1), _coop_value, ("warp", "items", "op"),
               "the logical warp's reduction, in every lane (cub::WarpReduce)"),
        OpSpec("coop.warp.scan", (1, 2), _coop_value, ("warp", "items", "op", "inclusive"),
               "the logical warp's prefix scan (cub::WarpScan)"),
        OpSpec("coop.block.radix_sort", (1, 4), _coop_arrays(0),
               ("block", "items", "descending", "values"),
               "the block's keys (and values) sorted in place (cub::BlockRadixSort)"),
        OpSpec("coop.block.merge_sort", (1, 2), _coop_arrays(0), ("block", "items", "op"),
               "the block's keys (and values) sorted by a comparator (cub::BlockMergeSort)"),
        OpSpec("coop.warp.merge_sort", (1, 2), _coop_arrays(0),
               ("block", "warp", "items", "op"),
               "each logical warp's keys sorted by a comparator (cub::WarpMergeSort)"),
        OpSpec("coop.block.load", (2, 4), _coop_arrays(1), ("block", "items", "algorithm"),
               "a tile of the array into each thread's items (cub::BlockLoad)"),
        OpSpec("coop.block.store", (2, 3), _coop_arrays(1), ("block", "items", "algorithm"),
               "each thread's items into a tile of the array (cub::BlockStore)"),
        OpSpec("coop.block.exchange", (2, 2), _coop_arrays(0), ("block", "items", "kind"),
               "items rearranged between blocked and striped (cub::BlockExchange)"),
    ]


# -- tile operations ---------------------------------------------------------------------------

def _tile(t) -> bool:
    return isinstance(t, TileType)


def _scalar_dtype(t):
    return t.dtype if _tile(t) else t


def _elementwise(e):
    """Operands are tiles of the result's shape or scalars, all of one dtype: the result's, or
    for a comparison each other's (``where``'s condition is bool)."""
    t = e.type
    compare = e.op == "binop" and e.attrs["op"] in _COMPARES
    if compare and t.dtype != bool_:
        return "a comparison gives a bool tile"
    args = e.args
    if e.op == "where":
        if _scalar_dtype(args[0].type) != bool_:
            return "the condition must be bool"
        args = args[1:]
    want = _scalar_dtype(args[0].type) if compare else t.dtype
    for k, a in enumerate(args):
        at = a.type
        if _tile(at) and (at.shape != t.shape or at.dtype != want):
            return f"operand {k} must be a {want} tile of shape {t.shape}, not {at}"
        if not _tile(at) and at != want:
            return f"operand {k} must be a {want} scalar, not {at}"
    return None


_COMPARES = ("lt", "le", "gt", "ge", "eq", "ne")


def _full(e):
    if e.args and any(a.type != e.type.dtype for a in e.args):
        return f"the values must be {e.type.dtype} scalars"
    if e.op == "arange" and e.type.ndim != 1:
        return "arange makes a 1-d tile"
    return None


def _same_tile(e):
    x = e.args[0].type
    if not _tile(x) or x.shape != e.type.shape or x.dtype != e.type.dtype:
        return f"the result must be a tile like its operand ({x})"
    return None


def _cast(e):
    x = e.args[0].type
    if not _tile(x) or x.shape != e.type.shape:
        return "a cast keeps the shape"
    return None


def _math(e):
    x = e.args[0].type
    want = bool_ if e.attrs["fn"] == "isnan" else x.dtype
    if x.shape != e.type.shape or e.type.dtype != want:
        return f"the result must be a {want} tile of the operand's shape"
    return None


def _broadcast(e):
    x, t = e.args[0].type, e.type
    padded = (1,) * (t.ndim - x.ndim) + x.shape
    if x.dtype != t.dtype or len(padded) != t.ndim or any(
            a not in (1, b) for a, b in zip(padded, t.shape)):
        return f"{x} does not broadcast to {t}"
    return None


def _reshape(e):
    x, t = e.args[0].type, e.type
    if x.dtype != t.dtype or x.size != t.size:
        return f"a reshape keeps the dtype and the number of elements ({x} -> {t})"
    return None


def _permute(e):
    x, t = e.args[0].type, e.type
    if x.dtype != t.dtype or tuple(x.shape[p] for p in e.attrs["perm"]) != t.shape:
        return f"{t} is not {x} permuted by {e.attrs['perm']}"
    return None


def _grid_indices(e, first: int, sub: tuple) -> str | None:
    x = e.args[0].type
    idx = e.args[first:]
    if len(idx) != x.ndim or any(not (isinstance(i.type, Scalar) and i.type.is_int)
                                 for i in idx):
        return f"one integer index per axis of {x}"
    if len(sub) != x.ndim or any(s == 0 or n % s for n, s in zip(x.shape, sub)):
        return f"a subtile of shape {sub} does not divide {x}"
    return None


def _extract(e):
    x, t = e.args[0].type, e.type
    if not _tile(x) or not _tile(t) or x.dtype != t.dtype:
        return "extract takes a subtile of a tile, of its dtype"
    return _grid_indices(e, 1, t.shape)


def _insert(e):
    x, v = e.args[0].type, e.args[1].type
    if not _tile(x) or not _tile(v) or e.type != x or v.dtype != x.dtype:
        return "insert returns its tile with a subtile of its dtype replaced"
    return _grid_indices(e, 2, v.shape)


def _cat(e):
    x, y, t = e.args[0].type, e.args[1].type, e.type
    a = e.attrs["axis"]
    if not (_tile(x) and _tile(y) and _tile(t)) or x.dtype != y.dtype or x.dtype != t.dtype \
            or x.ndim != y.ndim or x.ndim != t.ndim or not 0 <= a < x.ndim:
        return "cat joins two tiles of one dtype and rank along one of their axes"
    want = tuple(n + y.shape[d] if d == a else n for d, n in enumerate(x.shape))
    if any(n != y.shape[d] for d, n in enumerate(x.shape) if d != a) or t.shape != want:
        return f"{t} is not {x} and {y} joined along axis {a}"
    return None


def _reduce(e):
    x, t = e.args[0].type, e.type
    axes = e.attrs["axes"]
    kept = tuple(d for k, d in enumerate(x.shape) if k not in axes)
    keep = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
    if t.shape not in (kept, keep):
        return f"reducing {x} over {axes} does not give shape {t.shape}"
    arg = e.attrs["kind"] in ("argmax", "argmin")
    if t.dtype != (int32 if arg else x.dtype):
        return f"the result dtype must be {int32 if arg else x.dtype}"
    return None


def _mma(e):
    a, b, acc = _types(e)
    if not all(_tile(t) and t.ndim == 2 for t in (a, b, acc)):
        return "mma takes 2-d tiles"
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or acc.shape != (m, n) or a.dtype != b.dtype:
        return f"{a} @ {b} + {acc} do not match"
    if e.type.shape != acc.shape or e.type.dtype != acc.dtype:
        return "the result is the accumulator's type"
    return None


def _item(e):
    x = e.args[0].type
    if not _tile(x) or x.size != 1 or e.type != x.dtype:
        return "item() takes a one-element tile to its scalar"
    return None


def _array_first(e, fixed: int) -> str | None:
    arr = e.args[0].type
    if not isinstance(arr, ArrayType):
        return "the first operand is an array"
    if len(e.args) != fixed + arr.ndim:
        return f"one index per axis of the {arr.ndim}-d array"
    return None


def _load(e):
    bad = _array_first(e, 1)
    if bad:
        return bad
    arr = e.args[0].type
    if e.type.dtype != arr.dtype or e.type.shape != tuple(e.attrs["shape"]):
        return "a load gives a tile of the array's dtype and the given shape"
    if any(i.type != int64 for i in e.args[1:]):
        return "tile indices are int64"
    return None


def _load_operand(e):
    bad = _array_first(e, 1)
    if bad:
        return bad
    arr, t = e.args[0].type, e.type
    shape = tuple(e.attrs["shape"])
    kept = tuple(d for d in shape if d != 1)
    if not _tile(t) or t.ndim != 2 or t.dtype != arr.dtype or not (
            kept == t.shape or shape[-2:] == t.shape and all(d == 1 for d in shape[:-2])):
        return "an mma operand: a 2-d tile of the array's dtype, the load's axes other than 1"
    if not 0 <= e.attrs.get("row_axis", -1) < arr.ndim - 1:
        return "an mma operand's memory rows step along an array axis before the last"
    if not t.layout.startswith("smem"):
        return "an mma operand lives in shared memory (layout smem, smemt, smemw or smemtw)"
    return None


def _store(e):
    bad = _array_first(e, 2)
    if bad:
        return bad
    arr, tile = e.args[0].type, e.args[1].type
    if e.type != void or not _tile(tile) or tile.dtype != arr.dtype or \
            tile.shape != tuple(e.attrs["shape"]):
        return "a store writes a tile of the array's dtype and gives nothing"
    return None


def _indexed(arr, rest: list, shape: tuple, what: str) -> str | None:
    """gather/scatter: after the array and ``what``, one index per array axis (an integer
    tile of ``shape`` or an int64 scalar) and a bool mask (a tile of ``shape`` or a scalar)
    (``rest``)."""
    if not isinstance(arr, ArrayType) or len(rest) != arr.ndim + 1:
        return f"an array, {what}one index per axis, then the mask"
    for k, a in enumerate(rest):
        t, last = a.type, k == len(rest) - 1
        ok = (t.shape == shape and (t.dtype == bool_ if last else t.dtype.is_int)) if _tile(
            t) else t == (bool_ if last else int64)
        if not ok:
            return (f"indices are integer tiles of shape {shape} or int64 scalars, the mask a "
                    "bool tile of that shape or scalar")
    return None


def _gather(e):
    arr, pad = e.args[0].type, e.args[-1].type
    if not _tile(e.type) or e.type.dtype != getattr(arr, "dtype", None):
        return "a gather gives a tile of the array's dtype"
    if _scalar_dtype(pad) != arr.dtype or (_tile(pad) and pad.shape != e.type.shape):
        return "the padding is of the array's dtype, a scalar or a tile of the result's shape"
    return _indexed(arr, e.args[1:-1], e.type.shape, "")


def _gather_operand(e):
    arr, rows, col0, pad = (a.type for a in e.args)
    t = e.type
    if not isinstance(arr, ArrayType) or arr.ndim != 2 or not _tile(t) or t.ndim != 2 or \
            t.dtype != arr.dtype:
        return "rows of a 2-d array: a 2-d tile of the array's dtype"
    if not _tile(rows) or rows.size != t.shape[0] or not rows.dtype.is_int:
        return "one integer row index per row of the tile"
    if _tile(col0) or not getattr(col0, "is_int", False) or _tile(pad) or \
            _scalar_dtype(pad) != arr.dtype:
        return "the first column an integer scalar, the padding a scalar of the array's dtype"
    return None


def _scatter_fragments(e):
    arr, val, rows, col0 = (a.type for a in e.args)
    if e.type != void or not isinstance(arr, ArrayType) or arr.ndim != 2 or not _tile(val) or \
            val.ndim != 2 or val.dtype != arr.dtype or val.layout != "mma":
        return "a 2-d tile in fragments of the 2-d array's dtype, written by rows; nothing back"
    if not _tile(rows) or rows.size != val.shape[0] or not rows.dtype.is_int:
        return "one integer row index per row of the tile"
    if _tile(col0) or not getattr(col0, "is_int", False):
        return "the first column an integer scalar"
    return None


def _scatter(e):
    arr, val = e.args[0].type, e.args[1].type
    if e.type != void or not _tile(val) or val.dtype != getattr(arr, "dtype", None):
        return "a scatter writes a tile of the array's dtype and gives nothing"
    return _indexed(arr, e.args[2:], val.shape, "the value tile, ")


def _atomic_tile(e):
    arr = e.args[0].type
    nvals = 2 if e.attrs["op"] == "cas" else 1
    if not isinstance(arr, ArrayType) or len(e.args) != 1 + arr.ndim + nvals:
        return "an array, one index tile per axis, then the value tiles"
    if e.type.dtype != arr.dtype or any(_tile(a.type) and a.type.shape != e.type.shape
                                        for a in e.args[1:]):
        return "tiles of the result's shape; the result has the array's dtype"
    return None


def _void(e):
    return None if e.type == void else "it gives nothing"


def _mma_loop(e):
    a_arr, b_arr, i, j, lo, hi, acc, *batch = _types(e)
    if e.attrs.get("batch") and (len(batch) != 2 or any(t != int64 for t in batch)):
        return "a batched loop has two int64 batch indices"
    if not (isinstance(a_arr, ArrayType) and isinstance(b_arr, ArrayType)):
        return "A and B are arrays"
    if any(t != int64 for t in (i, j)) or not all(isinstance(t, Scalar) and t.is_int
                                                  for t in (lo, hi)):
        return "the tile indices and the bounds of the loop are integers"
    if acc != e.type or not _tile(acc) or acc.layout != "mma":
        return "the result is the accumulator, kept in fragments"
    return _mma(e.attrs["mma"])


def _layout(e):
    x, t = e.args[0].type, e.type
    if x.shape != t.shape or x.dtype != t.dtype or x.layout == t.layout:
        return "a layout change keeps shape and dtype and changes the layout"
    return None


def _bytes(e):
    x, t = e.args[0].type, e.type
    if not (_tile(x) and _tile(t)) or x.size * x.dtype.bits != t.size * t.dtype.bits:
        return "a tile's bits read as another dtype: the same number of bits"
    return None


def _from_scalars(e):
    t = e.type
    if not _tile(t) or len(e.args) != t.size or any(a.type != t.dtype for a in e.args):
        return "one scalar of the tile's dtype per element, in row-major order"
    return None


def _tile_ops() -> dict[str, OpSpec]:
    out = [
        OpSpec("full", (1, 1), _full, doc="a tile filled with one value"),
        OpSpec("arange", (2, 2), _full, doc="start + step * [0, 1, ...]"),
        OpSpec("binop", (2, 2), _elementwise, ("op",), "arithmetic, bitwise or comparison"),
        OpSpec("unary", (1, 1), _same_tile, ("op",), "neg or invert"),
        OpSpec("cast", (1, 1), _cast, doc="astype: each element converted"),
        OpSpec("math", (1, 1), _math, ("fn",), "elementwise math function"),
        OpSpec("where", (3, 3), _elementwise, doc="select by a bool tile"),
        OpSpec("broadcast", (1, 1), _broadcast, doc="NumPy broadcasting to a larger shape"),
        OpSpec("reshape", (1, 1), _reshape, doc="same elements in row-major order"),
        OpSpec("permute", (1, 1), _permute, ("perm",), "axes reordered"),
        OpSpec("extract", (1, None), _extract, doc="the subtile at a cell of a grid"),
        OpSpec("insert", (2, None), _insert, doc="a tile with the subtile at a cell replaced"),
        OpSpec("cat", (2, 2), _cat, ("axis",), "two tiles joined along an axis"),
        OpSpec("reduce", (1, 1), _reduce, ("kind", "axes"), "sum/prod/max/min/argmax/argmin"),
        OpSpec("scan", (1, 1), _same_tile, ("kind", "axis", "reverse"), "cumsum/cumprod"),
        OpSpec("mma", (3, 3), _mma, doc="acc + a @ b"),
        OpSpec("mma_loop", (7, 9), _mma_loop, ("a", "b", "cast", "mma", "var", "hopper", "batch"),
               "a matmul's k loop as one operation (ir/kloop.py)"),
        OpSpec("item", (1, 1), _item, doc="the value of a one-element tile"),
        OpSpec("load", (2, None), _load, ("shape", "order", "padding"), "a tile from an array"),
        OpSpec("load_operand", (2, None), _load_operand, ("shape", "order", "offset"),
               "an mma operand from an array into its shared-memory buffer"),
        OpSpec("store", (3, None), _store, ("shape", "order"), "a tile into an array"),
        OpSpec("gather", (3, None), _gather, ("check_bounds",),
               "array elements at tiles of indices; the padding where masked or outside"),
        OpSpec("gather_operand", (4, 4), _gather_operand, ("offset", "check_bounds"),
               "an mma's A operand gathered by rows into its shared-memory buffer"),
        OpSpec("scatter_fragments", (4, 4), _scatter_fragments, ("check_bounds",),
               "rows of a tile in fragments into array rows at a tile of indices"),
        OpSpec("scatter", (3, None), _scatter, ("check_bounds",),
               "a tile into array elements at tiles of indices, where the mask allows"),
        OpSpec("atomic", (2, None), _atomic_tile, ("op", "order", "scope"),
               "an atomic per element; the old values"),
        OpSpec("printf", (0, None), _void, ("fmt", "kinds"), "C printf by the block's thread 0"),
        OpSpec("layout", (1, 1), _layout, doc="blocked <-> tensor-core fragment layout"),
        OpSpec("bytes", (1, 1), _bytes, doc="bitcast, pack_to_bytes, unpack_from_bytes"),
        OpSpec("from_scalars", (1, None), _from_scalars, doc="astile: a tile of scalars"),
    ]
    return {s.name: s for s in out}


INTRINSICS: dict[str, OpSpec] = _intrinsics()
TILE_OPS: dict[str, OpSpec] = _tile_ops()


def check(e: ir.Expr) -> str | None:
    """What is wrong with operation ``e`` (a ``Call`` or ``TileOp``) by its entry, or None."""
    table, name = (TILE_OPS, e.op) if isinstance(e, ir.TileOp) else (INTRINSICS, e.name)
    spec = table.get(name)
    if spec is None:
        return f"no operation {name!r} in the registry"
    lo, hi = spec.arity
    n = len(e.args)
    if n < lo or (hi is not None and n > hi):
        want = str(lo) if lo == hi else f"{lo} to {'any' if hi is None else hi}"
        return f"{name} takes {want} operands, got {n}"
    missing = [a for a in spec.attrs if a not in getattr(e, "attrs", {})]
    if missing:
        return f"{name} lacks its attributes {missing}"
    return spec.rule(e)

