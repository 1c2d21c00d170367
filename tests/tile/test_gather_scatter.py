"""ct.gather and ct.scatter (cuTile's semantics): an array's elements at tiles of indices.

Numerics on every target against NumPy (the ``target`` fixture: the simulator here, the GPU
where there is one), from fresh random inputs into poisoned outputs, checked whole: copies
through index tiles in 1-d and 2-d, indices broadcast together, random (repeated, negative,
past the end) indices with the padding, masks, padding tiles, scalar indices (0-d tiles),
strided views, shared memory, dtype conversions; load/store_advanced_indexing, which are
gathers and scatters of rows (or columns) at a tile of indices and slices of the other axes.
Then the kernels compile to sm_80 and sm_90
cubins through NVRTC; then the errors: compile errors at the user's line for bad indices,
masks, paddings and values, and the simulator's OutOfBoundsError (``check_bounds=False``)
and RaceError (one scatter writing two values to one element).
"""

import contextlib
import inspect

import numpy as np
import pytest
from conftest import poison

import threadtile as tt
import threadtile.tile as ct
from threadtile import KernelCompileError
from threadtile.errors import RaceWarning

# ---- kernels ---------------------------------------------------------------------------------


@ct.kernel
def copy_1d(x, y, TILE: ct.Constant[int]):
    ind = ct.arange(TILE, dtype=ct.int64) + ct.bid(0) * TILE
    ct.scatter(y, ind, ct.gather(x, ind))


@ct.kernel
def copy_2d(x, y, TM: ct.Constant[int], TN: ct.Constant[int]):
    rows = ct.arange(TM, dtype=ct.int32) + ct.bid(0) * TM
    cols = ct.arange(TN, dtype=ct.int32) + ct.bid(1) * TN
    t = ct.gather(x, (rows[:, None], cols))
    ct.scatter(y, (rows[:, None], cols), t)


@ct.kernel
def gather_at(x, ind, y, pad, TILE: ct.Constant[int]):
    """y[k] = x[ind[k]], or ``pad`` where ind[k] is outside x."""
    k = ct.arange(TILE, dtype=ct.int32) + ct.bid(0) * TILE
    i = ct.gather(ind, k)
    ct.scatter(y, k, ct.gather(x, i, padding_value=pad))


@ct.kernel
def gather_rows(x, rows, y, R: ct.Constant[int], N: ct.Constant[int]):
    """y[r, c] = x[rows[r], c]: the row gather of a mixture of experts."""
    r = ct.gather(rows, ct.arange(R, dtype=ct.int32))
    c = ct.arange(N, dtype=ct.int32)
    t = ct.gather(x, (r[:, None], c[None, :]), padding_value=-1.0)
    ct.store(y, index=(0, 0), tile=t)


@ct.kernel
def gather_masked(x, ind, m, y, TILE: ct.Constant[int]):
    """The mask and the bounds both: y[k] = x[ind[k]] where m[k] and ind[k] is inside."""
    k = ct.arange(TILE, dtype=ct.int32)
    t = ct.gather(x, ct.gather(ind, k), mask=ct.gather(m, k), padding_value=-7)
    ct.scatter(y, k, t)


@ct.kernel
def gather_padding_tile(x, y):
    """A (4,) padding tile broadcast to the (2, 4) indices."""
    ind = ct.arange(8, dtype=ct.int32).reshape((4, 2)).transpose()
    pad = ct.arange(4, dtype=ct.float32) * 10.0
    ct.store(y, index=(0, 0), tile=ct.gather(x, ind, padding_value=pad))


@ct.kernel
def scatter_at(x, ind, m, y, TILE: ct.Constant[int]):
    """y[ind[k]] = x[k] where m[k] (and ind[k] inside y)."""
    k = ct.arange(TILE, dtype=ct.int32) + ct.bid(0) * TILE
    ct.scatter(y, ct.gather(ind, k, padding_value=-1), ct.gather(x, k), mask=ct.gather(m, k))


