"""cuTile programs as written: host names, kernel options, and helpers cuTile inlines."""

import re

import numpy as np
import pytest
from kernels import tiles

import threadtile.tile as ct
from threadtile.tile.hostapi import ByTarget


def test_error_classes_importable():
    from threadtile.tile import TileTypeError, TileValueError  # noqa: F401
    assert issubclass(ct.TileSyntaxError, ct.TileError)
    assert issubclass(ct.TileStaticEvalError, Exception)


def test_by_target_resolves_for_sm90():
    assert ByTarget(sm_100=2).resolve("sm_90", 1) == 1
    assert ByTarget(sm_90=8, default=2).resolve("sm_90") == 8
    assert ByTarget(sm_100=8, default=2).resolve("sm_90") == 2
    with pytest.raises(ValueError, match="sm_<major><minor>"):
        ByTarget(hopper=2)


@ct.kernel(num_ctas=ct.ByTarget(sm_100=2), occupancy=ct.ByTarget(sm_90=2), opt_level=2)
def _copy(a, b, T: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(b, index=(i,), tile=ct.load(a, index=(i,), shape=(T,)))


def _load_row(X, i, j, TILE_N):
    # an undecorated helper: TILE_N comes from the caller's constant, as cuTile inlines it
    return ct.load(X, index=(i, j), shape=(1, TILE_N))


@ct.kernel
def _helper_kernel(X, Y, S, TILE_N: ct.Constant[int]):
    i = ct.bid(0)
    acc = ct.zeros((1,), dtype=ct.float32)
    for j in range(ct.num_tiles(X, axis=1, shape=(1, TILE_N))):
        t = _load_row(X, i, j, TILE_N)
        ct.store(Y, index=(i, j), tile=t * 2.0)
        acc += ct.sum(t, axis=1)
    ct.store(S, index=(i,), tile=acc)


def test_kernel_options_by_target(target):
    assert _copy.occupancy == 2
    a = np.arange(256, dtype=np.float32)
    b = target.to_device(np.zeros_like(a))
    target.launch_tile(_copy, 2, target.to_device(a), b, 128)
    np.testing.assert_array_equal(target.to_host(b), a)


@ct.kernel(num_worker_warps=ct.ByTarget(sm_90=8, default=4))
def _copy_8(a, b, T: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(b, index=(i,), tile=ct.load(a, index=(i,), shape=(T,)))


def test_num_worker_warps(target):
    """cuTile's num_worker_warps (4 or 8) is the block's warps where num_warps is not given;
    replace_hints changes it; other values are refused as cuTile refuses them."""
    assert _copy_8.num_warps == 8
    assert _copy_8.replace_hints(num_worker_warps=4).num_warps == 4
    a = np.arange(512, dtype=np.float32)
    b = target.to_device(np.zeros_like(a))
    target.launch_tile(_copy_8, 2, target.to_device(a), b, 256)
    np.testing.assert_array_equal(target.to_host(b), a)
    with pytest.raises(ValueError, match="must be 4 or 8"):
        ct.kernel(num_worker_warps=6)(lambda x: None)


def test_undecorated_helper_with_shape_parameter(target):
    x = np.random.default_rng(1).standard_normal((4, 256)).astype(np.float32)
    y = target.to_device(np.zeros_like(x))
    s = target.to_device(np.zeros(4, np.float32))
    target.launch_tile(_helper_kernel, 4, target.to_device(x), y, s, 64)
    np.testing.assert_allclose(target.to_host(y), 2 * x.astype(np.float64), rtol=1e-6)
    np.testing.assert_allclose(target.to_host(s), x.astype(np.float64).sum(axis=1),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    x = np.zeros((4, 256), np.float32)
    assert _copy.compile(x[0], x[1], 128, arch=arch).cubin
    assert _helper_kernel.compile(x, x, x[0, :4], 64, arch=arch).cubin


@ct.kernel
def _local_tile_size(a, b):
    T = 32  # a local constant as a tile shape, as cuTile takes it
    t = ct.load(a, index=(ct.bid(0),), shape=(T,))
    ct.store(b, index=(ct.bid(0),), tile=t * 2.0)


def test_a_local_integer_constant_is_a_tile_size(target):
    a = np.arange(64, dtype=np.float32)
    b = target.to_device(np.zeros_like(a))
    target.launch_tile(_local_tile_size, 2, target.to_device(a), b)
    np.testing.assert_array_equal(target.to_host(b), 2 * a)
    for arch in ("sm_80", "sm_90"):
        assert _local_tile_size.compile(a, a, arch=arch).cubin[:4] == b"\x7fELF"


@ct.kernel
def _builtin_max(a, b, out):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(16,))
    y = ct.load(b, index=(i,), shape=(16,))
    ct.store(out, index=(i,), tile=max(x, y, 0.5) - min(x, y))


def test_builtin_max_and_min_of_tiles_are_elementwise(target):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    out = target.to_device(np.zeros(32, np.float32))
    target.launch_tile(_builtin_max, 2, target.to_device(a), target.to_device(b), out)
    np.testing.assert_array_equal(target.to_host(out),
                                  np.maximum(np.maximum(a, b), 0.5) - np.minimum(a, b))
    assert _builtin_max.compile(a, b, a, arch="sm_90").cubin[:4] == b"\x7fELF"


@ct.kernel
def _locked_increment(locks, out):
    while ct.atomic_cas(locks, 0, 0, 1) == 1:  # a tile operation in a while condition
        pass
    x = ct.load(out, index=(0,), shape=(1,))
    ct.store(out, index=(0,), tile=x + 1)
    ct.atomic_xchg(locks, 0, 0)


def test_a_tile_operation_in_a_while_condition():
    """cuTile's spin lock (LayerNorm's backward pass): the condition's tile operations run
    before every test of the loop."""
    import threadtile as tt

    locks, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    with tt.simulate():
        _locked_increment[1](locks, out)
    assert out[0] == 1 and locks[0] == 0
    for arch in ("sm_80", "sm_90"):
        assert _locked_increment.compile(locks, out, arch=arch).cubin[:4] == b"\x7fELF"


def test_a_lock_between_blocks(monkeypatch):
    """A while loop doing atomics runs its blocks one at a time, so one waiting for a lock finds
    it released by the blocks before it; a lock nobody releases stops the loop after
    SPIN_LIMIT iterations, at its line."""
    import threadtile as tt
    from threadtile.backends.sim import checks

    monkeypatch.setattr(checks, "SPIN_LIMIT", 500)

    @ct.kernel
    def spin(locks, out):
        while ct.atomic_cas(locks, 0, 0, 1) == 1:
            pass
        ct.atomic_add(out, 0, 1)
        ct.atomic_xchg(locks, 0, 0)

    locks, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    with tt.simulate():
        spin[4](locks, out)
    assert out[0] == 4 and locks[0] == 0
    with pytest.raises(tt.errors.KernelRuntimeError, match="run 500 times") as e, \
            tt.simulate():
        spin[4](np.ones(1, np.int32), np.zeros(1, np.int32))
    assert "while ct.atomic_cas" in str(e.value) and "spin lock" in str(e.value)


def _two_tiles(X, i):
    t = ct.load(X, index=(i,), shape=(16,))
    return t * 2.0, t + 1.0


@ct.kernel
def _tuple_helper(X, Y, Z):
    i = ct.bid(0)
    a, b = _two_tiles(X, i)
    ct.store(Y, index=(i,), tile=a)
    ct.store(Z, index=(i,), tile=b)


def test_a_helper_returns_a_tuple_of_tiles(target):
    x = np.arange(32, dtype=np.float32)
    y, z = target.to_device(np.zeros_like(x)), target.to_device(np.zeros_like(x))
    target.launch_tile(_tuple_helper, 2, target.to_device(x), y, z)
    np.testing.assert_array_equal(target.to_host(y), 2 * x)
    np.testing.assert_array_equal(target.to_host(z), x + 1)
    for arch in ("sm_80", "sm_90"):
        assert _tuple_helper.compile(x, x, x, arch=arch).cubin[:4] == b"\x7fELF"


@ct.kernel
def _mm_auto(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(C.dtype))


def test_the_block_is_sized_for_the_accumulator(target, rng):
    """Without num_warps (cuTile has none), each specialization picks its block: 4 warps,
    8 (two warpgroups) for accumulators larger than 128x128 float32, and for 128x128 ones
    whose Hopper loop steps 64 deep (a 16-bit K of 32 runs steps of two k)."""
    a16 = np.zeros((64, 64), np.float16)
    for (tm, tn), threads in (((64, 64), 128), ((64, 128), 128), ((128, 128), 256),
                              ((128, 256), 256), ((256, 256), 256)):
        src = _mm_auto.cuda_source(a16, a16, a16, tm, tn, 32)
        # (a k loop on Hopper's main loop: "+ TT_PRODUCER_THREADS", a producer warpgroup in
        # the builds that have one)
        assert re.search(rf"__launch_bounds__\({threads}[ )]", src), (tm, tn)
    m, k, n = 200, 96, 300  # edges in every direction
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = target.to_device(np.full((m, n), np.nan, np.float16))
    target.launch_tile(_mm_auto, (2, 2), target.to_device(a), target.to_device(b), c,
                       128, 256, 32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = target.to_host(c).astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-2 * np.abs(ref).max())
    assert _mm_auto.compile(a, b, a, 128, 256, 32, arch="sm_90a").cubin[:4] == b"\x7fELF"


@ct.kernel
def _bmm(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    bi, bj, z = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    dt = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    for k in range(ct.num_tiles(A, axis=2, shape=(1, tm, tk))):
        a = ct.load(A, index=(z, bi, k), shape=(1, tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(z, k, bj), shape=(1, tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(ct.reshape(a, (tm, tk)).astype(dt), ct.reshape(b, (tk, tn)).astype(dt), acc)
    ct.store(C, index=(z, bi, bj), tile=ct.reshape(acc.astype(C.dtype), (1, tm, tn)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_batched_k_loop_is_one_operation(target, rng, dtype):
    """A k loop over 3-d loads of one batch, reshaped to 2-d (BatchMatMul's form), is one
    mma_loop on the batch's 2-d views; edges in every direction load zeros."""
    nb, m, k, n = 3, 40, 72, 56
    a = rng.standard_normal((nb, m, k)).astype(dtype)
    b = rng.standard_normal((nb, k, n)).astype(dtype)
    ir = _bmm.ir(a, b, a[:, :, :n], 32, 32, 16)
    assert "tile.mma_loop(" in ir and "for k in" not in ir
    c = target.to_device(np.full((nb, m, n), np.nan, dtype))
    target.launch_tile(_bmm, (2, 2, nb), target.to_device(a), target.to_device(b), c,
                       32, 32, 16)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = target.to_host(c).astype(np.float64)
    tol = 2e-3 if dtype == np.float16 else 2e-3  # float16 outputs; tfloat32 operands
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * 8 * np.abs(ref).max())
    for arch in ("sm_80", "sm_90a"):
        src = _bmm.compile(a, b, a[:, :, :n].copy(), 32, 32, 16, arch=arch)
        assert src.cubin[:4] == b"\x7fELF" and "tt::tile::batch_view(" in src.source


@pytest.mark.parametrize("k", [96, 32])
def test_a_batched_k_loop_of_k_32_in_half_steps(target, rng, k):
    """K 32, 16-bit: on sm_90a the Hopper loop takes two k a step; with an odd count the last
    step's copies reach into the next batch's rows of B (or past the last), which it must not
    multiply."""
    nb, m, n = 3, 128, 128
    a = rng.standard_normal((nb, m, k)).astype(np.float16)
    b = rng.standard_normal((nb, k, n)).astype(np.float16)
    c = target.to_device(np.full((nb, m, n), np.nan, np.float16))
    target.launch_tile(_bmm, (2, 2, nb), target.to_device(a), target.to_device(b), c,
                       64, 64, 32)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(target.to_host(c).astype(np.float64), ref, rtol=2e-3,
                               atol=2e-3 * 8 * np.abs(ref).max())


def test_tfloat32_rounds_to_nearest_even():
    """astype(tfloat32) rounds as cuBLAS's TF32 and cuTile do (measured on an H100): to
    nearest, ties to even; infinities and NaN are kept."""
    from threadtile.backends.sim.tiles import tf32

    def f(bits):
        return np.array([bits], np.uint32).view(np.float32)

    one = 0x3F800000
    assert tf32(f(one + 0x1000)).view(np.uint32)[0] == one  # a tie, even below: down
    assert tf32(f(one + 0x3000)).view(np.uint32)[0] == one + 0x4000  # a tie, odd below: up
    assert tf32(f(one + 0x1001)).view(np.uint32)[0] == one + 0x2000
    assert tf32(f(one + 0x0FFF)).view(np.uint32)[0] == one
    assert np.isinf(tf32(np.float32(np.inf))) and np.isnan(tf32(np.float32(np.nan)))


@ct.kernel
def _scalar_load(ids, x, y):
    """MoE's ``ct.load(ids, index=bid, shape=())``: one element as a 0-d tile."""
    e = ct.load(ids, index=ct.bid(0), shape=())
    row = ct.load(x, index=(e, 0), shape=(1, 64))
    ct.store(y, index=(ct.bid(0), 0), tile=row + e.astype(ct.float32))


def test_load_of_shape_empty_is_one_element(target):
    ids = np.array([3, 0, 2], np.int32)
    x = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float32)
    y = target.to_device(np.zeros((3, 64), np.float32))
    target.launch_tile(_scalar_load, 3, target.to_device(ids), target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), x[ids] + ids[:, None].astype(np.float32))
    for arch in ("sm_80", "sm_90"):
        assert _scalar_load.compile(ids, x, x[:3], arch=arch).cubin[:4] == b"\x7fELF"


def test_a_persistent_k_loop_gets_two_warpgroups(target, rng):
    """A 128x128 k loop inside a loop over tiles (one block a multiprocessor) gets 8 warps;
    the same tiles in a plain kernel 4 (test_the_block_is_sized_for_the_accumulator)."""
    a16 = np.zeros((64, 64), np.float16)
    assert re.search(r"__launch_bounds__\(256[ )]",
                     tiles.matmul_persistent.cuda_source(a16, a16, a16, 128, 128, 64))
    assert re.search(r"__launch_bounds__\(128[ )]",
                     tiles.matmul_persistent.cuda_source(a16, a16, a16, 64, 128, 64))
    m, k, n = 300, 200, 260
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = target.to_device(np.full((m, n), np.nan, np.float16))
    target.launch_tile(tiles.matmul_persistent, 3, target.to_device(a), target.to_device(b), c,
                       128, 128, 64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(target.to_host(c).astype(np.float64), ref, rtol=2e-3,
                               atol=2e-2 * np.abs(ref).max())


@pytest.mark.parametrize(("shape", "tiles_mnk"), [((200, 96, 136), (64, 64, 32)),
                                                 ((256, 128, 256), (64, 128, 64))])
def test_a_persistent_loops_store_inside_and_at_the_edges(target, rng, shape, tiles_mnk):
    """A store from fragments inside the loop over tiles, in a block without a producer
    warpgroup: on sm_90a the tiles inside the array take tile/mma.h's interior path and
    those at its edges the bounds-tested one, out of line; every element written once."""
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    assert "tt::tile::store_fragments<-1, true>(" in \
        tiles.matmul_persistent.cuda_source(a, b, a, *tiles_mnk)
    c = target.to_device(np.full((m, n), np.nan, np.float16))
    target.launch_tile(tiles.matmul_persistent, 5, target.to_device(a), target.to_device(b), c,
                       *tiles_mnk)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(target.to_host(c).astype(np.float64), ref, rtol=2e-3,
                               atol=2e-2 * np.abs(ref).max())


def test_a_persistent_tfloat32_k_loop_gets_two_warpgroups_at_any_depth():
    """float32 operands through tfloat32: 128x128 tiles in a loop over tiles get 8 warps with
    32-deep steps too (their Hopper loop steps 32 deep either way)."""
    f32 = np.zeros((64, 64), np.float32)
    for tk in (32, 64):
        assert re.search(r"__launch_bounds__\(256[ )]",
                         tiles.matmul_persistent.cuda_source(f32, f32, f32, 128, 128, tk))
    assert re.search(r"__launch_bounds__\(128[ )]",
                     tiles.matmul_persistent.cuda_source(f32, f32, f32, 64, 128, 32))


@ct.kernel
def _colsum(X, Y, TM: ct.Constant[int], TN: ct.Constant[int]):
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for i in range(ct.num_tiles(X, axis=0, shape=(TM, TN))):
        acc += ct.load(X, index=(i, ct.bid(0)), shape=(TM, TN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(Y, index=(ct.bid(0),), tile=ct.sum(acc, axis=0))


def test_large_tiles_get_more_warps(target, rng):
    """An auto-sized block holds at most 64 elements of a tile a thread where 16 warps allow:
    LayerNorm's backward reduces (32, 1024) tiles (512 threads)."""
    x = rng.standard_normal((70, 2048)).astype(np.float32)
    for (tm, tn), threads in (((32, 128), 128), ((32, 256), 128), ((32, 512), 256),
                              ((32, 1024), 512), ((64, 1024), 512)):
        assert f"__launch_bounds__({threads})" in _colsum.cuda_source(x, x[0], tm, tn)
    y = target.to_device(np.full(2048, np.nan, np.float32))
    target.launch_tile(_colsum, 2, target.to_device(x), y, 32, 1024)
    np.testing.assert_allclose(target.to_host(y), x.astype(np.float64).sum(axis=0), rtol=1e-5,
                               atol=1e-4)


@ct.kernel
def _scores_and_rows(Q, K, S, X, Y):
    """A 64-row product in fragments beside a (64, 512) float32 tile: more warps for the
    wide tile would split the product's 16-row strips (8 rows a warp on 8 warps)."""
    i = ct.bid(0)
    q = ct.load(Q, index=(i, 0), shape=(64, 64))
    k = ct.load(K, index=(0, 0), shape=(64, 64), order=(1, 0))
    ct.store(S, index=(i, 0), tile=ct.mma(q, k, ct.zeros((64, 64), dtype=ct.float32)))
    x = ct.load(X, index=(i, 0), shape=(64, 512))
    ct.store(Y, index=(i, 0), tile=ct.exp(x) * ct.sum(x, axis=1, keepdims=True))


def test_more_warps_keep_a_products_whole_strips(target, rng):
    q, k = (rng.standard_normal((128, 64)).astype(np.float16) for _ in range(2))
    x = rng.standard_normal((128, 512)).astype(np.float32) / 8
    s = np.zeros((128, 64), np.float32)
    assert "__launch_bounds__(128)" in _scores_and_rows.cuda_source(q, k, s, x, x)
    s_d, y_d = (target.to_device(np.full(a.shape, np.nan, np.float32)) for a in (s, x))
    target.launch_tile(_scores_and_rows, 2, target.to_device(q), target.to_device(k), s_d,
                       target.to_device(x), y_d)
    qf, kf, xf = (a.astype(np.float64) for a in (q, k, x))
    np.testing.assert_allclose(target.to_host(s_d), qf @ kf[:64].T, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(target.to_host(y_d), np.exp(xf) * xf.sum(1, keepdims=True),
                               rtol=1e-4, atol=1e-4)


@ct.kernel
def _extents(X, Out):
    """cuTile's Array.shape and strides are int32: stored into an int32 array with no cast,
    and ct.num_tiles too."""
    ct.scatter(Out, (0,), X.shape[0])
    ct.scatter(Out, (1,), X.shape[1])
    ct.scatter(Out, (2,), X.strides[0])
    ct.scatter(Out, (3,), ct.num_tiles(X, axis=1, shape=(1, 4)))


@ct.kernel
def _wide_extents(X: ct.IndexedWithInt64, Out):
    """An array annotated IndexedWithInt64 has int64 extents: stored into an int64 array."""
    ct.scatter(Out, (0,), X.shape[0] * X.shape[1])


def test_array_extents_are_int32(target):
    x = np.zeros((10, 20), np.float32)
    out = target.to_device(np.full(4, -1, np.int32))
    target.launch_tile(_extents, 1, target.to_device(x), out)
    assert list(target.to_host(out)) == [10, 20, 20, 5]
    out64 = target.to_device(np.full(1, -1, np.int64))
    target.launch_tile(_wide_extents, 1, target.to_device(x), out64)
    assert target.to_host(out64)[0] == 200
    ir = _extents.ir(x, np.zeros(4, np.int32))
    assert "tile.full(int32(X.shape[0])):tile<int32, ()>" in ir
    assert "tile.full(int32(X.strides[0])):tile<int32, ()>" in ir


def test_wide_extents_are_int64():
    x, out = np.zeros((10, 20), np.float32), np.zeros(1, np.int32)
    # an int64 into an int32 array: cuTile's rule asks for the cast
    with pytest.raises(ct.TileTypeError, match="cannot implicitly cast int64 to int32"):
        _wide_extents.ir(x, out)


def test_an_int32_loop_over_shapes_is_still_one_k_loop():
    """A k loop bounded by A.shape (int32) indexes its loads with the widened loop variable:
    still one mma_loop (ir/kloop.py)."""
    src = _shape_bounded_matmul.cuda_source(np.zeros((64, 64), np.float16),
                                            np.zeros((64, 64), np.float16),
                                            np.zeros((64, 64), np.float32), 64, 64, 32)
    assert "mma_loop<" in src and "for (" not in src.split("__global__")[1]


@ct.kernel
def _shape_bounded_matmul(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int],
                          tk: ct.Constant[int]):
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(A.shape[1] // tk):
        acc = ct.mma(ct.load(A, index=(ct.bid(0), k), shape=(tm, tk)),
                     ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn)), acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc)


def _bar(x):
    ct.abracadabra(x)


def _foo(x):
    _bar(x)


@ct.kernel
def _calls_a_bad_helper(x):
    _foo(x)


def test_an_error_in_a_helper_shows_the_calls():
    """As cuTile: an error in an undecorated helper (inlined) names every call from the kernel
    to its line, each with its source line and carets."""
    with pytest.raises(Exception, match="has no attribute 'abracadabra'") as info:
        _calls_a_bad_helper.ir(np.zeros((), np.float32))
    text = str(info.value)
    frames = [m.group(1) for m in re.finditer(r'line \d+, col [\d-]+, in (\w+):', text)]
    assert frames == ["_calls_a_bad_helper", "_foo", "_bar"], text
    assert re.search(r"\n +_foo\(x\)\n +\^{7}\n", text) and "ct.abracadabra(x)" in text
