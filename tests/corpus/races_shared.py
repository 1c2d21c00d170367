"""Shared-memory races between the threads of a block: a syncthreads() missing, misplaced, or
not enough (an in-place update that needs two)."""

import numpy as np

import threadtile as cuda
from threadtile.errors import RaceError

from . import bug, ramp, zeros

B0 = (0, 0, 0)


@cuda.jit
def same_slot(a, out):
    sh = cuda.shared.array(16, np.float32)
    t = cuda.threadIdx.x
    sh[t // 2] = a[t]  # BUG: shared-same-slot
    cuda.syncthreads()
    out[t] = sh[t // 2]


@cuda.jit
def same_slot_ok(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    out[t] = sh[t]


bug("shared-same-slot", "race-shared", same_slot, 1, 32, lambda: (ramp(32), zeros(32)),
    RaceError, where=(B0, (1, 0, 0)), fixed=same_slot_ok,
    note="two threads store different values to one element")


@cuda.jit
def raw_neighbor(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t] * 2.0  # PAIR: shared-raw-neighbor
    out[t] = sh[(t + 1) % 64]  # BUG: shared-raw-neighbor


@cuda.jit
def raw_neighbor_ok(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t] * 2.0
    cuda.syncthreads()
    out[t] = sh[(t + 1) % 64]


bug("shared-raw-neighbor", "race-shared", raw_neighbor, 1, 64, lambda: (ramp(64), zeros(64)),
    RaceError, where=(B0, B0), fixed=raw_neighbor_ok,
    note="reads a neighbour's element with no syncthreads after the writes")


@cuda.jit
def war_phases(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(4):
        sh[t] = a[k * 32 + t]  # BUG: shared-war-phases
        cuda.syncthreads()
        acc += sh[31 - t]  # PAIR: shared-war-phases
    out[t] = acc


@cuda.jit
def war_phases_ok(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(4):
        sh[t] = a[k * 32 + t]
        cuda.syncthreads()
        acc += sh[31 - t]
        cuda.syncthreads()
    out[t] = acc


bug("shared-war-phases", "race-shared", war_phases, 1, 32, lambda: (ramp(128), zeros(32)),
    RaceError, where=(B0, B0), fixed=war_phases_ok,
    note="the loop's second syncthreads is missing: the next phase overwrites what a slower "
         "thread still reads")


@cuda.jit
def tree_no_sync(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]  # BUG: shared-tree-no-sync
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def tree_ok(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    s = 64
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


bug("shared-tree-no-sync", "race-shared", tree_no_sync, 2, 128, lambda: (ramp(256), zeros(2)),
    RaceError, where=(B0, B0), fixed=tree_ok,
    note="tree reduction without a syncthreads per level")


@cuda.jit
def sync_too_early(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    cuda.syncthreads()
    sh[t] = a[t]  # PAIR: shared-sync-too-early
    out[t] = sh[63 - t]  # BUG: shared-sync-too-early


@cuda.jit
def sync_in_place(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    out[t] = sh[63 - t]


bug("shared-sync-too-early", "race-shared", sync_too_early, 1, 64,
    lambda: (ramp(64), zeros(64)), RaceError, where=(B0, B0), fixed=sync_in_place,
    note="the barrier sits before the writes instead of between the writes and the reads")


@cuda.jit
def transpose_no_sync(a, out):
    tile = cuda.shared.array((16, 16), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * 16, cuda.blockIdx.y * 16
    tile[ty, tx] = a[by + ty, bx + tx]  # PAIR: shared-transpose
    out[bx + ty, by + tx] = tile[tx, ty]  # BUG: shared-transpose


@cuda.jit
def transpose_ok(a, out):
    tile = cuda.shared.array((16, 16), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * 16, cuda.blockIdx.y * 16
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    out[bx + ty, by + tx] = tile[tx, ty]


bug("shared-transpose", "race-shared", transpose_no_sync, (2, 2), (16, 16),
    lambda: (ramp(32, 32), zeros(32, 32)), RaceError, where=(B0, (1, 0, 0)),
    fixed=transpose_ok, note="tiled transpose reading the tile's transpose without a barrier")


@cuda.jit
def stencil_no_sync(a, out):
    sh = cuda.shared.array(34, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    sh[t + 1] = a[i]  # PAIR: shared-stencil
    if t == 0:
        sh[0] = a[i - 1] if i > 0 else 0.0
    if t == 31:
        sh[33] = a[i + 1] if i + 1 < n else 0.0
    out[i] = sh[t] + sh[t + 1] + sh[t + 2]  # BUG: shared-stencil


@cuda.jit
def stencil_ok(a, out):
    sh = cuda.shared.array(34, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    sh[t + 1] = a[i]
    if t == 0:
        sh[0] = a[i - 1] if i > 0 else 0.0
    if t == 31:
        sh[33] = a[i + 1] if i + 1 < n else 0.0
    cuda.syncthreads()
    out[i] = sh[t] + sh[t + 1] + sh[t + 2]


bug("shared-stencil", "race-shared", stencil_no_sync, 2, 32, lambda: (ramp(64), zeros(64)),
    RaceError, where=(B0, (1, 0, 0)), fixed=stencil_ok,
    note="3-point stencil through shared memory with halos, no barrier before the reads")


@cuda.jit
def broadcast_no_sync(a, out):
    scale = cuda.shared.array(1, np.float32)
    t = cuda.threadIdx.x
    if t == 0:
        scale[0] = a[0] + 1.0  # PAIR: shared-broadcast
    out[t] = a[t] * scale[0]  # BUG: shared-broadcast


@cuda.jit
def broadcast_ok(a, out):
    scale = cuda.shared.array(1, np.float32)
    t = cuda.threadIdx.x
    if t == 0:
        scale[0] = a[0] + 1.0
    cuda.syncthreads()
    out[t] = a[t] * scale[0]


bug("shared-broadcast", "race-shared", broadcast_no_sync, 1, 64, lambda: (ramp(64), zeros(64)),
    RaceError, where=(B0, (1, 0, 0)), fixed=broadcast_ok,
    note="thread 0 publishes a value in shared memory; the others read it without a barrier")


@cuda.jit
def scan_in_place(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    off = 1
    while off < 64:
        if t >= off:
            sh[t] += sh[t - off]  # BUG: shared-scan-in-place
        cuda.syncthreads()
        off *= 2
    out[t] = sh[t]


@cuda.jit
def scan_ok(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    off = 1
    while off < 64:
        v = sh[t - off] if t >= off else np.float32(0)
        cuda.syncthreads()
        sh[t] += v
        cuda.syncthreads()
        off *= 2
    out[t] = sh[t]


bug("shared-scan-in-place", "race-shared", scan_in_place, 1, 64,
    lambda: (ramp(64) + 1, zeros(64)),
    RaceError, where=(B0, (1, 0, 0)), fixed=scan_ok,
    note="Hillis-Steele scan updated in place: a thread overwrites the element its right "
         "neighbour reads in the same step")


@cuda.jit
def overlapping_views(a, out):
    dyn = cuda.shared.array(0, np.float32)
    n = cuda.blockDim.x
    xs = dyn[:n]
    ys = dyn[n - 1:2 * n - 1]
    t = cuda.threadIdx.x
    xs[t] = a[t]  # PAIR: shared-overlapping-views
    ys[t] = 2.0 * a[t] + 1.0  # BUG: shared-overlapping-views
    cuda.syncthreads()
    out[t] = xs[t] + ys[t]


@cuda.jit
def separate_views(a, out):
    dyn = cuda.shared.array(0, np.float32)
    n = cuda.blockDim.x
    xs = dyn[:n]
    ys = dyn[n:2 * n]
    t = cuda.threadIdx.x
    xs[t] = a[t]
    ys[t] = 2.0 * a[t] + 1.0
    cuda.syncthreads()
    out[t] = xs[t] + ys[t]


bug("shared-overlapping-views", "race-shared", overlapping_views, 1, 32,
    lambda: (ramp(32), zeros(32)), RaceError, where=(B0, B0), shared=2 * 32 * 4,
    fixed=separate_views,
    note="two views of dynamic shared memory overlap by one element (off-by-one offset)")


@cuda.jit
def atomic_then_read(a, out):
    count = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        count[0] = 0
    cuda.syncthreads()
    if a[t] > 0:
        cuda.atomic.add(count, 0, 1)  # PAIR: shared-atomic-then-read
    out[t] = count[0]  # BUG: shared-atomic-then-read


@cuda.jit
def atomic_sync_read(a, out):
    count = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    if t == 0:
        count[0] = 0
    cuda.syncthreads()
    if a[t] > 0:
        cuda.atomic.add(count, 0, 1)
    cuda.syncthreads()
    out[t] = count[0]


bug("shared-atomic-then-read", "race-shared", atomic_then_read, 1, 64,
    lambda: (ramp(64, dtype=np.int32), zeros(64, dtype=np.int32)), RaceError,
    where=(B0, B0), fixed=atomic_sync_read,
    note="a plain read of a shared counter that other threads still update atomically")
