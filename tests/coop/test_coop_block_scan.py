"""coop.block reductions and scans against NumPy, in the simulator and on the GPU: numbers and
items per thread, sum/min/max and user operators (a non-commutative one for the scans), block
sizes from 32 to 1024 with non-powers of two, blocks of two axes."""

import numpy as np
import pytest
from kernels import coop as kc

import threadtile as cuda

SIZES = (32, 33, 64, 96, 100, 160, 256, 500, 1000, 1024)
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def _sizes(rng, k=3):
    """The edges and a few random block sizes (fresh each run)."""
    return sorted({32, 1024, *rng.choice(SIZES, k, replace=False).tolist()})


def _inputs(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True,
                        dtype=np.int64).astype(dtype)


def _check_sums(got, x, dtype, tpb):
    """got: the block's sums, inclusive and exclusive prefix sums (rows of blocks)."""
    xb = x.reshape(-1, tpb).astype(np.float64 if np.dtype(dtype).kind == "f" else np.int64)
    inc = np.cumsum(xb, axis=1)
    exc = inc - xb
    tot = inc[:, -1:]
    if np.dtype(dtype).kind == "f":
        scale = np.cumsum(np.abs(xb), axis=1)
        tol = 4 * np.log2(tpb) * EPS[dtype] * scale
        for g, want in ((got[0], tot), (got[3], inc), (got[4], exc)):
            assert (np.abs(g.reshape(xb.shape) - want) <= tol[:, -1:] + tol).all()
        return
    wrap = 1 << (8 * np.dtype(dtype).itemsize)
    for g, want in ((got[0], tot), (got[3], inc), (got[4], exc)):
        want = np.broadcast_to(want, xb.shape).astype(np.int64)
        if np.dtype(dtype).kind == "u":
            want = want % wrap
        np.testing.assert_array_equal(g.reshape(xb.shape).astype(np.int64), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_block_values(target, rng, dtype):
    for tpb in _sizes(rng):
        nb = int(rng.integers(1, 4))
        x = _inputs(rng, dtype, nb * tpb)
        out = target.to_device(np.zeros((6, nb * tpb), dtype))
        target.launch(kc.block_values, nb, tpb, target.to_device(x), out, tpb=tpb)
        got = target.to_host(out)
        _check_sums(got, x, dtype, tpb)
        xb = x.reshape(nb, tpb)
        np.testing.assert_array_equal(got[1].reshape(nb, tpb), np.broadcast_to(
            xb.min(axis=1, keepdims=True), xb.shape))
        np.testing.assert_array_equal(got[2].reshape(nb, tpb), np.broadcast_to(
            xb.max(axis=1, keepdims=True), xb.shape))
        # the user's add: the block's sum again, by the user's function (another order of
        # additions: the two differ by rounding, bounded by the sum of the magnitudes; a sum
        # near zero after cancellation has no relative bound)
        if np.dtype(dtype).kind == "f":
            mag = np.abs(xb.astype(np.float64)).sum(axis=1, keepdims=True)
            tol = np.broadcast_to(8 * np.log2(tpb) * EPS[dtype] * mag, xb.shape).ravel()
            assert (np.abs(got[5].astype(np.float64) - got[0].astype(np.float64)) <= tol).all()
        else:
            np.testing.assert_array_equal(got[5], got[0])


def test_block_of_two_axes(target, rng):
    x = rng.integers(-1000, 1000, 3 * 96).astype(np.int64)
    out = target.to_device(np.zeros((2, 3 * 96), np.int64))
    target.launch(kc.block_values_2d, 3, (16, 6), target.to_device(x), out)
    got = target.to_host(out).reshape(2, 3, 96)
    xb = x.reshape(3, 96)  # thread x + 16 * y holds element x + 16 * y of its block
    np.testing.assert_array_equal(got[0], np.broadcast_to(xb.sum(1, keepdims=True), xb.shape))
    np.testing.assert_array_equal(got[1], np.cumsum(xb, axis=1) - xb)


def test_items_per_thread(target, rng):
    for tpb in _sizes(rng, 2):
        n = 4
        nb = 2
        x = rng.standard_normal(nb * tpb * n)
        out = target.to_device(np.zeros((2, nb * tpb * n)))
        tot = target.to_device(np.zeros((2, nb * tpb)))
        target.launch(kc.block_items, nb, tpb, target.to_device(x), out, tot, tpb=tpb, n=n)
        got, t = target.to_host(out), target.to_host(tot)
        xb = x.reshape(nb, tpb * n)  # blocked: thread t holds items t*n .. t*n+n-1
        inc = np.cumsum(xb, axis=1)
        tol = 1e-12 * np.cumsum(np.abs(xb), axis=1) * np.log2(tpb * n)
        assert (np.abs(got[0].reshape(xb.shape) - inc) <= tol + 1e-300).all()
        assert (np.abs(got[1].reshape(xb.shape) - (inc - xb)) <= tol + 1e-300).all()
        np.testing.assert_allclose(t[0].reshape(nb, tpb), np.broadcast_to(
            inc[:, -1:], (nb, tpb)), rtol=1e-12)
        np.testing.assert_array_equal(t[1].reshape(nb, tpb), np.broadcast_to(
            xb.max(1, keepdims=True), (nb, tpb)))


def _affine(a, b):
    m = ((a >> 32) * (b >> 32)) & kc.M32
    c = ((a & kc.M32) * (b >> 32) + (b & kc.M32)) & kc.M32
    return (m << 32) | c


def _affine_scans(x, tpb, n):
    """The inclusive and exclusive scans of each block's sequence, in Python ints."""
    inc, exc = [], []
    for row in x.reshape(-1, tpb * n).tolist():
        acc, ident = None, 1 << 32
        for v in row:
            exc.append(ident if acc is None else acc)
            acc = v if acc is None else _affine(acc, v)
            inc.append(acc)
    return np.array(inc, np.uint64), np.array(exc, np.uint64)


def _affine_inputs(rng, size):
    return (rng.integers(0, 1 << 32, size, dtype=np.uint64) << np.uint64(32)) | \
        rng.integers(0, 1 << 32, size, dtype=np.uint64)


def test_non_commutative_scans(target, rng):
    """affine maps compose in order: any reordering of the operands changes the result."""
    for tpb in _sizes(rng, 2):
        n = 3
        nb = 2
        x = _affine_inputs(rng, nb * tpb * n)
        out = target.to_device(np.zeros((5, nb * tpb * n), np.uint64))
        target.launch(kc.affine_scans, nb, tpb, target.to_device(x), out, tpb=tpb, n=n)
        got = target.to_host(out)
        first = x.reshape(nb * tpb, n)[:, 0]  # each thread's first item, as a number
        inc1, exc1 = _affine_scans(first, tpb, 1)
        np.testing.assert_array_equal(got[0].reshape(-1, n)[:, 0], inc1)
        np.testing.assert_array_equal(got[1].reshape(-1, n)[:, 0], exc1)
        np.testing.assert_array_equal(got[2].reshape(-1, n)[:, 0],
                                      np.repeat(inc1.reshape(nb, tpb)[:, -1], tpb))
        inc, exc = _affine_scans(x, tpb, n)
        np.testing.assert_array_equal(got[3], inc)
        np.testing.assert_array_equal(got[4], exc)


@pytest.mark.parametrize("tpb", [32, 96])
def test_python_mode(rng, tpb):
    """python mode (the kernel's own function per thread) gives what lockstep gives."""
    x = rng.standard_normal(2 * tpb).astype(np.float32)
    outs = []
    for mode in ("lockstep", "python"):
        out = np.zeros((6, 2 * tpb), np.float32)
        with cuda.simulate(mode=mode):
            kc.block_values[2, tpb](x, out, tpb=tpb)
        outs.append(out)
    np.testing.assert_array_equal(outs[0][1:3], outs[1][1:3])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    a = _affine_inputs(rng, 2 * tpb * 3)
    res = []
    for mode in ("lockstep", "python"):
        out = np.zeros((5, 2 * tpb * 3), np.uint64)
        with cuda.simulate(mode=mode):
            kc.affine_scans[2, tpb](a, out, tpb=tpb, n=3)
        res.append(out)
    np.testing.assert_array_equal(res[0], res[1])
    items = rng.standard_normal(2 * tpb * 4)
    got = []
    for mode in ("lockstep", "python"):
        out, tot = np.zeros((2, 2 * tpb * 4)), np.zeros((2, 2 * tpb))
        with cuda.simulate(mode=mode):
            kc.block_items[2, tpb](items, out, tot, tpb=tpb, n=4)
        got.append((out, tot))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12, atol=1e-12)
