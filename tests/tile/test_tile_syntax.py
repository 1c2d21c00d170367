"""Python syntax in tile kernels with cuTile's semantics: nested functions and lambdas
(closures), ``with`` blocks over ``contextlib.contextmanager`` generators, helpers taking
``**kwargs`` (compile-time dicts), helpers evaluated at compile time, ``x if c else y`` of
tiles, and tile shapes from constant locals."""

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytest

import threadtile.tile as ct
from threadtile.errors import TileCodeSyntaxError, TileCodeTypeError


def _run(target, kernel, grid, *arrays, extra=()):
    dev = [target.to_device(a) for a in arrays]
    target.launch_tile(kernel, grid, *dev, *extra)
    return [target.to_host(d) for d in dev]


def _compiles(kernel, *args):
    for arch in ("sm_80", "sm_90"):
        assert kernel.compile(*args, arch=arch).cubin[:4] == b"\x7fELF"


# ---- closures --------------------------------------------------------------------------------

@ct.kernel
def _closures(x, y, n):
    def add_n(t):
        return t + n  # late binding: n as it is when add_n is called

    def make_adder(k):
        def f(t):
            return t + k  # k frozen when make_adder returns
        return f

    scale = lambda t, m=3: t * m  # noqa: E731
    tx = ct.gather(x, ())
    ct.scatter(y, 0, add_n(tx))
    n = 100
    ct.scatter(y, 1, add_n(tx))
    ct.scatter(y, 2, make_adder(30)(tx))
    ct.scatter(y, 3, scale(tx))
    ct.scatter(y, 4, scale(tx, m=5))


def test_closures_late_binding_frozen_captures_defaults(target):
    x = np.array(2, np.int32)
    y = np.zeros(5, np.int32)
    _, y = _run(target, _closures, 1, x, y, extra=(15,))
    np.testing.assert_array_equal(y, [17, 102, 32, 6, 10])
    _compiles(_closures, x, y, 15)


def _apply(f, t):
    return f(t)


@ct.kernel
def _closure_to_helper(a, b, TILE: ct.Constant[int]):
    bias = ct.load(a, index=(1,), shape=(TILE,))
    t = ct.load(a, index=(0,), shape=(TILE,))
    ct.store(b, index=(0,), tile=_apply(lambda v: v * 2.0 + bias, t))


def test_a_closure_passed_to_a_helper(target):
    a = np.arange(32, dtype=np.float32)
    b = np.zeros(16, np.float32)
    _, b = _run(target, _closure_to_helper, 1, a, b, extra=(16,))
    np.testing.assert_allclose(b, a[:16].astype(np.float64) * 2 + a[16:])
    _compiles(_closure_to_helper, a, b, 16)


# ---- with ------------------------------------------------------------------------------------

def _append(x, val):
    i = ct.gather(x, 0) + 1
    ct.scatter(x, 0, i)
    ct.scatter(x, i, val)


@contextmanager
def _logged(x, start, end):
    _append(x, start)
    yield start
    _append(x, end)


@ct.kernel
def _with_exits(x):
    i = 0
    while True:
        with _logged(x, 10 + i, 20 + i):
            with _logged(x, 30 + i, 40 + i):
                _append(x, i)
                if i == 1:
                    break
        i += 1
    with _logged(x, 50, 60):
        _append(x, 7)
        return


def test_with_cleanup_runs_on_break_and_return_innermost_first(target):
    x = np.zeros(16, np.int32)
    (x,) = _run(target, _with_exits, 1, x)
    np.testing.assert_array_equal(
        x, [13, 10, 30, 0, 40, 20, 11, 31, 1, 41, 21, 50, 7, 60, 0, 0])
    _compiles(_with_exits, x)


@contextmanager
def _yield_constant():
    yield 20


@ct.kernel
def _with_constant(x):
    with _yield_constant() as v:
        ct.static_assert(v == 20)
        ct.scatter(x, 0, v)


def test_a_yielded_constant_stays_compile_time(target):
    (x,) = _run(target, _with_constant, 1, np.zeros(1, np.int32))
    assert x[0] == 20


@dataclass(frozen=True)
class _Log:
    x: ct.Array

    @contextmanager
    def section(self, a, b):
        _append(self.x, a)
        yield
        _append(self.x, b)

    def put(self, v):
        _append(self.x, v)


@ct.kernel
def _dataclass_methods(x):
    log = _Log(x)
    with log.section(1, 3):
        log.put(2)


def test_dataclass_methods_and_context_managers(target):
    (x,) = _run(target, _dataclass_methods, 1, np.zeros(4, np.int32))
    np.testing.assert_array_equal(x, [3, 1, 2, 3])


@contextmanager
def _two_yields():
    yield
    yield


@contextmanager
def _yield_in_if(flag):
    if flag:
        yield


@contextmanager
def _returns():
    if ct.bid(0) == 1:
        return
    yield


@contextmanager
def _no_yield():
    pass


@ct.kernel
def _enter_two_yields(x):
    with _two_yields():
        pass


@ct.kernel
def _enter_yield_in_if(x):
    with _yield_in_if(True):
        pass


@ct.kernel
def _enter_returns(x):
    with _returns():
        pass


@ct.kernel
def _enter_no_yield(x):
    with _no_yield():
        pass


@ct.kernel
def _enter_not_a_cm(x):
    with ct.bid(0):
        pass


