"""Tile kernels (``threadtile.tile``, cuTile's names): tiles past the array's edge, negative
tile indices, unchecked gathers and scatters, and tiles that two blocks (or two elements of one
scatter) write."""

import threadtile.tile as ct
from threadtile.errors import OutOfBoundsError, RaceError

from . import bug, ramp, zeros

C = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO
B0 = (0, 0, 0)


# ---- past the edge ---------------------------------------------------------------------------

@ct.kernel
def column_sums_extra_tile(x, out, T: C):
    acc = ct.zeros((T,), ct.float32)
    for k in range(ct.num_tiles(x, axis=0, shape=(T,)) + 1):
        acc += ct.load(x, index=(k,), shape=(T,))  # BUG: tile-loop-extra-tile
    ct.store(out, index=(ct.bid(0),), tile=acc)


@ct.kernel
def column_sums(x, out, T: C):
    acc = ct.zeros((T,), ct.float32)
    for k in range(ct.num_tiles(x, axis=0, shape=(T,))):
        acc += ct.load(x, index=(k,), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=acc)


bug("tile-loop-extra-tile", "oob-tile", column_sums_extra_tile, 1, None,
    lambda: (ramp(256), zeros(64), 64), OutOfBoundsError, where=(B0, B0), fixed=column_sums,
    note="a loop over tiles that runs once more than num_tiles: the last tile lies entirely "
         "past the end")


@ct.kernel
def store_shifted(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0) + 1,), tile=t * 2.0)  # BUG: tile-store-shifted


@ct.kernel
def store_in_place(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=t * 2.0)


bug("tile-store-shifted", "oob-tile", store_shifted, 2, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=((1, 0, 0), B0),
    fixed=store_in_place, note="the last block stores its tile one tile past the end")


@ct.kernel
def previous_tile(x, y, T: C):
    prev = ct.load(x, index=(ct.bid(0) - 1,), shape=(T,))  # BUG: tile-negative-index
    cur = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=cur - prev)


@ct.kernel
def previous_tile_padded(x, y, T: C):
    prev = ct.load(x, index=(ct.bid(0) - 1,), shape=(T,), padding_mode=ZERO)
    cur = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=cur - prev)


bug("tile-negative-index", "oob-tile", previous_tile, 2, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=(B0, B0),
    fixed=previous_tile_padded,
    note="tile index bid - 1 in block 0 (the twin pads the missing tile with zeros)")


@ct.kernel
def scale_tiles(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))  # BUG: tile-grid-one-extra
    ct.store(y, index=(ct.bid(0),), tile=t * 3.0)


bug("tile-grid-one-extra", "oob-tile", scale_tiles, 128 // 64 + 1, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=((2, 0, 0), B0),
    fixed=scale_tiles, fixed_args=lambda: (ramp(160), zeros(160), 64),
    note="grid n // T + 1 instead of cdiv(n, T): with n a multiple of T the last block's tile "
         "is entirely outside (the twin: an n that needs the extra block)")


@ct.kernel
def transpose_tiles(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(T, T))  # BUG: tile-grid-swapped
    ct.store(y, index=(ct.bid(1), ct.bid(0)), tile=ct.transpose(t))


@ct.kernel
def transpose_tiles_ok(x, y, T: C):
    t = ct.load(x, index=(ct.bid(1), ct.bid(0)), shape=(T, T))
    ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=ct.transpose(t))


bug("tile-grid-swapped", "oob-tile", transpose_tiles, (4, 2), None,
    lambda: (ramp(64, 128), zeros(128, 64), 32), OutOfBoundsError, where=((2, 0, 0), B0),
    fixed=transpose_tiles_ok,
    note="a 2-d grid laid out over the output's tiles, used to index the input's")


@ct.kernel
def gather_shifted(x, y, T: C):
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T + 1
    t = ct.gather(x, idx, check_bounds=False)  # BUG: tile-gather-unchecked
    ct.store(y, index=(ct.bid(0),), tile=t)


@ct.kernel
def gather_shifted_checked(x, y, T: C):
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T + 1
    t = ct.gather(x, idx)
    ct.store(y, index=(ct.bid(0),), tile=t)


bug("tile-gather-unchecked", "oob-tile", gather_shifted, 2, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=((1, 0, 0), (63, 0, 0)),
    fixed=gather_shifted_checked,
    note="a gather of the next element with check_bounds=False, at the array's last element")