@ct.kernel
def scatter_number(y, v: float):
    """A number stored at a (4, 1) x (8,) grid of indices; rows 0 and 2 masked by a (4, 1)."""
    r = ct.arange(4, dtype=ct.int32)[:, None]
    c = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, (r, c), v, mask=r % 2 == 1)


@ct.kernel
def scalar_copy(x, y, i: int):
    ct.scatter(y, i, ct.gather(x, i) + 1)


@ct.kernel
def scalar_in_tuple(x, y):
    """One index a number, the other a tile: a column of x to a row of y."""
    r = ct.arange(16, dtype=ct.int32)
    ct.scatter(y, (2, r), ct.gather(x, (r, 3)))


@ct.kernel
def unsigned_indices(x, ind, y):
    """uint64 indices past 2**63 are outside the array (not negative numbers that wrap)."""
    k = ct.arange(16, dtype=ct.int32)
    ct.scatter(y, k, ct.gather(x, ct.gather(ind, k), padding_value=5.0))


@ct.kernel
def through_shared(x, y):
    """A tile stored to shared memory, gathered back reversed and scattered to a shared array,
    then stored."""
    sh = tt.shared.array(128, np.float32)
    sh2 = tt.shared.array(128, np.float32)
    ct.store(sh, index=(0,), tile=ct.load(x, index=(0,), shape=(128,)))
    k = ct.arange(128, dtype=ct.int32)
    ct.scatter(sh2, k, ct.gather(sh, 127 - k))
    ct.store(y, index=(0,), tile=ct.load(sh2, index=(0,), shape=(128,)))


@ct.kernel
def widen(x, y):
    """A float16 tile scattered into a float32 array, an int8 tile into a float32 one:
    implicit conversions that lose nothing."""
    k = ct.arange(64, dtype=ct.int32)
    ct.scatter(y, (0, k), ct.gather(x, k))
    ct.scatter(y, (1, k), k.astype(ct.int8))


@ct.kernel
def unchecked(x, y, n: int):
    """check_bounds=False with the mask keeping the indices inside."""
    k = ct.arange(64, dtype=ct.int32)
    t = ct.gather(x, k, mask=k < n, padding_value=0.5, check_bounds=False)
    ct.scatter(y, k, t, mask=k < n, check_bounds=False)


@ct.kernel
def unchecked_outside(x, y):
    k = ct.arange(64, dtype=ct.int32)
    ct.scatter(y, k, ct.gather(x, k, check_bounds=False))


@ct.kernel
def scatter_duplicates(y, v):
    """Every element to y[k // 2]: two values per element of y."""
    k = ct.arange(64, dtype=ct.int32)
    ct.scatter(y, k // 2, ct.gather(v, k))


@ct.kernel
def rows_at(x, y, z, ind, col_start, R: ct.Constant[int], C: ct.Constant[int]):
    """load_advanced_indexing of rows ``ind`` and columns [col_start, col_start + C), zero
    padded; stored as a tile to y and, plus one, back to z at the same places."""
    rows = ct.gather(ind, ct.arange(R, dtype=ct.int32))
    t = ct.load_advanced_indexing(x, (rows, ct.Slice(col_start, C)),
                                  padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(0, 0), tile=t)
    ct.store_advanced_indexing(z, (rows, ct.Slice(col_start, C)), t + 1)


@ct.kernel
def columns_at(x, y, ind, row_start, R: ct.Constant[int], C: ct.Constant[int]):
    """The sparse axis second: columns ``ind`` of rows [row_start, row_start + R)."""
    cols = ct.gather(ind, ct.arange(C, dtype=ct.int32))
    t = ct.load_advanced_indexing(x, (ct.Slice(row_start, R), cols))
    ct.store(y, index=(0, 0), tile=t)


@ct.kernel
def advanced_outside(x, y):
    rows = ct.arange(4, dtype=ct.int32) + 100
    ct.store(y, index=(0, 0), tile=ct.load_advanced_indexing(x, (rows, ct.Slice(0, 4))))


@ct.kernel
def zero_d(x, out, flags):
    """A 0-d array's one element (indices ``()``), and a masked scatter into one."""
    v = ct.gather(x, ())
    ct.scatter(out, (), v * 2)
    ct.scatter(flags, (), v > 0, mask=v > 100)


# ---- numerics --------------------------------------------------------------------------------

DTYPES = ["float32", "float16", "int32", "int8", "uint16", "bool"]


def _values(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "tile"), [(300, 128), (128, 128), (50, 64), (1000, 512)])
def test_copy_1d(target, rng, dtype, n, tile):
    """Index tiles past the end of the array: gather pads, scatter skips."""
    x = _values(rng, n, dtype)
    y = target.to_device(poison(n, dtype))
    target.launch_tile(copy_1d, ct.cdiv(n, tile), target.to_device(x), y, tile)
    np.testing.assert_array_equal(target.to_host(y), x)


