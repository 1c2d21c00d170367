"""coop.block radix and merge sorts against NumPy, in the simulator and on the GPU: floats with
negative values, -0.0, infinities and NaNs (ordered by their bits, as CUB orders them),
descending and bit-range sorts, pairs, a user comparator with ties (stability)."""

import numpy as np
import pytest
from kernels import coop as kc

import threadtile as cuda


def _float_keys(rng, n, dtype):
    x = (rng.standard_normal(n) * 100).astype(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype)
    idx = rng.choice(n, min(n, 24), replace=False)
    x[idx] = special[rng.integers(0, len(special), len(idx))]
    return x


def _cub_order_key(x: np.ndarray) -> np.ndarray:
    """An independent statement of CUB's float order: -0.0 is 0.0; NaNs by sign (a negative
    NaN first, a positive one last); otherwise IEEE order."""
    nan = np.isnan(x)
    neg = np.signbit(x)
    rank = np.where(nan & neg, 0, np.where(nan, 2, 1))
    return np.lexsort((np.where(nan, 0, x + 0.0), rank))


@pytest.mark.parametrize("descending", [0, 1])
def test_radix_sort_floats(target, rng, descending):
    for tpb, n in ((256, 8), (96, 3), (32, 1)):
        nb = 2
        x = _float_keys(rng, nb * tpb * n, np.float32)
        out = target.to_device(np.zeros_like(x))
        target.launch(kc.radix_sort, nb, tpb, target.to_device(x), out, tpb=tpb, n=n,
                      descending=descending, begin=0, end=32)
        got = target.to_host(out).reshape(nb, -1)
        for b, row in enumerate(x.reshape(nb, -1)):
            order = _cub_order_key(row)  # stable: equal keys keep their order
            if descending:  # the classes of equal keys in reverse, each in its own order
                canon = _canon(row[order])
                cls = np.empty(len(row), np.int64)
                cls[order] = np.cumsum(np.r_[0, canon[1:] != canon[:-1]])
                order = np.argsort(-cls, kind="stable")
            want = row[order]
            np.testing.assert_array_equal(got[b], want)
            # -0.0 and 0.0 are equal keys: their own bits stay, in their order
            np.testing.assert_array_equal(np.signbit(got[b]), np.signbit(want))


def _canon(v):
    """Keys as equality classes: -0.0 as 0.0, each NaN sign its own class."""
    bits = np.where(v == 0, np.float32(0), v).view(np.uint32)
    return bits


@pytest.mark.parametrize(("dtype", "begin", "end"), [(np.int64, 0, 64), (np.uint8, 2, 6),
                                                     (np.int32, 0, 32)])
def test_radix_sort_integers(target, rng, dtype, begin, end):
    tpb, n = int(rng.choice([64, 96, 128])), 3
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 2 * tpb * n, dtype=dtype, endpoint=True)
    for descending in (0, 1):
        out = target.to_device(np.zeros_like(x))
        target.launch(kc.radix_sort, 2, tpb, target.to_device(x), out, tpb=tpb, n=n,
                      descending=descending, begin=begin, end=end)
        got = target.to_host(out).reshape(2, -1)
        for b, row in enumerate(x.reshape(2, -1)):
            key = row.astype(np.int64) if dtype != np.uint8 else row.astype(np.int64)
            if (begin, end) != (0, 8 * np.dtype(dtype).itemsize):
                key = (row.astype(np.int64) >> begin) & ((1 << (end - begin)) - 1)
            order = _stable_descending(key) if descending else np.argsort(key, kind="stable")
            np.testing.assert_array_equal(got[b], row[order])


def _stable_descending(key):
    """Equal keys in their order, greater keys first (no negation: int64's min has none)."""
    return (len(key) - 1 - np.argsort(key[::-1], kind="stable"))[::-1]


@pytest.mark.parametrize("descending", [0, 1])
def test_radix_sort_pairs(target, rng, descending):
    tpb, n = 128, 4
    keys = rng.integers(-50, 50, 2 * tpb * n).astype(np.float64)  # many ties
    vals = np.arange(2 * tpb * n, dtype=np.int32)
    ok, ov = target.to_device(np.zeros_like(keys)), target.to_device(np.zeros_like(vals))
    target.launch(kc.radix_sort_pairs, 2, tpb, target.to_device(keys), target.to_device(vals),
                  ok, ov, tpb=tpb, n=n, descending=descending)
    gk, gv = target.to_host(ok).reshape(2, -1), target.to_host(ov).reshape(2, -1)
    for b in range(2):
        row, v = keys.reshape(2, -1)[b], vals.reshape(2, -1)[b]
        order = _stable_descending(row) if descending else np.argsort(row, kind="stable")
        np.testing.assert_array_equal(gk[b], row[order])
        np.testing.assert_array_equal(gv[b], v[order])


def test_merge_sort(target, rng):
    tpb, n = 64, 5
    keys = (rng.integers(-20, 20, 2 * tpb * n)).astype(np.float32)  # -x and x tie
    vals = np.arange(2 * tpb * n, dtype=np.int32)
    ok = target.to_device(np.zeros((2, keys.size), np.float32))
    ov = target.to_device(np.zeros_like(vals))
    target.launch(kc.merge_sort, 2, tpb, target.to_device(keys), target.to_device(vals), ok, ov,
                  tpb=tpb, n=n)
    gk, gv = target.to_host(ok), target.to_host(ov)
    for b in range(2):
        sl = slice(b * tpb * n, (b + 1) * tpb * n)
        order = np.argsort(np.abs(keys[sl]), kind="stable")
        np.testing.assert_array_equal(gk[0, sl], keys[sl][order])
        np.testing.assert_array_equal(gk[1, sl], keys[sl][order])
        np.testing.assert_array_equal(gv[sl], vals[sl][order])


@pytest.mark.parametrize("w", [32, 16, 4])
def test_warp_merge_sort(target, rng, w):
    tpb, n = 64, 3
    keys = rng.integers(-9, 9, tpb * n).astype(np.float32)
    out = target.to_device(np.zeros_like(keys))
    target.launch(kc.warp_merge_sort, 1, tpb, target.to_device(keys), out, tpb=tpb, n=n, w=w)
    got = target.to_host(out).reshape(-1, w * n)
    for r, row in enumerate(keys.reshape(-1, w * n)):
        np.testing.assert_array_equal(got[r], row[np.argsort(np.abs(row), kind="stable")])


def test_python_mode(rng):
    x = _float_keys(rng, 2 * 64 * 2, np.float32)
    keys = rng.integers(-20, 20, 2 * 32 * 3).astype(np.float32)
    vals = np.arange(keys.size, dtype=np.int32)
    res = []
    for mode in ("lockstep", "python"):
        out = np.zeros_like(x)
        ok, ov = np.zeros((2, keys.size), np.float32), np.zeros_like(vals)
        with cuda.simulate(mode=mode):
            kc.radix_sort[2, 64](x, out, tpb=64, n=2, descending=1, begin=0, end=32)
            kc.merge_sort[2, 32](keys, vals, ok, ov, tpb=32, n=3)
        res.append((out, ok, ov))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)
