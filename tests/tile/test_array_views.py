"""cuTile's array methods in tile kernels: ``Array.slice``, ``Array.tiled_view`` (a
``TiledView``'s load, store, num_tiles, atomic_store_* and attributes) and
``Array.get_raw_memory`` (``load_offset``, ``store_offset``, ``atomic_*_offset``).

Numerics on every target against NumPy (the ``target`` fixture), into poisoned outputs checked
whole; then the kernels compile to sm_80 and sm_90 cubins through NVRTC; then cuTile's errors
(TileTypeError with cuTile's words) at the user's line.
"""

import numpy as np
import pytest
from conftest import poison

import threadtile as tt
import threadtile.tile as ct

ConstInt = ct.Constant[int]

# ---- kernels ---------------------------------------------------------------------------------


@ct.kernel
def slice_rows(x, y, start: int, stop: int, TM: ConstInt, TN: ConstInt):
    sx = x.slice(axis=0, start=start, stop=stop)
    sy = y.slice(0, start, stop)
    m, n = sx.shape
    for i in range(ct.cdiv(m, TM)):
        for j in range(ct.cdiv(n, TN)):
            ct.store(sy, (i, j), ct.load(sx, (i, j), (TM, TN)))


@ct.kernel
def slice_chained(x, y, TILE: ConstInt):
    a = x.slice(axis=-1, start=4, stop=16)
    b = a.slice(axis=0, start=ct.astype(2, ct.int8), stop=8)  # x[6:12]
    n = b.shape[0]  # a static extent: constant bounds
    ct.static_assert(n == 6)
    ct.store(y.slice(0, 6, 12), (0,), ct.load(b, (0,), (TILE,)))


@ct.kernel
def slice_ragged(x, y, indptr, TM: ConstInt, TN: ConstInt):
    seg = ct.bid(0)
    start = ct.load(indptr, index=seg, shape=())  # a 0-d tile as a bound
    stop = ct.load(indptr, index=seg + 1, shape=())
    sx = x.slice(axis=0, start=start, stop=stop)
    sy = y.slice(axis=0, start=start, stop=stop)
    for i in range(ct.cdiv(stop - start, TM)):
        ct.store(sy, (i, ct.bid(1)), ct.load(sx, (i, ct.bid(1)), (TM, TN)))


@ct.kernel
def tv_copy(x, y, n, TM: ConstInt, TN: ConstInt):
    tx = x.tiled_view((TM, TN))
    ct.static_assert(tx.tile_shape == (TM, TN))
    ct.static_assert(tx.traversal_steps == (TM, TN))
    ct.static_assert(tx.dtype == x.dtype)
    y.tiled_view((TM, TN)).store((ct.bid(0), ct.bid(1)), tx.load((ct.bid(0), ct.bid(1))))
    tn = n.tiled_view(())
    if ct.bid(0) == 0 and ct.bid(1) == 0:
        tn.store(0, tx.num_tiles(0))
        tn.store(1, tx.num_tiles(-1))


@ct.kernel
def tv_padding(x, z, TILE: ConstInt):
    t = x.tiled_view(TILE, padding_mode=ct.PaddingMode.NEG_INF).load(1)
    ct.store(z, 0, tile=ct.min(t))


@ct.kernel
def tv_windows(x, out, TILE: ConstInt, STEP: ConstInt):
    """Each window's sum (tiles STEP apart, overlapping where STEP < TILE)."""
    tv = x.tiled_view(TILE, traversal_steps=STEP, padding_mode=ct.PaddingMode.ZERO)
    ct.static_assert(tv.traversal_steps == (STEP,))
    to = out.tiled_view(())
    for i in range(tv.num_tiles(0)):
        to.store(i, ct.sum(tv.load(i)))


@ct.kernel
def tv_broadcast_store(x, y, TM: ConstInt, TN: ConstInt):
    row = x.tiled_view((1, TN)).load((0, 0))
    y.tiled_view((TM, TN)).store((ct.bid(0), 0), row)


