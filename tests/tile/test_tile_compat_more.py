"""More of cuTile's language in tile kernels, with its semantics and its errors.

Frozen dataclass values whose class defines a ``@property``, ``__post_init__``, ``__call__``,
``__getitem__`` or ``__setitem__`` (inlined with ``self``, found in the class or a base as
Python finds it); Enum members made in kernels (``Color(1)``, ``Status("ok")``) and compared
(``IntEnum`` members ordered; plain ``Enum`` ones refused); ``ct.ensure_constant``,
``ct.assert_`` (the simulator's ``AssertionError`` at the line; ``__trap()`` on the GPU),
``divmod``/``ct.divmod`` of int tiles and numbers, ``ct.bitwise_*``; scalar constants and
conversions of the narrow floats (rounded to their format; a negative float8_e8m0fnu refused);
loosely typed ``float()``, a NumPy scalar's dtype, and cuTile's errors for ``range`` (a negative
constant step, an array, a float), tile item assignment, too big an integer literal and a name
bound to different enum members on two paths.
Numerics on every target against NumPy (the ``target`` fixture), outputs poisoned first; every
kernel compiles to sm_80 and sm_90 cubins through NVRTC; the refused forms raise
cuTile's error types with its words.
"""

import enum
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile as tt
import threadtile.tile as ct
from threadtile.tile import TileTypeError, TileValueError

# ---- dataclasses -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Affine:
    """``scale * v + shift`` as a callable value; ``slope`` a property."""

    scale: int
    shift: int

    @property
    def slope(self):
        return self.scale * 10

    def __call__(self, v):
        return self.scale * v + self.shift


@dataclass(frozen=True)
class Shifted(Affine):
    """Inherits ``__call__`` and the property; adds ``__getitem__``."""

    extra: int

    def __getitem__(self, i):
        return self(i) + self.extra


@dataclass(frozen=True)
class Writer:
    """``w[i] = v`` stores ``v * 10`` at ``i``; creating one stores its ``mark`` at 0."""

    out: ct.Array
    mark: int

    def __post_init__(self):
        ct.scatter(self.out, 0, self.mark)

    def __setitem__(self, i, v):
        ct.scatter(self.out, i, v * 10)


@dataclass(frozen=True)
class NoCall:
    x: int


@ct.kernel
def dunders(x, y):
    """Each block writes its own four elements of ``x``: a property, ``__call__`` on a number
    and on a tile, an inherited ``__call__`` through ``__getitem__``."""
    b = ct.bid(0)
    a = Affine(b + 2, 3)
    s = Shifted(2, b, 100)
    t = ct.load(y, index=(0,), shape=(4,))
    ct.scatter(x, b * 4 + 0, a.slope)
    ct.scatter(x, b * 4 + 1, a(5))
    ct.scatter(x, b * 4 + 2, s[7])
    ct.scatter(x, b * 4 + 3, s.slope + ct.sum(a(t)))


@ct.kernel
def writer(y, v: int):
    w = Writer(y, 7)
    w[1] = v
    w[2] = v + 1


def test_dataclass_dunders(target):
    grid = 3
    x = target.to_device(poison((grid * 4,), np.int32))
    y = np.arange(4, dtype=np.int32)
    target.launch_tile(dunders, grid, x, target.to_device(y))
    want = []
    for b in range(grid):
        want += [(b + 2) * 10, (b + 2) * 5 + 3, 2 * 7 + b + 100,
                 20 + int(((b + 2) * y + 3).sum())]
    np.testing.assert_array_equal(target.to_host(x), want)


def test_dataclass_post_init_and_setitem(target):
    y = poison((3,), np.int32)
    d = target.to_device(y)
    target.launch_tile(writer, 1, d, 4)
    got = target.to_host(d)
    np.testing.assert_array_equal(got, [7, 40, 50])


def _raises(kernel, cls, words, *args):
    with pytest.raises(cls, match=words), tt.simulate():
        kernel[1](*args)


def test_dataclass_without_call_is_not_callable():
    @ct.kernel
    def k(x):
        d = NoCall(3)
        ct.scatter(x, 0, d(7))

    _raises(k, TileTypeError, "Cannot call an object of type NoCall", np.zeros(1, np.int32))


