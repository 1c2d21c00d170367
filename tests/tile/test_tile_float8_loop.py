"""The k loop of 8-bit float operands (float8_e4m3fn, float8_e5m2) as one ``mma_loop``
(ir/kloop.py): where its shapes have the Hopper float8 main loop (tile/kloop_sm90_f8.h,
ir/tiling.py ``sm90_f8_bytes``) the loop is fused, with the operands' widening to float16 as
its cast; elsewhere it stays the loop as written. In the simulator either form is the exact
product summed in float32; on sm_90a the fused loop sums each step on the tensor cores
(tests/gpu/test_tile_paths_gpu.py checks that against cuBLAS). No GPU needed here.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import Target

import threadtile.tile as ct
from threadtile.ir import tiling
from threadtile.lang.types import TileType, float8_e4m3fn

SIM = Target("sim", "numpy")
FP8 = ["float8_e4m3fn", "float8_e5m2"]
ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def f8_matmul(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    acc = ct.full((tm, tn), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(A.shape[1], tk)):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk), padding_mode=ZERO)
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn), padding_mode=ZERO)
        acc = ct.mma(a, b, acc=acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc)


@ct.kernel
def f8_bmm(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """cuTile's BatchMatMul sample's loop: 3-d loads reshaped to 2-d."""
    z = ct.bid(0)
    acc = ct.full((tm, tn), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(A.shape[2], tk)):
        a = ct.reshape(ct.load(A, index=(z, ct.bid(1), k), shape=(1, tm, tk), padding_mode=ZERO),
                       (tm, tk))
        b = ct.reshape(ct.load(B, index=(z, k, ct.bid(2)), shape=(1, tk, tn), padding_mode=ZERO),
                       (tk, tn))
        acc = ct.mma(a, b, acc=acc)
    ct.store(C, index=(z, ct.bid(1), ct.bid(2)), tile=ct.reshape(acc, (1, tm, tn)))


def _arrays(rng, name, m, k, n, batch=None):
    dt = getattr(ml_dtypes, name)
    lead = () if batch is None else (batch,)
    a = rng.standard_normal(lead + (m, k)).astype(dt)
    b = rng.standard_normal(lead + (k, n)).astype(dt)
    c = np.full(lead + (m, n), np.nan, np.float32)
    return a, b, c


@pytest.mark.parametrize("name", FP8)
@pytest.mark.parametrize("tiles_mnk", [(128, 256, 128), (64, 128, 64), (128, 128, 128),
                                       (256, 128, 128), (128, 128, 256), (128, 256, 64)])
def test_hopper_shapes_fuse_with_the_widening_as_their_cast(name, tiles_mnk):
    a, b, c = _arrays(np.random.default_rng(0), name, 256, 256, 512)
    ir = f8_matmul.ir(a, b, c, *tiles_mnk)
    assert "mma_loop(" in ir and "cast=float16" in ir and "hopper=True" in ir
    src = f8_matmul.cuda_source(a, b, c, *tiles_mnk)
    assert "tt_tma0" in src and "tt_tma1" in src


@pytest.mark.parametrize("tiles_mnk", [(128, 64, 128), (128, 128, 32), (32, 128, 128)],
                         ids=["N-64", "K-32", "M-32"])
def test_other_shapes_stay_the_loop_as_written(tiles_mnk):
    """N not a multiple of 128 (B's 128-byte boxes), K of 32 (rows under 64 bytes), M under
    64 (wgmma's rows): no Hopper float8 loop, so no fusion (the staged loop has no 8-bit
    path); the loop keeps its loads, widenings and mmas."""
    a, b, c = _arrays(np.random.default_rng(0), "float8_e4m3fn", 256, 256, 512)
    ir = f8_matmul.ir(a, b, c, *tiles_mnk)
    assert "mma_loop(" not in ir and "tile.mma(" in ir


def test_a_256x256_accumulator_takes_the_loop_in_column_slices():
    """256x256 (its float32 accumulator alone fills a multiprocessor's registers) runs as two
    slices of 256x128 (ir/colsplit.py), each on the Hopper float8 loop."""
    a, b, c = _arrays(np.random.default_rng(0), "float8_e4m3fn", 256, 256, 512)
    ir = f8_matmul.ir(a, b, c, 256, 256, 128)
    assert "col_slice" in ir and ir.count("mma_loop(") == 1 and "hopper=True" in ir
    assert "tile<float32, (256, 128), mma>" in ir and "tile<float32, (256, 256)" not in ir


def test_the_part_rule_fits_the_registers():
    # 128x256x128 on 8 warps: one slice of 256 columns (128 registers), parts of 64 columns
    # two in flight; the transposition's 8 blocks a warp (32 words) fit beside them
    assert tiling.sm90_f8_tasks(256, 128, 256) == 8
    assert tiling.sm90_f8_part(1, 256, 128, 256) == 64
    # 64x128x128 on 4 warps: 64 registers of accumulator leave room for whole-width parts
    assert tiling.sm90_f8_part(1, 128, 128, 128) == 128
    # 256x256 on 4 warps: 4 slices of 256 columns take more registers than a thread has
    assert tiling.sm90_f8_part(4, 256, 128, 128) == 0
    a = TileType(float8_e4m3fn, (256, 128))
    assert tiling.sm90_f8_bytes(a, TileType(float8_e4m3fn, (128, 256)), 128) == 0
    assert tiling.sm90_f8_bytes(TileType(float8_e4m3fn, (128, 128)),
                                TileType(float8_e4m3fn, (128, 256)), 256) > 0


def test_the_block_is_the_one_the_loop_takes():
    """An 8-bit k loop keeps the default block (4 warps) where its Hopper float8 plan fits
    there, else takes the first of 8, 4 and 16 warps where it fits (compiler._float8_threads),
    not the block its 8-bit tiles' element counts would ask for (16 warps for 128x256x128, on
    which a 128-row tile has no plan)."""
    a, b, c = _arrays(np.random.default_rng(0), "float8_e4m3fn", 256, 256, 512)
    for tiles_mnk, threads in (((128, 256, 128), 256), ((64, 128, 128), 128),
                               ((128, 128, 128), 128)):
        spec = f8_matmul._spec_for([a, b, c], dict(zip(("tm", "tn", "tk"), tiles_mnk)))
        assert spec.module.threads == threads, tiles_mnk


@pytest.mark.parametrize("name", FP8)
@pytest.mark.parametrize(("tiles_mnk", "shape"), [
    ((64, 128, 64), (200, 300, 260)),     # edge tiles in every axis: zeros past the arrays
    ((64, 128, 128), (64, 256, 256)),
    ((64, 128, 64), (64, 128, 128)),      # edge tiles the other way: K of 128, N of 128
    ((256, 256, 128), (260, 128, 300)),   # column slices (ir/colsplit.py), one outside
])
def test_simulated_loop_is_the_exact_product(rng, name, tiles_mnk, shape):
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b, c = _arrays(rng, name, m, k, n)
    assert "mma_loop(" in f8_matmul.ir(a, b, c, tm, tn, tk)
    SIM.launch_tile(f8_matmul, (-(-m // tm), -(-n // tn)), a, b, c, tm, tn, tk)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", FP8)
def test_simulated_batched_loop(rng, name):
    a, b, c = _arrays(rng, name, 96, 128, 256, batch=3)
    tm, tn, tk = 64, 128, 64
    assert "mma_loop(" in f8_bmm.ir(a, b, c, tm, tn, tk)
    SIM.launch_tile(f8_bmm, (3, 2, 2), a, b, c, tm, tn, tk)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
@pytest.mark.parametrize("name", FP8)
def test_compiles_for_every_target(arch, name):
    """sm_90a: the Hopper float8 loop (and the plain loop beside it, for arrays TMA cannot
    copy); sm_80 and sm_90: the plain loop only."""
    a, b, c = _arrays(np.random.default_rng(0), name, 256, 256, 512)
    for tiles_mnk in ((128, 256, 128), (64, 128, 64)):
        assert f8_matmul.compile(a, b, c, *tiles_mnk, arch=arch).cubin[:4] == b"\x7fELF"
    a, b, c = _arrays(np.random.default_rng(0), name, 128, 128, 256, batch=2)
    assert f8_bmm.compile(a, b, c, 128, 256, 128, arch=arch).cubin[:4] == b"\x7fELF"
