"""The CUDA C++ generated for tile kernels: one line per tile operation, the tile.h call chosen
for each, the shared-memory scratch, and the IR the frontend makes of cuTile idioms.
(Every kernel of tests/kernels/tiles.py also compiles to a cubin in tests/codegen.)"""

import ml_dtypes
import numpy as np
import pytest
from kernels import tiles

import threadtile as tt
import threadtile.tile as ct
from threadtile.backends.cuda.tiles import register_broadcast, register_reshape
from threadtile.ir.tiling import vec_width
from threadtile.lang.types import ArrayType, bfloat16, float16

F16 = ArrayType(float16, 2, "C")
BF16 = ArrayType(bfloat16, 2, "C")


def _body(src: str) -> list[str]:
    return [s.strip() for s in src.splitlines() if s.startswith("  ") and "#line" not in s]


def test_matmul_source_reads_like_the_kernel():
    src = tiles.matmul.cuda_source(F16, F16, F16, tm=64, tn=64, tk=32)
    assert '#include "tile.h"' in src
    body = _body(src)
    # 64x64x32 16-bit tiles: the k loop is one mma_loop with the Hopper main loop's two tensor
    # maps (A's rows of 64 bytes take the 64-byte swizzle) and cp.async off it (true); the
    # accumulator stays in tensor-core fragments (ir/passes.py), so do its cast and its store
    assert "using tile_f32_64x64_mma = tt::tile::MmaTile<float, 128, 64, 64>;" in src
    assert "tile_f32_64x64_mma accumulator = tt::tile::full<tile_f32_64x64_mma>(0.0f);" in body
    assert ("accumulator = tt::tile::mma_loop<tile_f16_64x32, tile_f16_32x64, 3>"
            "(A, B, __half(0.0f), (int64_t)bidx, (int64_t)bidy, 0, num_tiles_k, "
            "accumulator, tt_tma0, tt_tma1);") in body
    assert "for (" not in "\n".join(body)
    assert "tile_f16_64x64_mma accumulator_1 = tt::tile::astype<__half>(accumulator);" in body
    assert any(s.startswith("tt::tile::store_fragments(C, accumulator_1, ") for s in body)
    # scratch: three buffers of A (rows of 32 + 8) and B as it is (rows of 64 + 8),
    # 3 (64*40 + 32*72)*2; sm_90a: steps of two k (64 deep), 1024 + 4 stages of
    # (64*64 + 64*64)*2 + 8 mbarriers
    assert "#define TT_SCRATCH_BYTES 29184" in src
    assert "#define TT_SCRATCH_SM90A 66624" in src
    # float32 through tfloat32: the same mma_loop (the sm_90a build takes the tfloat32 main
    # loop, kloop_sm90_tf32.h, from zeros: `true`); off Hopper the loads cast to tfloat32 in
    # the staged loop, B staged as it is, rows of 64 + 8, in three buffers:
    # 3 (64*(32+4) + 32*(64+8))*4; sm_90a: 1024 + 4 stages of (64*32 + 32*64)*4 + 12
    # mbarriers (full, empty, ready)
    f32 = np.zeros((64, 64), np.float32)
    src = tiles.matmul.cuda_source(f32, f32, f32, tm=64, tn=64, tk=32)
    body = _body(src)
    assert ("accumulator = tt::tile::mma_loop<tile_f32_64x32, tile_f32_32x64, 3, true>"
            "(A, B, 0.0f, (int64_t)bidx, (int64_t)bidy, 0, num_tiles_k, "
            "accumulator, tt_tma0, tt_tma1);") in body
    assert "#define TT_SCRATCH_BYTES 55296" in src
    assert "#define TT_SCRATCH_SM90A 66656" in src
    assert "tt::tile::store_fragments(C, accumulator, (int64_t)bidx, (int64_t)bidy);" in body


def test_k_loops_of_any_row_strips_are_one_operation():
    # 128 rows on 4 warps: each warp holds two whole row strips (ir/tiling.py staged_ok), and
    # the loop is still one mma_loop
    f32 = np.zeros((64, 64), np.float32)
    body = _body(tiles.matmul.cuda_source(f32, f32, f32, tm=128, tn=64, tk=32))
    assert any(s.startswith("accumulator = tt::tile::mma_loop<tile_f32_128x32, "
                            "tile_f32_32x64, 3, true>(") for s in body)
    assert not any(s.startswith("for (") for s in body)


