"""Two buffers for a loop's mma operands (ir/pipeline.py), in kernels whose blocks hold a
multiprocessor (ir/operands.py ``holds_multiprocessor``): which loops get them, and that the
simulator runs the pipelined form as the loop it was (numerics against NumPy in float64, in
the simulator and on the GPU; a tile past the loop's end is never copied)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def row_products(A, B, Out, K: ConstInt, TN: ConstInt):
    """Out[i] = A @ B[:, TN-column blocks], summed over the blocks (a loop of products whose
    B tile is copied for the next block while this one multiplies)."""
    a = ct.load(A, index=(0, 0), shape=(4, K))
    acc = ct.zeros((4, TN), dtype=ct.float32)
    for j in range(ct.num_tiles(B, axis=1, shape=(K, TN))):
        b = ct.load(B, index=(0, j), shape=(K, TN), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(0, 0), tile=acc)


@ct.kernel
def indirect_products(A, B, Idx, Out, K: ConstInt, TN: ConstInt):
    """The same with each block's index read from memory: not pipelined (the next index is
    not known before its own iteration reads it)."""
    a = ct.load(A, index=(0, 0), shape=(4, K))
    acc = ct.zeros((4, TN), dtype=ct.float32)
    for j in range(ct.num_tiles(Idx, axis=0, shape=(1,))):
        jj = ct.load(Idx, index=(j,), shape=(1,)).item()
        b = ct.load(B, index=(0, jj), shape=(K, TN), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(0, 0), tile=acc)


@ct.kernel(num_warps=8)
def gathered_wide(A, B, Rows, Out, TK: ConstInt):
    """Out = A[Rows] @ B^T with 128 x 128 tiles on 8 warps (a mixture of experts' product: its
    rows gathered, B (N, K) read transposed): a block's accumulator takes half a
    multiprocessor's registers, so the loop's two copies get second buffers."""
    bm, bn = ct.bid(0), ct.bid(1)
    rows = ct.load(Rows, index=(bm,), shape=(128,))
    acc = ct.full((128, 128), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(B.shape[1], TK)):
        a = ct.gather(A, (rows[:, None], k * TK + ct.arange(TK, dtype=ct.int32)[None, :]))
        b = ct.load(B, index=(k, bn), shape=(TK, 128), order=(1, 0), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(bm, bn), tile=acc)


def _operands(rng, k, n):
    a = rng.standard_normal((4, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b


@pytest.mark.parametrize("blocks", [1, 2, 3, 5])
def test_pipelined_products(target, rng, blocks):
    k, tn = 64, 32
    a, b = _operands(rng, k, tn * blocks)
    out = target.to_device(poison((4, tn), np.float32))
    target.launch_tile(row_products, 1, target.to_device(a), target.to_device(b), out, k, tn)
    want = sum(a.astype(np.float64) @ b[:, j * tn:(j + 1) * tn].astype(np.float64)
               for j in range(blocks))
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-3, atol=1e-3 * k)


def test_indirect_products(target, rng):
    k, tn = 64, 32
    a, b = _operands(rng, k, tn * 4)
    idx = np.array([3, 0, 2], np.int32)
    out = target.to_device(poison((4, tn), np.float32))
    target.launch_tile(indirect_products, 1, target.to_device(a), target.to_device(b),
                       target.to_device(idx), out, k, tn)
    want = sum(a.astype(np.float64) @ b[:, j * tn:(j + 1) * tn].astype(np.float64) for j in idx)
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-3, atol=1e-3 * k)


@pytest.mark.parametrize("k", [64, 96, 200])
def test_pipelined_gathered_products(target, rng, k):
    rows = rng.integers(0, 50, 256).astype(np.int32)
    rows[::9] = 77  # past A's end: zero rows
    a = rng.standard_normal((50, k)).astype(np.float16)
    b = rng.standard_normal((256, k)).astype(np.float16)
    out = target.to_device(poison((256, 256), np.float32))
    target.launch_tile(gathered_wide, (2, 2), target.to_device(a), target.to_device(b),
                       target.to_device(rows), out, 32)
    ga = np.where((rows < 50)[:, None], a[np.minimum(rows, 49)].astype(np.float64), 0.0)
    want = ga @ b.astype(np.float64).T
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-3, atol=1e-3 * np.sqrt(k))


def test_which_loops_are_pipelined():
    z = np.zeros
    src = gathered_wide.cuda_source(z((50, 96), np.float16), z((256, 96), np.float16),
                                    z(256, np.int32), z((256, 256), np.float32), 32)
    head, body = src.split("for (", 1)
    # the first step's copies before the loop, each step's copies of the next at its top
    assert "b_next = tt::tile::load_operand_stage<" in head
    assert "a_next = tt::tile::gather_operand_stage<" in head
    assert "b = b_next;" in body and "b_next = tt::tile::load_operand_stage<" in body
    assert "a = a_next;" in body and "a_next = tt::tile::gather_operand_stage<" in body
    # the product waits for its own copies; the next step's two stay in flight
    assert "tt::tile::mma<true, 2>(a, b, acc)" in body
    # blocks of 4 warps with a few accumulator rows share a multiprocessor: one buffer each
    src = row_products.cuda_source(z((4, 64), np.float16), z((64, 96), np.float16),
                                   z((4, 32), np.float32), 64, 32)
    assert "load_operand_stage" not in src and "tt::tile::load_operand<" in src
    src = indirect_products.cuda_source(z((4, 64), np.float16), z((64, 128), np.float16),
                                        z(3, np.int32), z((4, 32), np.float32), 64, 32)
    assert "load_operand_stage" not in src and "tt::tile::load_operand<" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("tk", [32, 64])
def test_pipelined_kernel_compiles(arch, tk):
    z = np.zeros
    cubin = compile_cubin(gathered_wide, z((50, 96), np.float16), z((256, 96), np.float16),
                          z(256, np.int32), z((256, 256), np.float32), tk, arch=arch)
    assert cubin[:4] == b"\x7fELF"
