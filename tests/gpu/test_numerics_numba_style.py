"""Numerics of numba-style kernels (tests/kernels/numba_style.py) against float64 NumPy
references, on every target: aliases of the kernel language's names, plain Python functions as
device functions, tuples (local, returned, passed, as kernel arguments), loops over arrays and
enumerate/zip/reversed, numba's math functions, atomics and warp matches."""

import math

import numpy as np
import pytest
from conftest import TOL, assert_close, assert_dot_close, cdiv, poison
from kernels import numba_style as ns


def test_matmul_with_aliases(target, rng):
    h, k, w = 37, 45, 29
    mh = rng.standard_normal((h, k)).astype(np.float32)
    nh = rng.standard_normal((k, w)).astype(np.float32)
    out = target.to_device(poison((h, w), np.float32))
    target.launch(ns.matmul_aliases, (cdiv(w, ns.TPB), cdiv(h, ns.TPB)), (ns.TPB, ns.TPB),
                  target.to_device(mh), target.to_device(nh), out)
    assert_dot_close(target.to_host(out), mh, nh)


def test_atomic_alias(target, rng):
    values = rng.integers(0, 1000, 777).astype(np.int32)
    counts = target.to_device(np.zeros(7, np.int32))
    target.launch(ns.atomic_alias, cdiv(values.size, 128), 128, counts,
                  target.to_device(values))
    np.testing.assert_array_equal(target.to_host(counts), np.bincount(values % 7, minlength=7))


def test_plain_python_device_functions(target, rng):
    n = 100
    a = rng.standard_normal(n)
    out = target.to_device(poison((n - 1, 10), np.float64))
    target.launch(ns.device_functions, cdiv(n, 64), 64, target.to_device(a), out)
    got = target.to_host(out)
    x, y = a[:-1], a[1:]
    lo, hi = np.minimum(x, y), np.maximum(x, y)

    def clamp(v, lo=0.0, hi=1.0):
        return np.minimum(np.maximum(v, lo), hi)

    ref = np.stack([2 * x, 2 * x + 1, 3 * (2 * x), 0.5 * x + y, lo, hi, x + y, lo - hi,
                    x * x + y * y, clamp(x) + clamp(x, hi=0.5) + clamp(x, -1.0, 2.0)], axis=1)
    assert_close(got, ref, "float64", ulps=4)


def test_local_tuples(target, rng):
    n = 50
    a = rng.standard_normal(n).astype(np.float32)
    out = target.to_device(poison((n, 5), np.float32))
    target.launch(ns.local_tuples, 1, 64, target.to_device(a), out)
    i = np.arange(n)
    ref = np.stack([a + i, 2 * a - i, 3 + 2 * a, i + i % 3, 3 * a], axis=1)
    assert_close(target.to_host(out), ref, "float32", ulps=2)


def test_tuple_arguments(target, rng):
    v = rng.standard_normal(5)
    vd = target.to_device(v)
    out = target.to_device(poison(5, np.float64))
    scalars = (1, 2.5, np.float32(0.25))
    nested = (1.5, (np.int32(3), 4.0))
    target.launch(ns.tuple_arguments, 1, 1, out, scalars, nested, (2.0, vd),
                  ns.Point(7, 3), ())
    np.testing.assert_allclose(target.to_host(out), [3.75, 13.5, 2.0 * v[1], 4, 3],
                               rtol=1e-15)
    np.testing.assert_allclose(target.to_host(vd), v + 2.0, rtol=1e-15)


