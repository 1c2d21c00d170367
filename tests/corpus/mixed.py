"""Kernels that mix thread code with tile operations (``@threadtile.jit(num_warps=4)``): a global
array passed between the two without a syncthreads() (tile operations synchronize the block
only around shared memory), and tile operations that are not block-uniform."""

import numpy as np

import threadtile as cuda
import threadtile.tile as ct
from threadtile.errors import BarrierDivergenceError, RaceError

from . import bug, ramp, zeros

C = ct.Constant[int]
B0 = (0, 0, 0)


# ---- missing barriers between thread code and tiles -----------------------------------------

@cuda.jit(num_warps=4)
def transpose_into_scratch(a, scratch, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    r, c = t % 4, t // 4
    scratch[b * 4 + r, c] = a[b * 4 + r, c] * 2.0  # PAIR: mixed-thread-write-tile-load
    rows = ct.load(scratch, index=(b, 0), shape=(4, 32))  # BUG: mixed-thread-write-tile-load
    ct.store(out, index=(b,), tile=ct.sum(rows, axis=1))


@cuda.jit(num_warps=4)
def transpose_into_scratch_ok(a, scratch, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    r, c = t % 4, t // 4
    scratch[b * 4 + r, c] = a[b * 4 + r, c] * 2.0
    cuda.syncthreads()
    rows = ct.load(scratch, index=(b, 0), shape=(4, 32))
    ct.store(out, index=(b,), tile=ct.sum(rows, axis=1))


bug("mixed-thread-write-tile-load", "mixed-missing-barrier", transpose_into_scratch, 2, 128,
    lambda: (ramp(8, 32), zeros(8, 32), zeros(8)), RaceError, where=(B0, (1, 0, 0)),
    fixed=transpose_into_scratch_ok,
    note="threads write a global scratch array, a tile load reads it with no syncthreads")


@cuda.jit(num_warps=4)
def tile_store_thread_read(x, y, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    tile = ct.load(x, index=(b,), shape=(128,))
    ct.store(y, index=(b,), tile=ct.exp(tile))  # PAIR: mixed-tile-store-thread-read
    i = b * 128 + t
    out[i] = y[b * 128 + 127 - t] - y[i]  # BUG: mixed-tile-store-thread-read


@cuda.jit(num_warps=4)
def tile_store_thread_read_ok(x, y, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    tile = ct.load(x, index=(b,), shape=(128,))
    ct.store(y, index=(b,), tile=ct.exp(tile))
    cuda.syncthreads()
    i = b * 128 + t
    out[i] = y[b * 128 + 127 - t] - y[i]


bug("mixed-tile-store-thread-read", "mixed-missing-barrier", tile_store_thread_read, 2, 128,
    lambda: (ramp(256) / 256, zeros(256), zeros(256)), RaceError, where=(B0, B0),
    fixed=tile_store_thread_read_ok,
    note="a tile store to global memory, then threads read other threads' elements of it")


@cuda.jit(num_warps=4)
def atomics_then_tile(keys, counts, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    cuda.atomic.add(counts, b * 8 + keys[b * 128 + t] % 8, 1)  # PAIR: mixed-atomic-tile-load
    c = ct.load(counts, index=(b,), shape=(8,))  # BUG: mixed-atomic-tile-load
    ct.store(out, index=(b,), tile=ct.cumsum(c, axis=0))


@cuda.jit(num_warps=4)
def atomics_sync_tile(keys, counts, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    cuda.atomic.add(counts, b * 8 + keys[b * 128 + t] % 8, 1)
    cuda.syncthreads()
    c = ct.load(counts, index=(b,), shape=(8,))
    ct.store(out, index=(b,), tile=ct.cumsum(c, axis=0))


bug("mixed-atomic-tile-load", "mixed-missing-barrier", atomics_then_tile, 2, 128,
    lambda: (ramp(256, dtype=np.int32), zeros(16, dtype=np.int32), zeros(16, dtype=np.int32)),
    RaceError, where=(B0, B0), fixed=atomics_sync_tile,
    note="per-thread atomic counts in global memory loaded as a tile before every thread "
         "has counted")


@cuda.jit(num_warps=4)
def phases_through_global(x, scratch, out, K: C):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(K):
        tile = ct.load(x, index=(b, k), shape=(1, 128))
        ct.store(scratch, index=(b, 0), tile=tile * 2.0)  # BUG: mixed-phases-war
        cuda.syncthreads()
        acc += scratch[b, 127 - t]  # PAIR: mixed-phases-war
    out[b * 128 + t] = acc


@cuda.jit(num_warps=4)
def phases_through_global_ok(x, scratch, out, K: C):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(K):
        tile = ct.load(x, index=(b, k), shape=(1, 128))
        ct.store(scratch, index=(b, 0), tile=tile * 2.0)
        cuda.syncthreads()
        acc += scratch[b, 127 - t]
        cuda.syncthreads()
    out[b * 128 + t] = acc


bug("mixed-phases-war", "mixed-missing-barrier", phases_through_global, 2, 128,
    lambda: (ramp(2, 512), zeros(2, 128), zeros(256), 4), RaceError, where=(B0, B0),
    fixed=phases_through_global_ok,
    note="a loop that stores a tile, syncs, reads it per thread, and stores the next tile "
         "without a second barrier")


@cuda.jit(num_warps=4)
def tile_load_then_thread_write(x, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    tile = ct.load(x, index=(b,), shape=(128,))  # PAIR: mixed-tile-load-thread-write
    x[b * 128 + 127 - t] = np.float32(0)  # BUG: mixed-tile-load-thread-write
    ct.store(out, index=(b,), tile=tile)


@cuda.jit(num_warps=4)
def tile_load_sync_thread_write(x, out):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    tile = ct.load(x, index=(b,), shape=(128,))
    cuda.syncthreads()
    x[b * 128 + 127 - t] = np.float32(0)
    ct.store(out, index=(b,), tile=tile)


bug("mixed-tile-load-thread-write", "mixed-missing-barrier", tile_load_then_thread_write, 2,
    128, lambda: (ramp(256) + 1, zeros(256)), RaceError, where=(B0, B0),
    fixed=tile_load_sync_thread_write,
    note="threads clear a global array right after loading it as a tile, no barrier between")


# ---- tile operations that are not block-uniform ---------------------------------------------

@cuda.jit(num_warps=4)
def tile_in_thread_branch(x, y):
    b, t = cuda.blockIdx.x, cuda.threadIdx.x
    if t < 64:
        tile = ct.load(x, index=(b,), shape=(64,))  # BUG: tile-op-in-thread-branch
        ct.store(y, index=(b,), tile=tile * 2.0)


@cuda.jit(num_warps=4)
def tile_in_block_branch(x, y):
    b = cuda.blockIdx.x
    if b < 2:
        tile = ct.load(x, index=(b,), shape=(64,))
        ct.store(y, index=(b,), tile=tile * 2.0)


bug("tile-op-in-thread-branch", "barrier-divergence", tile_in_thread_branch, 2, 128,
    lambda: (ramp(128), zeros(128)), BarrierDivergenceError, where=(B0, (64, 0, 0)),
    fixed=tile_in_block_branch,
    note="a tile load (block-collective) under a per-thread condition")


@cuda.jit(num_warps=4)
def tile_index_per_thread(x, y):
    w = cuda.threadIdx.x // 32
    tile = ct.load(x, index=(w,), shape=(32,))  # BUG: tile-op-per-thread-index
    ct.store(y, index=(cuda.blockIdx.x,), tile=tile)


@cuda.jit(num_warps=4)
def tile_index_per_block(x, y):
    tile = ct.load(x, index=(cuda.blockIdx.x,), shape=(32,))
    ct.store(y, index=(cuda.blockIdx.x,), tile=tile)


bug("tile-op-per-thread-index", "barrier-divergence", tile_index_per_thread, 4, 128,
    lambda: (ramp(128), zeros(128)), BarrierDivergenceError, where=(B0, (32, 0, 0)),
    fixed=tile_index_per_block,
    note="a tile index computed from the warp number: it differs between threads")


@cuda.jit(num_warps=4)
def tile_after_return(x, y, n):
    if cuda.grid(1) >= n:
        return
    tile = ct.load(x, index=(cuda.blockIdx.x,), shape=(128,))  # BUG: tile-op-after-return
    ct.store(y, index=(cuda.blockIdx.x,), tile=tile)


@cuda.jit(num_warps=4)
def tile_after_block_return(x, y, n):
    if cuda.blockIdx.x * 128 >= n:
        return
    tile = ct.load(x, index=(cuda.blockIdx.x,), shape=(128,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(cuda.blockIdx.x,), tile=tile)


bug("tile-op-after-return", "barrier-divergence", tile_after_return, 2, 128,
    lambda: (ramp(200), zeros(200), 200), BarrierDivergenceError, where=((1, 0, 0), (72, 0, 0)),
    fixed=tile_after_block_return,
    note="threads past the end return, the rest of the block runs a tile load")
