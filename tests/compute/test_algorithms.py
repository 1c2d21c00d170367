"""threadtile.compute's algorithms against NumPy (float64 references, fresh random inputs,
sizes around the tiles' edges): on NumPy arrays, under ``threadtile.simulate()``, and on the
GPU (marked ``gpu``)."""

from __future__ import annotations

import numpy as np
import pytest

import threadtile.compute as tc

# sizes: empty, one, below/at/above a scan tile (1920 float32 items), a reduce tile (4096),
# a onesweep tile (7680 keys) and several tiles
SIZES = [0, 1, 7, 1919, 1920, 1921, 4097, 7681, 30001]
BIG = [70001]

REC = np.dtype([("m", np.int64), ("c", np.int64)], align=True)


def _tol(dtype, n):
    """Tolerance of a float sum of ``n`` items against float64."""
    eps = np.finfo(dtype).eps
    return 4 * eps * max(np.sqrt(max(n, 1)), 1.0)


def _absmax(a, b):
    return a if abs(a) >= abs(b) else b


# -- reduce ------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES + BIG)
def test_reduce_sum_f32(where, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    out = where.empty(1, np.float32)
    tc.reduce_into(where.dev(x), out, tc.OpKind.PLUS, n, np.array([2.5], np.float32))
    got = where.host(out)[0]
    want = x.astype(np.float64).sum() + 2.5
    assert abs(got - want) <= _tol(np.float32, n) * (np.abs(x).sum() + 2.5)


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 100003])
def test_reduce_int_ops(where, rng, n):
    x = rng.integers(-2**40, 2**40, n)
    for op, want in ((tc.OpKind.PLUS, int(x.sum()) + 7),
                     (tc.OpKind.MAXIMUM, max([7] + x.tolist())),
                     (tc.OpKind.MINIMUM, min([7] + x.tolist())),
                     (tc.OpKind.BIT_XOR, int(np.bitwise_xor.reduce(x, initial=7)))):
        out = where.empty(1, np.int64)
        tc.reduce_into(where.dev(x), out, op, n, np.int64(7))
        assert int(where.host(out)[0]) == want, op


@pytest.mark.parametrize("n", [1, 333, 5000])
def test_reduce_python_operator(where, rng, n):
    x = rng.standard_normal(n)
    out = where.empty(1, np.float64)
    tc.reduce_into(where.dev(x), out, _absmax, n, np.float64(0))
    assert where.host(out)[0] == x[np.argmax(np.abs(x))]


def test_reduce_counting_iterator(where):
    out = where.empty(1, np.int64)
    tc.reduce_into(tc.CountingIterator(np.int64(5)), out, tc.OpKind.PLUS, 10000, np.int64(0))
    assert where.host(out)[0] == sum(range(5, 10005))


def test_reduce_transform_iterator(where, rng):
    x = rng.standard_normal(3001)
    out = where.empty(1, np.float64)

    def square(v):
        return v * v

    tc.reduce_into(tc.TransformIterator(where.dev(x), square), out, tc.OpKind.PLUS, 3001,
                   np.float64(0))
    assert np.isclose(where.host(out)[0], (x * x).sum(), rtol=1e-12)


def test_reduce_temp_storage_convention(where, rng):
    x = rng.standard_normal(50000).astype(np.float32)
    d = where.dev(x)
    out = where.empty(1, np.float32)
    r = tc.make_reduce_into(d, out, tc.OpKind.PLUS, np.float32(0))
    nbytes = r(None, d, out, len(x), np.float32(0))
    assert isinstance(nbytes, int) and nbytes >= 1
    temp = where.empty(nbytes, np.uint8)
    assert r(temp, d, out, len(x), np.float32(0)) is None
    assert np.isclose(where.host(out)[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)


# -- scans -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES + BIG)
def test_inclusive_sum_i64(where, rng, n):
    x = rng.integers(-1000, 1000, n)
    out = where.empty(n, np.int64)
    tc.inclusive_scan(where.dev(x), out, tc.OpKind.PLUS, None, n)
    np.testing.assert_array_equal(where.host(out), np.cumsum(x))


@pytest.mark.parametrize("n", SIZES)
def test_exclusive_sum_f32(where, rng, n):
    x = rng.random(n).astype(np.float32)
    out = where.empty(n, np.float32)
    tc.exclusive_scan(where.dev(x), out, tc.OpKind.PLUS, np.float32(1), n)
    want = (1 + np.concatenate([[0.0], np.cumsum(x.astype(np.float64))]))[:n]
    np.testing.assert_allclose(where.host(out), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 1921, 9000])