@pytest.mark.parametrize("n", [1, 7, 19])
def test_loops_over_sequences(target, rng, n):
    a = rng.standard_normal(n)
    b = rng.standard_normal(n + 3)  # zip stops at the shorter one
    threads = 12
    out = target.to_device(poison((threads, 6), np.float64))
    target.launch(ns.loops, 1, threads, target.to_device(a), target.to_device(b), out)
    ref = np.zeros((threads, 6))
    for i in range(threads):
        ref[i, 0] = sum(x * (i + 1) for x in a)
        ref[i, 1] = sum(k * x * y for k, (x, y) in enumerate(zip(a, b), start=i))
        r = 0.0
        for j in reversed(range(i, 20, 3)):
            r = r * 2 + j
        ref[i, 2] = r
        q = 0.0
        for j in range(20, i, -4):
            q = q * 3 + j
        ref[i, 3] = q
        ref[i, 4] = sum(k * x - y for (k, x), y in zip(enumerate(b), reversed(a)))
        ref[i, 5] = (1.5 * 10 + i) * 10 + 2.5
    assert_close(target.to_host(out), ref, "float64", ulps=8)


def test_loop_over_rows(target, rng):
    m = rng.standard_normal((9, 13)).astype(np.float32)
    out = target.to_device(poison(13, np.float32))
    target.launch(ns.loop_rows, 1, 32, target.to_device(m), out)
    assert_close(target.to_host(out), m.astype(np.float64).sum(axis=0), "float32", ulps=16)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_functions(target, rng, dtype):
    n = 64
    x = rng.uniform(-20, 20, n).astype(dtype)
    x[:4] = [0.0, -0.0, 3.0, 2.5]
    y = rng.uniform(0.3, 6, n).astype(dtype)
    out = target.to_device(poison((n, 15), dtype))
    target.launch(ns.math_numba, 1, 64, target.to_device(x), target.to_device(y), out)
    got = target.to_host(out).astype(np.float64)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    mant, exp = np.frexp(x)
    frac, whole = np.modf(x)
    exact = {0: mant, 1: exp, 2: np.ldexp(x, 3), 3: frac, 4: whole,
             7: [math.remainder(a, b) for a, b in zip(xd, yd)],
             8: np.nextafter(x, y)}
    for col, ref in exact.items():
        np.testing.assert_array_equal(got[:, col], np.asarray(ref, np.float64), err_msg=col)
    close = {5: np.degrees(xd), 6: np.radians(xd), 9: [math.gamma(b) for b in yd],
             10: [math.lgamma(b) for b in yd], 13: np.log(yd) / np.log(3)}
    for col, ref in close.items():
        assert_close(got[:, col], ref, dtype, ulps=8, err_msg=str(col))
    # round(x, n) and round(x) of the value the kernel saw (x in dtype), as Python rounds
    np.testing.assert_array_equal(got[:, 14], [round(float(v)) for v in x])
    r2 = np.array([round(float(v), 2) for v in x])
    r100 = np.array([round(float(v) * 1000, -2) for v in x])
    rtol = TOL[dtype][0]
    # rounding to decimals scales by 10**n first, so a value a hair from a tie may round the
    # other way in float32 arithmetic than in Python's exact one: one unit of the last digit
    assert np.all(np.abs(got[:, 11] - r2) <= 0.01 * (1 + rtol))
    assert np.mean(got[:, 11] == r2.astype(dtype)) > 0.9
    assert np.all(np.abs(got[:, 12] - r100) <= 100 * (1 + rtol))


def test_frexp_of_inf_and_nan(target):
    x = np.array([np.inf, -np.inf, np.nan, 1.0, 0.75], np.float64)
    out = target.to_device(poison((5, 15), np.float64))
    target.launch(ns.math_numba, 1, 32, target.to_device(x), target.to_device(np.ones(5)), out)
    got = target.to_host(out)
    np.testing.assert_array_equal(got[:, 1], [0, 0, 0, 1, 0])  # CUDA's exponent: 0, not -1
    np.testing.assert_array_equal(got[:, 0], [np.inf, -np.inf, np.nan, 0.5, 0.75])