@pytest.mark.parametrize("shape", [(64, 64), (100, 70), (33, 200)])
@pytest.mark.parametrize(("tm", "tn"), [(32, 32), (16, 64)])
def test_copy_2d(target, rng, shape, tm, tn):
    """Indices (TM, 1) and (TN,) broadcast to (TM, TN)."""
    x = rng.standard_normal(shape).astype(np.float32)
    y = target.to_device(poison(shape, np.float32))
    grid = (ct.cdiv(shape[0], tm), ct.cdiv(shape[1], tn))
    target.launch_tile(copy_2d, grid, target.to_device(x), y, tm, tn)
    np.testing.assert_array_equal(target.to_host(y), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_gather_at_random_indices(target, rng, dtype):
    """Repeated, negative and past-the-end indices: the outside ones give the padding."""
    n, m = 200, 512
    x = _values(rng, n, dtype)
    ind = rng.integers(-50, n + 50, m).astype(np.int32)
    y = target.to_device(poison(m, dtype))
    target.launch_tile(gather_at, m // 128, target.to_device(x), target.to_device(ind), y,
                       -3, 128)
    inside = (ind >= 0) & (ind < n)
    ref = np.where(inside, x[np.clip(ind, 0, n - 1)], np.array(-3).astype(dtype))
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_gather_rows(target, rng):
    """y[r, c] = x[rows[r], c], some rows outside x (the padding)."""
    x = rng.standard_normal((40, 64)).astype(np.float32)
    rows = rng.integers(0, 48, 16).astype(np.int64)
    y = target.to_device(poison((16, 64), np.float32))
    target.launch_tile(gather_rows, 1, target.to_device(x), target.to_device(rows), y, 16, 64)
    ref = np.where((rows < 40)[:, None], x[np.minimum(rows, 39)], -1.0)
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_gather_masked(target, rng):
    """cuTile's rule: an element is read where the mask is true AND the index is inside."""
    x = rng.integers(-100, 100, 40).astype(np.int32)
    ind = rng.integers(-10, 50, 128).astype(np.int32)
    m = rng.random(128) < 0.6
    y = target.to_device(poison(128, np.int32))
    target.launch_tile(gather_masked, 1, target.to_device(x), target.to_device(ind),
                       target.to_device(m), y, 128)
    ok = m & (ind >= 0) & (ind < 40)
    ref = np.where(ok, x[np.clip(ind, 0, 39)], -7)
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_padding_tile_broadcast(target):
    """x has 5 elements; the indices are [[0 2 4 6] [1 3 5 7]]: outside elements take the
    padding tile's column."""
    x = np.arange(100, 105, dtype=np.float32)
    y = target.to_device(poison((2, 4), np.float32))
    target.launch_tile(gather_padding_tile, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), [[100, 102, 104, 30], [101, 103, 20, 30]])


