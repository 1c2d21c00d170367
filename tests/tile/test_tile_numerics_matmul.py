"""Tile matrix products (tests/kernels/tiles.py) on every target against NumPy in float64: the
tensor-core matmul (float16, bfloat16, and float32 through tfloat32) at the shapes that reach
each of tile.h's k loops, the FMA matmul, a transpose, and a thread-level kernel around a tile
matmul.

Each test runs in the simulator and on the GPU from one body (the ``target`` fixture,
tests/conftest.py). Inputs are fresh random arrays (the seed is printed: THREADTILE_TEST_SEED
replays a failure), outputs are poisoned with NaN first, and the bounds follow from float32
accumulation and the rounding of the operands and of the result. What only a compiled kernel
has (tensor maps, the sm_90 build, torch streams) is in tests/gpu/test_tile_paths_gpu.py.
"""

import numpy as np
import pytest
from conftest import U32, assert_dot_close, cdiv, poison, quantize
from kernels import tiles

U_OUT = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": U32}  # unit roundoffs
U_TF32 = 2.0 ** -11  # tfloat32 keeps 10 mantissa bits


def assert_mma_close(got, a, b, u_in=0.0, u_out=U32):
    """``got`` is a @ b (float64 operands, as the kernel sees them) accumulated in float32 in
    any order: within (k + 2) u |a| @ |b|, plus 2 u_in |a| @ |b| where the operands are rounded
    to tfloat32 first, plus one rounding (u_out) of the result to the output dtype."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ref = a @ b
    mag = np.abs(a) @ np.abs(b)
    k = a.shape[1]
    bound = (k + 2) * U32 * mag + 2 * u_in * mag + u_out * np.abs(ref) + 1e-30
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape
    assert not np.isnan(got).any(), "unwritten (NaN) elements"
    err = np.abs(got - ref)
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} elements off; worst {(err - bound).max()}"


def operands(target, rng, m, k, n, dtype, b_transposed=False):
    """Random A (m, k) and B (k, n) on the target in ``dtype`` and, as float64, the values the
    kernel sees. A transposed B is the (k, n) view of an (n, k) array."""
    av = quantize(rng.standard_normal((m, k)), dtype)
    if b_transposed:
        bt = quantize(rng.standard_normal((n, k)), dtype)
        return target.array(av, dtype), target.array(bt, dtype).T, av, bt.T
    bv = quantize(rng.standard_normal((k, n)), dtype)
    return target.array(av, dtype), target.array(bv, dtype), av, bv


# ---- tensor cores ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), [
    ((96, 80, 64), (32, 32, 16)),
    ((70, 50, 40), (32, 32, 16)),     # edge tiles along every axis
    ((200, 96, 136), (32, 32, 16)),
    ((512, 512, 512), (64, 64, 32)),
])
def test_matmul(target, rng, dtype, shape, tiles_mnk):
    """float16/bfloat16 on tensor cores accumulate in float32; float32 inputs are rounded to
    tfloat32 (10 mantissa bits) before they are multiplied."""
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, dtype)
    c = target.array(poison((m, n), dtype), dtype)
    target.launch_tile(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_in=U_TF32 if dtype == "float32" else 0.0,
                     u_out=U_OUT[dtype])


# the shapes of tile.h's k loops on 8 warps (on the GPU each reaches its own C++ path)
K_LOOP_SHAPES = [
    ((512, 256, 768), (128, 256, 64)),    # Hopper main loop (TMA + wgmma) on sm_90a
    ((1000, 520, 1030), (128, 256, 64)),  # edge tiles: TMA fills zeros, the store skips
    ((384, 1024, 256), (128, 128, 64)),
    ((512, 1001, 512), (128, 256, 64)),   # rows of 1001 halves: no TMA, the portable loop
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), K_LOOP_SHAPES)
def test_matmul_k_loop_paths(target, rng, dtype, shape, tiles_mnk):
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, dtype)
    c = target.array(poison((m, n), dtype), dtype)
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_out=U_OUT[dtype])


@pytest.mark.parametrize(("shape", "tiles_mnk", "b_transposed"), [
    ((512, 512, 512), (128, 128, 16), False),  # aligned and inside: cp.async, three buffers
    ((256, 96, 384), (64, 128, 32), False),
    ((1000, 1001, 520), (128, 128, 16), False),  # edge tiles, odd rows: the register loop
    ((256, 128, 256), (128, 128, 32), True),     # B a transposed view: the register loop
])
def test_matmul_tf32_k_loop_paths(target, rng, shape, tiles_mnk, b_transposed):
    """float32 through tfloat32 in tile.h's staged loop (8 warps: each warp's blocks share
    their rows), on each of its paths; the operands round to tfloat32 either way."""
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, av, bv = operands(target, rng, m, k, n, "float32", b_transposed)
    c = target.to_device(poison((m, n), np.float32))
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    assert_mma_close(target.to_host(c), av, bv, u_in=U_TF32, u_out=U32)


def test_matmul_strided_operand(target, rng):
    """A transposed view of B cannot be copied by TMA (last axis not contiguous): the kernel,
    compiled for strided arrays, takes the portable loop and still multiplies right."""
    m, k, n = 256, 128, 256
    a, b, av, bv = operands(target, rng, m, k, n, "float16", b_transposed=True)
    c = target.array(poison((m, n), "float16"), "float16")
    target.launch_tile(tiles.matmul_8warps, (cdiv(m, 128), cdiv(n, 128)), a, b, c, 128, 128,
                       64)
    assert_mma_close(target.to_host(c), av, bv, u_out=U_OUT["float16"])


# ---- FMAs, transpose, and tiles inside a thread-level kernel ---------------------------------

@pytest.mark.parametrize("shape", [(50, 70, 40), (130, 70, 100)])
def test_matmul_fp32_fma(target, rng, shape):
    """Plain float32 (no tfloat32): each product is one FMA into the float32 accumulator."""
    m, k, n = shape
    a, b, av, bv = operands(target, rng, m, k, n, "float32")
    c = target.to_device(poison((m, n), np.float32))
    target.launch_tile(tiles.matmul_fp32, (cdiv(m, 32), cdiv(n, 32)), a, b, c, 32, 32, 8)
    assert_dot_close(target.to_host(c), av, bv)


@pytest.mark.parametrize("shape", [(100, 70), (300, 170)])
def test_transpose(target, rng, shape):
    h, w = shape
    x = rng.standard_normal((h, w)).astype(np.float32)
    y = target.to_device(poison((w, h), np.float32))
    target.launch_tile(tiles.transpose, (cdiv(h, 32), cdiv(w, 64)), target.to_device(x), y,
                       32, 64)
    np.testing.assert_array_equal(target.to_host(y), x.T)  # copies: exact, NaNs included


@pytest.mark.parametrize("shape", [(70, 64, 200), (200, 64, 300)])
def test_mixed_matmul_rowsum(target, rng, shape):
    """Tile matmul, then warp shuffles and atomics per thread (tests/kernels/tiles.py): C is
    the float32 accumulator; each row's sum adds the float32 partial sums of several blocks."""
    m, k, n = shape
    a, b, av, bv = operands(target, rng, m, k, n, "float16")
    c = target.to_device(poison((m, n), np.float32))
    rowsum = target.to_device(np.zeros(m, np.float32))  # accumulated into by atomics
    target.launch(tiles.matmul_rowsum, (cdiv(m, 32), cdiv(n, 64)), 128, a, b, c, rowsum, 32,
                  64, 32)
    assert_dot_close(target.to_host(c), av, bv)
    ref = (av @ bv).sum(axis=1)
    bound = (k + n + 2) * U32 * (np.abs(av) @ np.abs(bv)).sum(axis=1)
    got = target.to_host(rowsum).astype(np.float64)
    assert (np.abs(got - ref) <= bound).all()
