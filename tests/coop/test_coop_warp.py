"""coop.warp reductions and scans against NumPy, in the simulator and on the GPU: logical warps
of 32 down to 2 lanes, a non-commutative user operator for the scans."""

import numpy as np
import pytest
from kernels import coop as kc
from test_coop_block_scan import _affine, _affine_inputs

import threadtile as cuda


@pytest.mark.parametrize("w", [32, 16, 8, 2])
def test_warp_values(target, rng, w):
    block = int(rng.choice([32, 64, 96, 256]))
    x = rng.integers(-10**6, 10**6, 2 * block).astype(np.int64)
    out = target.to_device(np.zeros((4, 2 * block), np.int64))
    target.launch(kc.warp_values, 2, block, target.to_device(x), out, w=w)
    got = target.to_host(out).reshape(4, -1, w)
    xw = x.reshape(-1, w)
    np.testing.assert_array_equal(got[0], np.broadcast_to(xw.sum(1, keepdims=True), xw.shape))
    np.testing.assert_array_equal(got[1], np.broadcast_to(xw.max(1, keepdims=True), xw.shape))
    np.testing.assert_array_equal(got[2], np.cumsum(xw, axis=1))
    np.testing.assert_array_equal(got[3], np.cumsum(xw, axis=1) - xw)


def test_warp_float_sums(target, rng):
    x = rng.standard_normal(128).astype(np.float32)
    out = target.to_device(np.zeros((4, 128), np.float32))
    target.launch(kc.warp_values, 1, 128, target.to_device(x), out, w=8)
    got = target.to_host(out).reshape(4, -1, 8)
    xw = x.reshape(-1, 8).astype(np.float64)
    tol = 8 * np.finfo(np.float32).eps * np.cumsum(np.abs(xw), axis=1)
    assert (np.abs(got[0] - xw.sum(1, keepdims=True)) <= tol[:, -1:]).all()
    assert (np.abs(got[2] - np.cumsum(xw, axis=1)) <= tol).all()


@pytest.mark.parametrize("w", [32, 16, 4])
def test_warp_non_commutative(target, rng, w):
    x = _affine_inputs(rng, 64)
    out = target.to_device(np.zeros((3, 64), np.uint64))
    target.launch(kc.warp_affine, 1, 64, target.to_device(x), out, w=w)
    got = target.to_host(out)
    inc, exc, red = [], [], []
    for row in x.reshape(-1, w).tolist():
        acc = None
        for v in row:
            exc.append(1 << 32 if acc is None else acc)
            acc = v if acc is None else _affine(acc, v)
            inc.append(acc)
        red += [acc] * w
    np.testing.assert_array_equal(got[0], np.array(inc, np.uint64))
    np.testing.assert_array_equal(got[1], np.array(exc, np.uint64))
    np.testing.assert_array_equal(got[2], np.array(red, np.uint64))


def test_python_mode(rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int64)
    a = _affine_inputs(rng, 64)
    res = []
    for mode in ("lockstep", "python"):
        out = np.zeros((4, 64), np.int64)
        out2 = np.zeros((3, 64), np.uint64)
        with cuda.simulate(mode=mode):
            kc.warp_values[1, 64](x, out, w=16)
            kc.warp_affine[1, 64](a, out2, w=8)
        res.append((out, out2))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
