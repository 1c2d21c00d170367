"""cuTile's parameter annotations, compile-time evaluation and tuning, as cuTile programs use
them: ``ct.ScalarInt64``/``ct.IndexedWithInt64``/``ct.ArrayAnnotation``, ``ct.static_eval``/
``static_assert``/``static_iter``, ``ct.tune.exhaustive_search``, ``kernel.replace_hints``,
``ct.compiler_timeout``."""

import dataclasses
import math
import operator
import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated, Any

import numpy as np
import pytest
from conftest import HAVE_GPU, gpu_target

import threadtile
import threadtile.tile as ct
from threadtile import errors
from threadtile.errors import KernelCompileError

ARCHS = ["sm_80", "sm_90"]


# ---- ScalarInt64, IndexedWithInt64, ct.Array ---------------------------------------------------

@ct.kernel
def _add_large(x, out, n: ct.ScalarInt64):
    t = ct.load(x, index=(ct.bid(0),), shape=(16,))
    ct.store(out, index=(ct.bid(0),), tile=t + n)  # int32 tile + int64 scalar: int64


@ct.kernel
def _add_loose(x, out, n):
    t = ct.load(x, index=(ct.bid(0),), shape=(16,))
    ct.store(out, index=(ct.bid(0),), tile=t + n)  # an unannotated int adopts the tile's int32


@pytest.mark.parametrize("n", [2**31, 2**40, 2**63 - 100])
def test_scalar_int64_keeps_64_bits(target, n):
    x = np.arange(32, dtype=np.int32)
    out = target.to_device(np.zeros(32, np.int64))
    target.launch_tile(_add_large, 2, target.to_device(x), out, n)
    np.testing.assert_array_equal(target.to_host(out), x.astype(np.int64) + n)


def test_scalar_int64_is_strictly_typed():
    x, out = np.zeros(16, np.int32), np.zeros(16, np.int64)
    assert "n, op='add'):tile<int64, (16)>" in _add_large.ir(x, out, 5)
    assert "int32(n), op='add'):tile<int32, (16)>" in _add_loose.ir(x, out, 5)
    assert "int64_t n" in _add_large.cuda_source(x, out, 5)


def test_scalar_int64_takes_numpy_integers(target):
    x = np.arange(16, dtype=np.int32)
    out = target.to_device(np.zeros(16, np.int64))
    target.launch_tile(_add_large, 1, target.to_device(x), out, np.int16(-7))
    np.testing.assert_array_equal(target.to_host(out), x - 7)


def test_scalar_int64_refuses_a_float():
    x, out = np.zeros(16, np.int32), np.zeros(16, np.int64)
    with threadtile.simulate(), pytest.raises(TypeError, match="ScalarInt64 can only be applied"):
        _add_large[1](x, out, 2.5)


