"""Reads of shared memory that no thread of the block wrote in this launch (shared memory
starts as garbage on a GPU)."""

import numpy as np

import threadtile as cuda
import threadtile.tile as ct
from threadtile.errors import UninitializedReadError

from . import bug, ramp, zeros

B0 = (0, 0, 0)


@cuda.jit
def lookup_half_loaded(table, data, out):
    lut = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    if t < 16:
        lut[t] = table[t]
    cuda.syncthreads()
    out[t] = lut[data[t] % 32]  # BUG: uninit-lookup-table


@cuda.jit
def lookup_loaded(table, data, out):
    lut = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    if t < 32:
        lut[t] = table[t]
    cuda.syncthreads()
    out[t] = lut[data[t] % 32]


bug("uninit-lookup-table", "uninit-shared", lookup_half_loaded, 1, 64,
    lambda: (ramp(32), ramp(64, dtype=np.int32), zeros(64)), UninitializedReadError,
    where=(B0, (16, 0, 0)), fixed=lookup_loaded,
    note="a 32-entry table in shared memory that only 16 threads load")


@cuda.jit
def histogram_unzeroed(data, hist):
    bins = cuda.shared.array(16, np.int32)
    t = cuda.threadIdx.x
    cuda.atomic.add(bins, data[cuda.grid(1)] % 16, 1)  # BUG: uninit-histogram
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(hist, t, bins[t])


