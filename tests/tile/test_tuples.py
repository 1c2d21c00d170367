"""Tuples in tile kernels, with cuTile's semantics.

Numerics on every target against NumPy (the ``target`` fixture), each output poisoned first:
tuple comprehensions over ``ct.static_iter`` (ranges, tuples of tiles, ``enumerate``/``zip``,
several ``for`` clauses, ``if`` clauses known at compile time, nested comprehensions, Python's
scoping of their variables), ``+`` concatenation, ``==``/``!=`` item by item, ``in``/``not in``,
``*`` unpacking in displays and calls (a helper's ``*items``), tuple arguments whose ``Constant``
items are compile-time values (a tile shape) and whose numbers are loosely typed (stored into
int32 arrays). Then the kernels compile to sm_80 and sm_90 cubins through NVRTC; then the
errors, of cuTile's types (``TileTypeError``, ``TileSyntaxError``, ``TileValueError``, the
``TypeError`` of a launch) with its words.
"""

import numpy as np
import pytest
from conftest import poison

import threadtile as tt
import threadtile.tile as ct
from threadtile.tile import TileSyntaxError, TileTypeError, TileValueError

T = 16

# ---- comprehensions ---------------------------------------------------------------------------


@ct.kernel
def rotate(x, y):
    tiles = tuple(ct.load(x, (i,), (T,)) for i in ct.static_iter(range(3)))
    rotated = tuple(tiles[(i + 1) % 3] for i in ct.static_iter(range(3)))
    for i, t in ct.static_iter(enumerate(rotated)):
        ct.store(y, (i,), t)


@ct.kernel
def products(x, y):
    a = ct.load(x, (0,), (T,))
    b = ct.load(x, (1,), (T,))
    doubled = tuple(t * 2 for t in ct.static_iter((a, b)))
    sums = tuple(u + v for u in ct.static_iter((a, b)) for v in ct.static_iter(doubled))
    for i, t in ct.static_iter(enumerate(sums)):
        ct.store(y, (i,), t)


@ct.kernel
def filtered(x, y):
    tiles = tuple(ct.load(x, (i,), (T,)) for i in ct.static_iter(range(4)))
    # the conditions are known at compile time: they keep items 0 and 2, scaled by 1 and 3
    kept = tuple(t * s for i, t in ct.static_iter(enumerate(tiles)) if i % 2 == 0
                 for s, _ in ct.static_iter(zip((1, 3), (0, 0))) if s > 0)
    for i, t in ct.static_iter(enumerate(kept)):
        ct.store(y, (i,), t)


@ct.kernel
def triangle(y):
    rows = tuple(tuple(i * 2 + j for i in ct.static_iter(range(j))) for j in ct.static_iter(
        range(5)))
    k = 0
    for row in ct.static_iter(rows):
        for v in ct.static_iter(row):
            ct.scatter(y, k, v)
            k += 1


n = 99


@ct.kernel
def scopes(y):
    i = 7
    tiles = (1, 2)
    _a = tuple(t for i, t in ct.static_iter(enumerate(tiles)))  # does not rebind i
    _b = tuple(n for n in ct.static_iter(range(3)))  # nor the global n
    first = tuple(n + k for n in ct.static_iter(range(n - 97)) for k in ct.static_iter(range(n)))
    ct.scatter(y, 0, i)
    ct.scatter(y, 1, n)
    ct.scatter(y, 2, len(first))
    ct.scatter(y, 3, first[-1])


def test_comprehension_of_loaded_tiles(target):
    x = np.arange(3 * T, dtype=np.int32)
    y = target.to_device(poison(3 * T, np.int32))
    target.launch_tile(rotate, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), np.roll(x, -T))


def test_comprehension_with_two_for_clauses(target):
    x = np.arange(2 * T, dtype=np.int32)
    a, b = x[:T].astype(np.float64), x[T:].astype(np.float64)
    y = target.to_device(poison(4 * T, np.int32))
    target.launch_tile(products, 1, target.to_device(x), y)
    want = np.concatenate([a + 2 * a, a + 2 * b, b + 2 * a, b + 2 * b])
    np.testing.assert_array_equal(target.to_host(y), want)


def test_comprehension_with_if_clauses(target):
    x = np.arange(4 * T, dtype=np.int32)
    t = [x[k * T:(k + 1) * T].astype(np.float64) for k in range(4)]
    y = target.to_device(poison(4 * T, np.int32))
    target.launch_tile(filtered, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y),
                                  np.concatenate([t[0], 3 * t[0], t[2], 3 * t[2]]))


def test_nested_comprehension_whose_inner_range_reads_the_outer_variable(target):
    y = target.to_device(poison(10, np.int32))
    target.launch_tile(triangle, 1, y)
    want = [i * 2 + j for j in range(5) for i in range(j)]
    np.testing.assert_array_equal(target.to_host(y), want)


def test_comprehension_variables_are_local_to_it(target):
    y = target.to_device(poison(4, np.int32))
    target.launch_tile(scopes, 1, y)
    first = tuple(n + k for n in range(n - 97) for k in range(n))  # Python's own answer
    np.testing.assert_array_equal(target.to_host(y), [7, 99, len(first), first[-1]])