def test_compare_and_swap_and_cas(target):
    n, slots = 200, 37
    first = target.to_device(np.zeros(1, np.int32))
    olds = target.to_device(poison(n, np.int32))
    hits = target.to_device(np.full(n, -1, np.int32))
    sl = target.to_device(np.full(slots, -1, np.int32))
    target.launch(ns.cas_claims, cdiv(n, 64), 64, first, olds, hits, sl)
    first, olds = target.to_host(first)[0], target.to_host(olds)
    hits, sl = target.to_host(hits), target.to_host(sl)
    winner = np.flatnonzero(olds == 0)
    assert len(winner) == 1 and first == winner[0] + 1
    assert np.all(olds[olds != 0] == first)
    # every slot claimed by exactly one thread, which knows it
    assert sorted(sl) == sorted(set(sl)) and np.all(sl >= 0)
    np.testing.assert_array_equal(hits[sl], np.arange(slots))
    assert np.sum(hits >= 0) == slots


def test_nan_aware_atomics(target, rng):
    a = rng.standard_normal(100)
    a[::7] = np.nan
    out = target.to_device(np.array([np.nan, np.nan, -np.inf]))
    target.launch(ns.nan_extrema, cdiv(a.size, 32), 32, target.to_device(a), out)
    got = target.to_host(out)
    assert got[0] == np.nanmax(a) and got[1] == np.nanmin(a)


def test_match_any_and_all(target, rng):
    n = 96
    keys = rng.integers(0, 4, n).astype(np.int64) * 1000
    keys[64:] = 5000 + np.arange(32) % 3  # the last warp: one value when divided by 1000
    any_out = target.to_device(poison(n, np.uint32))
    all_out = target.to_device(poison(n, np.uint32))
    pred = target.to_device(poison(n, np.int32))
    target.launch(ns.matches, 1, n, target.to_device(keys), any_out, all_out, pred)
    any_out, all_out, pred = (target.to_host(x) for x in (any_out, all_out, pred))
    for i in range(n):
        w = keys[i // 32 * 32: i // 32 * 32 + 32]
        assert any_out[i] == sum(1 << j for j in range(32) if w[j] == keys[i])
        same = len(set(w // 1000)) == 1
        assert pred[i] == same
        assert all_out[i] == (0xFFFFFFFF if same else 0)


def test_print_tuples(target, capfd):
    with target.capture_prints(capfd) as printed:
        target.launch(ns.printer_tuples, 1, (2, 1, 1), target.to_device(np.array([1.5])))
    lines = "".join(printed).splitlines()
    assert "t = (1.500000, (1, 2.500000)) (7,)" in lines
    assert "(0, 0, 0)" in lines


def test_half_intrinsics(target, rng):
    n = 100
    a = rng.uniform(-2, 2, n).astype(np.float16)
    b = rng.uniform(0.5, 3, n).astype(np.float16)
    c = rng.uniform(-1, 1, n).astype(np.float16)
    a[:3] = b[:3]  # equal operands: hge, heq hold, hne does not
    out = target.to_device(poison((n, 16), np.float16))
    flags = target.to_device(np.zeros((n, 4), np.bool_))
    target.launch(ns.half_intrinsics, cdiv(n, 32), 32, *(target.to_device(v) for v in (a, b, c)),
                  out, flags)
    got, flags = target.to_host(out).astype(np.float64), target.to_host(flags)
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    # the arithmetic is rounded once to float16, as NumPy's float16 operations are
    exact = [a + b, a - b, a * b, a / b, -a, np.abs(a), (x * y + z).astype(np.float16),
             np.maximum(a, b), np.minimum(a, b)]
    for col, ref in enumerate(exact):
        np.testing.assert_array_equal(got[:, col], np.asarray(ref, np.float64), err_msg=col)
    approx = {9: np.sqrt(np.abs(x)), 10: np.exp(x), 11: np.log(np.abs(y)), 12: np.sin(x),
              13: 10.0 ** x, 14: 1 / y, 15: np.floor(x)}
    for col, ref in approx.items():
        assert_close(got[:, col], ref, "float16", ulps=2, err_msg=str(col))
    np.testing.assert_array_equal(flags, np.stack([a < b, a >= b, a == a, a != b], axis=1))