@ct.kernel
def tv_select_loop(x, y, z, TILE: ConstInt, USE_X: ct.Constant[bool]):
    tv = x.tiled_view(TILE) if USE_X else y.tiled_view(TILE)
    tz = z.tiled_view(TILE)
    for i in range(tz.num_tiles(0)):
        tz.store(i, tv.load(0))
        tv = y.tiled_view(TILE)  # loop-carried


@ct.kernel
def tv_atomic_add(x, y, TM: ConstInt, TN: ConstInt, SM: ConstInt, SN: ConstInt):
    tv = x.tiled_view((TM, TN), traversal_steps=(SM, SN))
    upd = y.tiled_view((TM, TN)).load((0, 0))
    tv.atomic_store_add((ct.bid(0), ct.bid(1)), upd)


@ct.kernel
def raw_copy(x, y, TILE: ConstInt):
    src, dst = x.get_raw_memory(), y.get_raw_memory()
    ct.static_assert(src.dtype == x.dtype)
    off = ct.arange(TILE, dtype=ct.int64) + ct.bid(0) * TILE
    dst.store_offset(off, src.load_offset(off, mask=off < 100, padding_value=-1))


@ct.kernel
def raw_scalar(x, y):
    v = x.get_raw_memory().load_offset(3)
    y.get_raw_memory().store_offset(ct.reshape(ct.arange(4, dtype=ct.int32), (2, 2)), v)


@ct.kernel
def raw_atomics(x, old, TILE: ConstInt):
    mem = x.get_raw_memory()
    off = ct.arange(TILE, dtype=ct.int64)
    ct.store(old, (0,), mem.atomic_add_offset(off, 1, mask=off % 2 == 0))
    mem.atomic_max_offset(0, 100)
    got = mem.atomic_cas_offset(off, ct.full((TILE,), 1, ct.int32), 7, mask=off < 4)
    ct.store(old, (1,), got)


# ---- numerics --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(12, 16), (40, 70)])
@pytest.mark.parametrize(("start", "stop"), [(3, 9), (4, 4), (0, 12)])
def test_slice_rows(target, rng, shape, start, stop):
    x = rng.standard_normal(shape).astype(np.float32)
    y = target.to_device(np.zeros(shape, np.float32))
    target.launch_tile(slice_rows, 1, target.to_device(x), y, start, stop, 4, 8)
    ref = np.zeros(shape, np.float32)
    ref[start:stop] = x[start:stop]
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_slice_columns_of_a_strided_view(target, rng):
    base = rng.standard_normal((16, 64)).astype(np.float32)
    x = base[:, ::2]  # strided: the slice keeps the strides
    y = target.to_device(np.zeros((16, 32), np.float32))

    @ct.kernel
    def cols(x, y, start: int, stop: int):
        sx, sy = x.slice(1, start, stop), y.slice(1, start, stop)
        for i in range(ct.cdiv(sx.shape[0], 8)):
            for j in range(ct.cdiv(sx.shape[1], 8)):
                ct.store(sy, (i, j), ct.load(sx, (i, j), (8, 8)))

    target.launch_tile(cols, 1, target.to_device(x), y, 5, 19)
    ref = np.zeros((16, 32), np.float32)
    ref[:, 5:19] = x[:, 5:19]
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_slice_chained_static_extent(target, rng):
    x = rng.standard_normal(20).astype(np.float32)
    y = target.to_device(np.zeros(20, np.float32))
    target.launch_tile(slice_chained, 1, target.to_device(x), y, 8)
    ref = np.zeros(20, np.float32)
    ref[6:12] = x[6:12]
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_slice_ragged(target, rng):
    x = rng.standard_normal((12, 16)).astype(np.float64)
    y = target.to_device(poison((12, 16), "float64"))
    indptr = target.to_device(np.array([0, 4, 7, 12], np.int32))
    target.launch_tile(slice_ragged, (3, 2), target.to_device(x), y, indptr, 4, 8)
    np.testing.assert_array_equal(target.to_host(y), x)