@pytest.mark.parametrize("kernel, cls, words", [
    (_enter_two_yields, TileCodeTypeError, "must have one `yield` statement"),
    (_enter_yield_in_if, TileCodeTypeError, "outside of loops and conditional"),
    (_enter_returns, TileCodeSyntaxError, "Returning from a generator-based context manager"),
    (_enter_no_yield, TileCodeTypeError, "no reachable `yield` statement"),
    (_enter_not_a_cm, TileCodeTypeError, "only generator-based context managers"),
])
def test_context_manager_errors(kernel, cls, words):
    x = np.zeros(4, np.int32)
    with pytest.raises(cls, match=words):
        kernel.compile(x, arch="sm_90")


# ---- **kwargs, compile-time calls ------------------------------------------------------------

def _leaf(x, foo, bar):
    return x * 100 + foo * 10 + bar


def _forward(f, **kwargs):
    ct.static_assert(kwargs == {"foo": 4, "bar": 5})
    ct.static_assert("foo" in kwargs and "qux" not in kwargs)
    ct.static_assert(kwargs.get("qux") is None and kwargs.get("bar") == 5)
    return f(3, **kwargs)


def _missing(**kwargs):
    return kwargs["qux"]


@ct.kernel
def _kwargs(x):
    res = _forward(_leaf, foo=4, bar=5)
    ct.static_assert(res == 345)
    ct.scatter(x, 0, res)


@ct.kernel
def _kwargs_miss(x):
    ct.scatter(x, 0, _missing(foo=1))


def test_kwargs_are_compile_time_dicts(target):
    (x,) = _run(target, _kwargs, 1, np.zeros(1, np.int32))
    assert x[0] == 345
    with pytest.raises(TileCodeTypeError, match="Key 'qux' not found in dictionary"):
        _kwargs_miss.compile(x, arch="sm_90")


# ---- conditional expressions, constant shapes ------------------------------------------------

@ct.kernel
def _ifexp(x, flag: bool, TILE: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(TILE,))
    t = t + 1 if flag else t - 1
    ct.store(x, index=(i,), tile=t)


@ct.kernel
def _ifexp_mismatch(x, flag: bool, TILE: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(TILE,))
    t = flag if flag else t - 1
    ct.store(x, index=(0,), tile=t)


@pytest.mark.parametrize("flag", [True, False])
def test_conditional_expression_of_tiles(target, flag):
    x = np.arange(32, dtype=np.float32)
    (y,) = _run(target, _ifexp, 2, x, extra=(flag, 16))
    np.testing.assert_array_equal(y, x + (1 if flag else -1))
    _compiles(_ifexp, x, flag, 16)
    with pytest.raises(TileCodeTypeError, match="different types"):
        _ifexp_mismatch.compile(x, flag, 16, arch="sm_90")


@ct.kernel
def _product_shape(a, b, F1: ct.Constant[int], F2: ct.Constant[int]):
    F1F2 = F1 * F2
    t = ct.load(a, index=(0,), shape=(F1F2,))
    ct.store(b, index=(0,), tile=t + 1)


def test_a_product_of_constants_is_a_tile_shape(target):
    a = np.arange(32, dtype=np.float32)
    _, b = _run(target, _product_shape, 1, a, np.zeros(32, np.float32), extra=(4, 8))
    np.testing.assert_array_equal(b, a + 1)
    _compiles(_product_shape, a, a, 4, 8)


# ---- thread kernels too ----------------------------------------------------------------------

def test_lambdas_and_nested_defs_in_thread_kernels():
    import threadtile

    @threadtile.jit
    def k(a):
        f = lambda v: v + 1  # noqa: E731

        def g(v):
            return v * 2
        a[0] = g(f(a[0]))

    a = np.ones(4, np.float32)
    with threadtile.simulate():
        k[1, 1](a)
    np.testing.assert_array_equal(a, [4, 1, 1, 1])


# ---- one name, closures from two calls; decorated helpers -------------------------------------

@ct.kernel
def _closure_per_branch(x):
    def make_adder(k):
        def f(y):
            return y + k
        return f

    i = ct.bid(0)
    if i == 0:
        c = make_adder(30)
    else:
        c = make_adder(40)
    ct.scatter(x, i, c(ct.gather(x, i)))


def test_closures_from_two_calls_merge_their_captures(target):
    (x,) = _run(target, _closure_per_branch, 2, np.ones(2, np.int32))
    np.testing.assert_array_equal(x, [31, 41])
    _compiles(_closure_per_branch, x)


def _shift_by_3(func):
    import functools

    @functools.wraps(func)
    def wrapper(v):
        return func(v + 3)
    return wrapper


@_shift_by_3
def _times_10(v):
    return v * 10


@ct.kernel
def _decorated(y):
    ct.scatter(y, (), _times_10(5))


def test_a_decorated_helper_runs_its_wrapper(target):
    (y,) = _run(target, _decorated, 1, np.zeros((), np.int32))
    assert y == 80


def _first_at_least(f, n, limit):
    i = 0
    while i < n:
        if f(i) >= limit:
            return i  # a return inside a loop of an inlined helper
        i += 1
    return n


@ct.kernel
def _early_return(x, y):
    limit = ct.gather(x, ())
    ct.scatter(y, (), _first_at_least(lambda v: v * v, 10, limit))


@pytest.mark.parametrize("limit, first", [(0, 0), (10, 4), (50, 8), (1000, 10)])
def test_returns_inside_loops_of_an_inlined_helper(target, limit, first):
    _, y = _run(target, _early_return, 1, np.array(limit, np.int32), np.zeros((), np.int32))
    assert y == first
    _compiles(_early_return, np.zeros((), np.int32), np.zeros((), np.int32))
