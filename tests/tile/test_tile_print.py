"""Printing in tile kernels, as cuTile prints (frontend/tile_print.py): ct.print and the builtin
print (sep, end), f-strings with tiles and scalars (specs, stored, nested, concatenated), tuples
and dataclasses by repr, ct.printf of whole tiles; the printed text checked against Python's own
formatting of the NumPy values; sm_80/sm_90 cubins; cuTile's errors."""

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import pytest

import threadtile
import threadtile.tile as ct
from threadtile.tile import TileSyntaxError, TileTypeError

ARCHS = ["sm_80", "sm_90"]


@pytest.fixture(autouse=True)
def _simulate():
    with threadtile.simulate():  # the output checked is the simulator's
        yield


def _lst(a, spec="") -> str:
    if a.ndim == 0:
        return format(a.item(), spec)
    return "[" + ", ".join(_lst(b, spec) for b in a) + "]"


@ct.kernel
def _print_tiles(x, T: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(x, index=(bid,), shape=(T,))
    ct.print(f"tile[{bid}]:{t:.3f}")
    print("raw:", t, sep="")
    msg = f"m[{bid}]={t + t:8.2f}"
    ct.print(msg)
    ct.print(f"<{msg}>", end="|\n")
    ct.printf("pf%%[%d]:%.1f\n", bid, t)
    r = t.reshape((2, T // 2))
    print(f"sum: {ct.sum(r, 1, keepdims=True):.1f}", ct.sum(r, None))


def test_print_tiles(capfd):
    x = np.arange(16, dtype=np.float32) / 4
    capfd.readouterr()
    ct.launch(None, (2,), _print_tiles, (x, 8))
    lines = capfd.readouterr().out.splitlines()
    want = []
    for b in range(2):
        t = x[8 * b:8 * b + 8].astype(np.float64)
        r = t.reshape(2, 4)
        m = f"m[{b}]={_lst(t + t, '8.2f')}"
        want += [f"tile[{b}]:{_lst(t, '.3f')}", f"raw:{_lst(t, '.6f')}", m, f"<{m}>|",
                 f"pf%[{b}]:{_lst(t, '.1f')}",
                 f"sum: {_lst(r.sum(1, keepdims=True), '.1f')} {r.sum():.6f}"]
    assert lines == want


@ct.kernel
def _print_ints(x, T: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(T,))
    ct.print(t, f"{t:>4}", f"{t:x}")
    ct.printf("%u|%d\n", t, ct.sum(t, None))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.uint64, np.bool_])
def test_print_integer_tiles(capfd, dtype):
    x = (np.arange(8) % 3 == 1) if dtype is np.bool_ else np.arange(8).astype(dtype) * 3
    capfd.readouterr()
    ct.launch(None, (1,), _print_ints, (x, 8))
    v = x.astype(np.int64)
    assert capfd.readouterr().out.splitlines() == [
        f"{_lst(v)} {_lst(v, '>4')} {_lst(v, 'x')}", f"{_lst(v)}|{v.sum()}"]


@dataclass(frozen=True)
class _Pt:
    x: Any
    y: Any = dataclasses.field(repr=False)
    name: Any = "p"


@dataclass(frozen=True)
class _Own:
    x: Any

    def __str__(self):
        return f"S<{self.x}>"

    def __repr__(self):
        return f"R<{self.x}>"


@dataclass(frozen=True, repr=False)
class _NoRepr:
    x: Any


class _Color(Enum):
    RED = 0


@ct.kernel
def _print_values(x, T: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(x, index=(0,), shape=(T,))
    ct.print(x.shape, f"{t.shape}", ((x.shape, "'%d'"), (bid,), ()))
    ct.print((f"a{bid}", f"'{bid}'", f"\"{bid}'"))
    ct.print(_Pt(t, t, "q"), (_Own(bid),), _Own(bid), _NoRepr(t))
    print(x.dtype, _Color.RED, repr(_Color.RED), f"{t.dtype}" + "!")


def test_print_compile_time_values(capfd):
    x = np.arange(4, dtype=np.int32)
    capfd.readouterr()
    ct.launch(None, (1,), _print_values, (x, 4))
    assert capfd.readouterr().out.splitlines() == [
        "(4,) (4,) (((4,), \"'%d'\"), (0,), ())",
        str(("a0", "'0'", "\"0'")),
        "_Pt(x=[0, 1, 2, 3], name='q') (R<0>,) S<0> <_NoRepr object>",
        f"int32 _Color.RED {_Color.RED!r} int32!"]


@pytest.mark.parametrize("arch", ARCHS)
def test_print_compiles(arch):
    x = np.arange(16, dtype=np.float32)
    assert _print_tiles.compile(x, 8, arch=arch).cubin
    assert _print_ints.compile(np.arange(8, dtype=np.uint64), 8, arch=arch).cubin
    assert _print_values.compile(np.arange(4, dtype=np.int32), 4, arch=arch).cubin
    big = np.arange(128, dtype=np.float16)  # 128 numbers: printf calls of 32 arguments
    src = _print_tiles.compile(big, 64, arch=arch)
    assert src.cubin and "print_stage" in src.source


def _launch(kernel, *args):
    ct.launch(None, (1,), kernel, args)


def test_print_errors():
    @ct.kernel
    def conversion(x):
        t = ct.load(x, index=(0,), shape=(4,))
        ct.print(f"{t!r}")

    @ct.kernel
    def dynamic_spec(x):
        w = 5
        t = ct.load(x, index=(0,), shape=(4,))
        ct.print(f"{t:{w}}")

    @ct.kernel
    def tuple_spec(x):
        ct.print(f"{x.shape:10}")

    @dataclass(frozen=True)
    class Fmt:
        x: Any

        def __format__(self, spec):
            return "!"

    @ct.kernel
    def custom_format(x):
        f"{Fmt(1)}"  # noqa: B021  (an f-string statement, as cuTile's test writes it)

    @ct.kernel
    def bad_printf(x):
        ct.printf("%d %d\n", ct.bid(0))

    x = np.zeros(4, np.float32)
    with pytest.raises(TileSyntaxError, match=r"\(!r, !s, !a\) are not supported"):
        _launch(conversion, x)
    with pytest.raises(TileSyntaxError, match="format spec must be a literal string"):
        _launch(dynamic_spec, x)
    with pytest.raises(TileTypeError, match="cannot apply format spec to a value of type tuple"):
        _launch(tuple_spec, x)
    with pytest.raises(TileTypeError, match=r"Formatting dataclass values with custom "
                                            r"__format__\(\) is not supported"):
        _launch(custom_format, x)
    with pytest.raises(TileTypeError, match="the format has 2 conversions for 1 arguments"):
        _launch(bad_printf, x)