@ct.kernel
def _inc_big(x: ct.IndexedWithInt64, y: ct.IndexedWithInt64, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    tx = ct.load(x, index=(bid, 0), shape=(TILE, 1))
    ct.store(y, index=(bid, 0), tile=tx + 1)


def test_indexed_with_int64(target):
    x = np.random.default_rng(0).integers(-100, 100, (300, 1)).astype(np.int8)
    y = target.to_device(np.zeros_like(x))
    target.launch_tile(_inc_big, math.ceil(300 / 64), target.to_device(x), y, 64)
    np.testing.assert_array_equal(target.to_host(y), x + 1)


@pytest.mark.parametrize("arch", ARCHS)
def test_annotated_kernels_compile(arch):
    x, out = np.zeros(16, np.int32), np.zeros(16, np.int64)
    assert _add_large.compile(x, out, 2**40, arch=arch).cubin
    big = np.zeros((64, 1), np.int8)
    assert _inc_big.compile(big, big, 64, arch=arch).cubin


def test_indexed_with_int64_must_be_an_array():
    @ct.kernel
    def k(x, n: ct.IndexedWithInt64):
        pass

    with threadtile.simulate(), pytest.raises(
            TypeError, match="IndexedWithInt64 can only be applied to an array"):
        k[1](np.zeros(4, np.float32), 3)


def test_annotations_inside_tuples(target):
    @ct.kernel
    def k(pair: tuple[ct.IndexedWithInt64, ct.Array], scalars: tuple[ct.ScalarInt64, int],
          out):
        a = ct.load(pair[0], (0,), (16,))
        b = ct.load(pair[1], (0,), (16,))
        ct.store(out, (0,), a + b + scalars[0] - scalars[1])

    a = np.arange(16, dtype=np.int64)
    b = np.full(16, 2, np.int64)
    out = target.to_device(np.zeros(16, np.int64))
    target.launch_tile(k, 1, (target.to_device(a), target.to_device(b)), (2**33 + 7, 5), out)
    np.testing.assert_array_equal(target.to_host(out), a + b + 2**33 + 2)


def test_constant_cannot_be_scalar_int64():
    @ct.kernel
    def k(out, addends: ct.Constant[tuple[ct.ScalarInt64, int]]):
        pass

    with threadtile.simulate(), pytest.raises(
            TypeError, match=re.escape("Constant annotation cannot be combined with "
                                       "ScalarAnnotation/ScalarInt64")):
        k[1](np.zeros(4, np.int64), (1, 2))


def test_array_annotation_validation():
    with pytest.raises(TypeError, match="must be int"):
        ct.ArrayAnnotation(static_shape_dims=(False,))
    with pytest.raises(TypeError, match="must be a tuple"):
        ct.ArrayAnnotation(static_stride_dims=[0])
    with pytest.raises(ValueError, match="int32 or int64"):
        ct.ArrayAnnotation(index_dtype=ct.int16)
    with pytest.raises(ValueError, match="int32 or int64"):
        ct.ScalarAnnotation(dtype=ct.float32)
    assert ct.ListAnnotation(element=ct.IndexedWithInt64).element.index_dtype == ct.int64
    with pytest.raises(TypeError, match="ArrayAnnotation"):
        ct.ListAnnotation(element=ct.ScalarInt64)
    with pytest.raises(TypeError, match="annotation"):
        ct.Array()


def test_static_dims_out_of_range():
    @ct.kernel
    def bad(x: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(5,))], out):
        pass

    @ct.kernel
    def dup(x: Annotated[ct.Array, ct.ArrayAnnotation(static_stride_dims=(0, -2))], out):
        pass

    x = np.zeros((4, 8), np.float32)
    with threadtile.simulate(), pytest.raises(ValueError, match="static_shape_dims contains "
                                                                "axis 5"):
        bad[1](x, x)
    with threadtile.simulate(), pytest.raises(ValueError, match="duplicate axis"):
        dup[1](x, x)


@ct.kernel
def _pitched(x: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(1,),
                                                       static_stride_dims=(0, -1))], out):
    pitch = ct.static_eval(x.strides[0])
    ct.static_assert(x.strides[1] == 1 and x.shape[1] == 8, "a row of 8, unit stride")
    t = ct.load(x, (0, 0), (4, 8))
    ct.store(out, (0, 0), t + pitch)


def test_static_dims_are_constants(target):
    buf = np.arange(40, dtype=np.float32).reshape(4, 10)
    x = buf[:, :8]  # strides (10, 1)
    out = target.to_device(np.zeros((4, 8), np.float32))
    target.launch_tile(_pitched, 1, target.to_device(x), out)
    np.testing.assert_array_equal(target.to_host(out), x + 10)
    # a pitch of 12 is another specialization, whose constant is 12
    y = np.arange(48, dtype=np.float32).reshape(4, 12)[:, :8]
    target.launch_tile(_pitched, 1, target.to_device(y), out)
    np.testing.assert_array_equal(target.to_host(out), y + 12)
    src = _pitched.cuda_source(x, np.zeros((4, 8), np.float32))
    assert re.search(r"pitch = 10(LL)?;", src)
    with pytest.raises(ct.TileStaticAssertionError, match="a row of 8, unit stride"):
        _pitched.cuda_source(buf[:, ::2], np.zeros((4, 5), np.float32))


@ct.kernel
def _attrs(X, out):
    ct.static_assert(X.ndim == 3)
    shape, strides = X.shape, X.strides
    ct.static_assert(len(shape) == X.ndim and len(strides) == 3)
    for i in ct.static_iter(range(3)):
        ct.store(out, (i,), shape[i])
        ct.store(out, (i + 3,), strides[i])


