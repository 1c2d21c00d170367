"""Products with fewer than 16 rows of A on tensor cores: A's rows are padded with zeros to a
multiple of 16 in the scratch (tile/mma.h ``mma_plan::MP``), as flash decoding's (4, D) x
(D, TN) products of one KV head's 4 query heads need. A B operand loaded only for the product
goes straight to its own shared-memory buffer (ir/operands.py), one read twice through the
scratch. In a block of one warp (``num_warps=1``) the product stays in fragments, one 16-row
strip whose padding rows no store writes (tile/mma.h ``frag_rows``). Numerics against NumPy in
float64 in the simulator and on the GPU, all three forms; the generated code says tensor
cores; every case compiles."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def small_product(A, B, C, Out, M: ConstInt, K: ConstInt, N: ConstInt):
    a = ct.load(A, index=(0, 0), shape=(M, K))
    b = ct.load(B, index=(0, 0), shape=(K, N))
    c = ct.load(C, index=(0, 0), shape=(M, N))
    ct.store(Out, index=(0, 0), tile=ct.mma(a, b, c))


CASES = [(1, 16, 8), (4, 128, 64), (4, 64, 128), (8, 32, 16), (2, 16, 32), (4, 16, 256)]


@ct.kernel(num_warps=1)
def small_product_one_warp(A, B, C, Out, M: ConstInt, K: ConstInt, N: ConstInt):
    a = ct.load(A, index=(0, 0), shape=(M, K))
    b = ct.load(B, index=(0, 0), shape=(K, N))
    c = ct.load(C, index=(0, 0), shape=(M, N))
    ct.store(Out, index=(0, 0), tile=ct.mma(a, b, c))


@pytest.mark.parametrize("twice", [False, True, "one_warp"],
                         ids=["own_buffer", "staged", "fragments"])
@pytest.mark.parametrize(("m", "k", "n"), CASES)
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_small_m_products(target, rng, m, k, n, dtype, twice):
    if dtype == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        dtype = ml.bfloat16
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(np.float32)
    out = target.to_device(poison((m, n), np.float32))
    kernel = small_product_one_warp if twice == "one_warp" else \
        small_product_twice if twice else small_product
    twice = twice is True
    target.launch_tile(kernel, 1, target.to_device(a), target.to_device(b),
                       target.to_device(c), out, m, k, n)
    want = (a.astype(np.float64) @ b.astype(np.float64) + c) * (2 if twice else 1)
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-4, atol=1e-4 * k)


def _args(m, k, n):
    z = np.zeros
    return z((m, k), np.float16), z((k, n), np.float16), z((m, n), np.float32), \
        z((m, n), np.float32), m, k, n


@ct.kernel
def small_product_twice(A, B, C, Out, M: ConstInt, K: ConstInt, N: ConstInt):
    a = ct.load(A, index=(0, 0), shape=(M, K))
    b = ct.load(B, index=(0, 0), shape=(K, N))
    c = ct.load(C, index=(0, 0), shape=(M, N))
    ct.store(Out, index=(0, 0), tile=ct.mma(a, b, c) + ct.mma(a, b, c))


def test_small_m_takes_tensor_cores():
    # B loaded only for the product: copied straight into its own buffer (cp.async), whose
    # rows of 64 (one 128-byte line each, unpadded: their pieces swizzled) take 16384 bytes,
    # plus 1024 of alignment slack; the scratch
    # holds 16 padded rows of A (128 + 8 a row) and the product's 4 float32 rows (64 + 8: no
    # bank conflicts; the padding rows' products are not kept), then the buffer
    src = small_product.cuda_source(*_args(4, 128, 64))
    assert "tt::tile::load_operand<tile_f16_128x64_smem" in src
    assert "tt::tile::mma<true, 0>(a, b, c)" in src
    operand = 128 * 64 * 2 + 1024
    assert f"#define TT_OPERAND_BYTES {operand}" in src
    assert f"#define TT_SCRATCH_BYTES {16 * 136 * 2 + 4 * 72 * 4 + operand}" in src
    # B read twice: staged in the scratch by each product (B's rows of 64 + 8 there)
    src = small_product_twice.cuda_source(*_args(4, 128, 64))
    assert "tt::tile::mma<true>(" in src and "load_operand" not in src
    assert f"#define TT_SCRATCH_BYTES {(16 * 136 + 128 * 72) * 2 + 16 * 72 * 4}" in src


def test_one_warp_keeps_fragments():
    # one padded 16-row strip in registers: the product's result is an MmaTile stored from
    # fragments; A is staged with its rows padded to 16 (128 + 8 a row) before B's buffer
    src = small_product_one_warp.cuda_source(*_args(4, 128, 64))
    assert "__launch_bounds__(32)" in src
    assert "tile_f32_4x64_mma _t0 = tt::tile::mma<true, 0>(a, b, " in src
    assert "tt::tile::store_fragments(Out, _t0" in src
    operand = 128 * 64 * 2 + 1024
    assert f"#define TT_SCRATCH_BYTES {16 * 136 * 2 + operand}" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    for m, k, n in CASES:
        assert compile_cubin(small_product, *_args(m, k, n), arch=arch)
        assert compile_cubin(small_product_twice, *_args(m, k, n), arch=arch)
        assert compile_cubin(small_product_one_warp, *_args(m, k, n), arch=arch)
