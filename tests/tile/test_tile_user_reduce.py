"""``ct.reduce`` and ``ct.scan`` with a user combining function (a lambda, a nested ``def``, a
module-level function, ``operator.add``, a tile intrinsic), on one tile or a tuple of tiles,
with cuTile's semantics.

Numerics on every target (the ``target`` fixture) against NumPy in float64, fresh random
inputs, each output poisoned first: every axis (negative ones too), ``keepdims``, forward and
reverse scans, tuples of tiles of broadcastable shapes, captured run-time values, order-
sensitive (associative, not commutative) functions, tile intrinsics as functions. Then the
kernels compile to sm_80 and sm_90 cubins through NVRTC; then cuTile's errors with its types
and words (branching, loops, memory effects and nesting inside the function; the arguments).
"""

import operator

import numpy as np
import pytest
from conftest import poison

import threadtile as tt
import threadtile.tile as ct
from threadtile.tile import TileSyntaxError, TileTypeError

RNG = np.random.default_rng()


def _run(target, kernel, grid, *arrays, extra=()):
    dev = [target.to_device(a) for a in arrays]
    target.launch_tile(kernel, grid, *dev, *extra)
    return [target.to_host(d) for d in dev]


def _compiles(kernel, *args):
    for arch in ("sm_80", "sm_90"):
        assert kernel.compile(*args, arch=arch).cubin[:4] == b"\x7fELF"


def add_fn(a, b):
    return a + b


def min_with_index(a_val, a_idx, b_val, b_idx):
    """The smaller value and its index; the smaller index on ties."""
    take_a = (a_val < b_val) | ((a_val == b_val) & (a_idx < b_idx))
    return ct.where(take_a, a_val, b_val), ct.where(take_a, a_idx, b_idx)


# ---- reductions ------------------------------------------------------------------------------

@ct.kernel
def reduce_flavours(x, y0, y1, y2, y3, y4):
    def mul(a, b):
        return a * b

    t = ct.load(x, (0, 0, 0), (4, 8, 16))
    ct.store(y0, (0, 0), ct.reduce(t, 0, lambda a, b: a + b, 0))
    ct.store(y1, (0, 0), ct.reduce(t, 1, add_fn, 0))
    ct.store(y2, (0, 0), ct.reduce(t, -1, operator.add, 0))
    ct.store(y3, (0, 0, 0), ct.reduce(t, 1, mul, 1, keepdims=True))
    ct.store(y4, (0, 0), ct.reduce(t, 2, ct.maximum, float("-inf")))


