"""More of cuTile's language in tile kernels, with its semantics and its errors.

Frozen dataclass values whose class defines a ``@property``, ``__post_init__``, ``__call__``,
``__getitem__`` or ``__setitem__`` (inlined with ``self``, found in the class or a base as
Python finds it); Enum members made in kernels (``Color(1)``, ``Status("ok")``) and compared
(``IntEnum`` members ordered; plain ``Enum`` ones refused). Numerics on every target against
NumPy (the ``target`` fixture), outputs poisoned first; every kernel compiles to sm_80 and sm_90
cubins through NVRTC; the refused forms raise cuTile's error types with its words.
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


# ---- cubins ------------------------------------------------------------------------------------


def _cases():
    i32 = np.zeros(16, np.int32)
    return {
        "dunders": (dunders, (i32, i32), {}),
        "writer": (writer, (i32, 4), {}),
        "enums": (enums, (i32,), {}),
    }


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", ["dunders", "writer", "enums"])
def test_compiles(arch, case):
    kernel, args, consts = _cases()[case]
    assert compile_cubin(kernel, *args, arch=arch, **consts)