@pytest.mark.parametrize("shape", [(128, 256), (100, 70)])
def test_tiled_view_copy(target, rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    y = target.to_device(poison(shape, "float32"))
    n = target.to_device(np.zeros(2, np.int32))
    grid = (-(-shape[0] // 64), -(-shape[1] // 32))
    target.launch_tile(tv_copy, grid, target.to_device(x), y, n, 64, 32)
    np.testing.assert_array_equal(target.to_host(y), x)
    np.testing.assert_array_equal(target.to_host(n), grid)


def test_tiled_view_padding(target, rng):
    x = rng.standard_normal(100).astype(np.float32)
    z = target.to_device(np.zeros(1, np.float32))
    target.launch_tile(tv_padding, 1, target.to_device(x), z, 128)
    assert target.to_host(z)[0] == -np.inf


@pytest.mark.parametrize(("tile", "step", "n"), [(4, 2, 8), (4, 8, 16), (4, 3, 12),
                                                 (8, 8, 20)])
def test_tiled_view_windows(target, rng, tile, step, n):
    x = rng.integers(-50, 50, n).astype(np.int32)
    count = -(-n // step)
    out = target.to_device(poison(count, "int32"))
    target.launch_tile(tv_windows, 1, target.to_device(x), out, tile, step)
    ref = [x[s:s + tile].sum() for s in range(0, n, step)]
    np.testing.assert_array_equal(target.to_host(out), ref)


def test_tiled_view_broadcast_store(target, rng):
    x = rng.standard_normal((1, 16)).astype(np.float32)
    y = target.to_device(poison((64, 16), "float32"))
    target.launch_tile(tv_broadcast_store, 2, target.to_device(x), y, 32, 16)
    np.testing.assert_array_equal(target.to_host(y), np.broadcast_to(x, (64, 16)))


@pytest.mark.parametrize("use_x", [True, False])
def test_tiled_view_select_and_loop(target, rng, use_x):
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    z = target.to_device(poison(192, "float32"))
    target.launch_tile(tv_select_loop, 1, target.to_device(x), target.to_device(y), z, 64,
                       use_x)
    ref = np.concatenate([x if use_x else y, y, y])
    np.testing.assert_array_equal(target.to_host(z), ref)


@pytest.mark.parametrize(("shape", "steps"), [((64, 48), (32, 16)), ((50, 60), (20, 40))])
def test_tiled_view_atomic_add(target, rng, shape, steps):
    x = rng.integers(-9, 9, shape).astype(np.int32)
    y = rng.integers(-9, 9, (32, 16)).astype(np.int32)
    dx = target.to_device(x)
    grid = (-(-shape[0] // steps[0]), -(-shape[1] // steps[1]))
    target.launch_tile(tv_atomic_add, grid, dx, target.to_device(y), 32, 16, *steps)
    ref = x.astype(np.int64)
    for r in range(0, shape[0], steps[0]):
        for c in range(0, shape[1], steps[1]):
            part = ref[r:r + 32, c:c + 16]
            part += y[:part.shape[0], :part.shape[1]]
    np.testing.assert_array_equal(target.to_host(dx), ref)


def test_raw_memory_copy(target, rng):
    x = rng.standard_normal(128).astype(np.float32)
    y = target.to_device(poison(128, "float32"))
    target.launch_tile(raw_copy, 2, target.to_device(x), y, 64)
    np.testing.assert_array_equal(target.to_host(y), np.where(np.arange(128) < 100, x, -1))


def test_raw_memory_scalar(target, rng):
    x = rng.standard_normal(8).astype(np.float64)
    y = target.to_device(poison(4, "float64"))
    target.launch_tile(raw_scalar, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), np.full(4, x[3]))


def test_raw_memory_atomics(target):
    x = np.arange(8, dtype=np.int32)
    dx = target.to_device(x)
    old = target.to_device(poison(16, "int32"))
    target.launch_tile(raw_atomics, 1, dx, old, 8)
    after_add = x + (np.arange(8) % 2 == 0)
    after_max = after_add.copy()
    after_max[0] = 100
    swapped = (np.arange(8) < 4) & (after_max == 1)
    final = np.where(swapped, 7, after_max)
    got = target.to_host(old).reshape(2, 8)
    np.testing.assert_array_equal(got[0], np.where(np.arange(8) % 2 == 0, x, 0))
    np.testing.assert_array_equal(got[1], np.where(np.arange(8) < 4, after_max, 1))
    np.testing.assert_array_equal(target.to_host(dx), final)


# ---- cubins ----------------------------------------------------------------------------------

def _compile_cases():
    f2 = np.zeros((40, 70), np.float32)
    f1, i1 = np.zeros(300, np.float32), np.zeros(300, np.int32)
    return [
        (slice_rows, (f2, f2, 3, 9, 4, 8)), (slice_chained, (f1, f1, 8)),
        (slice_ragged, (f2, f2, np.zeros(4, np.int32), 4, 8)),
        (tv_copy, (f2, f2, np.zeros(2, np.int32), 64, 32)), (tv_padding, (f1, f1, 128)),
        (tv_windows, (i1, i1, 4, 3)), (tv_broadcast_store, (f2, f2, 32, 16)),
        (tv_select_loop, (f1, f1, f1, 64, True)), (tv_atomic_add, (i1.reshape(30, 10),) * 2
                                                  + (16, 8, 16, 4)),
        (raw_copy, (f1, f1, 64)), (raw_scalar, (f1, f1)), (raw_atomics, (i1, i1[:16], 8)),
    ]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_to_cubin(arch):
    for kernel, args in _compile_cases():
        assert kernel.compile(*args, arch=arch).cubin[:4] == b"\x7fELF", kernel


# ---- errors ----------------------------------------------------------------------------------

def _launch(kernel, *args):
    with tt.simulate():
        ct.launch(None, (1,), kernel, args)


@ct.kernel
def bad_axis(x):
    x.slice(axis=1, start=0, stop=4)


@ct.kernel
def bad_bound_type(x, s: int):
    x.slice(0, ct.astype(s, ct.uint32), 5)


@ct.kernel
def bad_bounds(x):
    x.slice(0, 5, 3)


@ct.kernel
def bad_rank(x):
    x.tiled_view((4, 4))


@ct.kernel
def bad_steps(x):
    x.tiled_view(4, traversal_steps=0)


@ct.kernel
def bad_store_shape(x):
    x.tiled_view(4).store(0, ct.zeros((8,), ct.float32))


@ct.kernel
def bad_index_size(x):
    x.tiled_view(4).load((0, 0))


@ct.kernel
def bad_paths(x, c: bool):
    if c:
        tv = x.tiled_view(8)
    else:
        tv = x.tiled_view(4)
    tv.store(0, 1.0)


@ct.kernel
def bad_atomic_dtype(x):
    x.tiled_view(4).atomic_store_xor(0, ct.zeros((4,), ct.int64))


@ct.kernel
def bad_raw_value(y):
    y.get_raw_memory().store_offset(ct.arange(1, dtype=ct.int64), ct.arange(8, dtype=ct.float32))


@pytest.mark.parametrize(("kernel", "args", "words"), [
    (bad_axis, (), "Axis 1 is out of range for rank 1'"),
    (bad_bound_type, (0,), "Expected a signed integer scalar, but got uint32"),
    (bad_bounds, (), "Slice stop must be greater than or equal to start"),
    (bad_rank, (), "Expected shape length to be 1, got 2"),
    (bad_steps, (), r"Dimension #0 of traversal_steps \(0,\) is not positive"),
    (bad_store_shape, (), r"Tile shape \(8,\) is not broadcastable to the tiled view's tile "
                          r"shape \(4,\)"),
    (bad_index_size, (), "Index size 2 does not match the tiled view rank 1"),
    (bad_paths, (True,), "depends on path taken"),
    (bad_raw_value, (), "not broadcastable"),
])
def test_errors(kernel, args, words):
    x = np.zeros(16, np.float32)
    with pytest.raises(ct.TileTypeError, match=words) as e:
        _launch(kernel, x, *args)
    assert "test_array_views.py" in str(e.value)  # at the user's line


def test_bitwise_atomic_needs_the_same_dtype():
    with pytest.raises(ct.TileTypeError, match=r"update dtype \(int64\) to exactly match the "
                                               r"target dtype \(int32\)"):
        _launch(bad_atomic_dtype, np.zeros(16, np.int32))