def test_k_loops_whose_staged_buffers_would_not_fit_take_fewer():
    # 256x256x64 tfloat32 on 16 warps: three staged buffers are 402 KiB, two 268, one is 134
    # KiB: (256*68 + 64*264)*4, filled element by element
    f32 = np.zeros((64, 64), np.float32)
    kern = ct.kernel(num_warps=16)(tiles.matmul.py_func)
    src = kern.cuda_source(f32, f32, f32, tm=256, tn=256, tk=64)
    assert ("mma_loop_staged<tt::tile::tf32, tile_f32_256x64, tile_f32_64x256, 0>(" in src
            and "#define TT_SCRATCH_BYTES 137216" in src and "mma<true>(" not in src)
    # 128x128x64: three buffers are 204 KiB, two fit (2 (128*68 + 64*136)*4)
    src = kern.cuda_source(f32, f32, f32, tm=128, tn=128, tk=64)
    assert ("mma_loop_staged<tt::tile::tf32, tile_f32_128x64, tile_f32_64x128, 2>(" in src
            and "#define TT_SCRATCH_BYTES 139264" in src)
    src = kern.cuda_source(f32, f32, f32, tm=256, tn=128, tk=32)  # 3 (256*36 + 32*136)*4
    assert "mma_loop_staged" in src and "#define TT_SCRATCH_BYTES 162816" in src


def test_few_row_k_loops_take_more_buffers():
    # 32 rows or fewer (ir/tiling.py FEW_ROWS): as many staged buffers as fit in 112 KiB (two
    # blocks a multiprocessor), between four and eight; 64 rows: three
    f16 = np.zeros((64, 64), np.float16)
    src = tiles.matmul.cuda_source(f16, f16, f16, tm=32, tn=32, tk=64)  # 9.5 KiB a buffer
    assert "mma_loop_staged<__half, tile_f16_32x64, tile_f16_64x32, 8>(" in src
    assert f"#define TT_SCRATCH_BYTES {8 * (32 * 72 + 64 * 40) * 2}" in src
    bf16 = np.zeros((64, 512), ml_dtypes.bfloat16)  # decode's 32x32x128 tiles: 18.5 KiB
    src = tiles.matmul.cuda_source(bf16, bf16, bf16, tm=32, tn=32, tk=128)
    assert "tile_bf16_128x32, 6>(" in src
    src = tiles.matmul.cuda_source(bf16, bf16, bf16, tm=32, tn=128, tk=64)  # 21.5 KiB: 5
    assert "tile_bf16_64x128, 5>(" in src
    src = tiles.matmul.cuda_source(bf16, bf16, bf16, tm=16, tn=128, tk=128)  # 39 KiB: four
    assert "tile_bf16_128x128, 4>(" in src  # (at least, though only two fit in 112 KiB)
    src = tiles.matmul.cuda_source(f16, f16, f16, tm=64, tn=32, tk=64)
    assert "mma_loop_staged<__half, tile_f16_64x64, tile_f16_64x32, 3>(" in src


def test_accumulator_layout_only_where_every_use_allows_it():
    f32 = np.zeros((64, 64), np.float32)
    # float32 @ float32 multiplies with FMAs: its accumulator stays blocked
    src = tiles.matmul_fp32.cuda_source(f32, f32, f32, tm=32, tn=32, tk=8)
    assert "MmaTile" not in src
    # 32x16 blocks of 16x8 are 4, shared by 4 warps: fragments; the IR says so too
    ir = tiles.matmul.ir(F16, F16, F16, tm=32, tn=16, tk=16)
    assert "accumulator: tile<float32, (32, 16), mma>" in ir
    # its cast and its global store take fragments too; a store into shared memory (read by
    # thread code) converts to the blocked layout first
    assert "accumulator_1: tile<float16, (32, 16), mma>" in ir and "tile.layout" not in ir
    v = np.zeros(100, np.float32)
    ir = tiles.matmul_rowsum.ir(F16, F16, f32, v, TM=32, TN=64, TK=32)
    assert "tile.layout(acc):tile<float32, (32, 64)>" in ir
    assert ir.count("tile.layout(") == 1  # only there: the store to C takes fragments


