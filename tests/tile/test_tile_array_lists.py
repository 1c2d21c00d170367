"""A list of arrays indexed by a value known only when the kernel runs: cuTile's
``inp_list[peer]`` (its AllGatherMatmul sample picks the peer's input by the block's row of
tiles), numba's homogeneous tuple of arrays. The pick is an array variable bound by a chain of
ifs (frontend/tuples.py ``_pick_array``). Numerics against NumPy in float64 in the simulator
and on the GPU; mixed layouts; the errors; every kernel compiles for sm_80 and sm_90."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile
import threadtile.tile as ct
from threadtile.errors import KernelCompileError, KernelRuntimeError

ConstInt = ct.Constant[int]


@ct.kernel
def gathered_product(parts, w, out, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """out = concat(parts) @ w: block (i, j) takes its rows of A from part i // (rows of a
    part in tiles), as an all-gather followed by a matmul does with its peers' inputs."""
    tiles_per_part = ct.cdiv(parts[0].shape[0], tm)
    i, j = ct.bid(0), ct.bid(1)
    src = parts[i // tiles_per_part]
    kind = ct.tfloat32 if src.dtype == ct.float32 else src.dtype
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(w, axis=0, shape=(tk, tn))):
        a = ct.load(src, index=(i % tiles_per_part, k), shape=(tm, tk),
                    padding_mode=ct.PaddingMode.ZERO).astype(kind)
        b = ct.load(w, index=(k, j), shape=(tk, tn),
                    padding_mode=ct.PaddingMode.ZERO).astype(kind)
        acc = ct.mma(a, b, acc)
    ct.store(out, index=(i, j), tile=acc.astype(out.dtype))