# ---- operators and unpacking ------------------------------------------------------------------


@ct.kernel
def concat_and_compare(x, y, z, M: ct.Constant[int]):
    a = ct.load(x, (0,), (T,))
    b = ct.load(x, (1,), (T,))
    t = (a,) + (b, a + b)
    p = ct.bid(0)
    for i, u in ct.static_iter(enumerate(t)):
        ct.store(y, (p, i), u.reshape((1, T)))
    ct.scatter(z, (p, 0), len(t))
    ct.scatter(z, (p, 1), 1 if (p, M) == (1, 4) else 0)
    ct.scatter(z, (p, 2), 1 if ((p, 2), 3) != ((0, 2), 3) else 0)
    ct.scatter(z, (p, 3), 1 if (1, 2) == (1, 2, 3) else 0)
    ct.scatter(z, (p, 4), 1 if p in (1, 2) else 0)
    ct.scatter(z, (p, 5), 1 if p not in (0, 5) else 0)
    ct.scatter(z, (p, 6), 1 if (p, 1) in ((0, 1), (3, 1)) else 0)
    ct.scatter(z, (p, 7), 1 if 2 in (2, a) else 0)  # stops at the first match: a unused


@ct.kernel
def grow(x, y):
    doubled = ()
    for k in ct.static_iter(range(3)):  # straight-line code: the tuple may change length
        doubled = doubled + (ct.load(x, (k,), (T,)) * 2,)
    for k, t in ct.static_iter(enumerate(doubled)):
        ct.store(y, (k,), t)


def _fill(arr, *items):
    for i, v in ct.static_iter(enumerate(items)):
        ct.scatter(arr, i, v)


@ct.kernel
def starred(x, y):
    a = (10, 20, 30)
    t = (7, *a, 8, *(), 9)
    for i, v in ct.static_iter(enumerate(t)):
        ct.scatter(x, i, v)
    _fill(y, 1, *(2, 3), 4)
    args = (y, 4, 5)
    ct.scatter(*args)


def test_concatenation_comparison_and_membership(target):
    x = np.arange(2 * T, dtype=np.int32)
    y = target.to_device(poison((4, 3 * T), np.int32))
    z = target.to_device(poison((4, 8), np.int32))
    target.launch_tile(concat_and_compare, 4, target.to_device(x), y, z, 4)
    want = np.concatenate([x, x[:T] + x[T:]])
    np.testing.assert_array_equal(target.to_host(y), np.stack([want] * 4))
    p = np.arange(4)
    want = np.stack([np.full(4, 3), p == 1, p != 0, np.zeros(4), np.isin(p, (1, 2)),
                     ~np.isin(p, (0, 5)), np.isin(p, (0, 3)), np.ones(4)], axis=1)
    np.testing.assert_array_equal(target.to_host(z), want.astype(np.int32))


def test_a_tuple_grows_in_a_static_iter_loop(target):
    x = np.arange(3 * T, dtype=np.int32)
    y = target.to_device(poison(3 * T, np.int32))
    target.launch_tile(grow, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), 2 * x)


def test_starred_unpacking_in_displays_and_calls(target):
    x = target.to_device(poison(6, np.int32))
    y = target.to_device(poison(5, np.int32))
    target.launch_tile(starred, 1, x, y)
    np.testing.assert_array_equal(target.to_host(x), [7, 10, 20, 30, 8, 9])
    np.testing.assert_array_equal(target.to_host(y), [1, 2, 3, 4, 5])


# ---- tuple arguments ----------------------------------------------------------------------------


@ct.kernel
def partial_constant(a, out, cfg: tuple[ct.Constant[int], int]):
    t = ct.load(a, (0,), (cfg[0],))  # a Constant item: a tile shape
    ct.store(out, (0,), t + cfg[1])


@ct.kernel
def tuple_sum(out, t1, t2):
    ct.scatter(out, 0, t1[0] + t2[0])  # Python ints: stored into int32 as cuTile's do
    ct.scatter(out, 1, t1[1][0] + t2[1])


def test_constant_items_of_a_tuple_argument_are_compile_time(target):
    a = np.arange(16, dtype=np.int32)
    for n, m in ((8, 5), (16, -3)):
        out = target.to_device(poison(16, np.int32))
        target.launch_tile(partial_constant, 1, target.to_device(a), out, (n, m))
        np.testing.assert_array_equal(target.to_host(out)[:n], a[:n] + m)


def test_numbers_of_tuple_arguments_are_loosely_typed(target):
    out = target.to_device(poison(2, np.int32))
    target.launch_tile(tuple_sum, 1, out, (1, (2, 3)), (10, 20))
    np.testing.assert_array_equal(target.to_host(out), [11, 22])


