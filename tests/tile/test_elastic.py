"""Grid-stride kernels launched on a full wave (ir/elastic.py, CompiledKernel.wave): which
kernels the proof accepts and which it refuses, the block it leaves them, and on the GPU the
persistent matmul of cuTile's MatMul sample launched on one block, on fewer blocks than the
device holds and on more, each against NumPy in float64 with a poisoned output."""

import numpy as np
import pytest
from conftest import HAVE_GPU, cdiv, poison
from kernels.tiles import matmul, matmul_persistent

import threadtile.tile as ct
from threadtile import builds
from threadtile.ir import elastic

C = ct.Constant[int]
PAD = ct.PaddingMode.ZERO


@ct.kernel
def scaled(X, Y, s: float, T: C):
    """Rows scaled, a block at a time over a grid-stride loop, its bounds bound to locals."""
    bid = ct.bid(0)
    step = ct.num_blocks(0)
    for r in range(bid, X.shape[0], step):
        t = ct.load(X, index=(r, 0), shape=(1, T), padding_mode=PAD)
        ct.store(Y, index=(r, 0), tile=t * s)


@ct.kernel
def marks_first(X, Y, Flag, T: C):
    """Writes a flag before its loop: every block of a larger grid would write it again."""
    ct.store(Flag, index=(0,), tile=ct.full((1,), 1, dtype=ct.int32))
    for r in range(ct.bid(0), X.shape[0], ct.num_blocks(0)):
        ct.store(Y, index=(r, 0), tile=ct.load(X, index=(r, 0), shape=(1, T)))


@ct.kernel
def counts(X, Count, T: C):
    """An atomic in the loop: blocks that count may wait on one another."""
    for r in range(ct.bid(0), X.shape[0], ct.num_blocks(0)):
        ct.atomic_add(Count, (0,), ct.sum(ct.load(X, index=(r, 0), shape=(1, T))))


@ct.kernel
def stops_early(X, Y, T: C):
    """A `break` out of the loop: the rows a block reaches depend on its start."""
    for r in range(ct.bid(0), X.shape[0], ct.num_blocks(0)):
        t = ct.load(X, index=(r, 0), shape=(1, T))
        if ct.sum(t) < 0:
            break
        ct.store(Y, index=(r, 0), tile=t)


@ct.kernel
def tags(X, Y, T: C):
    """The block's number read in the loop's body: its result depends on the grid."""
    for r in range(ct.bid(0), X.shape[0], ct.num_blocks(0)):
        t = ct.load(X, index=(r, 0), shape=(1, T))
        ct.store(Y, index=(r, 0), tile=t + ct.bid(0))