def test_float32_matmul_goes_through_tfloat32():
    f32 = np.zeros((64, 64), np.float32)
    src = tiles.matmul.cuda_source(f32, f32, f32, tm=32, tn=32, tk=16)
    assert "tt::tile::mma_loop_staged<tt::tile::tf32, tile_f32_32x16, tile_f32_16x32, 8>(" \
        in src
    # outside a k loop of that form (here an accumulator of 2 16x8 blocks, too few for 4 warps'
    # fragments), the cast is written out
    src = tiles.matmul.cuda_source(f32, f32, f32, tm=16, tn=16, tk=16)
    assert "tt::tile::astype<tt::tile::tf32>(" in src


def test_reductions_pick_their_path():
    f32 = np.zeros((8, 1024), np.float32)
    rows = tiles.softmax_rows.cuda_source(f32, f32, N=1024)
    assert "tt::tile::reduce_rows<tt::tile::MAX>(" in rows  # 1024 elements over 256 threads
    assert "tt::tile::broadcast<1, 1024>(" in rows  # a one-element tile is in every thread
    # 2 results of 64 elements over 128 threads: each row split over a warp, then shuffles
    small = tiles.softmax.cuda_source(f32, f32, B=2, N=64)
    assert "tt::tile::reduce_split<tt::tile::MAX, 32, 2, 1>(rows)" in small
    assert "tt::tile::broadcast_smem<2, 64>(" in small
    # the leading axis, 1024 columns a multiple of the block's runs: each thread its own
    # columns, in registers (tests/tile/test_tile_reduce_cols.py); an arg kind over rows of 64:
    # the general path, each result in order
    src = _column_reductions.cuda_source(f32, np.zeros(1024, np.float32),
                                         np.zeros(8, np.int32))
    assert "tt::tile::reduce_cols<tt::tile::SUM, 1024>(x)" in src
    assert "tt::tile::reduce<tt::tile::ARGMAX, 0b10, 8>(" in src


@ct.kernel
def _column_reductions(X, S, A):
    x = ct.load(X, index=(0, 0), shape=(8, 1024))
    ct.store(S, index=(0,), tile=ct.sum(x, axis=0))
    ct.store(A, index=(0,), tile=ct.argmax(ct.load(X, index=(0, 0), shape=(8, 64)), axis=1))


def test_register_broadcasts():
    assert register_broadcast((64,), (16, 64), 128)
    assert register_broadcast((1, 64), (16, 64), 128)
    assert register_broadcast((), (16, 64), 128)
    assert register_broadcast((1, 1), (16, 64), 128)
    assert not register_broadcast((16, 1), (16, 64), 128)
    assert not register_broadcast((16, 1, 8), (16, 4, 8), 128)


def test_mixed_kernel_source():
    f32 = np.zeros((64, 64), np.float32)
    v = np.zeros(64, np.float32)
    src = tiles.matmul_rowsum.cuda_source(F16, F16, f32, v, TM=32, TN=64, TK=32)
    assert "__shared__ float sh[32][64];" in src
    assert "tt::tile::store_shared(tt::CArray<float, 2>{&sh[0][0]" in src
    assert "__shfl_down_sync(" in src and "tt::atomic_add(" in src


def test_layer_norm_rebinds_mean_as_a_new_version():
    f32 = np.zeros((8, 64), np.float32)
    v = np.zeros(64, np.float32)
    ir = tiles.layer_norm_fwd.ir(f32, v, v, f32, v, v, 1e-5, TILE_N=64)
    assert "mu: tile<float32, (1, 64)>" in ir
    assert "mu_1: tile<float32, (1)>" in ir
    # eps (a Python float argument) is loosely typed: the arithmetic stays float32
    assert "tile.binop(var_1, float32(eps), op='add'):tile<float32, (1)>" in ir