# ---- cubins -----------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_to_cubin(arch):
    i32 = np.zeros(4 * T, np.int32)
    cases = [(rotate, (i32, i32)), (products, (i32, i32)), (filtered, (i32, i32)),
             (triangle, (i32,)), (scopes, (i32,)), (concat_and_compare, (
                 i32, np.zeros((4, 3 * T), np.int32), np.zeros((4, 8), np.int32), 4)),
             (starred, (i32, i32)), (grow, (i32, i32)), (partial_constant, (i32, i32, (8, 5))),
             (tuple_sum, (i32, (1, (2, 3)), (10, 20)))]
    for kernel, args in cases:
        assert kernel.compile(*args, arch=arch).cubin[:4] == b"\x7fELF", kernel


# ---- errors -----------------------------------------------------------------------------------


def _raises(kernel, cls, words: str, *args):
    with pytest.raises(cls, match=words) as e, tt.simulate():
        ct.launch(None, (1,), kernel, args)
    return e.value


def test_comprehension_errors():
    @ct.kernel
    def not_static():
        _ = tuple(i for i in range(3))

    @ct.kernel
    def later_variable():
        _ = tuple(i + j for i in ct.static_iter(range(3)) for j in ct.static_iter(range(n))
                  for n in ct.static_iter(range(4)))

    @ct.kernel
    def runtime_if(c: bool):
        _ = tuple(i for i in ct.static_iter(range(3)) if c)

    @ct.kernel
    def walrus():
        _ = tuple(y for x in ct.static_iter(range(5)) if (y := x * 2) > 3)

    _raises(not_static, TileSyntaxError, r"must be wrapped in ct\.static_iter\(\)")
    e = _raises(later_variable, TileSyntaxError, "Undefined variable n used")
    assert "bound only by a later `for` clause" in str(e)
    _raises(runtime_if, TileTypeError, "if-conditions must be statically known", True)
    _raises(walrus, TileSyntaxError, "Unsupported syntax")


def test_tuple_operator_errors():
    @ct.kernel
    def order():
        _ = (1, 2) < (3, 4)

    @ct.kernel
    def tiles():
        t = ct.ones((4,), dtype=ct.int32)
        _ = (t,) == (t,)

    @ct.kernel
    def arrays(x):
        _ = (x,) == (x,)

    @ct.kernel
    def member():
        _ = 2 in (1, ct.ones((4,), dtype=ct.int32))

    @ct.kernel
    def times():
        _ = (1, 2) * 2

    _raises(order, TileTypeError, "Operator '<' is not supported for tuples")
    _raises(tiles, TileTypeError, "not supported for non-scalar elements")
    _raises(arrays, TileTypeError, "not supported for elements of type array", np.zeros(4))
    _raises(member, TileTypeError, r"'in' requires scalar operands, but got shape \(4,\)")
    _raises(times, TileTypeError, r"Operator '\*' is not supported between a tuple")


def test_tuple_index_and_unpacking_errors():
    @ct.kernel
    def float_index():
        t = (1, 2, 3)
        _ = t[1.0]

    @ct.kernel
    def tile_index():
        t = (1, 2, 3)
        _ = t[ct.ones((2,), dtype=ct.int32)]

    @ct.kernel
    def runtime_index():
        t = (1, 2, 3)
        _ = t[ct.bid(0)]

    @ct.kernel
    def out_of_range():
        t = (1, 2, 3)
        _ = t[3]

    @ct.kernel
    def assign_item():
        t = (1, 2, 3)
        t[0] = 7

    @ct.kernel
    def too_few():
        t = 1, 2
        a, b, c = t

    @ct.kernel
    def star_tile():
        _fill(*ct.ones((4,), dtype=ct.int32))

    _raises(float_index, TileTypeError, "Tuple indices must be integers or slices, not")
    _raises(tile_index, TileTypeError, "Tuple indices must be integers or slices, not")
    _raises(runtime_index, TileTypeError, "Tuple indices must be constant")
    _raises(out_of_range, TileTypeError, "Index 3 is out of range for a tuple of length 3")
    _raises(assign_item, TileTypeError, "Tuples are immutable: item assignment is not supported")
    _raises(too_few, TileValueError, r"Too few values to unpack \(expected 3, got 2\)")
    _raises(star_tile, TileTypeError, r"Expected a tuple after \*, got tile<int32, \(4\)>")


def test_tuple_argument_errors():
    out = np.zeros(16, np.int32)
    with pytest.raises(TypeError, match="Received a tuple of length 3 for a parameter "
                                        "annotated as a tuple of length 2"), tt.simulate():
        ct.launch(None, (1,), partial_constant, (out, out, (8, 1, 2)))
    from collections import namedtuple

    pair = namedtuple("pair", "a b")
    with pytest.raises(TypeError, match=r"Invalid item #1 of kernel argument #2: 'pair' is a "
                                        "subclass of 'tuple'"), tt.simulate():
        ct.launch(None, (1,), tuple_sum, (out, (1, (2, 3)), (1, pair(2, 3))))

    @ct.kernel
    def constant_tuple(out, c: ct.Constant[tuple]):
        ct.scatter(out, 0, c[0])

    with pytest.raises(TypeError, match="Invalid item #0 of kernel argument #1: Could not "
                                        "interpret object of type 'ndarray' as a constant"), \
            tt.simulate():
        ct.launch(None, (1,), constant_tuple, (out, (out, 1)))