@ct.kernel
def pairs(X, Y, T: C):
    """A grid-stride loop inside another: the pairs (r, c) visited depend on the grid."""
    for r in range(ct.bid(0), X.shape[0], ct.num_blocks(0)):
        for c in range(ct.bid(0), X.shape[1] // T, ct.num_blocks(0)):
            ct.store(Y, index=(r, c), tile=ct.load(X, index=(r, c), shape=(1, T)))


@ct.kernel
def strided_by_two(X, Y, T: C):
    """A loop over every other block's rows: not a grid-stride loop."""
    for r in range(ct.bid(0), X.shape[0], 2 * ct.num_blocks(0)):
        ct.store(Y, index=(r, 0), tile=ct.load(X, index=(r, 0), shape=(1, T)))


def _z(*shape, dtype=np.float16):
    return np.zeros(shape, dtype)


def _module(kernel, args, consts):
    return kernel._spec_for(list(args), consts).module


def test_the_persistent_matmul_is_a_grid_stride_kernel():
    m = _module(matmul_persistent, (_z(512, 256), _z(256, 512), _z(512, 512)),
                dict(tm=128, tn=128, tk=64))
    assert elastic.grid_stride(m)


def test_a_loop_bounded_by_locals_is_a_grid_stride_loop():
    m = _module(scaled, (_z(64, 32, dtype=np.float32), _z(64, 32, dtype=np.float32), 2.0),
                dict(T=32))
    assert elastic.grid_stride(m)


def test_a_plain_kernel_is_not():
    m = _module(matmul, (_z(512, 256), _z(256, 512), _z(512, 512)),
                dict(tm=128, tn=128, tk=64))
    assert not elastic.grid_stride(m)


@pytest.mark.parametrize("kernel", [marks_first, counts, stops_early, tags, pairs,
                                    strided_by_two])
def test_kernels_whose_result_depends_on_the_grid_are_not(kernel):
    x = _z(64, 32, dtype=np.float32)
    extra = {marks_first: (x, np.zeros(1, np.int32)), counts: (np.zeros(1, np.float32),)}
    args = (x,) + extra.get(kernel, (x,))
    assert not elastic.grid_stride(_module(kernel, args, dict(T=32)))


def test_threadtile_elastic_0_turns_it_off(monkeypatch):
    monkeypatch.setenv("THREADTILE_ELASTIC", "0")
    assert not elastic.enabled()


def test_persistent_128x64_keeps_one_warpgroup():
    """compiler.auto_threads gave a persistent 128x64 k loop two warpgroups for a grid of
    one block a multiprocessor; launched on a full wave it keeps 4 warps, as a plain one."""
    m = _module(matmul_persistent, (_z(512, 256), _z(256, 512), _z(512, 512)),
                dict(tm=128, tn=64, tk=64))
    assert m.threads == 128


def test_the_build_is_marked_elastic():
    args = (_z(512, 256), _z(256, 512), _z(512, 512))
    spec = matmul_persistent._spec_for(list(args), dict(tm=64, tn=128, tk=64))
    compiled, _ = builds.build(spec, "sm_80")
    assert compiled.elastic_x
    spec = matmul._spec_for(list(args), dict(tm=64, tn=128, tk=64))
    assert not builds.build(spec, "sm_80")[0].elastic_x


def test_the_wave_is_asked_of_the_driver_once_a_configuration(monkeypatch):
    """CompiledKernel.wave's arithmetic and its caches (the host's side, no GPU: the
    configuration check and the driver's occupancy stand in for a device of 132
    multiprocessors holding two blocks each)."""
    from threadtile.runtime import driver, launcher

    k = launcher.CompiledKernel(b"", "k", [])
    asked = []
    monkeypatch.setattr(k, "_configure", lambda *a: None)
    monkeypatch.setattr(driver, "max_active_blocks",
                        lambda func, threads, shared: asked.append(shared) or 264)
    grid, block = (132, 1, 1), (128, 1, 1)
    assert k.wave(grid, block, 1024, 0) == (264, 1, 1)
    assert k.wave(grid, block, 1024, 0) is k.wave(grid, block, 1024, 0)
    assert k.wave((132, 1, 1), (128, 1, 1), 1024, 0) == (264, 1, 1)  # equal, not the same
    assert asked == [1024]
    assert k.wave((10, 2, 3), block, 0, 0) == (44, 2, 3)     # y and z kept: 44 x 6 >= 264
    assert k.wave((500, 1, 1), block, 0, 0) == (500, 1, 1)   # a wave already
    assert asked == [1024, 0, 0]


@pytest.mark.parametrize("blocks", [1, 3, 1000])
def test_persistent_numerics_whatever_the_grid(target, rng, blocks):
    """One block, three, or more than the tiles (600x520 in 64x128 tiles: 50): on the GPU
    the first two are launched on a full wave, the last as given; the same product."""
    m, n, k = 600, 520, 192
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = target.to_device(poison((m, n), np.float16))
    target.launch_tile(matmul_persistent, (blocks,), target.to_device(a),
                       target.to_device(b), out, 64, 128, 64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(np.asarray(target.to_host(out), np.float64), ref, rtol=2e-2,
                               atol=2e-2 * np.sqrt(k))
    assert cdiv(m, 64) * cdiv(n, 128) == 50


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
def test_the_launch_fills_a_wave():
    import torch

    a = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    out = torch.full((512, 512), float("nan"), device="cuda", dtype=torch.float16)
    kernel = ct.kernel(matmul_persistent.py_func)  # (its own launches)
    ct.launch(torch.cuda.current_stream(), (1,), kernel, (a, b, out, 64, 128, 64))
    torch.cuda.synchronize()
    torch.testing.assert_close(out.float(), a.float() @ b.float(), rtol=2e-2, atol=0.5)
    ((compiled, scratch),) = kernel._launches.values()
    assert compiled.elastic_x
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    block = compiled.block
    grid = compiled.wave((1, 1, 1), block, scratch, torch.cuda.current_device())
    assert grid[0] >= sms and grid[1:] == (1, 1)
    assert compiled.wave((10 * grid[0], 1, 1), block, scratch, 0) == (10 * grid[0], 1, 1)