def test_inclusive_scan_init_max(where, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    out = where.empty(n, np.float32)
    tc.inclusive_scan(where.dev(x), out, tc.OpKind.MAXIMUM, np.float32(0.5), n)
    np.testing.assert_array_equal(where.host(out), np.maximum.accumulate(np.maximum(x, 0.5)))


def _compose(a, b, out):
    """x -> a.m * x + a.c, then b: a non-commutative associative operator on records."""
    out.m = a.m * b.m
    out.c = a.c * b.m + b.c


@pytest.mark.parametrize("n", [0, 1, 5, 1000, 2500])
def test_scan_non_commutative_records(where, rng, n):
    x = np.zeros(n, REC)
    x["m"] = rng.integers(-3, 4, n)
    x["c"] = rng.integers(-5, 6, n)
    out = where.empty(n, REC)
    tc.inclusive_scan(where.dev(x), out, _compose, None, n)
    got = where.host(out)
    m, c = 1, 0
    for k in range(n):  # the left fold, in Python integers wrapped to int64
        m, c = m * int(x["m"][k]), c * int(x["m"][k]) + int(x["c"][k])
        m = (m + 2**63) % 2**64 - 2**63
        c = (c + 2**63) % 2**64 - 2**63
        assert (got["m"][k], got["c"][k]) == (m, c), k


@pytest.mark.parametrize("n", [3, 2000])
def test_exclusive_scan_last_wins(where, rng, n):
    """``lambda a, b: b`` is associative and not commutative: the exclusive scan shifts."""
    x = rng.integers(0, 100, n).astype(np.int32)
    out = where.empty(n, np.int32)

    def last(a, b):
        return b

    tc.exclusive_scan(where.dev(x), out, last, np.int32(-1), n)
    np.testing.assert_array_equal(where.host(out), np.concatenate([[-1], x[:-1]]))


def test_scan_iterator_input(where):
    out = where.empty(4000, np.int64)
    tc.inclusive_scan(tc.ConstantIterator(np.int64(3)), out, tc.OpKind.PLUS, None, 4000)
    np.testing.assert_array_equal(where.host(out), 3 * np.arange(1, 4001))


# -- radix sort --------------------------------------------------------------------------------

def _float_order(k: np.ndarray, descending: bool) -> np.ndarray:
    """CUB's order of float keys, built independently: negative NaN < numbers < positive NaN,
    -0.0 == +0.0, stable."""
    nan = np.isnan(k)
    cls = np.where(nan & np.signbit(k), 0, np.where(nan, 2, 1))
    val = np.where(nan, 0.0, k.astype(np.float64) + 0.0)
    if descending:
        cls, val = -cls, -val
    return np.lexsort((val, cls))


@pytest.mark.parametrize("n", SIZES + BIG)
@pytest.mark.parametrize("descending", [False, True])
def test_radix_sort_float_pairs(where, rng, n, descending):
    k = (rng.standard_normal(n) * 1e3).astype(np.float32)
    if n > 10:
        k[rng.integers(0, n, n // 10)] = np.nan
        k[rng.integers(0, n, n // 20)] = -np.nan
        k[rng.integers(0, n, n // 10)] = 0.0
        k[rng.integers(0, n, n // 10)] = -0.0
        k[rng.integers(0, n, 3)] = np.inf
        k[rng.integers(0, n, 3)] = -np.inf
    v = np.arange(n, dtype=np.int32)
    ko, vo = where.empty(n, np.float32), where.empty(n, np.int32)
    order = tc.SortOrder.DESCENDING if descending else tc.SortOrder.ASCENDING
    tc.radix_sort(where.dev(k), ko, where.dev(v), vo, order, n)
    perm = _float_order(k, descending)
    np.testing.assert_array_equal(where.host(vo), v[perm])
    np.testing.assert_array_equal(where.host(ko).view(np.uint32), k[perm].view(np.uint32))


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64, np.uint64, np.int8, np.uint16,
                                   np.float64])
@pytest.mark.parametrize("n", [0, 1, 1000, 20001])
def test_radix_sort_keys(where, rng, dtype, n):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is not None:
        k = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    else:
        k = rng.standard_normal(n) * 1e300
    out = where.empty(n, dtype)
    tc.radix_sort(where.dev(k), out, None, None, tc.SortOrder.ASCENDING)
    np.testing.assert_array_equal(where.host(out), np.sort(k, kind="stable"))


@pytest.mark.parametrize("n", [100, 30001])
def test_radix_sort_bit_range(where, rng, n):
    k = rng.integers(0, 2**32, n, dtype=np.uint32)
    v = np.arange(n, dtype=np.uint32)
    ko, vo = where.empty(n, np.uint32), where.empty(n, np.uint32)
    tc.radix_sort(where.dev(k), ko, where.dev(v), vo, tc.SortOrder.DESCENDING, n, begin_bit=8,
                  end_bit=20)
    digit = (k >> 8) & 0xFFF
    perm = np.argsort(-digit.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(where.host(vo), perm)
    np.testing.assert_array_equal(where.host(ko), k[perm])


def test_radix_sort_leaves_its_input(where, rng):
    k = rng.integers(0, 1000, 5000).astype(np.int32)
    d = where.dev(k)
    out = where.empty(5000, np.int32)
    tc.radix_sort(d, out, None, None, tc.SortOrder.ASCENDING)
    np.testing.assert_array_equal(where.host(d), k)


# -- histogram ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 999, 100003])
def test_histogram_float(where, rng, n):
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    h = where.dev(np.full(64, 99, np.int32))
    tc.histogram_even(where.dev(x), h, 65, -3.0, 3.0, n)
    got = where.host(h)
    lo, hi = np.float32(-3.0), np.float32(3.0)
    scale = np.float32(64) / (hi - lo)
    inside = x[(x >= lo) & (x < hi)]
    bins = np.minimum(((inside - lo) * scale).astype(np.int64), 63)
    np.testing.assert_array_equal(got, np.bincount(bins, minlength=64))
    assert got.sum() == np.count_nonzero((x >= -3) & (x < 3))


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64])
def test_histogram_integers(where, rng, dtype):
    x = rng.integers(-10, 300, 50000).astype(dtype)
    h = where.empty(7, np.int64)
    tc.histogram_even(where.dev(x), h, np.array([8]), np.array([0]), np.array([250]))
    want, _ = np.histogram(x[(x >= 0) & (x < 250)].astype(np.int64) * 7 // 250,
                           bins=np.arange(8))
    np.testing.assert_array_equal(where.host(h), want)


def test_histogram_many_bins(where, rng):
    x = rng.random(200000)
    h = where.empty(10000, np.uint32)
    tc.histogram_even(where.dev(x), h, 10001, 0.0, 1.0)
    assert where.host(h).sum() == 200000


# -- segmented reduce, transforms --------------------------------------------------------------

@pytest.mark.parametrize("segments", [0, 1, 17, 300])
def test_segmented_reduce(where, rng, segments):
    lens = rng.integers(0, 400, segments)
    ends = np.cumsum(lens)
    begins = ends - lens
    x = rng.standard_normal(int(ends[-1]) if segments else 0)
    out = where.empty(segments, np.float64)
    tc.segmented_reduce(where.dev(x), out, where.dev(begins), where.dev(ends), tc.OpKind.PLUS,
                        np.float64(1), segments)
    want = np.array([1 + x[b:e].sum() for b, e in zip(begins, ends)])
    np.testing.assert_allclose(where.host(out), want, rtol=1e-12, atol=1e-12)


def test_segmented_reduce_fixed_width_iterators(where, rng):
    x = rng.integers(-50, 50, 64 * 100).astype(np.int32)
    out = where.empty(100, np.int32)

    def start(i):
        return i * 64

    tc.segmented_reduce(where.dev(x), out,
                        tc.TransformIterator(tc.CountingIterator(np.int64(0)), start),
                        tc.TransformIterator(tc.CountingIterator(np.int64(1)), start),
                        tc.OpKind.MAXIMUM, np.int32(-1000), 100)
    np.testing.assert_array_equal(where.host(out), x.reshape(100, 64).max(axis=1))


@pytest.mark.parametrize("n", [0, 1, 1000, 70001])
def test_transforms(where, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = where.empty(n, np.float64)

    def fma(x, y):
        return x * 2.0 + y

    tc.binary_transform(where.dev(a), where.dev(b), out, fma, n)
    np.testing.assert_allclose(where.host(out), a.astype(np.float64) * 2 + b, rtol=1e-6)
    neg = where.empty(n, np.float32)
    tc.unary_transform(where.dev(a), neg, tc.OpKind.NEGATE, n)
    np.testing.assert_array_equal(where.host(neg), -a)


# -- merge sort, select, unique_by_key ---------------------------------------------------------

def _by_last_digit(a, b):
    return a % 10 < b % 10


@pytest.mark.parametrize("n", [0, 1, 100, 4353, 30000])
def test_merge_sort_python_comparator(where, rng, n):
    k = rng.integers(0, 1000, n).astype(np.int64)
    v = np.arange(n, dtype=np.int32)
    ko, vo = where.empty(n, np.int64), where.empty(n, np.int32)
    tc.merge_sort(where.dev(k), where.dev(v), ko, vo, _by_last_digit, n)
    perm = np.argsort(k % 10, kind="stable")
    np.testing.assert_array_equal(where.host(vo), perm)
    np.testing.assert_array_equal(where.host(ko), k[perm])


def test_merge_sort_less(where, rng):
    k = rng.standard_normal(20000).astype(np.float32)
    out = where.empty(20000, np.float32)
    tc.merge_sort(where.dev(k), None, out, None, tc.OpKind.LESS)
    np.testing.assert_array_equal(where.host(out), np.sort(k))


def _positive(x):
    return x > 0


@pytest.mark.parametrize("n", [0, 1, 3000, 50001])
def test_select(where, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    out = where.empty(n, np.float32)
    cnt = where.empty(1, np.int32)
    tc.select(where.dev(x), out, cnt, _positive, n)
    want = x[x > 0]
    k = int(where.host(cnt)[0])
    assert k == len(want)
    np.testing.assert_array_equal(where.host(out)[:k], want)


@pytest.mark.parametrize("n", [0, 1, 5000])
def test_unique_by_key(where, rng, n):
    k = np.sort(rng.integers(0, n // 3 + 1, n)).astype(np.int64)
    v = np.arange(n, dtype=np.uint32)
    ko, vo = where.empty(n, np.int64), where.empty(n, np.uint32)
    cnt = where.empty(1, np.int64)
    tc.unique_by_key(where.dev(k), where.dev(v), ko, vo, cnt, tc.OpKind.EQUAL_TO, n)
    first = np.ones(n, bool)
    first[1:] = k[1:] != k[:-1]
    m = int(where.host(cnt)[0])
    assert m == first.sum()
    np.testing.assert_array_equal(where.host(ko)[:m], k[first])
    np.testing.assert_array_equal(where.host(vo)[:m], v[first])


# -- docs/algorithms.md's worked example -------------------------------------------------------

BEST = np.dtype([("v", np.float32), ("i", np.int32)], align=True)


def keep_max(a, b, out):
    if b.v > a.v:
        out.v = b.v
        out.i = b.i
    else:
        out.v = a.v
        out.i = a.i


@pytest.mark.parametrize("n", [1, 3000])
def test_running_argmax_records(where, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    x[rng.integers(0, n, n // 4)] = 0.5  # ties: the earlier index stays
    items = np.zeros(n, BEST)
    items["v"], items["i"] = x, np.arange(n)
    out = where.empty(n, BEST)
    tc.inclusive_scan(where.dev(items), out, keep_max)
    got = where.host(out)
    np.testing.assert_array_equal(got["v"], np.maximum.accumulate(x))
    first = [int(np.argmax(x[:k + 1])) for k in range(n)]  # argmax: the first maximum
    np.testing.assert_array_equal(got["i"], first)


def _third(x):
    return x % 3 == 0


def _third_plus_one(x):
    return x % 3 == 1


def _big(r):
    return r.m > 10


def _odd_c(r):
    return r.c % 2 == 1


@pytest.mark.parametrize("n", SIZES + BIG)
def test_three_way_partition(where, rng, n):
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    outs = [where.dev(np.full(n, -7, np.int32)) for _ in range(3)]
    cnt = where.dev(np.full(2, -1, np.int64))
    tc.three_way_partition(where.dev(x), *outs, cnt, _third, _third_plus_one, n)
    a, b = x % 3 == 0, x % 3 == 1
    got = [where.host(o) for o in outs]
    k = where.host(cnt)
    assert list(k) == [a.sum(), b.sum()]
    np.testing.assert_array_equal(got[0][:k[0]], x[a])
    np.testing.assert_array_equal(got[1][:k[1]], x[b])
    np.testing.assert_array_equal(got[2][:n - k[0] - k[1]], x[~a & ~b])
    assert (got[0][k[0]:] == -7).all() and (got[2][n - k[0] - k[1]:] == -7).all()


def test_three_way_partition_records_and_iterators(where, rng):
    """The first predicate wins where both hold; records; an iterator input."""
    n = 5000
    x = np.zeros(n, REC)
    x["m"], x["c"] = rng.integers(0, 20, n), rng.integers(0, 100, n)
    outs = [where.empty(n, REC) for _ in range(3)]
    cnt = where.empty(2, np.int64)
    tc.three_way_partition(where.dev(x), *outs, cnt, _big, _odd_c, n)
    a = x["m"] > 10
    b = (x["c"] % 2 == 1) & ~a
    k = where.host(cnt)
    assert list(k) == [a.sum(), b.sum()]
    for o, keep in zip(outs, (a, b, ~(a | b))):
        got = where.host(o)[:keep.sum()]
        np.testing.assert_array_equal(got["m"], x["m"][keep])
        np.testing.assert_array_equal(got["c"], x["c"][keep])
    outs = [where.empty(3000, np.int64) for _ in range(3)]
    tc.three_way_partition(tc.CountingIterator(np.int64(0)), *outs, cnt, _third,
                           _third_plus_one, 3000)
    assert list(where.host(cnt)) == [1000, 1000]
    np.testing.assert_array_equal(where.host(outs[2])[:1000], np.arange(2, 3000, 3))


def test_three_way_partition_errors(where):
    x = where.dev(np.zeros(10, np.int32))
    outs = [where.empty(10, np.int32) for _ in range(3)]
    with pytest.raises(ValueError, match="takes two"):
        tc.three_way_partition(x, *outs, where.empty(1, np.int64), _third, _third_plus_one)
    with pytest.raises(TypeError, match="d_unselected_out"):
        tc.three_way_partition(x, outs[0], outs[1], where.empty(10, np.float32),
                               where.empty(2, np.int64), _third, _third_plus_one)


# -- errors ------------------------------------------------------------------------------------

def test_errors(where):
    x = where.dev(np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="num_items"):
        tc.inclusive_scan(x, where.empty(10, np.float32), tc.OpKind.PLUS, None, -1)
    with pytest.raises(ValueError, match="fewer than"):
        tc.inclusive_scan(x, where.empty(5, np.float32), tc.OpKind.PLUS, None, 10)
    with pytest.raises(TypeError, match="h_init"):
        tc.reduce_into(x, where.empty(1, np.float32), tc.OpKind.PLUS, 10)
    with pytest.raises(ValueError, match="begin_bit"):
        tc.radix_sort(x, where.empty(10, np.float32), None, None, tc.SortOrder.ASCENDING,
                      begin_bit=4, end_bit=40)
    with pytest.raises(TypeError, match="operator"):
        tc.reduce_into(x, where.empty(1, np.float32), "plus", 10, np.float32(0))
    with pytest.raises(TypeError, match="NumPy scalar"):
        tc.CountingIterator(3)


# -- records through the transforms; streams -------------------------------------------------

def _swap(a, out):
    out.v = a.i
    out.i = a.v


def test_unary_transform_records(where, rng):
    x = np.zeros(2000, BEST)
    x["v"], x["i"] = rng.integers(0, 100, 2000), rng.integers(0, 100, 2000)
    out = where.empty(2000, BEST)
    tc.unary_transform(where.dev(x), out, _swap)
    got = where.host(out)
    np.testing.assert_array_equal(got["v"], x["i"])
    np.testing.assert_array_equal(got["i"], x["v"])


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("conftest").HAVE_GPU, reason="no GPU")
def test_runs_on_the_current_torch_stream():
    torch = pytest.importorskip("torch")
    # small whole numbers: every partial sum is exact, so the decoupled look-back's order of
    # additions (which varies run to run) cannot change a bit
    x = torch.randint(0, 4, (1 << 22,), device="cuda").float()
    out = torch.empty_like(x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # the stream is busy: work on it waits
        tc.inclusive_scan(x, out, tc.OpKind.PLUS)
    s.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.cumsum(x.cpu().numpy().astype(np.float64)))
    out2 = torch.empty_like(x)
    tc.inclusive_scan(x, out2, tc.OpKind.PLUS, stream=s)
    s.synchronize()
    assert torch.equal(out, out2)
