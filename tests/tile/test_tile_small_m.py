"""Products with fewer than 16 rows of A on tensor cores: A's rows are padded with zeros to a
multiple of 16 in the scratch (tile/mma.h ``mma_plan::MP``), as flash decoding's (4, D) x
(D, TN) products of one KV head's 4 query heads need. Numerics against NumPy in float64 in the
simulator and on the GPU; the generated code says tensor cores; every case compiles."""

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


@pytest.mark.parametrize(("m", "k", "n"), CASES)
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_small_m_products(target, rng, m, k, n, dtype):
    if dtype == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        dtype = ml.bfloat16
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(np.float32)
    out = target.to_device(poison((m, n), np.float32))
    target.launch_tile(small_product, 1, target.to_device(a), target.to_device(b),
                       target.to_device(c), out, m, k, n)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    np.testing.assert_allclose(target.to_host(out), want, rtol=1e-4, atol=1e-4 * k)


def _args(m, k, n):
    z = np.zeros
    return z((m, k), np.float16), z((k, n), np.float16), z((m, n), np.float32), \
        z((m, n), np.float32), m, k, n


def test_small_m_takes_tensor_cores():
    src = small_product.cuda_source(*_args(4, 128, 64))
    assert "tt::tile::mma<true>(" in src
    # 16 padded rows of A (128 + 8 a row) and of the float32 product, B's rows of 64 + 8
    assert f"#define TT_SCRATCH_BYTES {(16 * 136 + 128 * 72) * 2 + 16 * 64 * 4}" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    for m, k, n in CASES:
        assert compile_cubin(small_product, *_args(m, k, n), arch=arch)
