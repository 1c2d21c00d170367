"""Reductions of the trailing axes into fewer results than threads (tile/reduce.h
``reduce_split``: each result's run split over a group of lanes, then shuffles): the kinds,
dtypes and shapes that take it (a softmax's few rows, a whole small tile, runs not a multiple
of the group), in the simulator and on the GPU against NumPy in float64; the generated code
says which path."""

import numpy as np
import pytest
from conftest import poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def row_reductions(X, S, P, MX, MN, R: ConstInt, C: ConstInt):
    x = ct.load(X, index=(0, 0), shape=(R, C))
    ct.store(S, index=(0,), tile=ct.sum(x, axis=1))
    ct.store(P, index=(0,), tile=ct.prod(x * 0.0 + 1.0 + x * 0.001, axis=1))
    ct.store(MX, index=(0,), tile=ct.max(x, axis=1))
    ct.store(MN, index=(0,), tile=ct.min(x, axis=1))


@ct.kernel
def whole_sum(X, Out, R: ConstInt, C: ConstInt):
    x = ct.load(X, index=(0, 0), shape=(R, C))
    ct.store(Out, index=(0,), tile=ct.sum(x, axis=None).reshape((1,)))


SHAPES = [(4, 64), (2, 64), (4, 32), (1, 16), (8, 8), (16, 4)]


@pytest.mark.parametrize(("r", "c"), SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_row_reductions(target, rng, r, c, dtype):
    if dtype == np.int32:
        x = rng.integers(-50, 50, (r, c)).astype(dtype)
    else:
        x = rng.standard_normal((r, c)).astype(dtype)
    outs = [target.to_device(poison((r,), dtype)) for _ in range(4)]
    target.launch_tile(row_reductions, 1, target.to_device(x), *outs, r, c)
    s, p, mx, mn = (target.to_host(o) for o in outs)
    x64 = x.astype(np.float64)
    tol = {np.float32: 1e-5, np.float16: 2e-2, np.int32: 0}[dtype]
    np.testing.assert_allclose(s, x64.sum(axis=1), rtol=tol, atol=tol * c)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    np.testing.assert_array_equal(mn, x.min(axis=1))
    if dtype != np.int32:
        want = np.prod(1.0 + x64 * 0.001, axis=1)
        np.testing.assert_allclose(p, want, rtol=tol * 4)


def test_max_ignores_nan_as_the_general_path_does(target):
    x = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
    x[1, 5] = np.nan
    x[2, :] = np.nan
    outs = [target.to_device(poison((4,), np.float32)) for _ in range(4)]
    target.launch_tile(row_reductions, 1, target.to_device(x), *outs, 4, 64)
    mx = target.to_host(outs[2])
    assert mx[0] == x[0].max() and mx[1] == np.nanmax(x[1]) and mx[3] == x[3].max()
    assert np.isnan(mx[2])


@pytest.mark.parametrize(("r", "c"), [(4, 64), (2, 8), (1, 2)])
def test_whole_tile_sum(target, rng, r, c):
    x = rng.standard_normal((r, c)).astype(np.float32)
    out = target.to_device(poison((1,), np.float32))
    target.launch_tile(whole_sum, 1, target.to_device(x), out, r, c)
    np.testing.assert_allclose(target.to_host(out)[0], x.astype(np.float64).sum(),
                               rtol=1e-5, atol=1e-5 * x.size)


def test_the_path_is_reduce_split():
    f32 = np.zeros((4, 64), np.float32)
    v = np.zeros(4, np.float32)
    src = row_reductions.cuda_source(f32, v, v, v, v, R=4, C=64)
    assert src.count("tt::tile::reduce_split<") == 4
    assert "reduce_split<tt::tile::SUM, 32, 4>" in src
    # a run shorter than a warp takes groups no wider than it: 16 rows of 4, 4 lanes each
    v16 = np.zeros(16, np.float32)
    src = row_reductions.cuda_source(np.zeros((16, 4), np.float32), v16, v16, v16, v16, R=16,
                                     C=4)
    assert "reduce_split<tt::tile::SUM, 4, 16>" in src


@ct.kernel
def center_rows(X, Y, M, R: ConstInt, C: ConstInt):
    """Each row minus its maximum, and the maximum at both ends: the (R, 1) maxima, fewer than
    the block's threads, broadcast back over the (R, C) tile and a (C, R) one."""
    x = ct.load(X, index=(0, 0), shape=(R, C))
    m = ct.max(x, axis=1, keepdims=True)
    ct.store(Y, index=(0, 0), tile=x - m)
    ct.store(M, index=(0, 0), tile=ct.broadcast_to(ct.reshape(m, (1, R)), (C, R)))


@pytest.mark.parametrize(("r", "c"), [(4, 64), (2, 128), (8, 32), (1, 64), (16, 16), (32, 8)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.float64])
def test_few_row_results_broadcast_back(target, rng, r, c, dtype):
    """The broadcast of a replicated source of 32 elements or fewer takes warp shuffles on the
    GPU (tile/shapes.h broadcast_smem), the scratch otherwise; values of every width."""
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-1000, 1000, (r, c)).astype(dtype)
    else:
        x = rng.standard_normal((r, c)).astype(dtype)
    y = target.to_device(poison((r, c), dtype))
    m = target.to_device(poison((c, r), dtype))
    target.launch_tile(center_rows, 1, target.to_device(x), y, m, r, c)
    mx = x.max(axis=1, keepdims=True)
    np.testing.assert_array_equal(target.to_host(y), x - mx)
    np.testing.assert_array_equal(target.to_host(m), np.broadcast_to(mx.reshape(1, r), (c, r)))