@ct.kernel
def scatter_shifted(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T - 1
    ct.scatter(y, idx, t, check_bounds=False)  # BUG: tile-scatter-negative


@ct.kernel
def scatter_shifted_checked(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T - 1
    ct.scatter(y, idx, t)


bug("tile-scatter-negative", "oob-tile", scatter_shifted, 2, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=(B0, B0),
    fixed=scatter_shifted_checked,
    note="a scatter to index i - 1 with check_bounds=False: element -1 in block 0")


@ct.kernel
def raw_offsets(x, y, T: C):
    mem = x.get_raw_memory()
    off = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T + 1
    ct.store(y, index=(ct.bid(0),), tile=mem.load_offset(off))  # BUG: tile-raw-offset


@ct.kernel
def raw_offsets_masked(x, y, T: C):
    mem = x.get_raw_memory()
    off = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T + 1
    ct.store(y, index=(ct.bid(0),), tile=mem.load_offset(off, mask=off < x.shape[0]))


bug("tile-raw-offset", "oob-tile", raw_offsets, 2, None,
    lambda: (ramp(128), zeros(128), 64), OutOfBoundsError, where=((1, 0, 0), (63, 0, 0)),
    fixed=raw_offsets_masked,
    note="raw-memory loads by element offset, one past the end without a mask")


@ct.kernel
def partial_tile_sum(x, out, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))  # BUG: tile-partial-default-padding
    ct.store(out, index=(ct.bid(0),), tile=ct.sum(t).reshape((1,)))


@ct.kernel
def partial_tile_sum_zero(x, out, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ZERO)
    ct.store(out, index=(ct.bid(0),), tile=ct.sum(t).reshape((1,)))


bug("tile-partial-default-padding", "oob-tile", partial_tile_sum, 2, None,
    lambda: (ramp(100), zeros(2), 64), OutOfBoundsError, where=((1, 0, 0), B0),
    fixed=partial_tile_sum_zero,
    xfail="the edge tile's missing elements get the default padding, which is undetermined; "
          "the simulator pads with NaN, so the sum comes out NaN, but raises nothing: the "
          "load itself is legal (a kernel that stores only in-bounds elements is correct), "
          "and telling a result that depends on the padding needs taint tracking",
    note="a sum over a partial edge tile loaded with the default (undetermined) padding")


# ---- written twice ---------------------------------------------------------------------------

@ct.kernel
def half_grid_store(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0) // 2,), tile=t)  # BUG: tile-same-tile-two-blocks


bug("tile-same-tile-two-blocks", "race-global-grid", half_grid_store, 4, None,
    lambda: (ramp(256), zeros(256), 64), RaceError, where=((1, 0, 0), B0),
    fixed=store_in_place, fixed_args=lambda: (ramp(256), zeros(256), 64),
    note="the output tile index divided by two: blocks 2k and 2k + 1 store one tile")


@ct.kernel
def overlapping_windows(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    view = y.tiled_view((T,), traversal_steps=(T // 2,))
    view.store((ct.bid(0),), t)  # BUG: tile-overlapping-windows


@ct.kernel
def adjacent_windows(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    view = y.tiled_view((T,), traversal_steps=(T,))
    view.store((ct.bid(0),), t)


bug("tile-overlapping-windows", "race-global-grid", overlapping_windows, 2, None,
    lambda: (ramp(128), zeros(128), 64), RaceError, where=((1, 0, 0), B0),
    fixed=adjacent_windows,
    note="a tiled view whose traversal step is half the tile: neighbouring windows overlap")


@ct.kernel
def scatter_pairs(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    idx = ct.arange(T, dtype=ct.int32) // 2 + ct.bid(0) * T
    ct.scatter(y, idx, t)  # BUG: tile-scatter-duplicates


@ct.kernel
def scatter_pairs_ok(x, y, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    ct.scatter(y, idx, t)


bug("tile-scatter-duplicates", "race-global-block", scatter_pairs, 2, None,
    lambda: (ramp(128), zeros(128), 64), RaceError, where=(B0, (1, 0, 0)),
    fixed=scatter_pairs_ok,
    note="a scatter whose index halves the element number: two elements, different values, "
         "one array element")