@pytest.mark.parametrize("dtype", ["float32", "int16", "bfloat16"])
def test_scatter_permutation_with_mask(target, rng, dtype):
    """y[p[k]] = x[k] where m[k]: other elements keep their values; indices past y skipped."""
    n = 512
    x = rng.standard_normal(n).astype(np.float32) * 100
    p = rng.permutation(n + 40).astype(np.int32)[:n]  # some past the end of y
    m = rng.random(n) < 0.7
    old = rng.standard_normal(n).astype(np.float32) * 100
    if dtype == "int16":
        x, old = x.astype(np.int16), old.astype(np.int16)
    if dtype == "bfloat16":
        xd, yd = target.array(x, dtype), target.array(old, dtype)
        # the values the kernel sees: rounded to bfloat16 on the way in
        x, old = target.to_host(target.array(x, dtype)), target.to_host(target.array(old, dtype))
    else:
        xd, yd = target.to_device(x), target.to_device(old)
    target.launch_tile(scatter_at, n // 128, xd, target.to_device(p), target.to_device(m), yd,
                       128)
    got = target.to_host(yd)
    ref = old.copy()
    sel = m & (p < n)
    ref[p[sel]] = x[sel]
    np.testing.assert_array_equal(got, ref)


def test_scatter_number(target):
    """A number broadcast to the indices' shape; the (4, 1) mask keeps rows 1 and 3."""
    y = target.to_device(np.zeros((4, 8), np.float32))
    target.launch_tile(scatter_number, 1, y, 2.5)
    ref = np.zeros((4, 8), np.float32)
    ref[1::2] = 2.5
    np.testing.assert_array_equal(target.to_host(y), ref)


@pytest.mark.parametrize("i", [0, 7])
def test_scalar_indices(target, rng, i):
    """Scalar indices give a 0-d tile."""
    x = rng.standard_normal(8).astype(np.float32)
    y = target.to_device(poison(8, np.float32))
    target.launch_tile(scalar_copy, 1, target.to_device(x), y, i)
    got = target.to_host(y)
    assert got[i] == np.float32(x[i] + 1)
    assert np.isnan(np.delete(got, i)).all()


@pytest.mark.parametrize("v", [3.5, 250.0])
def test_zero_d_arrays(target, v):
    out = target.to_device(poison((), np.float32))
    flags = target.to_device(np.zeros((), bool))
    target.launch_tile(zero_d, 1, target.to_device(np.array(v, np.float32)), out, flags)
    assert target.to_host(out) == 2 * v
    assert bool(target.to_host(flags)) == (v > 100)


def test_scalar_and_tile_indices(target, rng):
    x = rng.standard_normal((16, 8)).astype(np.float32)
    y = target.to_device(poison((4, 16), np.float32))
    target.launch_tile(scalar_in_tuple, 1, target.to_device(x), y)
    got = target.to_host(y)
    np.testing.assert_array_equal(got[2], x[:, 3])
    assert np.isnan(np.delete(got, 2, axis=0)).all()


def test_unsigned_indices_past_2_63_are_outside(target, rng):
    x = rng.standard_normal(16).astype(np.float32)
    ind = np.arange(16, dtype=np.uint64)
    ind[::3] = np.uint64(1 << 63) + ind[::3]
    y = target.to_device(poison(16, np.float32))
    target.launch_tile(unsigned_indices, 1, target.to_device(x), target.to_device(ind), y)
    ref = np.where(np.arange(16) % 3 == 0, 5.0, x).astype(np.float32)
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_strided_views(target, rng):
    """Indices are element indices of the view: a transposed 2-d array, every other row."""
    base = rng.standard_normal((64, 48)).astype(np.float32)
    y = target.to_device(poison((32, 32), np.float32))
    target.launch_tile(copy_2d, (1, 1), target.to_device(base.T[:32, ::2]), y, 32, 32)
    np.testing.assert_array_equal(target.to_host(y), base.T[:32, ::2][:32, :32])


def test_through_shared_memory(target, rng):
    x = rng.standard_normal(128).astype(np.float32)
    y = target.to_device(poison(128, np.float32))
    target.launch_tile(through_shared, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), x[::-1])


def test_implicit_widening(target, rng):
    x = rng.standard_normal(64).astype(np.float16)
    y = target.to_device(poison((2, 64), np.float32))
    target.launch_tile(widen, 1, target.to_device(x), y)
    got = target.to_host(y)
    np.testing.assert_array_equal(got[0], x.astype(np.float32))
    np.testing.assert_array_equal(got[1], np.arange(64, dtype=np.float32))


