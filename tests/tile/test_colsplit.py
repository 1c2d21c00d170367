"""A matmul whose float32 accumulator no block holds in registers (256x256 tiles: 256 KiB) runs
as a loop over column slices (ir/colsplit.py): the IR it becomes, the kernels it leaves
alone, numerics at ragged edges (the plain, persistent and batched loops of cuTile's MatMul
and BatchMatMul samples, tests/kernels/tiles.py; float16 and float32 inputs) in the
simulator and on the GPU against NumPy in float64 with poisoned outputs, and the cubins for
sm_80, sm_90 and sm_90a."""

import numpy as np
import pytest
from conftest import cdiv, compile_cubin, poison
from kernels.tiles import bmm as batched
from kernels.tiles import matmul
from kernels.tiles import matmul_persistent as persistent

import threadtile as tt
import threadtile.tile as ct
from threadtile.ir import nodes as ir

C = ct.Constant[int]


@ct.kernel
def read_again(A, B, Out, Sums, tm: C, tn: C, tk: C):
    """The accumulator read after its store (its row sums): not sliced."""
    bi, bj = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))
    ct.store(Sums, index=(bi, bj), tile=ct.sum(acc, axis=1, keepdims=True))


@ct.kernel
def gemm(A, B, Cin, Out, alpha: float, beta: float, tm: C, tn: C, tk: C):
    """Out = alpha A @ B + beta Cin: an epilogue of scalars, a loaded tile and casts."""
    bi, bj = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    c = ct.load(Cin, index=(bi, bj), shape=(tm, tn))
    acc = alpha * acc + beta * c.astype(ct.float32)
    ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))


@ct.kernel
def with_bias(A, B, Bias, Out, tm: C, tn: C, tk: C):
    """The accumulator plus a (1, tn) row: a tile of another shape in the epilogue (not
    sliced)."""
    bi, bj = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    acc = acc + ct.load(Bias, index=(0, bj), shape=(1, tn))
    ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))


def _z(*shape, dtype=np.float16):
    return np.zeros(shape, dtype)


def _loops(f: ir.Function) -> list[ir.TileOp]:
    return [x for x in ir.walk_function_exprs(f) if isinstance(x, ir.TileOp) and
            x.op == "mma_loop"]


@pytest.mark.parametrize("kernel", [matmul, persistent])
def test_a_256x256_product_becomes_a_loop_of_two_256x128_slices(kernel):
    spec = kernel._spec_for([_z(512, 256), _z(256, 512), _z(512, 512)],
                            dict(tm=256, tn=256, tk=64))
    f = spec.module.kernel
    slices = [s for s in ir.walk_stmts(f.body) if isinstance(s, ir.For) and
              s.var.startswith("col_slice")]
    assert len(slices) == 1 and slices[0].stop.value == 2
    (op,) = _loops(f)
    assert op.type.shape == (256, 128) and op.attrs["hopper"]
    assert op.attrs["b"].attrs["shape"] == (64, 128)
    assert spec.module.threads == 256
    acc = "accumulator" if kernel is matmul else "acc"
    assert f.locals[acc].shape == (256, 128)


def test_batched_slices_its_3d_loads_and_store():
    spec = batched._spec_for([_z(2, 512, 256), _z(2, 256, 512), _z(2, 512, 512)],
                             dict(tm=256, tn=256, tk=64))
    (op,) = _loops(spec.module.kernel)
    assert op.type.shape == (256, 128) and op.attrs["batch"]
    stores = [x for x in ir.walk_function_exprs(spec.module.kernel)
              if isinstance(x, ir.TileOp) and x.op == "store"]
    assert [s.attrs["shape"] for s in stores] == [(1, 256, 128)]


@pytest.mark.parametrize(("tiles", "args"), [
    ((128, 256, 64), (_z(512, 256), _z(256, 512), _z(512, 512))),   # fits: 128 KiB
])
def test_an_accumulator_that_fits_is_left_alone(tiles, args):
    spec = matmul._spec_for(list(args), dict(zip(("tm", "tn", "tk"), tiles)))
    (op,) = _loops(spec.module.kernel)
    assert op.type.shape == tiles[:2]


def test_an_accumulator_read_after_its_store_is_left_alone():
    spec = read_again._spec_for([_z(512, 256), _z(256, 512), _z(512, 512),
                                 _z(512, 2, dtype=np.float32)], dict(tm=256, tn=256, tk=64))
    f = spec.module.kernel
    assert not any(isinstance(s, ir.For) and s.var.startswith("col_slice")
                   for s in ir.walk_stmts(f.body))
    assert f.locals["acc"].shape == (256, 256)


