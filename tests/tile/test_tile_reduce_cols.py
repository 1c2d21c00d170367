"""Reductions of the leading axes (a column sum, as a backward pass's dW = sum(dY * X, axis=0))
whose kept axes hold a multiple of V * NT elements take tile/reduce.h ``reduce_cols``: each
thread combines its own registers, no barrier, no scratch. The kinds (sum, prod, max, min,
argmax, argmin), dtypes, keepdims and reductions of two leading axes, in the simulator and on
the GPU against NumPy in float64; the generated code says which path, and the shapes whose
kept axes are not such a multiple keep the general one."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel(num_warps=4)
def col_reductions(X, S, P, MX, MN, AX, AN, R: ConstInt, C: ConstInt):
    x = ct.load(X, index=(0, 0), shape=(R, C))
    ct.store(S, index=(0,), tile=ct.sum(x, axis=0))
    ct.store(P, index=(0,), tile=ct.prod(x * 0.0 + 1.0 + x * 0.001, axis=0))
    ct.store(MX, index=(0,), tile=ct.max(x, axis=0))
    ct.store(MN, index=(0, 0), tile=ct.min(x, axis=0, keepdims=True))
    ct.store(AX, index=(0,), tile=ct.argmax(x, axis=0))
    ct.store(AN, index=(0,), tile=ct.argmin(x, axis=0))


@ct.kernel(num_warps=4)
def two_leading(X, S, A: ConstInt, B: ConstInt, C: ConstInt):
    """The sum over the first two axes of an (A, B, C) tile: (C,)."""
    x = ct.load(X, index=(0, 0, 0), shape=(A, B, C))
    ct.store(S, index=(0,), tile=ct.sum(x, axis=(0, 1)))


@ct.kernel(num_warps=4)
def dwdb(DW, Out, TM: ConstInt, TN: ConstInt):
    """cuTile's LayerNorm sample's final reduction, as written there: partial rows summed over
    tiles of TM rows, then over the tile's rows."""
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for i in range(ct.num_tiles(DW, axis=0, shape=(TM, TN))):
        acc += ct.load(DW, index=(i, ct.bid(0)), shape=(TM, TN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(Out, index=(ct.bid(0),), tile=ct.sum(acc, axis=0))


def _outs(target, c, dtype):
    return ([target.to_device(poison((c,), dtype)) for _ in range(3)] +
            [target.to_device(poison((1, c), dtype))] +
            [target.to_device(poison((c,), np.int32)) for _ in range(2)])


@pytest.mark.parametrize(("r", "c"), [(8, 128), (2, 256), (16, 512), (1, 128)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_column_reductions(target, rng, r, c, dtype):
    if dtype == np.int32:
        x = rng.integers(-50, 50, (r, c)).astype(dtype)
        x[:, 0] = 7  # ties: the first row wins argmax and argmin
    else:
        x = rng.standard_normal((r, c)).astype(dtype)
    outs = _outs(target, c, dtype)
    target.launch_tile(col_reductions, 1, target.to_device(x), *outs, r, c)
    s, p, mx, mn, ax, an = (target.to_host(o) for o in outs)
    x64 = x.astype(np.float64)
    tol = {np.float32: 1e-5, np.float16: 2e-2, np.int32: 0}[dtype]
    np.testing.assert_allclose(s, x64.sum(axis=0), rtol=tol, atol=tol * r)
    np.testing.assert_array_equal(mx, x.max(axis=0))
    np.testing.assert_array_equal(mn, x.min(axis=0, keepdims=True))
    np.testing.assert_array_equal(ax, x.argmax(axis=0))
    np.testing.assert_array_equal(an, x.argmin(axis=0))
    if dtype != np.int32:
        np.testing.assert_allclose(p, np.prod(1.0 + x64 * 0.001, axis=0), rtol=tol * 4)


def test_nan_and_ties_in_columns(target):
    x = np.zeros((4, 128), np.float32)
    x[2, 3] = np.nan
    x[:, 5] = np.nan
    x[1, 7] = x[3, 7] = 1.0
    outs = _outs(target, 128, np.float32)
    target.launch_tile(col_reductions, 1, target.to_device(x), *outs, 4, 128)
    _, _, mx, _, ax, _ = (target.to_host(o) for o in outs)
    assert mx[3] == 0.0 and np.isnan(mx[5]) and mx[7] == 1.0  # max ignores a NaN
    assert ax[7] == 1 and ax[0] == 0


@pytest.mark.parametrize(("a", "b", "c"), [(2, 4, 128), (4, 1, 256)])
def test_two_leading_axes(target, rng, a, b, c):
    x = rng.standard_normal((a, b, c)).astype(np.float32)
    out = target.to_device(poison((c,), np.float32))
    target.launch_tile(two_leading, 1, target.to_device(x), out, a, b, c)
    np.testing.assert_allclose(target.to_host(out), x.astype(np.float64).sum(axis=(0, 1)),
                               rtol=1e-5, atol=1e-5 * a * b)


@pytest.mark.parametrize(("rows", "n"), [(64, 1024), (50, 512)])
def test_layer_norm_dwdb_reduction(target, rng, rows, n):
    if target.name == "sim" and rows * n > 64 * 512:
        pytest.skip("the simulator runs the smaller shape (the GPU runs both)")
    dw = rng.standard_normal((rows, n)).astype(np.float32)
    out = target.to_device(poison((n,), np.float32))
    target.launch_tile(dwdb, n // 512, target.to_device(dw), out, 32, 512)
    np.testing.assert_allclose(target.to_host(out), dw.astype(np.float64).sum(axis=0),
                               rtol=1e-5, atol=1e-4)


def test_the_path_is_reduce_cols():
    x, v, i = np.zeros((8, 512), np.float32), np.zeros(512, np.float32), np.zeros(512, np.int32)
    src = col_reductions.cuda_source(x, v, v, v, np.zeros((1, 512), np.float32), i, i, R=8,
                                     C=512)
    assert src.count("tt::tile::reduce_cols<") == 6
    assert "tt::tile::reduce_cols<tt::tile::MIN, 1, 512>(x)" in src  # keepdims
    assert "tt::tile::reduce<" not in src
    # all in registers: no scratch for them (the kernel needs none at all)
    assert "#define TT_SCRATCH_BYTES 0\n" in src
    src = two_leading.cuda_source(np.zeros((2, 4, 128), np.float32), np.zeros(128, np.float32),
                                  A=2, B=4, C=128)
    assert "tt::tile::reduce_cols<tt::tile::SUM, 128>(x)" in src
    # 64 columns over 128 threads: a column's elements lie in different threads
    v64 = np.zeros(64, np.float32)
    src = col_reductions.cuda_source(np.zeros((8, 64), np.float32), v64, v64, v64,
                                     np.zeros((1, 64), np.float32), np.zeros(64, np.int32),
                                     np.zeros(64, np.int32), R=8, C=64)
    assert "tt::tile::reduce_cols<" not in src and "tt::tile::reduce<" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    x, v, i = np.zeros((8, 256), np.float16), np.zeros(256, np.float16), np.zeros(256, np.int32)
    assert compile_cubin(col_reductions, x, v, v, v, np.zeros((1, 256), np.float16), i, i, R=8,
                         C=256, arch=arch)
    assert compile_cubin(dwdb, np.zeros((64, 1024), np.float32), np.zeros(1024, np.float32),
                         32, 512, arch=arch)