def test_dataclass_without_getitem_is_not_subscriptable():
    @ct.kernel
    def k(x):
        d = NoCall(3)
        ct.scatter(x, 0, d[0])

    _raises(k, TileTypeError, "'NoCall' object is not subscriptable", np.zeros(1, np.int32))


def test_dataclass_without_setitem_refuses_item_assignment():
    @ct.kernel
    def k(x):
        d = NoCall(3)
        d[0] = 1

    _raises(k, TileTypeError, "'NoCall' object does not support item assignment",
            np.zeros(1, np.int32))


def test_nonfrozen_dataclass_is_refused():
    @dataclass
    class Thawed:
        foo: int

    @ct.kernel
    def k(x):
        Thawed(2)

    _raises(k, TileTypeError, "Only frozen dataclasses are supported", np.zeros(1, np.int32))


# ---- enums -------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = 0
    GREEN = 1


class Status(enum.Enum):
    OK = "ok"
    BAD = "bad"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 5


@ct.kernel
def enums(x):
    i = 1
    c = Color(i)
    s = Status("ok")
    ct.scatter(x, 0, 10 if c == Color.GREEN else 20)
    ct.scatter(x, 1, 1 if s != Status.OK else 2)
    ct.scatter(x, 2, 3 if Level.LOW < Level.HIGH else 4)
    ct.scatter(x, 3, Level(5) + ct.bid(0))


def test_enum_members(target):
    x = poison((4,), np.int32)
    d = target.to_device(x)
    target.launch_tile(enums, 1, d)
    got = target.to_host(d)
    np.testing.assert_array_equal(got, [10, 2, 3, 5])


def test_enum_from_runtime_value_is_refused():
    @ct.kernel
    def k(x):
        c = Color(ct.bid(0))
        ct.scatter(x, 0, 1 if c == Color.RED else 0)

    _raises(k, TileTypeError, "Enum constructor argument must be a constant",
            np.zeros(1, np.int32))


@pytest.mark.parametrize("value", ["red", 7])
def test_enum_from_invalid_value(value):
    @ct.kernel
    def k(x):
        Color(value)
        ct.scatter(x, 0, 1)

    _raises(k, TileValueError, f"{value!r} is not a valid Color", np.zeros(1, np.int32))


def test_plain_enum_has_no_order():
    @ct.kernel
    def k(x):
        ct.scatter(x, 0, 1 if Color.RED < Color.GREEN else 0)

    _raises(k, TileTypeError, "'<' is not supported between instances of 'Color' and 'Color'",
            np.zeros(1, np.int32))


# ---- ensure_constant, assert_, divmod, bitwise_* -----------------------------------------------


@ct.kernel
def divmods(x, y, q, r, qs, c: ct.Constant[int]):
    """``divmod`` (the builtin and ``ct.divmod``) of int tiles, of a tile and a number, and of
    numbers; ``ensure_constant`` of a Constant's arithmetic; the bitwise functions."""
    tx = ct.load(x, index=(0,), shape=(16,))
    ty = ct.load(y, index=(0,), shape=(16,))
    tq, tr = divmod(tx, ty)
    tq2, tr2 = ct.divmod(tx, 3)
    ct.store(q, index=(0,), tile=tq * 1000 + tq2)
    ct.store(r, index=(0,), tile=tr * 1000 + tr2)
    n = ct.ensure_constant(c + 1)
    a, b = divmod(n, -3)
    m, k = ct.divmod(ct.bid(0) - 7, 4)
    bits = ct.bitwise_xor(ct.bitwise_and(n, 12), ct.bitwise_or(1, ct.bitwise_lshift(1, 4)))
    ct.scatter(qs, 0, a)
    ct.scatter(qs, 1, b)
    ct.scatter(qs, 2, m)
    ct.scatter(qs, 3, k)
    ct.scatter(qs, 4, ct.bitwise_rshift(bits, 1) + ct.bitwise_not(n))


@ct.kernel
def asserts(x, limit: int):
    """``assert_`` of a bool tile, of a number, of NaN checks (through a helper)."""
    tx = ct.load(x, index=(0,), shape=(16,))
    ct.assert_(tx < limit, "too big")
    ct.assert_(ct.bid(0) == 0)
    nan = ct.full((2,), float("nan"), dtype=ct.float32)
    ct.assert_(ct.bitwise_not(nan == nan))
    ct.assert_(ct.isnan(ct.float32(float("nan"))), message="scalar")


