"""An mma's A operand gathered by rows (a mixture of experts' tokens), written the way cuTile's
MoE sample writes it: ``ct.gather(A, (rows[:, None], k * TK + ct.arange(TK)[None, :]))``. The
compiler copies each row's run of columns straight into the operand's shared-memory buffer
(ir/operands.py ``gather_operand``; tile/operands.h), the padding where a row index or a
column lies outside the array, as the gather promises. Numerics against NumPy in float64, in
the simulator and on the GPU: row indices past the end and negative ones, K not a multiple of
the tile's, rows that are not 16-byte aligned (an odd K), a column offset given by a scalar
argument; the IR says the gather became a ``gather_operand``; every case compiles.

The mirror for the result, ``ct.scatter(C, (rows[:, None], s + ct.arange(TN)[None, :]),
acc)`` of a tile kept in fragments, writes each lane's pairs straight to their rows
(``scatter_fragments``, tile/mma.h): rows past the end, negative rows and columns past the
edge skipped, an odd first column (no paired words); rows scaled by gathered weights first,
broadcast over the columns in registers (ir/fraglayout.py ``_broadcast_for``)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def gathered_product(A, B, Out, rows_of, first_col: int, TM: ConstInt, TN: ConstInt,
                     TK: ConstInt):
    """Out[block rows] = A[rows_of[block rows], first_col:] @ B, B (N, K) read transposed."""
    bm, bn = ct.bid(0), ct.bid(1)
    rows = ct.load(rows_of, index=(bm,), shape=(TM,))
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(B.shape[1], TK)):
        cols = first_col + k * TK + ct.arange(TK, dtype=ct.int32)
        a = ct.gather(A, (rows[:, None], cols[None, :]))
        b = ct.load(B, index=(k, bn), shape=(TK, TN), order=(1, 0),
                    padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(bm, bn), tile=acc)


@ct.kernel
def gathered_product_2d_cols(A, B, Out, rows_of, first_col: int, TM: ConstInt, TN: ConstInt,
                             TK: ConstInt):
    """gathered_product with the column tile made 2-d before the offset is added."""
    bm, bn = ct.bid(0), ct.bid(1)
    rows = ct.load(rows_of, index=(bm,), shape=(TM,))
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(B.shape[1], TK)):
        a = ct.gather(A, (rows[:, None],
                          first_col + k * TK + ct.arange(TK, dtype=ct.int32)[None, :]))
        b = ct.load(B, index=(k, bn), shape=(TK, TN), order=(1, 0),
                    padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(bm, bn), tile=acc)


@ct.kernel(num_warps=4)
def scattered_product(A, B, C, rows_of, weights, first_col: int, TM: ConstInt, TN: ConstInt,
                      TK: ConstInt, WEIGH: ct.Constant[bool]):
    """C[rows_of[block rows], first_col + block columns] = (A @ B)[block], as float16; with
    WEIGH each row times weights[rows_of[row]] (0 for a row outside) first."""
    bm, bn = ct.bid(0), ct.bid(1)
    rows = ct.load(rows_of, index=(bm,), shape=(TM,))
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(A.shape[1], TK)):
        a = ct.load(A, index=(bm, k), shape=(TM, TK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bn), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    if WEIGH:
        w = ct.gather(weights, rows)
        acc = acc * w[:, None]
    cols = first_col + bn * TN + ct.arange(TN, dtype=ct.int32)
    ct.scatter(C, (rows[:, None], cols[None, :]), acc.astype(C.dtype))


@pytest.mark.parametrize(("first_col", "weigh"), [(0, False), (3, False), (40, False),
                                                 (0, True), (3, True)])
def test_scattered_rows_from_fragments(target, rng, first_col, weigh):
    tm, tn, tk, m, k, n = 64, 32, 32, 64, 64, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c_rows, c_cols = 70, 90
    rows = np.concatenate([rng.permutation(c_rows)[:m - 8], [c_rows + 1, -1, 999, -7,
                                                               c_rows, -3, 1000, c_rows + 5]])
    rows = rng.permutation(rows).astype(np.int32)  # distinct where inside: no two writers
    c = np.full((c_rows, c_cols), 7.0, np.float16)
    weights = rng.standard_normal(c_rows).astype(np.float32)
    dev_c = target.to_device(c)
    target.launch_tile(scattered_product, (m // tm, n // tn), target.to_device(a),
                       target.to_device(b), dev_c, target.to_device(rows),
                       target.to_device(weights), first_col, tm, tn, tk, weigh)
    got = target.to_host(dev_c).astype(np.float64)
    want = c.astype(np.float64)
    prod = a.astype(np.float64) @ b.astype(np.float64)
    if weigh:
        inside = (rows >= 0) & (rows < c_rows)
        prod *= np.where(inside, weights[np.clip(rows, 0, c_rows - 1)], 0.0)[:, None]
    prod = prod.astype(np.float16).astype(np.float64)
    for i, r in enumerate(rows):
        if 0 <= r < c_rows:
            hi = min(c_cols, first_col + n)
            want[r, first_col:hi] = prod[i, :hi - first_col]
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.sqrt(k))


def test_the_scatter_becomes_scatter_fragments():
    z = np.zeros
    args = (z((64, 64), np.float16), z((64, 64), np.float16), z((70, 90), np.float16),
            z(64, np.int32), z(70, np.float32), 0)
    ir_text = scattered_product.ir(*args, TM=64, TN=32, TK=32, WEIGH=False)
    assert "scatter_fragments(C, " in ir_text
    assert "tile.scatter(" not in ir_text and "tile.layout(" not in ir_text
    # the row weights broadcast in registers: the (64, 1) column to the rows' layout, once
    src = scattered_product.cuda_source(*args, TM=64, TN=32, TK=32, WEIGH=True)
    assert "tt::tile::to_mma_rows(" in src and "broadcast_frag<" in src
    assert "to_mma(" not in src and "broadcast_smem<64, 32>" not in src


def _case(rng, dtype, m_rows, k, n, tm, tn, first_col):
    a_rows = 37
    a = rng.standard_normal((a_rows, first_col + k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    rows = rng.integers(0, a_rows, m_rows).astype(np.int32)
    rows[::5] = a_rows + 3       # past the end: zeros
    rows[1::7] = -2              # negative: outside too
    want_a = np.zeros((m_rows, k))
    ok = (rows >= 0) & (rows < a_rows)
    want_a[ok] = a[rows[ok], first_col:].astype(np.float64)
    want = want_a @ b.astype(np.float64).T
    return a, b, rows, want


@pytest.mark.parametrize(("k", "first_col", "tiles"), [
    (128, 0, (64, 64, 32)), (100, 0, (64, 64, 32)), (64, 3, (64, 64, 32)), (96, 8, (64, 64, 32)),
    # rows of 128 bytes: on sm_90a both operands in the swizzled buffers of wgmma
    (256, 0, (128, 128, 64)), (200, 8, (128, 128, 64))])
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_gathered_rows_product(target, rng, dtype, k, first_col, tiles):
    if dtype == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    tm, tn, tk = tiles
    m_rows, n = 128, 128
    a, b, rows, want = _case(rng, dtype, m_rows, k, n, tm, tn, first_col)
    kernels = [gathered_product] + ([gathered_product_2d_cols] if tm == 64 else [])
    for kernel in kernels:
        out = target.to_device(poison((m_rows, n), np.float32))
        target.launch_tile(kernel, (m_rows // tm, n // tn), target.to_device(a),
                           target.to_device(b), out, target.to_device(rows), first_col, tm, tn,
                           tk)
        np.testing.assert_allclose(target.to_host(out), want, rtol=1e-3,
                                   atol=1e-3 * np.sqrt(k), err_msg=kernel.__name__)


def _args(dtype=np.float16):
    a = np.zeros((37, 128), dtype)
    b = np.zeros((128, 128), dtype)
    out = np.zeros((128, 128), np.float32)
    return (a, b, out, np.zeros(128, np.int32), 0)


@pytest.mark.parametrize("kernel", [gathered_product, gathered_product_2d_cols],
                         ids=["1d_cols", "2d_cols"])
def test_the_gather_becomes_a_gather_operand(kernel):
    ir_text = kernel.ir(*_args(), TM=64, TN=64, TK=32)
    assert "gather_operand(A, rows" in ir_text
    assert "tile.gather(" not in ir_text
    src = gathered_product.cuda_source(*_args(), TM=64, TN=64, TK=32)
    assert "tt::tile::gather_operand<" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(("tm", "tn", "tk"), [(64, 64, 32), (128, 128, 64)])
def test_gathered_product_compiles(arch, tm, tn, tk):
    cubin = compile_cubin(gathered_product, *_args(), arch=arch, TM=tm, TN=tn, TK=tk)
    assert cubin[:4] == b"\x7fELF"
    z = np.zeros
    cubin = compile_cubin(scattered_product, z((128, 64), np.float16), z((64, 128), np.float16),
                          z((50, 90), np.float16), z(128, np.int32), z(50, np.float32), 0,
                          arch=arch, TM=tm, TN=tn, TK=tk, WEIGH=True)
    assert cubin[:4] == b"\x7fELF"