@cuda.jit
def histogram_zeroed(data, hist):
    bins = cuda.shared.array(16, np.int32)
    t = cuda.threadIdx.x
    if t < 16:
        bins[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(bins, data[cuda.grid(1)] % 16, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(hist, t, bins[t])


bug("uninit-histogram", "uninit-shared", histogram_unzeroed, 2, 32,
    lambda: (ramp(64, dtype=np.int32), zeros(16, dtype=np.int32)), UninitializedReadError,
    where=(B0, B0), fixed=histogram_zeroed,
    note="shared-memory histogram bins never zeroed before the atomics")


@cuda.jit
def tree_oversized(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]  # BUG: uninit-tree-oversized
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] = sh[0]


@cuda.jit
def tree_sized(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] = sh[0]


bug("uninit-tree-oversized", "uninit-shared", tree_oversized, 1, 64,
    lambda: (ramp(64), zeros(1)), UninitializedReadError, where=(B0, B0), fixed=tree_sized,
    note="a reduction written for 128 threads launched with 64: the upper half is never "
         "written")


@cuda.jit
def stencil_no_halo(a, out):
    sh = cuda.shared.array(34, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t + 1] = a[i]
    cuda.syncthreads()
    out[i] = sh[t] + sh[t + 1] + sh[t + 2]  # BUG: uninit-missing-halo


@cuda.jit
def stencil_halo(a, out):
    sh = cuda.shared.array(34, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    sh[t + 1] = a[i]
    if t == 0:
        sh[0] = a[i - 1] if i > 0 else np.float32(0)
    if t == 31:
        sh[33] = a[i + 1] if i + 1 < n else np.float32(0)
    cuda.syncthreads()
    out[i] = sh[t] + sh[t + 1] + sh[t + 2]


bug("uninit-missing-halo", "uninit-shared", stencil_no_halo, 2, 32,
    lambda: (ramp(64), zeros(64)), UninitializedReadError, where=(B0, B0), fixed=stencil_halo,
    note="a shared stencil tile whose halo cells are never loaded")


@cuda.jit
def block_sums_guarded(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        sh[t] = a[i]
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]  # BUG: uninit-guarded-tail
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def block_sums_padded(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else np.float32(0)
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


bug("uninit-guarded-tail", "uninit-shared", block_sums_guarded, 2, 64,
    lambda: (ramp(100), zeros(2)), UninitializedReadError, where=((1, 0, 0), (4, 0, 0)),
    fixed=block_sums_padded,
    note="the last block's threads past the end skip their load, and the reduction reads "
         "their slots anyway")


@cuda.jit
def double_buffer_wrong_half(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(4):
        cur = k % 2
        sh[cur * 32 + t] = a[k * 32 + t]
        cuda.syncthreads()
        acc += sh[(1 - cur) * 32 + t]  # BUG: uninit-double-buffer
    out[t] = acc


@cuda.jit
def double_buffer_right_half(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(4):
        cur = k % 2
        sh[cur * 32 + t] = a[k * 32 + t]
        cuda.syncthreads()
        acc += sh[cur * 32 + t]
    out[t] = acc


bug("uninit-double-buffer", "uninit-shared", double_buffer_wrong_half, 1, 32,
    lambda: (ramp(128), zeros(32)), UninitializedReadError, where=(B0, B0),
    fixed=double_buffer_right_half,
    note="double buffering that reads the other buffer, empty in the first iteration")


@cuda.jit
def second_view_unwritten(a, out):
    dyn = cuda.shared.array(0, np.float32)
    n = cuda.blockDim.x
    xs = dyn[:n]
    ys = dyn[n:2 * n]
    t = cuda.threadIdx.x
    xs[t] = a[t]
    cuda.syncthreads()
    out[t] = xs[t] * ys[t]  # BUG: uninit-dynamic-view


@cuda.jit
def second_view_written(a, out):
    dyn = cuda.shared.array(0, np.float32)
    n = cuda.blockDim.x
    xs = dyn[:n]
    ys = dyn[n:2 * n]
    t = cuda.threadIdx.x
    xs[t] = a[t]
    ys[t] = np.float32(2)
    cuda.syncthreads()
    out[t] = xs[t] * ys[t]


bug("uninit-dynamic-view", "uninit-shared", second_view_unwritten, 1, 32,
    lambda: (ramp(32), zeros(32)), UninitializedReadError, where=(B0, B0), shared=2 * 32 * 4,
    fixed=second_view_written,
    note="a second view of dynamic shared memory read before anything is written to it")


@cuda.jit
def compact_unzeroed(a, out, count):
    n_kept = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    v = a[t]
    if v % 3 == 0:
        pos = cuda.atomic.add(n_kept, 0, 1)  # BUG: uninit-counter
        out[pos] = v
    cuda.syncthreads()
    if t == 0:
        count[0] = n_kept[0]


@cuda.jit
def compact_zeroed(a, out, count):
    n_kept = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        n_kept[0] = 0
    cuda.syncthreads()
    v = a[t]
    if v % 3 == 0:
        pos = cuda.atomic.add(n_kept, 0, 1)
        out[pos] = v
    cuda.syncthreads()
    if t == 0:
        count[0] = n_kept[0]


bug("uninit-counter", "uninit-shared", compact_unzeroed, 1, 64,
    lambda: (ramp(64, dtype=np.int32), zeros(64, dtype=np.int32), zeros(1, dtype=np.int32)),
    UninitializedReadError, where=(B0, B0), fixed=compact_zeroed,
    note="stream compaction whose shared counter is never set to zero")


@cuda.jit(num_warps=4)
def tile_from_partial_shared(a, out, R: ct.Constant[int]):
    sh = cuda.shared.array((4, 32), np.float32)
    t = cuda.threadIdx.x
    r, c = t // 32, t % 32
    if r < R:
        sh[r, c] = a[r, c]
    rows = ct.load(sh, index=(0, 0), shape=(4, 32))  # BUG: uninit-tile-load
    ct.store(out, index=(0,), tile=ct.sum(rows, axis=1))


bug("uninit-tile-load", "uninit-shared", tile_from_partial_shared, 1, 128,
    lambda: (ramp(4, 32), zeros(4), 3), UninitializedReadError, where=(B0, (96, 0, 0)),
    fixed=tile_from_partial_shared, fixed_args=lambda: (ramp(4, 32), zeros(4), 4),
    note="thread code fills three rows of a shared array, a tile load reads all four (the "
         "twin fills four)")