def test_reduce_flavours_and_axes(target):
    x = RNG.uniform(0.5, 1.5, (4, 8, 16)).astype(np.float32)
    outs = [poison(s, np.float32) for s in ((8, 16), (4, 16), (4, 8), (4, 1, 16), (4, 8))]
    y0, y1, y2, y3, y4 = _run(target, reduce_flavours, 1, x, *outs)[1:]
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(y0, x64.sum(0), rtol=1e-6)
    np.testing.assert_allclose(y1, x64.sum(1), rtol=1e-6)
    np.testing.assert_allclose(y2, x64.sum(2), rtol=1e-6)
    np.testing.assert_allclose(y3, x64.prod(1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(y4, x.max(2))


@ct.kernel
def reduce_ints(x, y, m, p):
    t = ct.load(x, (0, 0), (16, 32))
    modulo = ct.gather(p, ())
    ct.store(y, (0,), ct.reduce(t, 1, lambda a, b: (a + b) % modulo, 0))  # a captured tile
    ct.store(m, (0,), ct.reduce(t, 0, lambda a, b: a ^ b, 0))


@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8"])
def test_reduce_integers_with_a_captured_value(target, dtype):
    x = RNG.integers(0, 100, (16, 32)).astype(dtype)
    p = np.array(7, dtype)
    y, m = poison(16, dtype), poison(32, dtype)
    _, y, m, _ = _run(target, reduce_ints, 1, x, y, m, p)
    want = np.zeros(16, np.int64)
    for j in range(32):
        want = (want + x[:, j]) % 7
    np.testing.assert_array_equal(y, want.astype(dtype))
    np.testing.assert_array_equal(m, np.bitwise_xor.reduce(x, axis=0))


@ct.kernel
def argmin_pair(x, y, yi):
    t = ct.load(x, (0, 0), (8, 16))
    idx = ct.arange(16, dtype=ct.int32)  # (16,) broadcast against (8, 16)
    v, i = ct.reduce((t, idx), 1, min_with_index, (2**31 - 1, 0))
    ct.store(y, (0,), v)
    ct.store(yi, (0,), i)


def test_reduce_a_tuple_of_broadcast_tiles(target):
    x = RNG.integers(-5, 5, (8, 16)).astype(np.int32)  # many ties: the first index wins
    y, yi = poison(8, np.int32), poison(8, np.int32)
    _, y, yi = _run(target, argmin_pair, 1, x, y, yi)
    np.testing.assert_array_equal(y, x.min(1))
    np.testing.assert_array_equal(yi, x.argmin(1))


@ct.kernel
def compose_affine(a, b, ra, rb):
    # (a1, b1) then (a2, b2) is h -> a2 * (a1 * h + b1) + b2: associative, not commutative
    def then(a1, b1, a2, b2):
        return a1 * a2, a2 * b1 + b2

    ta = ct.load(a, (0, 0), (4, 64))
    tb = ct.load(b, (0, 0), (4, 64))
    ya, yb = ct.reduce((ta, tb), 1, then, (1.0, 0.0), keepdims=True)
    ct.store(ra, (0, 0), ya)
    ct.store(rb, (0, 0), yb)


def test_reduce_keeps_the_order_of_a_non_commutative_function(target):
    a = RNG.uniform(0.8, 1.1, (4, 64)).astype(np.float32)
    b = RNG.uniform(-1, 1, (4, 64)).astype(np.float32)
    ra, rb = poison((4, 1), np.float32), poison((4, 1), np.float32)
    _, _, ra, rb = _run(target, compose_affine, 1, a, b, ra, rb)
    h = np.zeros(4)
    for j in range(64):
        h = a[:, j].astype(np.float64) * h + b[:, j]
    np.testing.assert_allclose(ra[:, 0], a.astype(np.float64).prod(1), rtol=1e-5)
    np.testing.assert_allclose(rb[:, 0], h, rtol=1e-4, atol=1e-5)


# ---- scans -----------------------------------------------------------------------------------

@ct.kernel
def scans(x, s0, s1, s2, s3, rev: ct.Constant[bool]):
    t = ct.load(x, (0, 0, 0), (2, 16, 8))
    ct.store(s0, (0, 0, 0), ct.scan(t, 0, lambda a, b: a + b, 0, reverse=rev))
    ct.store(s1, (0, 0, 0), ct.scan(t, axis=1, func=operator.add, identity=0, reverse=rev))
    ct.store(s2, (0, 0, 0), ct.scan(t, axis=-1, func=ct.maximum, identity=float("-inf"),
                                    reverse=rev))
    ct.store(s3, (0, 0, 0), ct.scan(t, 1, lambda a, b: a * b, 1, reverse=rev))


def _scan_ref(x, axis, ufunc, rev):
    if rev:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
    return ufunc.accumulate(x, axis=axis)


@pytest.mark.parametrize("rev", [False, True])
def test_scan_axes_and_directions(target, rev):
    x = RNG.uniform(0.7, 1.3, (2, 16, 8)).astype(np.float32)
    outs = [poison(x.shape, np.float32) for _ in range(4)]
    s0, s1, s2, s3 = _run(target, scans, 1, x, *outs, extra=(rev,))[1:]
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(s0, _scan_ref(x64, 0, np.add, rev), rtol=1e-6)
    np.testing.assert_allclose(s1, _scan_ref(x64, 1, np.add, rev), rtol=1e-5)
    np.testing.assert_array_equal(s2, _scan_ref(x, 2, np.maximum, rev))
    np.testing.assert_allclose(s3, _scan_ref(x64, 1, np.multiply, rev), rtol=1e-5)


@ct.kernel
def linear_recurrence(a, b, h, rev: ct.Constant[bool]):
    def then(a1, b1, a2, b2):  # apply (a1, b1), then (a2, b2)
        return a1 * a2, a2 * b1 + b2

    ta = ct.load(a, (0, 0), (4, 128))
    tb = ct.load(b, (0, 0), (4, 128))
    _, hb = ct.scan((ta, tb), 1, then, (1.0, 0.0), reverse=rev)
    ct.store(h, (0, 0), hb)


@pytest.mark.parametrize("rev", [False, True])
def test_scan_a_tuple_with_a_non_commutative_function(target, rev):
    """h[i] = a[i] * h[i-1] + b[i]; reversed, h[i] = a[i] * h[i+1] + b[i] (the scan of the
    flipped tile: the accumulated value is the function's first operand)."""
    a = RNG.uniform(0.8, 1.1, (4, 128)).astype(np.float32)
    b = RNG.uniform(-1, 1, (4, 128)).astype(np.float32)
    (h,) = _run(target, linear_recurrence, 1, a, b, poison((4, 128), np.float32),
                extra=(rev,))[2:]
    want = np.zeros((4, 128))
    acc = np.zeros(4)
    for j in (range(127, -1, -1) if rev else range(128)):
        acc = a[:, j].astype(np.float64) * acc + b[:, j]
        want[:, j] = acc
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-5)


@ct.kernel
def scan_pair(x, w, oa, ob):
    xt = ct.load(x, (0,), (16,))
    wt = ct.load(w, (0, 0), (8, 16))

    def combine(pa, pb, ca, cb):
        return pa + ca, ct.minimum(pb, cb)

    sa, sb = ct.scan((xt, wt), axis=-1, func=combine, identity=(0, 2**31 - 1))
    ct.store(oa, (0, 0), sa)
    ct.store(ob, (0, 0), sb)


def test_scan_a_tuple_of_broadcast_tiles(target):
    x = RNG.integers(-10, 10, 16).astype(np.int32)
    w = RNG.integers(-10, 10, (8, 16)).astype(np.int32)
    oa, ob = poison((8, 16), np.int32), poison((8, 16), np.int32)
    _, _, oa, ob = _run(target, scan_pair, 1, x, w, oa, ob)
    np.testing.assert_array_equal(oa, np.broadcast_to(np.cumsum(x), (8, 16)))
    np.testing.assert_array_equal(ob, np.minimum.accumulate(w, axis=1))


@ct.kernel
def size_one_axis(x, y, z):
    t = ct.load(x, (0, 0), (1, 16))
    ct.store(y, (0, 0), ct.scan(t, 0, lambda a, b: a - b, -1))
    ct.store(z, (0,), ct.reduce(t, 0, lambda a, b: a - b, 0))


def test_a_size_one_axis_is_the_tile_itself(target):
    x = RNG.uniform(-1, 1, (1, 16)).astype(np.float32)
    y, z = poison((1, 16), np.float32), poison(16, np.float32)
    _, y, z = _run(target, size_one_axis, 1, x, y, z)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(z, x[0])


def test_kernels_compile_to_cubins():
    f32 = np.zeros((4, 8, 16), np.float32)
    _compiles(reduce_flavours, f32, np.zeros((8, 16), np.float32),
              np.zeros((4, 16), np.float32), np.zeros((4, 8), np.float32),
              np.zeros((4, 1, 16), np.float32), np.zeros((4, 8), np.float32))
    i32 = np.zeros((8, 16), np.int32)
    _compiles(argmin_pair, i32, np.zeros(8, np.int32), np.zeros(8, np.int32))
    a = np.zeros((4, 128), np.float32)
    for rev in (False, True):
        _compiles(linear_recurrence, a, a, a, rev)
        _compiles(scans, np.zeros((2, 16, 8), np.float32), *[np.zeros((2, 16, 8), np.float32)
                                                             for _ in range(4)], rev)
    _compiles(scan_pair, np.zeros(16, np.int32), i32, i32, i32)
    _compiles(size_one_axis, np.zeros((1, 16), np.float32), np.zeros((1, 16), np.float32),
              np.zeros(16, np.float32))


# ---- errors ----------------------------------------------------------------------------------

def _raises(kernel, cls, words: str):
    x = np.arange(256, dtype=np.int32).reshape(16, 16)
    with pytest.raises(cls, match=words) as e, tt.simulate():
        ct.launch(None, (1,), kernel, (x, np.zeros((16, 16), np.int32)))
    return e.value


@pytest.mark.parametrize("op", ["reduce", "scan"])
def test_what_a_combining_function_may_not_do(op):
    kind = "reduction" if op == "reduce" else "scan"
    call = getattr(ct, op)

    @ct.kernel
    def branches(x, y):
        def f(a, b):
            if ct.bid(0) == 0:
                return a + b
            return a - b

        ct.store(y, (0, 0), call(ct.load(x, (0, 0), (16, 16)), 1, f, 0).reshape((-1, 16)))

    _raises(branches, TileSyntaxError, f"Branching inside {kind} body is not supported")

    @ct.kernel
    def loops(x, y):
        def f(a, b):
            r = a
            for i in range(ct.bid(0) + 1):
                r += b * i
            return r

        ct.store(y, (0, 0), call(ct.load(x, (0, 0), (16, 16)), 1, f, 0).reshape((-1, 16)))

    _raises(loops, TileSyntaxError, f"Loops inside {kind} body are not supported")

    @ct.kernel
    def prints(x, y):
        def f(a, b):
            ct.printf("%d\n", a)
            return a + b

        ct.store(y, (0, 0), call(ct.load(x, (0, 0), (16, 16)), 1, f, 0).reshape((-1, 16)))

    _raises(prints, TileSyntaxError, f"Operations with memory effects are not supported "
                                     f"inside {kind} body")

    @ct.kernel
    def loads(x, y):
        def f(a, b):
            return ct.load(x, (a, b), (1, 1)).item()

        ct.store(y, (0, 0), call(ct.load(x, (0, 0), (16, 16)), 1, f, 0).reshape((-1, 16)))

    _raises(loads, TileSyntaxError, "Operations with memory effects")

    @ct.kernel
    def nested(x, y):
        def f(a, b):
            return a + b + ct.sum(ct.full((4,), 1, dtype=ct.int32))

        ct.store(y, (0, 0), call(ct.load(x, (0, 0), (16, 16)), 1, f, 0).reshape((-1, 16)))

    _raises(nested, TileSyntaxError, "Nested scan/reduction is not supported")


def test_a_static_branch_and_a_static_loop_are_allowed(target):
    @ct.kernel
    def static_ok(x, y, twice: ct.Constant[bool]):
        def f(a, b):
            r = a
            for k in ct.static_iter(range(2)):
                r = r + b * k
            if twice:
                return r * 1
            return r

        ct.store(y, (0,), ct.reduce(ct.load(x, (0, 0), (4, 16)), 1, f, 0))

    x = RNG.integers(0, 9, (4, 16)).astype(np.int32)
    (y,) = _run(target, static_ok, 1, x, poison(4, np.int32), extra=(True,))[1:]
    np.testing.assert_array_equal(y, x.sum(1))


def test_argument_errors():
    @ct.kernel
    def no_axis(x, y):
        ct.store(y, (0, 0), ct.scan(ct.load(x, (0, 0), (16, 16)), None, operator.add, 0))

    _raises(no_axis, TileTypeError, "Expected an integer constant, but given value has type "
                                    "None")

    @ct.kernel
    def identities(x, y):
        t = ct.load(x, (0, 0), (16, 16))
        a, _ = ct.reduce((t, t), 0, lambda a, b, c, d: (a + c, b + d), (0,))
        ct.store(y, (0, 0), a.reshape((1, 16)))

    _raises(identities, TileTypeError, r"Number of identity values \(1\) must match the "
                                       r"number of input tiles \(2\)")

    @ct.kernel
    def not_a_tuple(x, y):
        t = ct.load(x, (0, 0), (16, 16))
        a, _ = ct.reduce((t, t), 0, lambda a, b, c, d: a + c, (0, 0))
        ct.store(y, (0, 0), a.reshape((1, 16)))

    _raises(not_a_tuple, TileTypeError, "Reduction function returns a value of type .*, but "
                                        "a tuple was expected")

    @ct.kernel
    def short_tuple(x, y):
        t = ct.load(x, (0, 0), (16, 16))
        a, _ = ct.scan((t, t), 0, lambda a, b, c, d: (a + c,), (0, 0))
        ct.store(y, (0, 0), a)

    _raises(short_tuple, TileTypeError, "Scan function must return a tuple of 2 values")

    @ct.kernel
    def wrong_dtype(x, y):
        ct.store(y, (0, 0), ct.scan(ct.load(x, (0, 0), (16, 16)), 0, lambda a, b: a + b + 0.5,
                                    0))

    _raises(wrong_dtype, TileTypeError, "Scan function returned a tile of unexpected dtype: "
                                        "cannot implicitly cast float32 to int32")

    @ct.kernel
    def not_callable(x, y):
        ct.store(y, (0, 0), ct.scan(ct.load(x, (0, 0), (16, 16)), 0, 3, 0))

    _raises(not_callable, TileTypeError, "Expected a callable object")

    @ct.kernel
    def shapes(x, y):
        a = ct.load(x, (0, 0), (16, 16))
        b = ct.load(x, (0, 0), (8, 16))
        s, _ = ct.scan((a, b), 0, lambda p, q, r, s: (p + r, q + s), (0, 0))
        ct.store(y, (0, 0), s)

    _raises(shapes, TileTypeError, r"Input shapes \(16, 16\), \(8, 16\) are not broadcastable "
                                   "to a common shape")

    @ct.kernel
    def not_constant(x, y):
        t = ct.load(x, (0, 0), (16, 16))
        ct.store(y, (0, 0), ct.scan(t, 0, operator.add, ct.bid(0)))

    _raises(not_constant, TileTypeError, "Expected a scalar constant")


def test_a_size_one_axis_still_checks_the_function():
    @ct.kernel
    def one(x, y):
        def f(a, b):
            ct.printf("%d\n", a)
            return a + b

        ct.store(y, (0, 0), ct.scan(ct.load(x, (0, 0), (1, 16)), 0, f, 0))

    _raises(one, TileSyntaxError, "Operations with memory effects are not supported inside "
                                  "scan body")