def test_divmod_ensure_constant_bitwise(target):
    rng = np.random.default_rng(7)
    x = rng.integers(-100, 100, 16).astype(np.int32)
    y = rng.integers(1, 20, 16).astype(np.int32) * rng.choice([-1, 1], 16).astype(np.int32)
    q, r, qs = (target.to_device(poison((n,), np.int32)) for n in (16, 16, 5))
    target.launch_tile(divmods, 1, target.to_device(x), target.to_device(y), q, r, qs, 9)
    np.testing.assert_array_equal(target.to_host(q), (x // y) * 1000 + x // 3)
    np.testing.assert_array_equal(target.to_host(r), (x % y) * 1000 + x % 3)
    bits = (10 & 12) ^ (1 | (1 << 4))
    np.testing.assert_array_equal(target.to_host(qs), [10 // -3, 10 % -3, -7 // 4, -7 % 4,
                                                      (bits >> 1) + ~10])


def test_assert_passes(target):
    x = np.arange(16, dtype=np.int32)
    target.launch_tile(asserts, 1, target.to_device(x), 16)


def test_assert_fails_in_the_simulator_at_its_line():
    x = np.arange(16, dtype=np.int32)
    with pytest.raises(AssertionError, match=r"In function 'asserts', file .*"
                       r"test_tile_compat_more.py, line \d+, .*: too big"), tt.simulate():
        asserts[1](x, 15)


def test_assert_traps_on_the_gpu():
    src = asserts.cuda_source(np.zeros(16, np.int32), 16)
    assert src.count("__trap();") == 3  # the scalar NaN check is a constant: folded away
    assert "exit;" not in src


def test_divmod_of_floats_is_refused():
    @ct.kernel
    def k(x):
        t = ct.load(x, index=(0,), shape=(16,))
        divmod(t, t)

    _raises(k, TileTypeError, r"divmod\(\) is not implemented for floating point values",
            np.zeros(16, np.float32))


def test_ensure_constant_of_a_runtime_value_is_refused():
    @ct.kernel
    def k(x):
        ct.ensure_constant(ct.bid(0))

    _raises(k, ct.TileStaticAssertionError, "Argument of ensure_constant\\(\\) is not a "
            "compile-time constant", np.zeros(1, np.int32))


# ---- scalar constants of the narrow floats ------------------------------------------------------


@ct.kernel
def narrow_scalars(x, v: float):
    """A constant of a 16-bit or narrower float holds the value that format represents (rounded
    to nearest even; float8_e8m0fnu rounds up, as CUDA's conversion does; the 8-bit formats
    saturate); so does a runtime number converted to one."""
    ct.scatter(x, 0, ct.float16(0.2))
    ct.scatter(x, 1, ct.float64(ct.float8_e8m0fnu(0.2)))
    ct.scatter(x, 2, ct.float64(ct.bfloat16(0.2)))
    ct.scatter(x, 3, ct.float64(ct.float8_e4m3fn(0.2)))
    ct.scatter(x, 4, ct.float64(ct.float8_e5m2(1000.0)))
    ct.scatter(x, 5, ct.float64(ct.float4_e2m1fn(2.6)))
    ct.scatter(x, 6, ct.float64(ct.float8_e4m3fn(v)))
    ct.scatter(x, 7, ct.float64(ct.float8_e8m0fnu(v)))
    ct.scatter(x, 8, ct.float64(ct.float16(v)))


def test_narrow_float_scalars(target):
    x = target.to_device(poison((9,), np.float64))
    target.launch_tile(narrow_scalars, 1, x, 0.3)
    want = [np.float16(0.2), 0.25, 0.2001953125, 0.203125, 1024.0, 3.0, 0.3125, 0.5,
            np.float16(0.3)]
    np.testing.assert_array_equal(target.to_host(x), np.array(want, np.float64))


def test_negative_unsigned_float_constant_is_refused():
    @ct.kernel
    def k(x):
        ct.float8_e8m0fnu(-0.2)

    _raises(k, TileValueError, "Negative values cannot be represented in an unsigned float "
            "format", np.zeros(1, np.int32))


# ---- loops, loose typing, type inference ---------------------------------------------------------

SMALL = np.int16(4)


@ct.kernel
def loose_and_typed(out, y):
    """``float()`` of a literal or of a typed constant is loosely typed (stores into float16);
    a NumPy scalar keeps its dtype."""
    c1 = float("2.0")
    ct.scatter(out, 0, c1)
    c2 = float(ct.float32(5.0))
    ct.scatter(out, 1, c2)
    small_dtype = SMALL.dtype
    ct.static_assert(small_dtype == ct.int16)
    ct.scatter(y, 0, SMALL)


def test_loose_float_and_numpy_scalar(target):
    out = target.to_device(poison((2,), np.float16))
    y = target.to_device(poison((1,), np.int16))
    target.launch_tile(loose_and_typed, 1, out, y)
    np.testing.assert_array_equal(target.to_host(out), [2.0, 5.0])
    np.testing.assert_array_equal(target.to_host(y), [4])


@ct.kernel
def bumped_constant(n: ct.Constant[int], x):
    t = n
    for _ in range(2):  # t becomes a runtime value: the first of int32, int64, uint64 holding n
        t += 1
    ct.scatter(x, (), t)


@pytest.mark.parametrize("n", [5, 2**31, 2**63])
def test_a_constant_in_a_loop_takes_its_type(target, n):
    """cuTile's test_typeof_constant_int_arg: int32, int64 and past 2^63 uint64; a store into
    an array it does not fit is an implicit-cast error (uint64 into int64 too)."""
    fits = {5: (np.int32, np.int64), 2**31: (np.int64,), 2**63: (np.uint64,)}[n]
    for dt in (np.int16, np.int32, np.int64, np.uint64):
        if dt in fits:
            x = target.to_device(np.zeros((), dt))
            target.launch_tile(bumped_constant, 1, n, x)
            assert int(target.to_host(x)) == n + 2
        else:
            _raises(bumped_constant, TileTypeError, "cannot implicitly cast", n,
                    np.zeros((), dt))


def test_range_errors():
    @ct.kernel
    def negative_step(out, start: int, stop: int):
        for i in range(start, stop, -2):
            ct.scatter(out, 0, i)

    @ct.kernel
    def copy(stop, out):
        for i in range(stop):
            ct.scatter(out, i, i)

    x = np.zeros(4, np.int32)
    _raises(negative_step, TileTypeError, "Step must be positive, got -2", x, 1, 11)
    _raises(copy, TileTypeError, "Expected a scalar, got array", x, x)
    _raises(copy, TileTypeError, "Expected a signed integer, got float64", 1.5, x)


def test_type_errors():
    @ct.kernel
    def tile_setitem():
        t = ct.ones((8,), dtype=ct.int32)
        t[0] = 7

    @ct.kernel
    def too_big(x):
        t = 18446744073709551616
        ct.scatter(x, 0, t)

    @ct.kernel
    def enum_in_branch(x):
        if ct.bid(0) == 0:
            val = ct.MemoryOrder.RELAXED
        else:
            val = ct.MemoryOrder.WEAK
        ct.scatter(x, 0, 1 if val == ct.MemoryOrder.WEAK else 0)

    x = np.zeros(1, np.uint64)
    _raises(tile_setitem, TileTypeError, "Tiles are immutable: item assignment is not "
            "supported")
    _raises(too_big, TileValueError, "is out of range of any supported integer type", x)
    _raises(enum_in_branch, TileTypeError, r"Type of `val` depends on path taken: <enum "
            r"constant MemoryOrder\.WEAK> .* vs\. <enum constant MemoryOrder\.RELAXED>", x)


# ---- cubins ------------------------------------------------------------------------------------


def _cases():
    i32 = np.zeros(16, np.int32)
    return {
        "dunders": (dunders, (i32, i32), {}),
        "writer": (writer, (i32, 4), {}),
        "enums": (enums, (i32,), {}),
        "divmods": (divmods, (i32, i32, i32, i32, i32), {"c": 9}),
        "asserts": (asserts, (i32, 16), {}),
        "narrow": (narrow_scalars, (np.zeros(9), 0.3), {}),
        "loose": (loose_and_typed, (np.zeros(2, np.float16), np.zeros(1, np.int16)), {}),
    }


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", ["dunders", "writer", "enums", "divmods", "asserts",
                                  "narrow", "loose"])
def test_compiles(arch, case):
    kernel, args, consts = _cases()[case]
    assert compile_cubin(kernel, *args, arch=arch, **consts)
