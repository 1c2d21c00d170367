"""Races across warps (a syncwarp() orders only its own warp) and inside a warp without
syncwarp() (threads of a warp are scheduled independently since Volta)."""

import numpy as np

import threadtile as cuda
from threadtile.errors import RaceError

from . import bug, ramp, zeros

B0 = (0, 0, 0)
FULL = 0xFFFFFFFF


@cuda.jit
def last_warp_no_syncwarp(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t] + a[t + 64]
    cuda.syncthreads()
    if t < 32:
        off = 32
        while off > 0:
            if t < off:
                sh[t] += sh[t + off]  # BUG: warp-unrolled-reduction
            off //= 2
    if t == 0:
        out[0] = sh[0]


@cuda.jit
def last_warp_syncwarp(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t] + a[t + 64]
    cuda.syncthreads()
    if t < 32:
        off = 32
        while off > 0:
            if t < off:
                sh[t] += sh[t + off]
            cuda.syncwarp()
            off //= 2
    if t == 0:
        out[0] = sh[0]


bug("warp-unrolled-reduction", "race-warp", last_warp_no_syncwarp, 1, 64,
    lambda: (ramp(128), zeros(1)), RaceError, where=(B0, B0), fixed=last_warp_syncwarp,
    note="the last warp of a reduction relies on implicit warp synchrony (no syncwarp)")


@cuda.jit
def rotate_warps_syncwarp(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]  # PAIR: warp-syncwarp-across-warps
    cuda.syncwarp()
    out[t] = sh[(t + 32) % 128]  # BUG: warp-syncwarp-across-warps


@cuda.jit
def rotate_warps_syncthreads(a, out):
    sh = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    out[t] = sh[(t + 32) % 128]


bug("warp-syncwarp-across-warps", "race-warp", rotate_warps_syncwarp, 1, 128,
    lambda: (ramp(128), zeros(128)), RaceError, where=(B0, B0),
    fixed=rotate_warps_syncthreads,
    note="syncwarp() where the data crosses warps: it orders only the calling warp")


@cuda.jit
def warp_reverse_no_syncwarp(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    base = t // 32 * 32
    lane = t % 32
    sh[base + lane] = a[t]  # PAIR: warp-reverse-no-syncwarp
    out[t] = sh[base + 31 - lane]  # BUG: warp-reverse-no-syncwarp


@cuda.jit
def warp_reverse_syncwarp(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    base = t // 32 * 32
    lane = t % 32
    sh[base + lane] = a[t]
    cuda.syncwarp()
    out[t] = sh[base + 31 - lane]


bug("warp-reverse-no-syncwarp", "race-warp", warp_reverse_no_syncwarp, 1, 64,
    lambda: (ramp(64), zeros(64)), RaceError, where=(B0, B0), fixed=warp_reverse_syncwarp,
    note="each warp reverses its own slice of shared memory without a syncwarp")


@cuda.jit
def producer_warp(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    lane, w = t % 32, t // 32
    if w == 0:
        sh[lane] = a[lane] * 2.0  # PAIR: warp-producer-consumer
    cuda.syncwarp()
    if w == 1:
        out[lane] = sh[lane]  # BUG: warp-producer-consumer


@cuda.jit
def producer_warp_ok(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    lane, w = t % 32, t // 32
    if w == 0:
        sh[lane] = a[lane] * 2.0
    cuda.syncthreads()
    if w == 1:
        out[lane] = sh[lane]


bug("warp-producer-consumer", "race-warp", producer_warp, 1, 64,
    lambda: (ramp(32), zeros(32)), RaceError, where=(B0, (32, 0, 0)), fixed=producer_warp_ok,
    note="a producer warp hands data to a consumer warp with syncwarp instead of syncthreads")


@cuda.jit
def warp_partials_no_sync(a, out):
    partial = cuda.shared.array(4, np.float32)
    t = cuda.threadIdx.x
    lane, w = t % 32, t // 32
    v = a[cuda.grid(1)]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if lane == 0:
        partial[w] = v  # PAIR: warp-partials-no-sync
    if t == 0:
        s = np.float32(0)
        for k in range(4):
            s += partial[k]  # BUG: warp-partials-no-sync
        out[cuda.blockIdx.x] = s


@cuda.jit
def warp_partials_sync(a, out):
    partial = cuda.shared.array(4, np.float32)
    t = cuda.threadIdx.x
    lane, w = t % 32, t // 32
    v = a[cuda.grid(1)]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if lane == 0:
        partial[w] = v
    cuda.syncthreads()
    if t == 0:
        s = np.float32(0)
        for k in range(4):
            s += partial[k]
        out[cuda.blockIdx.x] = s


bug("warp-partials-no-sync", "race-warp", warp_partials_no_sync, 2, 128,
    lambda: (ramp(256), zeros(2)), RaceError, where=(B0, B0), fixed=warp_partials_sync,
    note="block sum from per-warp partials: thread 0 adds them up before the other warps' "
         "lane 0 are known to have written theirs")


@cuda.jit
def half_warp_sync(a, out):
    sh = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x
    if lane < 16:
        sh[lane] = a[lane] + 1.0  # PAIR: warp-half-mask-syncwarp
        cuda.syncwarp(0x0000FFFF)
    if lane >= 16:
        out[lane] = sh[lane - 16]  # BUG: warp-half-mask-syncwarp
    else:
        out[lane] = sh[lane]


@cuda.jit
def full_warp_sync(a, out):
    sh = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x
    if lane < 16:
        sh[lane] = a[lane] + 1.0
    cuda.syncwarp()
    if lane >= 16:
        out[lane] = sh[lane - 16]
    else:
        out[lane] = sh[lane]


bug("warp-half-mask-syncwarp", "race-warp", half_warp_sync, 1, 32,
    lambda: (ramp(32), zeros(32)), RaceError, where=(B0, (16, 0, 0)), fixed=full_warp_sync,
    note="syncwarp(0xFFFF) synchronizes the lower half-warp only; the upper half reads what "
         "the lower half wrote")
