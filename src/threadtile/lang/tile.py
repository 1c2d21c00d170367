"""The tile-level kernel language: cuTile's names (``import threadtile.tile as ct``).

A tile is an immutable N-d value of one dtype whose shape is known at compile time (every axis
a power of two). Tile operations are *block-collective*: every thread of the block executes
each of them together, the way it executes ``syncthreads()``; the compiler spreads the tile's
elements over the threads (docs/tiles.md). So a tile operation may not sit in a branch that
some threads of a block take and others do not, and its scalar arguments (indices, fill
values) must be the same in every thread. The simulator checks both.

Every object here is recognised by identity by the frontend (``frontend/tiles.py``) and does
nothing on the host, except ``cdiv``, which also computes on the host.
"""

from __future__ import annotations

import builtins
import contextlib
import enum
import threading

from .thread import context

__all__ = [
    "PaddingMode", "MemoryOrder", "MemoryScope", "RoundingMode",
    "bid", "num_blocks", "num_tiles", "cdiv",
    "load", "store", "gather", "scatter", "Slice", "load_advanced_indexing",
    "store_advanced_indexing", "full", "zeros", "ones", "arange", "astype", "astile",
    "bitcast", "pack_to_bytes", "unpack_from_bytes",
    "where", "maximum", "minimum", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
    "negative", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "sinh", "cosh",
    "abs", "floor", "ceil", "isnan",
    "sum", "max", "min", "prod", "argmax", "argmin", "cumsum", "cumprod", "reduce", "scan",
    "reshape", "transpose", "permute", "expand_dims", "broadcast_to", "extract", "insert", "cat",
    "mma", "matmul",
    "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
    "atomic_xchg", "atomic_cas", "printf", "print", "assume_divisible_by",
    "grid_dependency_control_wait", "grid_dependency_control_launch_dependents",
    "static_eval", "static_assert", "static_iter",
    "UNSUPPORTED",
]


class PaddingMode(enum.Enum):
    """What ``load`` puts in the elements of a tile that lie outside the array.

    ``UNDETERMINED`` (the default) promises that no element does: the simulator reports an
    element outside the array as an ``OutOfBoundsError`` (the GPU code fills it with zeros and
    never reads outside the array)."""

    UNDETERMINED = "undetermined"
    ZERO = "zero"
    NEG_ZERO = "neg_zero"
    NAN = "nan"
    POS_INF = "pos_inf"
    NEG_INF = "neg_inf"


class MemoryOrder(enum.Enum):
    """Memory ordering of an atomic (``atomic_*(..., memory_order=...)``)."""

    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(enum.Enum):
    """The threads a memory order applies to."""

    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"
    DEVICE = "device"
    SYS = "sys"


class RoundingMode(enum.Enum):
    """Rounding modes. ``astype`` between floats honours RN (to nearest even, the default),
    RZ (towards zero), RM (down), RP (up) and RA (to nearest, ties away) where the conversion
    has them; ``exp`` honours ``FULL`` (the default) and ``APPROX`` (the fast hardware
    exponential), ``truediv`` of float32 tiles ``APPROX`` (the fast division); elsewhere only
    RN is implemented."""

    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


