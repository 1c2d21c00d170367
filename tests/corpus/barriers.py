"""Barrier divergence: a syncthreads() (or syncwarp()) that some threads of the block (warp)
reach and others do not, because of a branch, a loop trip count, a break or an early return."""

import numpy as np

import threadtile as cuda
from threadtile.errors import BarrierDivergenceError

from . import bug, ramp, zeros

B0, B1 = (0, 0, 0), (1, 0, 0)


@cuda.jit
def guarded_barrier(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        sh[t] = a[i]
        cuda.syncthreads()  # BUG: barrier-data-guard
        out[i] = sh[63 - t] if cuda.blockIdx.x == 0 else sh[t]


@cuda.jit
def guarded_barrier_ok(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        sh[t] = a[i]
    cuda.syncthreads()
    if i < a.size:
        out[i] = sh[63 - t] if cuda.blockIdx.x == 0 else sh[t]


bug("barrier-data-guard", "barrier-divergence", guarded_barrier, 2, 64,
    lambda: (ramp(100), zeros(100)), BarrierDivergenceError, where=(B1, (36, 0, 0)),
    fixed=guarded_barrier_ok, note="syncthreads inside `if i < n`: the last block diverges")


@cuda.jit
def return_then_barrier(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= a.size:
        return
    sh[t] = a[i]
    cuda.syncthreads()  # BUG: barrier-after-return
    out[i] = sh[t] * 2.0


@cuda.jit
def guard_then_barrier(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        sh[t] = a[i]
    cuda.syncthreads()
    if i < a.size:
        out[i] = sh[t] * 2.0


bug("barrier-after-return", "barrier-divergence", return_then_barrier, 2, 64,
    lambda: (ramp(100), zeros(100)), BarrierDivergenceError, where=(B1, (36, 0, 0)),
    fixed=guard_then_barrier, note="threads past the end return early, the rest wait at a "
                                   "barrier")


@cuda.jit
def grid_stride_barrier(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    while i < a.size:
        sh[t] = a[i]
        cuda.syncthreads()  # BUG: barrier-grid-stride
        out[i] = sh[t] + 1.0
        cuda.syncthreads()
        i += cuda.gridsize(1)


@cuda.jit
def grid_stride_barrier_ok(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    for base in range(0, a.size, cuda.gridsize(1)):
        i = base + cuda.grid(1)
        if i < a.size:
            sh[t] = a[i]
        cuda.syncthreads()
        if i < a.size:
            out[i] = sh[t] + 1.0
        cuda.syncthreads()


bug("barrier-grid-stride", "barrier-divergence", grid_stride_barrier, 1, 64,
    lambda: (ramp(100), zeros(100)), BarrierDivergenceError, where=(B0, (36, 0, 0)),
    fixed=grid_stride_barrier_ok,
    note="a barrier in a grid-stride loop: threads leave the loop at different trips")


@cuda.jit
def two_barriers(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    if t < 32:
        sh[t] = a[t]
        cuda.syncthreads()  # BUG: barrier-if-else
        out[t] = sh[t + 32]
    else:
        sh[t] = -a[t]
        cuda.syncthreads()
        out[t] = sh[t - 32]


@cuda.jit
def one_barrier(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t] if t < 32 else -a[t]
    cuda.syncthreads()
    out[t] = sh[t + 32] if t < 32 else sh[t - 32]


bug("barrier-if-else", "barrier-divergence", two_barriers, 1, 64,
    lambda: (ramp(64), zeros(64)), BarrierDivergenceError, where=(B0, (32, 0, 0)),
    fixed=one_barrier,
    note="the two sides of a branch each have their own syncthreads (two different barriers)")


@cuda.jit
def first_warp_barrier(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    if t // 32 == 0:
        sh[t] = a[t] * 2.0
        cuda.syncthreads()  # BUG: barrier-one-warp
    out[t] = a[t]


@cuda.jit
def first_warp_syncwarp(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    if t // 32 == 0:
        sh[t] = a[t] * 2.0
        cuda.syncwarp()
    out[t] = a[t]


bug("barrier-one-warp", "barrier-divergence", first_warp_barrier, 1, 128,
    lambda: (ramp(128), zeros(128)), BarrierDivergenceError, where=(B0, (32, 0, 0)),
    fixed=first_warp_syncwarp,
    note="syncthreads in code only the first warp runs (whole warps skip it)")


@cuda.jit(device=True)
def stage(sh, a, i, t):
    sh[t] = a[i]
    cuda.syncthreads()  # BUG: barrier-in-device-function


@cuda.jit
def staged_copy(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        stage(sh, a, i, t)
        out[i] = sh[t]


@cuda.jit(device=True)
def stage_ok(sh, a, i, t):
    if i < a.size:
        sh[t] = a[i]
    cuda.syncthreads()


@cuda.jit
def staged_copy_ok(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    stage_ok(sh, a, i, t)
    if i < a.size:
        out[i] = sh[t]


bug("barrier-in-device-function", "barrier-divergence", staged_copy, 2, 64,
    lambda: (ramp(100), zeros(100)), BarrierDivergenceError, where=(B1, (36, 0, 0)),
    fixed=staged_copy_ok,
    note="a device function with a barrier inside, called under a per-thread condition")


@cuda.jit
def vote_in_branch(a, out):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        anyone = cuda.syncthreads_or(a[t] > 50)  # BUG: barrier-syncthreads-or
        out[t] = anyone


@cuda.jit
def vote_for_all(a, out):
    t = cuda.threadIdx.x
    anyone = cuda.syncthreads_or(a[t] > 50 and t % 2 == 0)
    if t % 2 == 0:
        out[t] = anyone


bug("barrier-syncthreads-or", "barrier-divergence", vote_in_branch, 1, 64,
    lambda: (ramp(64, dtype=np.int32), zeros(64, dtype=np.int32)), BarrierDivergenceError,
    where=(B0, (1, 0, 0)), fixed=vote_for_all,
    note="a block-wide vote (syncthreads_or) taken by the even threads only")


@cuda.jit
def syncwarp_half(a, out):
    sh = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x
    if lane < 16:
        sh[lane] = a[lane]
        cuda.syncwarp()  # BUG: barrier-syncwarp-full-mask
        out[lane] = sh[15 - lane]


@cuda.jit
def syncwarp_half_mask(a, out):
    sh = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x
    if lane < 16:
        sh[lane] = a[lane]
        cuda.syncwarp(0x0000FFFF)
        out[lane] = sh[15 - lane]


bug("barrier-syncwarp-full-mask", "barrier-divergence", syncwarp_half, 1, 32,
    lambda: (ramp(32), zeros(32)), BarrierDivergenceError, where=(B0, (16, 0, 0)),
    fixed=syncwarp_half_mask,
    note="syncwarp() (full mask) in a branch half the warp takes")


@cuda.jit
def rows_until_negative(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(a.shape[1]):
        v = a[t, k]
        if v < 0:
            break
        sh[t] = v
        cuda.syncthreads()  # BUG: barrier-after-break
        acc += sh[(t + 1) % 32]
        cuda.syncthreads()
    out[t] = acc


@cuda.jit
def rows_until_negative_ok(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    done = False
    for k in range(a.shape[1]):
        v = a[t, k]
        done = done or v < 0
        sh[t] = np.float32(0) if done else v
        cuda.syncthreads()
        acc += sh[(t + 1) % 32]
        cuda.syncthreads()
    out[t] = acc


def _rows_with_a_negative():
    a = ramp(32, 8)
    a[5, 3] = -1.0
    return a, zeros(32)


bug("barrier-after-break", "barrier-divergence", rows_until_negative, 1, 32,
    _rows_with_a_negative, BarrierDivergenceError, where=(B0, (5, 0, 0)),
    fixed=rows_until_negative_ok,
    note="a data-dependent break out of a loop with barriers")
