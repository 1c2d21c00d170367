"""Blocks started heaviest first (ir/launch_order.py): where a tile kernel of two warpgroups or
more runs a loop more iterations the larger ``bid(0)``, the CUDA backend gives the blocks the
GPU starts first the largest ``bid(0)``, ``bid(1)`` fastest, a permutation of the grid's
blocks. Which kernels
qualify (codegen), and that every block of 1-, 2- and 3-d grids still computes its own tile
exactly once (simulator and GPU, poisoned outputs against NumPy)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel(num_warps=8)
def prefix_tiles(X, Out, TM: ConstInt):
    """Out[b, r, tile i] = the sum of X[b, r, tiles 0 ... i]: block (i, r, b) loops i + 1
    times, as causal attention's query tile i reads the keys up to it."""
    i, r, b = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.zeros((1, 1, TM), dtype=ct.float32)
    for j in range(i + 1):
        acc += ct.load(X, index=(b, r, j), shape=(1, 1, TM))
    ct.store(Out, index=(b, r, i), tile=acc)


@ct.kernel(num_warps=8)
def prefix_1d(X, Out, TM: ConstInt):
    """The same over a 1-d grid: the blocks in reverse order."""
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(ct.cdiv(min((i + 1) * TM, X.shape[0]), TM)):
        acc += ct.load(X, index=(j,), shape=(TM,))
    ct.store(Out, index=(i,), tile=acc)


@ct.kernel(num_warps=8)
def suffix_tiles(X, Out, n: int, TM: ConstInt):
    """Block i loops n - i times: the work shrinks with bid(0)."""
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(i, n):
        acc += ct.load(X, index=(j,), shape=(TM,))
    ct.store(Out, index=(i,), tile=acc)


@ct.kernel(num_warps=8)
def same_work(X, Out, n: int, TM: ConstInt):
    """Every block loops n times."""
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(n):
        acc += ct.load(X, index=(j,), shape=(TM,))
    ct.store(Out, index=(i,), tile=acc)


@ct.kernel(num_warps=8)
def prefix_counted(X, Out, Count, TM: ConstInt):
    """prefix_1d with an atomic count of the blocks: blocks sharing an atomic keep their order."""
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(i + 1):
        acc += ct.load(X, index=(j,), shape=(TM,))
    ct.store(Out, index=(i,), tile=acc)
    ct.atomic_add(Count, (0,), 1)


def _prefix_1d(X, Out, TM: ConstInt):
    """prefix_1d in 4 warps (one warpgroup): the blocks keep their order."""
    i = ct.bid(0)
    acc = ct.zeros((TM,), dtype=ct.float32)
    for j in range(i + 1):
        acc += ct.load(X, index=(j,), shape=(TM,))
    ct.store(Out, index=(i,), tile=acc)


prefix_1d_one_warpgroup = ct.kernel(num_warps=4)(_prefix_1d)


def _x(n=4, tm=16):
    return np.zeros(n * tm, np.float32), np.zeros(n * tm, np.float32)


def test_work_growing_with_bid0_starts_heaviest_first():
    src = prefix_tiles.cuda_source(np.zeros((2, 3, 64), np.float32),
                                   np.zeros((2, 3, 64), np.float32), 16)
    assert "tt_bid_x = int(gridDim.x - 1 - tt_started / gridDim.y)" in src
    assert "tt_bid_y = int(tt_started % gridDim.y)" in src
    body = src.split("tt_bid_y = int(tt_started % gridDim.y);", 1)[1]
    assert "blockIdx.x" not in body and "blockIdx.y" not in body and "blockIdx.z" in body
    assert "tt_bid_x" in prefix_1d.cuda_source(*_x(), 16)


@pytest.mark.parametrize(("kernel", "args"), [
    (suffix_tiles, (4,)), (same_work, (4,))])
def test_work_not_growing_keeps_the_order(kernel, args):
    assert "tt_bid" not in kernel.cuda_source(*_x(), *args, 16)


def test_a_block_of_one_warpgroup_keeps_the_order():
    src = prefix_1d_one_warpgroup.cuda_source(*_x(), 16)
    assert "__launch_bounds__(128)" in src and "tt_bid" not in src


def test_blocks_sharing_an_atomic_keep_the_order():
    src = prefix_counted.cuda_source(*_x(), np.zeros(1, np.int32), 16)
    assert "tt_bid" not in src


@pytest.mark.parametrize("grid", [(5, 3, 2), (7, 1, 1), (1, 4, 3), (6, 5, 1), (3, 37, 2)])
def test_every_block_its_own_tile(target, rng, grid):
    n, rows, batch = grid
    tm = 16
    x = rng.standard_normal((batch, rows, n * tm)).astype(np.float32)
    out = target.to_device(poison((batch, rows, n * tm), np.float32))
    target.launch_tile(prefix_tiles, grid, target.to_device(x), out, tm)
    want = np.cumsum(x.astype(np.float64).reshape(batch, rows, n, tm), axis=2)
    np.testing.assert_allclose(target.to_host(out), want.reshape(batch, rows, n * tm),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 9])
def test_one_axis_reversed(target, rng, n):
    tm = 32
    x = rng.standard_normal(n * tm).astype(np.float32)
    out = target.to_device(poison(n * tm, np.float32))
    target.launch_tile(prefix_1d, (n,), target.to_device(x), out, tm)
    want = np.cumsum(x.astype(np.float64).reshape(n, tm), axis=0).reshape(-1)
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    x = np.zeros((2, 3, 64), np.float32)
    assert compile_cubin(prefix_tiles, x, x.copy(), 16, arch=arch)[:4] == b"\x7fELF"