class StaticCall(Exception):
    """A tile function called while the compiler evaluates ``ct.static_eval``'s expression."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


_static = threading.local()


# the elementwise functions ct.static_eval may call (on the kernel's values, through the
# compiler's hook): they compute, they do not touch memory or make tiles
PURE = frozenset({
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "negative", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "where",
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "sinh", "cosh",
    "abs", "floor", "ceil", "isnan", "astype", "cdiv"})


@contextlib.contextmanager
def static_scope(on: bool, hook=None):
    """While on, a call of a tile function raises :class:`StaticCall` (the compiler's
    ``static_eval`` evaluates Python with the kernel's names; frontend/static.py), except the
    elementwise ones in :data:`PURE`, which ``hook(function, args, kwargs)`` computes."""
    prev = getattr(_static, "on", False), getattr(_static, "hook", None)
    _static.on, _static.hook = on, hook
    try:
        yield
    finally:
        _static.on, _static.hook = prev


def _stub(name: str, doc: str):
    def f(*args, **kwargs):
        if getattr(_static, "on", False):
            if name in ("minimum", "maximum") and len(args) == 2 and not kwargs and all(
                    isinstance(a, (int, float)) for a in args):
                return (builtins.min if name == "minimum" else builtins.max)(*args)
            hook = getattr(_static, "hook", None)
            if name in PURE and hook is not None:
                return hook(f, args, kwargs)
            raise StaticCall(name)
        if context.current is not None:
            raise RuntimeError(f"threadtile.tile.{name}() does not run in simulate(mode="
                               "'python'); tile kernels run in the default lockstep mode")
        raise RuntimeError(f"threadtile.tile.{name}() can only be used inside a kernel: "
                           "decorate the function with @threadtile.tile.kernel")

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    f._threadtile_intrinsic = "tile." + name
    return f


# ---- blocks and tile spaces ---------------------------------------------------------------------

bid = _stub("bid", """bid(axis) -> the index of this block along ``axis`` (0, 1 or 2), int32
(``blockIdx.x/y/z``).""")
num_blocks = _stub("num_blocks", """num_blocks(axis) -> the number of blocks of the grid along
``axis``, int32 (``gridDim``).""")
num_tiles = _stub("num_tiles", """num_tiles(array, axis, shape, order="C") -> how many tiles of
``shape`` cover ``array`` along ``axis`` of its tile space: ``cdiv(array.shape[axis],
shape[axis])`` (int64).""")


def cdiv(a, b):
    """cdiv(a, b) -> ``a // b`` rounded up, for non-negative integers. Works on the host and in
    kernels (on scalars and integer tiles)."""
    return -(-a // b)


cdiv._threadtile_intrinsic = "tile.cdiv"

assume_divisible_by = _stub("assume_divisible_by", """assume_divisible_by(x, divisor) -> ``x``
(a hint in cuTile; accepted and ignored).""")

# ---- memory -------------------------------------------------------------------------------------

load = _stub("load", """load(array, index, shape, *, order="C", padding_mode=...) -> the
tile of ``shape`` at ``index`` of the array's tile space: element ``r`` of the tile is
``array[index[d] * shape[d] + r[d] for each axis d]``.

``array`` is a kernel argument, a view of one, or a ``shared.array`` (a load from shared memory
synchronizes the block before and after, so thread code may write the array and then load it).
``index`` is a tuple of integers (one per axis; an int for a 1-d array), the same in every
thread. ``shape`` is a tuple of compile-time powers of two. ``order`` permutes the array's axes
first ("F" reverses them; a tuple names the array axis of each tile axis). Elements outside the
array get ``padding_mode``'s value; the default's is undetermined, as in cuTile (the GPU code
reads 0, the simulator NaN, so that a float result depending on it shows). A tile entirely
outside the array is undefined (the simulator's OutOfBoundsError).
``check_bounds``, ``latency`` and ``allow_tma`` are accepted and ignored.""")
store = _stub("store", """store(array, index, tile, *, order="C") -> None: write ``tile`` to the
array at ``index`` of the tile space of ``tile.shape`` (the inverse of ``load``). Elements
outside the array are skipped (cuTile's rule); the tile is converted to the array's dtype; a
scalar is stored as a tile of ones. A store to a ``shared.array`` synchronizes the block before
and after, so every thread may read the array right after it.""")

gather = _stub("gather", """gather(array, indices, *, mask=None, padding_value=0,
check_bounds=True, latency=None) -> the array's elements at ``indices``: a tuple with one
integer tile or number per array axis (a 1-d array also takes it bare, a 0-d array takes
``()``), broadcast together
(NumPy's rules) to the result's shape; element ``r`` is ``array[indices[0][r], ...,
indices[n-1][r]]``. Where ``mask`` (a bool tile or scalar broadcastable to that shape) is
false, or an index is outside the array (negative indices too: they do not wrap), the element
is ``padding_value`` (a number or a tile broadcastable to the shape, converted implicitly to
the array's dtype). ``check_bounds=False`` promises every index the mask lets through is
inside the array (no test on the GPU; the simulator reports an OutOfBoundsError).
``latency`` (1 to 10) is a hint, accepted and ignored.""")
scatter = _stub("scatter", """scatter(array, indices, value, *, mask=None, check_bounds=True,
latency=None) -> None: write ``value`` (a tile or number broadcastable to the indices'
common shape, converted implicitly to the array's dtype) to the array's elements at
``indices`` (as in ``gather``). Elements where ``mask`` is false or the index is outside the
array are skipped. Where two elements name one array element, which value lands is
unspecified (the simulator reports a race when they differ).""")

Slice = _stub("Slice", """Slice(start, length) -> an index of ``load_advanced_indexing`` /
``store_advanced_indexing``: the ``length`` elements of an array axis from ``start`` (a
number; ``length`` a compile-time power of two).""")
load_advanced_indexing = _stub("load_advanced_indexing", """load_advanced_indexing(array,
indices, *, padding_mode=PaddingMode.UNDETERMINED, latency=None, allow_tma=None) -> a tile of
an array of 2 or more axes: ``indices`` has one entry per axis, exactly one a 1-d integer tile
(the sparse axis: its elements pick the array's indices along that axis, in any order,
repeats allowed) and the others ``Slice(start, length)``. The tile's shape is the sparse
tile's length on its axis and each slice's length on the others. Elements outside the array
get ``padding_mode``'s value (as ``load``); a tile entirely outside is undefined (the
simulator's OutOfBoundsError). It is a ``gather`` of those indices.""")
store_advanced_indexing = _stub("store_advanced_indexing", """store_advanced_indexing(array,
indices, tile, *, latency=None, allow_tma=None) -> None: ``tile`` (of exactly the shape the
indices give, converted implicitly to the array's dtype) written where
``load_advanced_indexing`` with the same indices reads; elements outside the array are
skipped. Repeated sparse indices write one row twice: which lands is unspecified (the
simulator reports a race where the values differ).""")

# ---- making tiles -------------------------------------------------------------------------------

full = _stub("full", """full(shape, fill_value, dtype) -> a tile of ``shape`` filled with
``fill_value`` (a uniform scalar).""")
zeros = _stub("zeros", "zeros(shape, dtype) -> a tile of zeros.")
ones = _stub("ones", "ones(shape, dtype) -> a tile of ones.")
arange = _stub("arange", """arange(size, *, dtype, start=0, step=1) -> the 1-d tile ``start,
start + step, ..., start + (size - 1) * step`` (``size`` a compile-time power of two).""")
astype = _stub("astype", """astype(x, dtype) -> ``x`` converted to ``dtype`` (also the method
``x.astype(dtype)``). Float to int truncates; to ``tfloat32`` rounds to 10 mantissa bits
(nearest, ties away), which is what ``mma`` on tensor cores reads for float32 data.
``rounding_mode`` (a float-to-float conversion): RN (the default), RZ, RM, RP or RA where the
conversion has it (frontend/tile_dtypes.py lists them).""")
astile = _stub("astile", """astile(value, dtype=None) -> a tile of the numbers of ``value``, a
number (a 0-d tile) or a nested tuple of numbers (its nesting is the shape, each length a
power of two).""")
bitcast = _stub("bitcast", """bitcast(x, dtype) -> ``x``'s bits read as ``dtype`` (of the same
width, neither bool_), elementwise.""")
pack_to_bytes = _stub("pack_to_bytes", """pack_to_bytes(x) -> the 1-d uint8 tile of ``x``'s bytes
in row-major order (little-endian; float4_e2m1fn two to a byte, the first in the low half).""")
unpack_from_bytes = _stub("unpack_from_bytes", """unpack_from_bytes(x, dtype) -> the 1-d tile of
``dtype`` whose bytes are the 1-d uint8 tile ``x`` (pack_to_bytes' inverse).""")

# ---- elementwise --------------------------------------------------------------------------------

_EW = """{name}(x, y) -> elementwise ``{sym}`` with NumPy broadcasting (also the operator).
Operands are tiles or scalars; Python literals adopt the tile's dtype, a float literal with an
integer tile gives float32."""
where = _stub("where", """where(cond, x, y) -> ``x`` where ``cond`` is true, else ``y``,
elementwise with broadcasting (tiles or scalars).""")
maximum = _stub("maximum", "maximum(x, y) -> the elementwise maximum (Python's max rule).")
minimum = _stub("minimum", "minimum(x, y) -> the elementwise minimum (Python's min rule).")
add = _stub("add", _EW.format(name="add", sym="x + y"))
sub = _stub("sub", _EW.format(name="sub", sym="x - y"))
mul = _stub("mul", _EW.format(name="mul", sym="x * y"))
truediv = _stub("truediv", _EW.format(name="truediv", sym="x / y") + " Integer tiles divide "
                "to float32; ``rounding_mode=RoundingMode.APPROX`` of float32 tiles is the fast "
                "division (within 2 ulp for divisors below 2**126).")
floordiv = _stub("floordiv", _EW.format(name="floordiv", sym="x // y") + " (Python's rounding)")
mod = _stub("mod", _EW.format(name="mod", sym="x % y") + " (Python's sign rule)")
pow = _stub("pow", _EW.format(name="pow", sym="x ** y"))
negative = _stub("negative", "negative(x) -> ``-x``.")
equal = _stub("equal", _EW.format(name="equal", sym="x == y"))
not_equal = _stub("not_equal", _EW.format(name="not_equal", sym="x != y"))
less = _stub("less", _EW.format(name="less", sym="x < y"))
less_equal = _stub("less_equal", _EW.format(name="less_equal", sym="x <= y"))
greater = _stub("greater", _EW.format(name="greater", sym="x > y"))
greater_equal = _stub("greater_equal", _EW.format(name="greater_equal", sym="x >= y"))

_MATH_DOC = """{name}(x) -> elementwise {name} of a float tile (float16 and bfloat16 computed in
float32 and rounded once; integer tiles are converted to float32). On a scalar it is the
scalar function."""
exp = _stub("exp", _MATH_DOC.format(name="exp"))
exp2 = _stub("exp2", _MATH_DOC.format(name="exp2"))
log = _stub("log", _MATH_DOC.format(name="log"))
log2 = _stub("log2", _MATH_DOC.format(name="log2"))
sqrt = _stub("sqrt", _MATH_DOC.format(name="sqrt"))
rsqrt = _stub("rsqrt", _MATH_DOC.format(name="rsqrt") + " (``1 / sqrt(x)``)")
tanh = _stub("tanh", _MATH_DOC.format(name="tanh"))
sin = _stub("sin", _MATH_DOC.format(name="sin"))
cos = _stub("cos", _MATH_DOC.format(name="cos"))
tan = _stub("tan", _MATH_DOC.format(name="tan"))
sinh = _stub("sinh", _MATH_DOC.format(name="sinh"))
cosh = _stub("cosh", _MATH_DOC.format(name="cosh"))
floor = _stub("floor", _MATH_DOC.format(name="floor") + " (a float, as NumPy's)")
ceil = _stub("ceil", _MATH_DOC.format(name="ceil") + " (a float, as NumPy's)")
abs = _stub("abs", "abs(x) -> the elementwise absolute value (any numeric dtype).")
isnan = _stub("isnan", "isnan(x) -> a bool tile, true where ``x`` is NaN.")

# ---- reductions and scans -----------------------------------------------------------------------

_RED = """{name}(x, axis=None, *, keepdims=False) -> {what} over ``axis`` (an int, a tuple of
ints, or None for all axes); ``keepdims`` keeps the reduced axes as size 1. {extra}"""
sum = _stub("sum", _RED.format(name="sum", what="the sum", extra="float16/bfloat16 tiles "
                               "accumulate in float32; the order of additions is unspecified."))
max = _stub("max", _RED.format(name="max", what="the maximum", extra=""))
min = _stub("min", _RED.format(name="min", what="the minimum", extra=""))
prod = _stub("prod", _RED.format(name="prod", what="the product", extra=""))
argmax = _stub("argmax", """argmax(x, axis=None, *, keepdims=False) -> int32 index of the first
maximum along one ``axis`` (None: of the flattened tile).""")
argmin = _stub("argmin", """argmin(x, axis=None, *, keepdims=False) -> int32 index of the first
minimum along one ``axis`` (None: of the flattened tile).""")
cumsum = _stub("cumsum", """cumsum(x, axis=0, *, reverse=False) -> the inclusive prefix sum along
``axis`` (from the end with ``reverse``).""")
cumprod = _stub("cumprod", "cumprod(x, axis=0, *, reverse=False) -> the inclusive prefix product.")
reduce = _stub("reduce", """reduce(x, axis, func, identity, *, keepdims=False) -> ``x`` (a tile,
or a tuple of tiles broadcast to one shape) reduced along one ``axis`` with ``func``: a function
of two values (two tuples of values, flattened: ``func(*a, *b)``) returning the combined value
(a tuple for a tuple ``x``), such as ``lambda a, b: a + b`` or ``operator.add``. ``func`` must be
associative; ``identity`` is its identity element, a constant (a tuple of them).""")
scan = _stub("scan", """scan(x, axis, func, identity, *, reverse=False) -> the inclusive scan of
``x`` (a tile or a tuple of tiles) along ``axis`` with the combining function ``func`` (as for
``reduce``), from the end with ``reverse``: element ``i`` is ``func(result[i-1], x[i])``.""")

# ---- shapes -------------------------------------------------------------------------------------

reshape = _stub("reshape", """reshape(x, shape) -> the same elements in row-major order with
``shape`` (one axis may be -1). Also ``x.reshape(shape)``.""")
transpose = _stub("transpose", """transpose(x, axis0=None, axis1=None) -> ``x`` with two axes
swapped (the two of a 2-d tile by default). Also ``x.transpose()``.""")
permute = _stub("permute", """permute(x, axes) -> ``x`` with its axes reordered: axis ``d`` of the
result is axis ``axes[d]`` of ``x``. Also ``x.permute(axes)``.""")
expand_dims = _stub("expand_dims", """expand_dims(x, axis) -> ``x`` with a new axis of size 1 at
``axis`` (also ``x[:, None]``).""")
broadcast_to = _stub("broadcast_to", "broadcast_to(x, shape) -> ``x`` broadcast to ``shape`` "
                     "(NumPy's rules).")
extract = _stub("extract", """extract(x, index, shape) -> the subtile of ``shape`` at ``index``, a
cell of the grid ``shape`` cuts ``x`` into (cell ``i`` of axis ``d`` starts at element
``i * shape[d]``); ``shape`` divides ``x.shape``; ``shape=()`` gives one element as a 0-d tile.
Also ``x.extract(index, shape)``.""")
insert = _stub("insert", """insert(x, index, value) -> ``x`` with the subtile at cell ``index``
(of the grid ``value.shape`` cuts ``x`` into) replaced by ``value``. Also
``x.insert(index, value)``.""")
cat = _stub("cat", """cat(tiles, axis) -> the two tiles of ``tiles`` (one dtype and rank, equal
off ``axis``) joined along ``axis``; the result's axes must be powers of two.""")

# ---- matrix multiply ----------------------------------------------------------------------------

mma = _stub("mma", """mma(x, y, acc) -> ``x @ y + acc`` for 2-d tiles (M, K), (K, N), (M, N),
keeping ``acc``'s dtype. float16 (acc float16 or float32), bfloat16 and tfloat32 (acc float32)
run on tensor cores (``mma.sync``); float32, float64 and int8 (acc int32) multiply with FMAs.""")
matmul = _stub("matmul", """matmul(x, y) -> ``x @ y`` of 2-d tiles (also the ``@`` operator);
the dtype is the inputs' common dtype, accumulated in float32 for float16/bfloat16 (on tensor
cores) and in float32 for tfloat32 (whose result is float32).""")

# ---- atomics and printing -----------------------------------------------------------------------

_ATOM = """{name}(array, indices, update, *, memory_order=MemoryOrder.ACQ_REL,
memory_scope=MemoryScope.DEVICE, check_bounds=True) -> a tile of the old values. ``indices``
is a tuple (one entry per axis) of integer tiles or scalars, broadcast together with
``update``; each element is one atomic {what} (in no particular order). Out-of-bounds indices
are skipped (their result is 0)."""
atomic_add = _stub("atomic_add", _ATOM.format(name="atomic_add", what="addition"))
atomic_max = _stub("atomic_max", _ATOM.format(name="atomic_max", what="maximum"))
atomic_min = _stub("atomic_min", _ATOM.format(name="atomic_min", what="minimum"))
atomic_and = _stub("atomic_and", _ATOM.format(name="atomic_and", what="bitwise and"))
atomic_or = _stub("atomic_or", _ATOM.format(name="atomic_or", what="bitwise or"))
atomic_xor = _stub("atomic_xor", _ATOM.format(name="atomic_xor", what="bitwise xor"))
atomic_xchg = _stub("atomic_xchg", _ATOM.format(name="atomic_xchg", what="exchange"))
atomic_cas = _stub("atomic_cas", """atomic_cas(array, indices, expected, desired, *,
memory_order=..., memory_scope=...) -> the old values; each element is replaced by ``desired``
where it equals ``expected``. Out-of-bounds indices are skipped (their result is
``expected``).""")
printf = _stub("printf", """printf(format, *args) -> None: C's printf, once per block (by its
first thread). ``args`` are scalars or tiles (a tile prints as a nested list of its elements,
each by the conversion); ``%d``/``%i``/``%u``/``%x``/``%o`` take integers, ``%f``/``%e``/``%g``
numbers.""")
print = _stub("print", """print(*args, sep=' ', end='\\n') -> None: Python's print, once per
block (by its first thread): strings, f-strings (``{t:.3f}``), numbers, tiles (nested lists),
tuples and dataclasses as Python prints them. The builtin print in a tile kernel is this.""")

# ---- programmatic dependent launch ------------------------------------------------------------

grid_dependency_control_wait = _stub("grid_dependency_control_wait", """\
grid_dependency_control_wait() -> None: wait until the grid this kernel depends on (the kernel
before it on its stream) has finished and its memory writes are visible. Only a launch with
``ct.launch(..., programmatic_dependent_launch=True)`` can start before that grid ends (on
Hopper and later: PTX ``griddepcontrol.wait``); in any other launch, on older GPUs and in the
simulator, whose launches run one after another, it returns at once. Code before it may
overlap the previous kernel: it must not read what that kernel writes.""")
grid_dependency_control_launch_dependents = _stub(
    "grid_dependency_control_launch_dependents", """\
grid_dependency_control_launch_dependents() -> None: let the kernel after this one on its
stream, when launched with ``programmatic_dependent_launch=True``, start before this one ends
(PTX ``griddepcontrol.launch_dependents``, Hopper and later); that kernel still sees this one's
writes only after its ``grid_dependency_control_wait()``. A hint: without it the dependent
starts as this grid ends; elsewhere it does nothing.""")

# ---- compile-time evaluation --------------------------------------------------------------------

static_eval = _stub("static_eval", """static_eval(expr) -> the value of the Python expression
``expr``, evaluated while the kernel compiles. Names read the kernel's compile-time values
(constants, dtypes, shapes, globals) as Python values; tiles, scalars and arrays are stand-ins
whose ``shape``/``dtype``/``ndim`` are known and whose arithmetic builds the kernel's code. A
tile function called inside is an error (``TileStaticEvalError``), as is an exception the
expression raises. The result is a compile-time value (or the runtime value it names).""")
static_assert = _stub("static_assert", """static_assert(cond, msg=None, /) -> None: a compile
error (``TileStaticAssertionError``, at this line) where ``cond``, evaluated as by
``static_eval``, is false. ``cond`` must be a compile-time bool; ``msg`` (any value, f-strings
included) is added to the error.""")
static_iter = _stub("static_iter", """static_iter(iterable): only as the iterable of a ``for``:
the iterable is evaluated at compile time (as by ``static_eval``; at most 1000 items) and the
loop is unrolled, its variables bound to each item as compile-time values (so ``tiles[i]``
indexes a tuple). ``break``, ``continue`` and ``return`` are not allowed in the body.""")

# cuTile names threadtile does not implement yet: using one in a kernel is a compile error
# that names it (rather than an AttributeError deep inside the frontend)
UNSUPPORTED = (
    "mma_scaled",
    "static_exception",
    "atan2",
)


def _unsupported(name: str):
    f = _stub(name, f"{name}: a cuTile operation threadtile does not support yet.")
    f._threadtile_intrinsic = "tile.unsupported"
    f._tile_unsupported = name
    return f


UNSUPPORTED_STUBS = {n: _unsupported(n) for n in UNSUPPORTED}