def test_an_epilogue_of_scalars_and_a_loaded_tile_is_sliced_with_it():
    spec = gemm._spec_for([_z(512, 256), _z(256, 512), _z(512, 512), _z(512, 512), 1.0, 0.5],
                          dict(tm=256, tn=256, tk=64))
    f = spec.module.kernel
    assert any(isinstance(s, ir.For) and s.var.startswith("col_slice")
               for s in ir.walk_stmts(f.body))
    loads = [x for x in ir.walk_function_exprs(f) if isinstance(x, ir.TileOp) and
             x.op == "load" and x.args[0].name == "Cin"]
    assert [x.attrs["shape"] for x in loads] == [(256, 128)]
    assert f.locals["c"].shape == (256, 128) and f.locals["acc"].shape == (256, 128)


def test_an_epilogue_with_a_tile_of_another_shape_is_left_alone():
    spec = with_bias._spec_for([_z(512, 256), _z(256, 512), _z(1, 512, dtype=np.float32),
                                _z(512, 512)], dict(tm=256, tn=256, tk=64))
    assert spec.module.kernel.locals["acc"].shape == (256, 256)


def test_gemm_numerics(target, rng):
    m, n, k = 300, 520, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = rng.standard_normal((m, n)).astype(np.float16)
    out = target.to_device(poison((m, n), np.float16))
    target.launch_tile(gemm, (cdiv(m, 256), cdiv(n, 256)), target.to_device(a),
                       target.to_device(b), target.to_device(c), out, 1.5, -0.5, 256, 256, 64)
    ref = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 0.5 * c.astype(np.float64)
    np.testing.assert_allclose(np.asarray(target.to_host(out), np.float64), ref, rtol=2e-2,
                               atol=2e-2 * np.sqrt(k))


def _check(got, a, b, k):
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    tol = 2e-2
    np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=tol,
                               atol=tol * np.sqrt(k))


@pytest.mark.parametrize(("m", "n", "k", "dtype"), [
    (300, 520, 96, np.float16),     # edges in both axes, a column slice wholly outside
    (256, 384, 64, np.float32),     # tfloat32; the second slice of the last column outside
])
def test_plain_numerics(target, rng, m, n, k, dtype):
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    out = target.to_device(poison((m, n), dtype))
    target.launch_tile(matmul, (cdiv(m, 256), cdiv(n, 256)), target.to_device(a),
                       target.to_device(b), out, 256, 256, 32)
    _check(target.to_host(out), a, b, k)


def test_persistent_numerics(target, rng):
    m, n, k = 300, 600, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = target.to_device(poison((m, n), np.float16))
    target.launch_tile(persistent, (4,), target.to_device(a), target.to_device(b), out,
                       256, 256, 64)
    _check(target.to_host(out), a, b, k)


def test_batched_numerics(target, rng):
    z, m, n, k = 2, 260, 300, 64
    a = rng.standard_normal((z, m, k)).astype(np.float16)
    b = rng.standard_normal((z, k, n)).astype(np.float16)
    out = target.to_device(poison((z, m, n), np.float16))
    target.launch_tile(batched, (cdiv(m, 256), cdiv(n, 256), z), target.to_device(a),
                       target.to_device(b), out, 256, 256, 64)
    _check(target.to_host(out), a, b, k)


def test_a_whole_tile_outside_is_still_reported():
    """A grid one column of tiles too wide: the tile wholly outside is an error at the
    store's line, as without slices (the first slice runs even where its columns lie
    outside; only later slices of a tile partly inside are skipped)."""
    a, b = np.ones((256, 64), np.float16), np.ones((64, 256), np.float16)
    with pytest.raises(tt.OutOfBoundsError, match="entirely outside") as e, tt.simulate():
        ct.launch(None, (1, 2, 1), matmul, (a, b, np.zeros((256, 256), np.float16), 256, 256,
                                            64))
    assert "ct.store(C, " in str(e.value) and "C[0, 256]" in str(e.value)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_compiles(arch):
    cubin = compile_cubin(matmul, _z(512, 256), _z(256, 512), _z(512, 512), 256, 256, 64,
                          arch=arch)
    assert cubin[:4] == b"\x7fELF"
    cubin = compile_cubin(gemm, _z(512, 256), _z(256, 512), _z(512, 512), _z(512, 512), 1.0,
                          0.5, 256, 256, 64, arch=arch)
    assert cubin[:4] == b"\x7fELF"