@pytest.mark.parametrize("n", [64, 40])
def test_unchecked_with_mask(target, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    y = target.to_device(poison(n, np.float32))
    target.launch_tile(unchecked, 1, target.to_device(x), y, n)
    np.testing.assert_array_equal(target.to_host(y), x)


@pytest.mark.parametrize("col_start", [0, 24, -8])
def test_advanced_indexing_rows(target, rng, col_start):
    """Rows in any order (repeats and rows past the end in the load), a column slice that may
    pass either edge: zeros there; the store skips what lies outside."""
    x = rng.standard_normal((40, 32)).astype(np.float32)
    ind = rng.permutation(48)[:16].astype(np.int32)
    ind[3] = ind[5] = ind[5] % 40  # one row twice: the store writes it twice, the same values
    y = target.to_device(poison((16, 16), np.float32))
    z0 = rng.standard_normal((40, 32)).astype(np.float32)
    z = target.to_device(z0)
    with pytest.warns(RaceWarning) if target.name == "sim" else contextlib.nullcontext():
        target.launch_tile(rows_at, 1, target.to_device(x), y, z, target.to_device(ind),
                           col_start, 16, 16)
    cols = np.arange(col_start, col_start + 16)
    ok = (ind[:, None] < 40) & (cols >= 0) & (cols < 32)
    ref = np.where(ok, x[np.minimum(ind, 39)][:, np.clip(cols, 0, 31)], 0.0)
    np.testing.assert_array_equal(target.to_host(y), ref)
    zr = z0.copy()
    for r in range(16):
        for c in range(16):
            if ok[r, c]:
                zr[ind[r], cols[c]] = ref[r, c] + np.float32(1)
    np.testing.assert_array_equal(target.to_host(z), zr)


def test_advanced_indexing_columns(target, rng):
    x = rng.standard_normal((64, 40)).astype(np.float32)
    ind = rng.integers(0, 40, 8).astype(np.int64)
    y = target.to_device(poison((32, 8), np.float32))
    target.launch_tile(columns_at, 1, target.to_device(x), y, target.to_device(ind), 16, 32, 8)
    np.testing.assert_array_equal(target.to_host(y), x[16:48][:, ind])


# ---- cubins ----------------------------------------------------------------------------------

def _compile_cases():
    f32, i32 = np.zeros(300, np.float32), np.zeros(512, np.int32)
    f2 = np.zeros((100, 70), np.float32)
    return [
        (copy_1d, (f32, f32, 128)), (copy_1d, (f32.astype(np.float16),) * 2 + (64,)),
        (copy_1d, (np.zeros(8, bool),) * 2 + (128,)), (copy_2d, (f2, f2, 16, 64)),
        (gather_at, (f32, i32, f32, 0.0, 128)),
        (gather_rows, (np.zeros((40, 64), np.float32), np.zeros(16, np.int64),
                       np.zeros((16, 64), np.float32), 16, 64)),
        (gather_masked, (i32, i32, np.zeros(128, bool), i32, 128)),
        (gather_padding_tile, (f32, np.zeros((2, 4), np.float32))),
        (scatter_at, (f32, i32, np.zeros(512, bool), f32, 128)),
        (scatter_number, (np.zeros((4, 8), np.float32), 1.0)),
        (scalar_copy, (f32, f32, 0)), (scalar_in_tuple, (np.zeros((16, 8), np.float32),
                                                         np.zeros((4, 16), np.float32))),
        (unsigned_indices, (f32, np.zeros(16, np.uint64), f32)),
        (through_shared, (f32, f32)),
        (widen, (np.zeros(64, np.float16), np.zeros((2, 64), np.float32))),
        (unchecked, (f32, f32, 64)),
        (zero_d, (np.zeros((), np.float32),) * 2 + (np.zeros((), bool),)),
        (rows_at, (np.zeros((40, 32), np.float32),) * 3 + (np.zeros(16, np.int32), 0, 16, 16)),
        (columns_at, (np.zeros((64, 40), np.float16), np.zeros((32, 8), np.float16),
                      np.zeros(8, np.int64), 0, 32, 8)),
    ]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_to_cubin(arch):
    for kernel, args in _compile_cases():
        assert kernel.compile(*args, arch=arch).cubin[:4] == b"\x7fELF", kernel


def test_cuda_source_calls_gather_h():
    src = gather_masked.cuda_source(np.zeros(8, np.int32), np.zeros(8, np.int32),
                                    np.zeros(8, bool), np.zeros(8, np.int32), 128)
    assert "tt::tile::gather<tile_i32_128, true>(x, " in src
    src = unchecked.cuda_source(np.zeros(8, np.float32), np.zeros(8, np.float32), 8)
    assert "tt::tile::gather<tile_f32_64, false>(x, " in src
    assert "tt::tile::scatter<false>(y, " in src
    src = through_shared.cuda_source(np.zeros(128, np.float32), np.zeros(128, np.float32))
    assert "tt::tile::gather_shared<" in src and "tt::tile::scatter_shared<true>(" in src


# ---- errors ----------------------------------------------------------------------------------

def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


def test_unchecked_index_outside_is_out_of_bounds_in_the_simulator():
    with pytest.raises(tt.OutOfBoundsError) as e, tt.simulate():
        unchecked_outside[1](np.zeros(40, np.float32), np.zeros(64, np.float32))
    assert e.value.line == _line(unchecked_outside.py_func, "ct.gather(")
    assert e.value.index == (40,) and e.value.shape == (40,)
    assert "check_bounds=False" in str(e.value)


def test_scatter_of_two_values_to_one_element_is_a_race():
    with pytest.raises(tt.RaceError) as e, tt.simulate():
        scatter_duplicates[1](np.zeros(32, np.float32), np.arange(64, dtype=np.float32))
    assert e.value.line == _line(scatter_duplicates.py_func, "ct.scatter(")


def test_scatter_of_one_value_twice_is_benign():
    y = np.zeros(32, np.float32)
    with pytest.warns(RaceWarning), tt.simulate():
        scatter_duplicates[1](y, np.repeat(np.arange(32, dtype=np.float32), 2))
    np.testing.assert_array_equal(y, np.arange(32))


def test_advanced_indexing_entirely_outside_is_out_of_bounds():
    with pytest.raises(tt.OutOfBoundsError, match="entirely outside") as e, tt.simulate():
        advanced_outside[1](np.zeros((8, 4), np.float32), np.zeros((4, 4), np.float32))
    assert e.value.line == _line(advanced_outside.py_func, "ct.load_advanced_indexing(")


@ct.kernel
def float_index(x):
    ct.gather(x, ct.arange(8, dtype=ct.float32))


@ct.kernel
def bool_index(x):
    ct.gather(x, ct.arange(8, dtype=ct.int32) > 2)


@ct.kernel
def shapes_apart(x):
    ct.gather(x, (ct.arange(8, dtype=ct.int32), ct.arange(4, dtype=ct.int32)))


@ct.kernel
def one_index_2d(x):
    ct.gather(x, ct.arange(8, dtype=ct.int32))


@ct.kernel
def int_mask(x):
    k = ct.arange(8, dtype=ct.int32)
    ct.gather(x, k, mask=k)


@ct.kernel
def mask_too_big(x):
    k = ct.arange(8, dtype=ct.int32)
    ct.gather(x, k, mask=ct.arange(4, dtype=ct.int32) > 0)


@ct.kernel
def mask_widens(x):
    k = ct.arange(8, dtype=ct.int32)
    ct.gather(x, k, mask=ct.full((2, 8), True, ct.bool_))


@ct.kernel
def padding_out_of_range(x):
    ct.gather(x, ct.arange(8, dtype=ct.int32), padding_value=128)


@ct.kernel
def float_padding_for_ints(x):
    ct.gather(x, ct.arange(8, dtype=ct.int32), padding_value=0.5)


@ct.kernel
def narrowing_value(x, y):
    k = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, k, ct.gather(x, k))


