"""Two buffers for a loop's mma operands (ir/pipeline.py): which loops get them, and that the
simulator runs the pipelined form as the loop it was (numerics against NumPy in float64, in
the simulator and on the GPU; a tile past the loop's end is never copied)."""

import numpy as np
import pytest
from conftest import poison

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


def test_which_loops_are_pipelined():
    z = np.zeros
    src = row_products.cuda_source(z((4, 64), np.float16), z((64, 96), np.float16),
                                   z((4, 32), np.float32), 64, 32)
    head, body = src.split("for (", 1)
    assert "b_next = tt::tile::load_operand_stage<" in head  # the first block, before the loop
    assert "b = b_next;" in body and "b_next = tt::tile::load_operand_stage<" in body
    # its copy waits; the next block's copy, issued after it, stays in flight
    assert "tt::tile::mma<true, 1>(a, b, acc)" in body
    src = indirect_products.cuda_source(z((4, 64), np.float16), z((64, 128), np.float16),
                                        z(3, np.int32), z((4, 32), np.float32), 64, 32)
    assert "load_operand_stage" not in src and "tt::tile::load_operand<" in src
