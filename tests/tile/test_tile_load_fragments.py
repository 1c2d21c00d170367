"""Tiles loaded only to be combined elementwise with an accumulator in fragments (a residual
added before the store: ``C = A @ B + R``) load straight into the fragment layout (tile.h
``load_fragments``, ir/fraglayout.py), so that no 128x256 float32 tile goes through shared
memory and the kernel keeps the block the Hopper main loop takes. Numerics against NumPy in
float64 in the simulator and on the GPU, edges included; the generated code says which path."""

import numpy as np
import pytest
from conftest import poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def matmul_residual(A, B, R, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    r = ct.load(R, index=(bx, by), shape=(tm, tn), padding_mode=ZERO).astype(ct.float32)
    ct.store(C, index=(bx, by), tile=(acc + r * 0.5).astype(C.dtype))


@ct.kernel
def matmul_residual_kept(A, B, R, C, R2, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """The residual is also stored as it was loaded: it stays blocked."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    r = ct.load(R, index=(bx, by), shape=(tm, tn), padding_mode=ZERO)
    ct.store(R2, index=(bx, by), tile=r)
    ct.store(C, index=(bx, by), tile=(acc + r.astype(ct.float32)).astype(C.dtype))


def _inputs(rng, m, k, n, rdtype):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    r = rng.standard_normal((m, n)).astype(rdtype)
    return a, b, r


@pytest.mark.parametrize(("m", "k", "n"), [(128, 64, 128), (96, 64, 72), (130, 96, 250)])
@pytest.mark.parametrize("rdtype", [np.float16, np.float32])
def test_matmul_plus_residual(target, rng, m, k, n, rdtype):
    tm, tn, tk = 64, 64, 32
    a, b, r = _inputs(rng, m, k, n, rdtype)
    c = target.to_device(poison((m, n), np.float32))
    grid = (-(-m // tm), -(-n // tn))
    target.launch_tile(matmul_residual, grid, target.to_device(a), target.to_device(b),
                       target.to_device(r), c, tm, tn, tk)
    want = a.astype(np.float64) @ b.astype(np.float64) + 0.5 * r.astype(np.float64)
    np.testing.assert_allclose(target.to_host(c), want, rtol=1e-3, atol=1e-3 * k)


def test_a_residual_read_elsewhere_stays_blocked(target, rng):
    m, k, n, tm, tn, tk = 128, 64, 128, 64, 64, 32
    a, b, r = _inputs(rng, m, k, n, np.float16)
    c = target.to_device(poison((m, n), np.float32))
    r2 = target.to_device(poison((m, n), np.float16))
    target.launch_tile(matmul_residual_kept, (2, 2), target.to_device(a), target.to_device(b),
                       target.to_device(r), c, r2, tm, tn, tk)
    want = a.astype(np.float64) @ b.astype(np.float64) + r.astype(np.float64)
    np.testing.assert_allclose(target.to_host(c), want, rtol=1e-3, atol=1e-3 * k)
    np.testing.assert_array_equal(target.to_host(r2), r)


def test_the_residual_loads_into_fragments():
    z = np.zeros
    bf = pytest.importorskip("ml_dtypes").bfloat16
    src = matmul_residual.cuda_source(z((4096, 4096), bf), z((4096, 4096), bf),
                                      z((4096, 4096), bf), z((4096, 4096), bf), 128, 256, 64)
    assert "tt::tile::load_fragments<tile_bf16_128x256_mma>(R, " in src
    # no 128x256 blocked tile: the block the Hopper main loop takes (8 warps), not 16
    assert "#define TT_BLOCK_THREADS 256" in src and "tt::tile::mma_loop<" in src
    assert "to_mma(" not in src
    src = matmul_residual_kept.cuda_source(*(z((256, 256), np.float16),) * 3,
                                           z((256, 256), np.float32), z((256, 256), np.float16),
                                           64, 64, 32)
    assert "tt::tile::load_fragments" not in src and "to_mma(" in src