def test_array_shape_and_strides_in_elements(target):
    base = np.zeros((4, 3, 2), np.float32)
    x = base.transpose(2, 0, 1)  # shape (2, 4, 3), strides (1, 6, 2) in elements
    out = target.to_device(np.zeros(6, np.int64))
    target.launch_tile(_attrs, 1, target.to_device(x), out)
    got = target.to_host(out)
    assert list(got[:3]) == [2, 4, 3]
    assert list(got[3:]) == [s // 4 for s in x.strides]


# ---- lists of arrays -------------------------------------------------------------------------

ListOfBig = Annotated[list, ct.ListAnnotation(element=ct.IndexedWithInt64)]


@ct.kernel
def _add_arrays(arrays: ListOfBig, out):
    res = ct.zeros((16, 16), dtype=out.dtype)
    for i in range(len(arrays)):  # indexes the list: unrolled, one array per copy
        res += ct.load(arrays[i], (0, 0), (16, 16))
    ct.store(out, (0, 0), res + ct.load(arrays[0], (0, 0), (16, 16)))


def test_list_of_arrays(target, rng):
    arrays = [rng.integers(0, 100, (16, 16)).astype(np.int32) for _ in range(3)]
    out = target.to_device(np.zeros((16, 16), np.int32))
    with target.running():
        ct.launch(None, (1,), _add_arrays, ([target.to_device(a) for a in arrays], out))
    np.testing.assert_array_equal(target.to_host(out), sum(arrays) + arrays[0])


@pytest.mark.parametrize("arch", ARCHS)
def test_list_of_arrays_compiles(arch):
    a = np.zeros((16, 16), np.int32)
    assert _add_arrays.compile([a, a], a, arch=arch).cubin


ListOfPitched = Annotated[list, ct.ListAnnotation(
    element=ct.ArrayAnnotation(static_stride_dims=(0,), static_shape_dims=(1,)))]


@ct.kernel
def _add_pitched(arrays: ListOfPitched, out):
    a = arrays[0]
    ct.static_assert(a.strides[0] == 10 and arrays[1].shape[1] == 8)
    res = ct.zeros((4, 8), dtype=out.dtype)
    for i in range(len(arrays)):
        res += ct.load(arrays[i], (0, 0), (4, 8))
    ct.store(out, (0, 0), res)


def test_list_static_dims(target):
    def padded(pitch, v):
        return np.full((4, pitch), v, np.int32)[:, :8]

    out = target.to_device(np.zeros((4, 8), np.int32))
    target.launch_tile(_add_pitched, 1, [target.to_device(padded(10, v)) for v in (1, 2, 3)],
                       out)
    np.testing.assert_array_equal(target.to_host(out), np.full((4, 8), 6))
    with target.running(), pytest.raises(ValueError, match="vary in static stride at axis 0"):
        _add_pitched[1]([target.to_device(padded(10, 1)), target.to_device(padded(12, 1))],
                        out)
    with target.running(), pytest.raises(ct.TileStaticAssertionError):
        _add_pitched[1]([target.to_device(padded(12, 1)), target.to_device(padded(12, 1))],
                        out)


def test_list_annotation_needs_a_list():
    with threadtile.simulate(), pytest.raises(TypeError, match="ListAnnotation"):
        _add_arrays[1](np.zeros((16, 16), np.int32), np.zeros((16, 16), np.int32))


@ct.kernel
def _constant_tuple(a, out, shape: ct.Constant[tuple]):
    t = ct.load(a, (0,), (shape[0],))
    ct.store(out, (0,), t)


def test_constant_tuple_and_nested_list(target):
    a = np.arange(8, dtype=np.float32)
    out = target.to_device(np.zeros(8, np.float32))
    target.launch_tile(_constant_tuple, 1, target.to_device(a), out, (8,))
    np.testing.assert_array_equal(target.to_host(out), a)
    assert _constant_tuple.compile(a, a, (8,), arch="sm_80").cubin


# ---- dataclass arguments ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Inner:
    a: int
    b: float


@dataclass(frozen=True)
class _Outer:
    inner: Any
    arrays: Any
    out: Any


@ct.kernel
def _with_dataclasses(d, e):
    t = ct.load(d.arrays[0], (0,), (16,)) + ct.load(d.arrays[1], (0,), (16,))
    ct.store(d.out, (0,), t * d.inner.a + d.inner.b + e.a)


def test_dataclass_arguments(target, rng):
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    out = target.to_device(np.zeros(16, np.float32))
    d = _Outer(_Inner(3, 0.5), [target.to_device(x), target.to_device(y)], out)
    target.launch_tile(_with_dataclasses, 1, d, _Inner(100, 0.0))
    np.testing.assert_allclose(target.to_host(out), (x + y) * 3 + 100.5, rtol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_dataclass_arguments_compile(arch):
    a = np.zeros(16, np.float32)
    assert _with_dataclasses.compile(_Outer(_Inner(3, 0.5), [a, a], a), _Inner(1, 2.0),
                                     arch=arch).cubin


def test_dataclass_arguments_must_be_frozen():
    @dataclass
    class Thawed:
        a: int

    with threadtile.simulate(), pytest.raises(ct.TileTypeError, match="Only frozen dataclasses"):
        _with_dataclasses[1](Thawed(1), Thawed(2))


@dataclass(frozen=True)
class _FooBar:
    foo: int
    bar: int
    baz: Any = 5
    NUMBER = 123


@ct.kernel
def _make_dataclasses(x, n):
    fb = _FooBar(2, bar=7, baz=_FooBar(30, 40))
    fb2 = dataclasses.replace(fb, foo=ct.bid(0) + 10)
    fb3 = ct.static_eval(_FooBar(fb.bar, fb.foo))  # a round trip through static_eval
    for _ in range(n):
        fb = dataclasses.replace(fb, foo=fb.foo + 1)
    v = fb.foo + fb2.foo * 10 + fb.baz.bar * 100 + fb.baz.baz * 10000 + fb3.foo * 100000
    ct.store(x, (0,), ct.full((8,), v + fb.NUMBER * 1000000, dtype=ct.int64))


def test_dataclasses_in_kernels(target):
    x = target.to_device(np.zeros(8, np.int64))
    target.launch_tile(_make_dataclasses, 1, x, 3)
    assert target.to_host(x)[0] == 5 + 100 + 4000 + 50000 + 700000 + 123000000


@pytest.mark.parametrize("decl, call, msg", [
    ("@dataclass\nclass C:\n    a: int", "C(1)", "Only frozen dataclasses are supported"),
    ("@dataclass(frozen=True)\nclass C:\n    a: int\n    def __init__(self):\n        pass",
     "C()", "only supported for dataclasses with a default generated __init__() method"),
    ("@dataclass(frozen=True)\nclass C:\n    a: int\n    b: int = field(init=False)", "C(1)",
     "Dataclasses with init=False fields are not supported"),
    ("@dataclass(frozen=True)\nclass C:\n    a: int\n    b: int = field(default_factory=int)",
     "C(1)", "Dataclasses with default_factory fields are not supported"),
    ("@dataclass(frozen=True)\nclass B:\n    a: int\nclass C(B):\n    pass", "C(1)",
     "Non-dataclass subclasses of a dataclass are not supported"),
    ("@dataclass(frozen=True)\nclass C:\n    a: int",
     "dataclasses.replace(C(1), b=2)", "Dataclass 'C' has no such field 'b'"),
])
def test_dataclass_errors(decl, call, msg):
    ns = {"ct": ct, "dataclass": dataclass, "field": dataclasses.field,
          "dataclasses": dataclasses}
    exec(f"{decl}\ndef k(x):\n    {call}\n", ns)  # noqa: S102
    with pytest.raises(ct.TileTypeError, match=re.escape(msg)):
        ct.kernel(ns["k"]).cuda_source(np.zeros(4, np.float32))


# ---- static_assert ---------------------------------------------------------------------------

def factorial(n):
    r = 1
    for i in range(1, n + 1):
        r *= i
    return r


@ct.kernel
def _guarded(x, n: ct.Constant[int]):
    ct.static_assert(factorial(n) < 100, f"{n}! = {factorial(n)}, and x is {x}")
    ct.store(x, (0,), ct.full((1,), n, dtype=x.dtype))


def test_static_assert_passes(target):
    x = target.to_device(np.zeros(1, np.int32))
    target.launch_tile(_guarded, 1, x, 4)
    assert target.to_host(x)[0] == 4


def test_static_assert_fails_at_its_line():
    with threadtile.simulate(), pytest.raises(ct.TileStaticAssertionError) as e:
        _guarded[1](np.zeros(1, np.int32), 7)
    text = str(e.value)
    assert "Static assertion failed: 7! = 5040, and x is <array[int32, (?,)]>\n" in text
    assert "ct.static_assert(factorial(n) < 100" in text  # the kernel's line
    assert isinstance(e.value, KernelCompileError)


def test_static_assert_empty_message():
    @ct.kernel
    def k(x):
        ct.static_assert(False, "")

    with pytest.raises(ct.TileStaticAssertionError, match="Static assertion failed\n"):
        k.cuda_source(np.zeros(1, np.int32))


def test_static_assert_reads_local_constants():
    @ct.kernel
    def k(x, out):
        nd = x.ndim
        t = ct.load(x, (0, 0), (4, 8))
        shape = t.shape
        ct.static_assert(nd == 2 and shape == (4, 8) and t.dtype == ct.float32)
        ct.store(out, (0, 0), t)

    x = np.zeros((4, 8), np.float32)
    assert k.compile(x, x, arch="sm_90").cubin


@pytest.mark.parametrize("body, cls, msg", [
    ("ct.static_assert(n)", ct.TileTypeError, "condition must be a boolean"),
    ("ct.static_assert(m > 2)", ct.TileTypeError, "must be a compile-time constant"),
    ("ct.static_assert(ct.ones((4,), dtype=ct.int32).dtype == ct.int32)",
     ct.TileStaticEvalError, "ones() cannot be called inside static_assert()"),
    ("ct.static_assert(True, 'a', 1)", ct.TileSyntaxError, "expects one or two positional"),
    ("f = ct.static_assert\n    f(True)", ct.TileSyntaxError, "must be used directly"),
    ("ct.static_eval(ct.static_assert(True))", ct.TileStaticEvalError,
     "static_assert() cannot be used inside static_eval()"),
])
def test_static_assert_errors(body, cls, msg):
    ns = {"ct": ct}
    exec(f"def k(x, m, n: ct.Constant[int]):\n    {body}\n", ns)  # noqa: S102
    k = ct.kernel(ns["k"])
    with pytest.raises(cls, match=re.escape(msg)):
        k.cuda_source(np.zeros(4, np.float32), 3, n=42)


# ---- static_eval -------------------------------------------------------------------------------

_seen = []


@ct.kernel
def _evals(x, out, n: ct.Constant[int]):
    t = ct.load(x, (0, 0), (4, 8))
    shape = ct.static_eval(t.shape)
    dtype = ct.static_eval(t.dtype)
    total = ct.static_eval(sum(d * d for d in shape) + n)  # 16 + 64 + n
    ct.static_eval(_seen.append(repr(t)))
    lhs = ct.bid(0) + 15
    dyn = ct.static_eval(lhs * 2 - 30)  # runtime values: the kernel's own arithmetic
    pick = ct.static_eval(t if n > 0 else t * 0)
    ct.store(out, (0, 0), (pick + total + dyn).astype(dtype))


def test_static_eval(target):
    _seen.clear()
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = target.to_device(np.zeros((4, 8), np.float32))
    target.launch_tile(_evals, 1, target.to_device(x), out, 3)
    np.testing.assert_array_equal(target.to_host(out), x + 83)
    assert _seen == ["<tile[float32, (4, 8)]>"]  # once, though the frontend lowers twice


@pytest.mark.parametrize("func, want", [
    (operator.add, 19), (operator.floordiv, 3), (operator.mod, 3), (operator.lt, 0),
    (operator.xor, 11), (ct.minimum, 4), (ct.maximum, 15)])
def test_static_eval_pure_functions_of_runtime_values(target, func, want):
    @ct.kernel
    def k(y):
        lhs = ct.bid(0) + 15
        rhs = ct.bid(0) + 4
        res = ct.static_eval(func(lhs, rhs))  # the kernel's own arithmetic, at run time
        ct.store(y, (0,), ct.full((1,), res, dtype=ct.float64))

    y = target.to_device(np.zeros(1, np.float64))
    target.launch_tile(k, 1, y)
    assert target.to_host(y)[0] == want


@pytest.mark.parametrize("arch", ARCHS)
def test_static_eval_compiles(arch):
    x = np.zeros((4, 8), np.float32)
    assert _evals.compile(x, x, 3, arch=arch).cubin


@pytest.mark.parametrize("body, cls, msg", [
    ("ct.static_eval(1 // n)", ct.TileStaticEvalError,
     "Exception was raised inside static_eval() (ZeroDivisionError:"),
    ("ct.static_eval((y := x))", ct.TileSyntaxError,
     "attempted to modify a local variable 'y'"),
    ("ct.static_eval(3, 5)", ct.TileSyntaxError, "expects a single expression"),
    ("ct.static_eval(ct.static_eval(2))", ct.TileStaticEvalError,
     "static_eval() cannot be used inside static_eval()."),
    ("ct.static_eval(ct.full((4,), 1, ct.int32))", ct.TileStaticEvalError,
     "full() cannot be called inside static_eval()"),
    ("g = ct.static_eval\n    g(1)", ct.TileSyntaxError, "static_eval() must be used directly"),
    ("v = ct.static_eval([1, 2])", ct.TileStaticEvalError,
     "Cannot create constant from value of type list"),
    ("v = ct.static_eval(int(m) + 1)", ct.TileStaticEvalError,
     "no concrete value and thus cannot be converted to an integer"),
])
def test_static_eval_errors(body, cls, msg):
    ns = {"ct": ct}
    exec(f"def k(x, m, n: ct.Constant[int]):\n    {body}\n", ns)  # noqa: S102
    k = ct.kernel(ns["k"])
    with pytest.raises(cls, match=re.escape(msg)):
        k.cuda_source(np.zeros(4, np.float32), 3, n=0)


# ---- static_iter -------------------------------------------------------------------------------

@ct.kernel
def _weighted(x, y):
    a = ct.load(x, (0,), (16,))
    b = ct.load(x, (1,), (16,))
    c = ct.load(x, (2,), (16,))
    tiles = a, b, c
    s = ct.zeros((16,), dtype=x.dtype)
    for i, x in ct.static_iter(enumerate(tiles, 1)):  # x shadows the parameter, as in Python
        s += i * x
    for i in ct.static_iter(range(len(tiles))):
        s += (i + 1) * tiles[i]  # i is a compile-time int: it indexes the tuple
    for w, dt in ct.static_iter(((2, ct.int32), (3, ct.int64))):
        s += (w * a).astype(dt).astype(ct.int32)
    ct.store(y, (0,), s)


def test_static_iter(target, rng):
    x = rng.integers(0, 100, 48).astype(np.int32)
    y = target.to_device(np.zeros(16, np.int32))
    target.launch_tile(_weighted, 1, target.to_device(x), y)
    ref = 2 * (x[:16] + 2 * x[16:32] + 3 * x[32:]) + 5 * x[:16]
    np.testing.assert_array_equal(target.to_host(y), ref)


@pytest.mark.parametrize("arch", ARCHS)
def test_static_iter_compiles(arch):
    x = np.zeros(48, np.int32)
    assert _weighted.compile(x, x[:16], arch=arch).cubin


@ct.kernel
def _iter_with_loops(x, y):
    for col in ct.static_iter(range(3)):
        s = ct.zeros((16,), dtype=x.dtype)
        row = 0
        while row < 4:
            t = ct.load(x, (row, col), (1, 16)).reshape((16,))
            s += t
            if ct.sum(t) == 0:
                break
            row += 1
        ct.store(y, (col,), s)


def test_static_iter_around_a_loop(target):
    x = np.arange(192, dtype=np.int32).reshape(4, 48)
    y = target.to_device(np.zeros(48, np.int32))
    target.launch_tile(_iter_with_loops, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), x.sum(axis=0))


@pytest.mark.parametrize("body, cls, msg", [
    ("for i in ct.static_iter(range(3)):\n        if i == 1:\n            continue",
     ct.TileSyntaxError, "Continue in a for loop with static_iter() is not supported"),
    ("for i in ct.static_iter(range(3)):\n        break", ct.TileSyntaxError,
     "Break in a for loop with static_iter() is not supported"),
    ("for i in ct.static_iter(range(3)):\n        return", ct.TileSyntaxError,
     "Returning from a for loop is not supported"),
    ("for i in ct.static_iter(range(10**6)):\n        pass", ct.TileStaticEvalError,
     "Maximum number of iterations (1000) has been reached"),
    ("for i in ct.static_iter(42):\n        pass", ct.TileTypeError,
     "Invalid static_iter() iterable: 'int' object is not iterable"),
    ("for i in ct.static_iter(([1], [2])):\n        pass", ct.TileStaticEvalError,
     "Invalid item #0 of static_iter() iterable: Cannot create constant from value of "
     "type list."),
    ("for i in ct.static_iter(range(m)):\n        pass", ct.TileStaticEvalError,
     "cannot be converted to an integer"),
    ("t = ct.static_iter(range(3))", ct.TileSyntaxError,
     "static_iter() is only allowed as iterable in a `for` loop"),
    ("f = ct.static_iter\n    for i in f(range(3)):\n        pass", ct.TileSyntaxError,
     "static_iter() must be used directly by name"),
    ("for i in ct.static_iter(ct.arange(4, dtype=ct.int32)):\n        pass",
     ct.TileStaticEvalError, "arange() cannot be called inside static_iter() iterable"),
])
def test_static_iter_errors(body, cls, msg):
    ns = {"ct": ct}
    exec(f"def k(x, m):\n    {body}\n", ns)  # noqa: S102
    k = ct.kernel(ns["k"])
    with pytest.raises(cls, match=re.escape(msg)):
        k.cuda_source(np.zeros(4, np.float32), 3)


# ---- tuning, replace_hints, compiler_timeout --------------------------------------------------

@ct.kernel
def _copy(x, out, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=t)


def _search(space, x, out, **kw):
    return ct.tune.exhaustive_search(
        space, None, grid_fn=lambda c: (math.ceil(x.shape[0] / c.T),), kernel=_copy,
        args_fn=lambda c: (x, out, c.T), hints_fn=lambda c: {"num_warps": c.num_warps}, **kw)


def test_tune_in_the_simulator_takes_the_first_that_runs(capsys):
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(x)
    space = [SimpleNamespace(T=100, num_warps=4),   # not a power of two: a compile error
             SimpleNamespace(T=128, num_warps=3),   # not a block size: the hint fails
             SimpleNamespace(T=256, num_warps=8),
             SimpleNamespace(T=512, num_warps=4)]   # not tried
    with threadtile.simulate():
        r = _search(space, x, out)
    assert r.best.config is space[2] and r.best.num_samples == 0 and math.isnan(r.best.mean_us)
    assert [m.config for m in r.successes] == [space[2]]
    assert [(c.T, t) for c, t, _ in r.failures] == [(100, KernelCompileError), (128, ValueError)]
    assert "power of two" in r.failures[0][2]
    np.testing.assert_array_equal(out, x)  # the chosen configuration ran
    printed = capsys.readouterr().out
    assert "1 succeeded, 2 failed" in printed and "not timed (simulator)" in printed
    assert "every dimension must be a power of two" in str(r)


def test_tune_kernel_per_config_and_errors():
    x = np.arange(256, dtype=np.float32)
    out = np.zeros_like(x)

    def make(cfg):
        return _copy.replace_hints(num_warps=cfg)

    with threadtile.simulate():
        r = ct.tune.exhaustive_search([2, 8], None, grid_fn=lambda c: (2,), kernel=make,
                                      args_fn=lambda c: (x, out, 128), quiet=True)
        assert r.best.config == 2
        with pytest.raises(ValueError, match="Search space is empty"):
            ct.tune.exhaustive_search([], None, lambda c: (1,), _copy, lambda c: ())
        with pytest.raises(ValueError, match="No valid config found"):
            ct.tune.exhaustive_search([3], None, lambda c: (2,), make,
                                      lambda c: (x, out, 128), quiet=True)


def test_replace_hints():
    k = _copy.replace_hints(num_warps=8, occupancy=2)
    assert (k.num_warps, k.occupancy, k.block_threads) == (8, 2, 256)
    assert (_copy.num_warps, _copy.occupancy) == (4, None)  # unchanged
    assert k.replace_hints(occupancy=None).num_warps == 8
    assert _copy.replace_hints(num_ctas=ct.ByTarget(sm_100=2)).num_warps == 4
    with pytest.raises(NotImplementedError, match="num_ctas"):
        _copy.replace_hints(num_ctas=2)
    with pytest.raises(TypeError, match="unknown option 'bogus'"):
        _copy.replace_hints(bogus=1)
    with pytest.raises(TypeError, match="tile kernels"):
        threadtile.jit(lambda a: None).replace_hints(num_warps=2)
    x = np.arange(512, dtype=np.float32)
    out = np.zeros_like(x)
    with threadtile.simulate():
        k[2](x, out, 256)
    np.testing.assert_array_equal(out, x)
    assert "__launch_bounds__(256, 2)" in k.cuda_source(x, out, T=256)


def test_compiler_timeout():
    x = np.zeros(256, np.float32)
    k = _copy.replace_hints(max_registers=64)  # a kernel of its own: nothing cached in memory
    with ct.compiler_timeout(1e-9), pytest.raises(ct.TileCompilerTimeoutError,
                                                   match="compiler timeout"):
        threadtile.runtime.nvrtc.compile_cubin(k.cuda_source(x, x, T=64), "sm_90")
    assert threadtile.runtime.nvrtc.compiler_timeout() is None
    with ct.compiler_timeout(60):
        assert threadtile.runtime.nvrtc.compiler_timeout() == 60
        assert k.compile(x, x, 64, arch="sm_80").cubin
    with pytest.raises(ValueError, match="positive"):
        with ct.compiler_timeout(0):
            pass


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
def test_tune_times_on_the_gpu():
    target = gpu_target("torch" if _has_torch() else "device")
    n = 1 << 20
    x = target.to_device(np.arange(n, dtype=np.float32))
    out = target.to_device(np.zeros(n, np.float32))
    space = [SimpleNamespace(T=t, num_warps=w) for t in (256, 1024, 4096) for w in (4, 8)]
    space.append(SimpleNamespace(T=100, num_warps=4))
    r = ct.tune.exhaustive_search(
        space, None, grid_fn=lambda c: (n // c.T,), kernel=_copy,
        args_fn=lambda c: (x, out, c.T), hints_fn=lambda c: {"num_warps": c.num_warps},
        quiet=True)
    assert len(r.successes) == 6 and len(r.failures) == 1
    assert all(m.num_samples >= 5 and m.mean_us > 0 for m in r.successes)
    assert r.best.mean_us == min(m.mean_us for m in r.successes)
    target.synchronize()
    np.testing.assert_array_equal(target.to_host(out), np.arange(n, dtype=np.float32))


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


@ct.kernel
def _rows_copy(X, Y, N: ct.Constant[int]):
    ct.store(Y, index=(ct.bid(0), 0), tile=ct.load(X, index=(ct.bid(0), 0), shape=(1, N)))


@ct.kernel
def _tiles_copy(X, Y):
    i, j = ct.bid(0), ct.bid(1)
    ct.store(Y, index=(i, j), tile=ct.load(X, index=(i, j), shape=(4, 8)))


def test_grid_axis_the_kernel_never_reads_is_refused():
    """``kernel[5, 128]`` written the thread-level way (128 meant as a block size) is the grid
    (5, 128); a kernel that never reads ct.bid(1) would have its 128 blocks along axis 1 race
    on every store: refused before it runs, in the simulator and on the GPU alike."""
    from threadtile import simulate  # noqa: PLC0415

    x = np.arange(5 * 16, dtype=np.float32).reshape(5, 16)
    y = np.zeros_like(x)
    with simulate():
        with pytest.raises(errors.LaunchError, match=r"128 blocks along axis 1.*never reads "
                           r"ct\.bid\(1\).*_rows_copy\[\(5,\)\]"):
            _rows_copy[5, 128](x, y, 16)
        assert not y.any()
        _rows_copy[(5,)](x, y, 16)  # the grid alone
        np.testing.assert_array_equal(y, x)
        z = np.zeros((8, 16), np.float32)
        w = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
        _tiles_copy[2, 2](w, z)  # a 2-d grid that the kernel reads: fine
        np.testing.assert_array_equal(z, w)