@ct.kernel
def pick_rows(parts, out, T: ConstInt):
    """Row block i of out is part i % len(parts)'s block i // len(parts)."""
    i = ct.bid(0)
    n = len(parts)
    t = ct.load(parts[i % n], index=(i // n,), shape=(T,))
    ct.store(out, index=(i,), tile=t)


@ct.kernel
def pick_by_argument(parts, out, which: int, T: ConstInt):
    t = ct.load(parts[which], index=(ct.bid(0),), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=t)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(("world", "m", "k", "n"), [(2, 64, 64, 64), (3, 32, 96, 64),
                                                   (4, 64, 128, 32)])
def test_gathered_product(target, rng, dtype, world, m, k, n):
    parts = [rng.standard_normal((m, k)).astype(dtype) for _ in range(world)]
    w = rng.standard_normal((k, n)).astype(dtype)
    out = target.to_device(poison((world * m, n), np.float32))
    tm, tn, tk = 32, 32, 32
    target.launch_tile(gathered_product, (world * m // tm, n // tn),
                       [target.to_device(p) for p in parts], target.to_device(w), out,
                       tm, tn, tk)
    want = np.concatenate(parts).astype(np.float64) @ w.astype(np.float64)
    tol = 2e-3 if dtype == np.float32 else 1e-3  # tf32 rounds the float32 operands
    np.testing.assert_allclose(target.to_host(out), want, rtol=tol, atol=tol * np.sqrt(k) * 4)


def test_mixed_layouts(target, rng):
    """A contiguous array, a strided view and a column of a 2-d array in one list: the pick
    is strided."""
    T, blocks = 8, 4
    a = rng.standard_normal(T * blocks).astype(np.float32)
    big = rng.standard_normal(2 * T * blocks).astype(np.float32)
    col = rng.standard_normal((T * blocks, 3)).astype(np.float32)
    parts = [target.to_device(a), target.to_device(big[::2]), target.to_device(col[:, 1])]
    out = target.to_device(poison(3 * T * blocks, np.float32))
    target.launch_tile(pick_rows, 3 * blocks, parts, out, T)
    got = target.to_host(out).reshape(blocks, 3, T)
    for p, host in enumerate((a, big[::2], col[:, 1])):
        np.testing.assert_array_equal(got[:, p], host.reshape(blocks, T))


@pytest.mark.parametrize("which", [0, 2, -1])
def test_index_from_an_argument(target, rng, which):
    parts = [rng.standard_normal(32).astype(np.float32) for _ in range(3)]
    out = target.to_device(poison(32, np.float32))
    target.launch_tile(pick_by_argument, 4, [target.to_device(p) for p in parts], out, which, 8)
    np.testing.assert_array_equal(target.to_host(out), parts[which])


def test_simulator_device_arrays_in_a_list():
    """Device arrays made under simulate() run in place inside a list, as they do alone."""
    with threadtile.simulate():
        parts = [threadtile.to_device(np.full(8, v, np.float32)) for v in (1.0, 2.0, 3.0)]
        out = threadtile.to_device(np.zeros(24, np.float32))
        ct.launch(None, (3,), pick_rows, (parts, out, 8))
        got = out.copy_to_host()
    np.testing.assert_array_equal(got, np.repeat([1.0, 2.0, 3.0], 8).astype(np.float32))


def test_simulator_device_array_beside_a_torch_tensor_in_a_list():
    """A list holding a simulator device array (in place) and a CPU torch tensor (copied to a
    host view, as alone)."""
    torch = pytest.importorskip("torch")
    with threadtile.simulate():
        parts = [threadtile.to_device(np.full(8, 1.0, np.float32)), torch.full((8,), 2.0)]
        out = threadtile.to_device(np.zeros(16, np.float32))
        ct.launch(None, (2,), pick_rows, (parts, out, 8))
        got = out.copy_to_host()
    np.testing.assert_array_equal(got, np.repeat([1.0, 2.0], 8).astype(np.float32))


def test_index_out_of_range_in_the_simulator():
    parts = [np.zeros(8, np.float32), np.ones(8, np.float32)]
    with threadtile.simulate(), pytest.raises(IndexError, match="tuple index out of range"):
        pick_by_argument[1](parts, np.zeros(8, np.float32), 2, 8)


def test_arrays_of_two_dtypes_are_refused():
    parts = [np.zeros(8, np.float32), np.zeros(8, np.float16)]
    with threadtile.simulate(), pytest.raises(KernelCompileError, match="must share dtype"):
        pick_by_argument[1](parts, np.zeros(8, np.float32), 1, 8)


@threadtile.jit
def pick_per_block(parts, out, which):
    """numba's tuple of arrays of one type, indexed by a value read from memory."""
    i = threadtile.grid(1)
    if i < out.size:
        src = parts[which[threadtile.blockIdx.x]]
        out[i] = src[i]


def test_thread_level_pick(target, rng):
    parts = [rng.standard_normal(64).astype(np.float32) for _ in range(3)]
    which = np.array([2, 0], np.int64)
    out = target.to_device(poison(64, np.float32))
    target.launch(pick_per_block, 2, 32, tuple(target.to_device(p) for p in parts), out,
                  target.to_device(which))
    got = target.to_host(out)
    np.testing.assert_array_equal(got[:32], parts[2][:32])
    np.testing.assert_array_equal(got[32:], parts[0][32:])


def test_picked_operand_loop_stays_a_loop():
    """The k loop over a picked array stays a loop of loads and mmas: the fused staged loop
    (cp.async) measured 5.3x slower on AllGatherMatmul's float32 128 x 128 x 128 tiles on an
    H200 (49.6 ms against 9.4 ms), and the Hopper loop needs tensor maps of kernel
    parameters."""
    z = np.zeros
    src = gathered_product.cuda_source([z((64, 64), np.float16)] * 2, z((64, 64), np.float16),
                                       z((128, 64), np.float32), 32, 32, 32)
    assert "tt::tile::mma_loop" not in src
    assert "tt::tile::mma<" in src


@threadtile.jit
def pick_per_thread(parts, out, which):
    i = threadtile.grid(1)
    if i < out.size:
        src = parts[which[i]]
        out[i] = src[i]


def test_thread_level_pick_per_thread_is_refused_by_the_simulator():
    """A pick that differs between threads of a block is valid on a GPU, but the simulator
    keeps one array per variable and block: it says so, naming the arrays."""
    parts = tuple(np.zeros(32, np.float32) for _ in range(2))
    which = np.arange(32, dtype=np.int64) % 2
    with threadtile.simulate(), pytest.raises(KernelRuntimeError,
                                              match=r"different threads of a block \(parts"):
        pick_per_thread[1, 32](parts, np.zeros(32, np.float32), which)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    z = np.zeros
    parts = [z((64, 64), np.float32), z((64, 64), np.float32)]
    assert compile_cubin(gathered_product, parts, z((64, 64), np.float32),
                         z((128, 64), np.float32), 32, 32, 32, arch=arch)
    assert compile_cubin(pick_rows, [z(32, np.float16)] * 3, z(96, np.float16), 8, arch=arch)