def test_launch_bounds_and_occupancy():
    """A fixed block compiles with __launch_bounds__(threads[, occupancy]); occupancy needs
    a fixed block and a sane count."""
    x = np.zeros((4, 1024), np.float32)
    plain = ct.kernel(num_warps=8)(tiles.softmax_rows.py_func).cuda_source(x, x, N=1024)
    assert "__launch_bounds__(256) softmax_rows(" in plain
    two = ct.kernel(num_warps=8, occupancy=2)(tiles.softmax_rows.py_func)
    assert "__launch_bounds__(256, 2) softmax_rows(" in two.cuda_source(x, x, N=1024)
    with pytest.raises(ValueError, match="occupancy"):
        tt.jit(occupancy=2)(tiles.softmax_rows.py_func)
    with pytest.raises(ValueError, match="occupancy"):
        ct.kernel(num_warps=32, occupancy=4)(tiles.softmax_rows.py_func)


def test_vector_width_mirrors_tile_h():
    """tiles.vec_width follows tile.h: runs of up to 4 along a last axis that is a multiple
    of V * NT; tiles smaller than the block and short rows get 1."""
    assert vec_width((1, 4096), 256) == 4
    assert vec_width((4, 512), 128) == 4
    assert vec_width((8, 256), 128) == 2
    assert vec_width((64, 64), 128) == 1
    assert vec_width((64,), 128) == 1
    assert vec_width((), 128) == 1
    assert register_broadcast((512,), (4, 512), 128)
    assert not register_reshape((4, 512), (8, 256), 128)
    assert register_reshape((4, 512), (2048,), 128)
    src = tiles.vector_runs.cuda_source(np.zeros((8, 512), np.float32), np.zeros(512, np.float32),
                                        ArrayType(bfloat16, 2, "C"),
                                        np.zeros((8, 512), np.float32), np.zeros(8, np.int32),
                                        *[np.zeros((8, 512), np.float32)] * 2,
                                        ArrayType(bfloat16, 2, "C"), C=512)
    # the reshape to (8, 256) changes the width: it needs the scratch (4 * 512 floats)
    assert "#define TT_SCRATCH_BYTES 8192" in src


def test_exp_rounding_modes_pick_the_exponential():
    """FULL (the default) is expf, APPROX the fast hardware exponential."""
    src = tiles.exp_modes.cuda_source(np.zeros(8, np.float32), np.zeros(8, np.float32),
                                      np.zeros(8, np.float32), T=512)
    assert "tt::tile::exp(" in src and "tt::tile::exp_approx(" in src


def test_truediv_approx_is_the_fast_division():
    """truediv(..., rounding_mode=APPROX) of float32 tiles is div.approx (the FMHA sample's
    last step); without it, and for float64, the IEEE division."""
    z = np.zeros(8, np.float32)
    src = tiles.div_modes.cuda_source(z, z, z, z, T=512)
    assert src.count("tt::tile::div_approx(") == 1 and src.count("tt::tile::div(") == 1
    z = np.zeros(8, np.float64)
    src = tiles.div_modes.cuda_source(z, z, z, z, T=512)
    assert "div_approx" not in src and src.count("tt::tile::div(") == 2


@ct.kernel
def _matmul_from(A, B, C, start: float, tm: ct.Constant[int], tn: ct.Constant[int],
                 tk: ct.Constant[int]):
    """C = start + A @ B (tfloat32): the accumulator starts from ``start``."""
    acc = ct.full((tm, tn), start, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.astype(ct.tfloat32), b.astype(ct.tfloat32), acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc)


def test_a_tfloat32_loop_from_zeros_says_so():
    """A k loop whose accumulator is ``full(0)`` just before it carries ``zero``: the tfloat32
    loop then starts from zeros in its own layout (``mma_loop<..., true>``); from another
    value, the accumulator goes into it through the stages' memory."""
    f32 = np.zeros((64, 64), np.float32)
    zero = tiles.matmul.cuda_source(f32, f32, f32, tm=64, tn=64, tk=32)
    assert "tt::tile::mma_loop<tile_f32_64x32, tile_f32_32x64, 3, true>(" in zero
    other = _matmul_from.cuda_source(f32, f32, f32, 1.5, tm=64, tn=64, tk=32)
    assert "tt::tile::mma_loop<tile_f32_64x32, tile_f32_32x64, 3>(" in other
    assert "zero=False" in _matmul_from.ir(f32, f32, f32, 1.5, tm=64, tn=64, tk=32)