@ct.kernel
def value_widens(y):
    ct.scatter(y, ct.arange(8, dtype=ct.int32), ct.zeros((2, 8), ct.float32))


@ct.kernel
def bad_latency(x):
    ct.gather(x, ct.arange(8, dtype=ct.int32), latency=11)


@ct.kernel
def two_sparse(x):
    r = ct.arange(4, dtype=ct.int32)
    ct.load_advanced_indexing(x, (r, r))


@ct.kernel
def no_sparse(x):
    ct.load_advanced_indexing(x, (ct.Slice(0, 4), ct.Slice(0, 4)))


@ct.kernel
def sparse_2d(x):
    ct.load_advanced_indexing(x, (ct.zeros((4, 4), ct.int32), ct.Slice(0, 4)))


@ct.kernel
def slice_of_3(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 3)))


@ct.kernel
def advanced_1d(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32),))


@ct.kernel
def advanced_tile_shape(y):
    ct.store_advanced_indexing(y, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 4)),
                               ct.zeros((4, 8), ct.float32))


@ct.kernel
def slice_in_a_name(x):
    s = ct.Slice(0, 4)
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), s))


F = np.zeros(16, np.float32)
I8 = np.zeros(16, np.int8)
F2 = np.zeros((8, 8), np.float32)


@pytest.mark.parametrize(("kernel", "args", "message"), [
    (float_index, (F,), "the index has the non-integer dtype float32"),
    (bool_index, (F,), "the index has the non-integer dtype bool"),
    (shapes_apart, (np.zeros((8, 8), np.float32),),
     "the index shapes (8,), (4,) are not broadcastable to a common shape"),
    (one_index_2d, (np.zeros((8, 8), np.float32),), "a 2-d array takes a tuple of 2 indices"),
    (int_mask, (F,), "the mask must be boolean, got int32"),
    (mask_too_big, (F,), "the mask's shape (4,) is not broadcastable to the index shape (8,)"),
    (mask_widens, (F,), "the mask's shape (2, 8) is not broadcastable to the index shape"),
    (padding_out_of_range, (I8,), "the padding value 128 is out of range of int8"),
    (float_padding_for_ints, (I8,), "cannot implicitly cast 0.5 to int8"),
    (narrowing_value, (F, np.zeros(16, np.int32)),
     "the stored value cannot implicitly cast float32 to int32"),
    (value_widens, (F,), "the value's shape (2, 8) is not broadcastable to the index shape (8,)"),
    (bad_latency, (F,), "latency must be between 1 and 10, got 11"),
    (two_sparse, (F2,), "exactly one index must be a 1D integer Tile (the sparse axis); 2"),
    (no_sparse, (F2,), "exactly one index must be a 1D integer Tile (the sparse axis); none"),
    (sparse_2d, (F2,), "the index of axis 0 must be a 1D integer tile or a ct.Slice"),
    (slice_of_3, (F2,), "ct.Slice of axis 1 has length 3; it must be a power of two"),
    (advanced_1d, (F,), "load_advanced_indexing() needs an array of 2 or more axes"),
    (advanced_tile_shape, (F2,), "the tile's shape (4, 8) does not match the shape the "
     "indices imply, (4, 4)"),
    (slice_in_a_name, (F2,), "ct.Slice(...) cannot be bound to a name"),
], ids=["float-index", "bool-index", "shapes", "rank", "int-mask", "mask-shape", "mask-widens",
        "pad-range", "pad-kind", "narrowing", "value-shape", "latency", "two-sparse",
        "no-sparse", "sparse-2d", "slice-length", "advanced-1d", "advanced-shape",
        "slice-name"])
def test_compile_errors_at_the_users_line(kernel, args, message):
    with pytest.raises(KernelCompileError) as e:
        kernel.cuda_source(*args)
    text = str(e.value)
    assert message in text
    fn = kernel.py_func
    src = inspect.getsource(fn)
    call = next(c for c in ("ct.Slice(", "ct.scatter(", "ct.load_advanced_indexing(",
                            "ct.store_advanced_indexing(", "ct.gather(") if c in src)
    line = _line(fn, call)
    assert f'"{__file__}", line {line}' in text
