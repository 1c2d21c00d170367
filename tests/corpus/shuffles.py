"""Warp shuffles and votes whose mask names lanes that do not take part (they are on another
path, left a loop, or returned), and a shuffle that reads a lane outside its mask."""

import numpy as np

import threadtile as cuda
from threadtile.errors import BarrierDivergenceError

from . import bug, ramp, zeros

B0, B1 = (0, 0, 0), (1, 0, 0)
FULL = 0xFFFFFFFF


@cuda.jit
def shuffle_in_half(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    if t % 32 < 16:
        v += cuda.shfl_down_sync(FULL, v, 8)  # BUG: shfl-full-mask-in-branch
    out[t] = v


@cuda.jit
def shuffle_half_mask(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    if t % 32 < 16:
        v += cuda.shfl_down_sync(0x0000FFFF, v, 8)
    out[t] = v


bug("shfl-full-mask-in-branch", "shuffle-mask", shuffle_in_half, 1, 64,
    lambda: (ramp(64), zeros(64)), BarrierDivergenceError, where=(B0, (16, 0, 0)),
    fixed=shuffle_half_mask, note="a full-mask shuffle that only half of each warp executes")


@cuda.jit
def warp_sums_after_return(a, out):
    i = cuda.grid(1)
    if i >= a.size:
        return
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)  # BUG: shfl-after-return
        off //= 2
    if i % 32 == 0:
        out[i // 32] = v


@cuda.jit
def warp_sums_padded(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else np.float32(0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if i % 32 == 0 and i < a.size:
        out[i // 32] = v


bug("shfl-after-return", "shuffle-mask", warp_sums_after_return, 2, 64,
    lambda: (ramp(100), zeros(4)), BarrierDivergenceError, where=(B1, (36, 0, 0)),
    fixed=warp_sums_padded,
    note="lanes past the end return, the others shuffle with a full mask")


@cuda.jit
def ballot_of_positives(a, out):
    t = cuda.threadIdx.x
    if a[t] > 0:
        out[t] = cuda.ballot_sync(FULL, a[t] % 2 == 1)  # BUG: ballot-in-branch


@cuda.jit
def ballot_of_positives_ok(a, out):
    t = cuda.threadIdx.x
    b = cuda.ballot_sync(FULL, a[t] > 0 and a[t] % 2 == 1)
    if a[t] > 0:
        out[t] = b


bug("ballot-in-branch", "shuffle-mask", ballot_of_positives, 1, 32,
    lambda: (ramp(32, dtype=np.int32), zeros(32, dtype=np.uint32)), BarrierDivergenceError,
    where=(B0, B0), fixed=ballot_of_positives_ok,
    note="a full-mask ballot inside a data-dependent branch")


@cuda.jit
def vote_in_uneven_loop(a, out):
    t = cuda.threadIdx.x
    k = t % 4
    n = 0
    while k < 4:
        if cuda.all_sync(FULL, a[t] >= 0):  # BUG: all-sync-uneven-loop
            n += 1
        k += 1
    out[t] = n


@cuda.jit
def vote_in_even_loop(a, out):
    t = cuda.threadIdx.x
    n = 0
    for k in range(4):
        ok = cuda.all_sync(FULL, a[t] >= 0)
        if ok and k >= t % 4:
            n += 1
    out[t] = n


bug("all-sync-uneven-loop", "shuffle-mask", vote_in_uneven_loop, 1, 32,
    lambda: (ramp(32), zeros(32, dtype=np.int32)), BarrierDivergenceError,
    where=(B0, (3, 0, 0)), fixed=vote_in_even_loop,
    note="a full-mask vote in a loop whose trip count differs between lanes")


@cuda.jit
def stale_activemask(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    m = cuda.activemask()
    if lane % 2 == 0:
        v += cuda.shfl_xor_sync(m, v, 1)  # BUG: shfl-stale-activemask
    out[lane] = v


@cuda.jit
def activemask_before_branch_ok(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    m = cuda.activemask()
    w = cuda.shfl_xor_sync(m, v, 1)
    if lane % 2 == 0:
        v += w
    out[lane] = v


bug("shfl-stale-activemask", "shuffle-mask", stale_activemask, 1, 32,
    lambda: (ramp(32), zeros(32)), BarrierDivergenceError, where=(B0, (1, 0, 0)),
    fixed=activemask_before_branch_ok,
    note="activemask() taken before a branch, used inside it where only even lanes run")


@cuda.jit
def even_lanes_low_mask(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    if lane % 2 == 0:
        v += cuda.shfl_down_sync(0x0000FFFF, v, 2)  # BUG: shfl-mask-names-odd-lanes
    out[lane] = v


@cuda.jit
def even_lanes_even_mask(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    if lane % 2 == 0:
        v += cuda.shfl_down_sync(0x55555555, v, 2)
    out[lane] = v


bug("shfl-mask-names-odd-lanes", "shuffle-mask", even_lanes_low_mask, 1, 32,
    lambda: (ramp(32), zeros(32)), BarrierDivergenceError, where=(B0, (1, 0, 0)),
    fixed=even_lanes_even_mask,
    note="a mask of the low 16 lanes where the even lanes take part")


@cuda.jit
def any_in_partial_warp(a, out):
    t = cuda.threadIdx.x
    if t < a.size:
        out[t] = cuda.any_sync(FULL, a[t] > 30)  # BUG: any-sync-partial-warp


@cuda.jit
def any_in_partial_warp_ok(a, out):
    t = cuda.threadIdx.x
    m = cuda.ballot_sync(FULL, t < a.size)
    if t < a.size:
        out[t] = cuda.any_sync(m, a[t] > 30)


bug("any-sync-partial-warp", "shuffle-mask", any_in_partial_warp, 1, 64,
    lambda: (ramp(40), zeros(40, dtype=np.int32)), BarrierDivergenceError,
    where=(B0, (40, 0, 0)), fixed=any_in_partial_warp_ok,
    note="a full-mask vote under `if t < n` with n inside the second warp")


@cuda.jit
def half_warp_butterfly(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    if lane < 16:
        off = 16
        while off > 0:
            v += cuda.shfl_xor_sync(0x0000FFFF, v, off)  # BUG: shfl-source-outside-mask
            off //= 2
    out[lane] = v


@cuda.jit
def half_warp_butterfly_ok(a, out):
    lane = cuda.threadIdx.x
    v = a[lane]
    if lane < 16:
        off = 8
        while off > 0:
            v += cuda.shfl_xor_sync(0x0000FFFF, v, off)
            off //= 2
    out[lane] = v


bug("shfl-source-outside-mask", "shuffle-mask", half_warp_butterfly, 1, 32,
    lambda: (ramp(32), zeros(32)), BarrierDivergenceError, where=(B0, B0),
    fixed=half_warp_butterfly_ok,
    xfail="a shuffle may read a lane outside its mask (undefined on the GPU); the simulator "
          "returns that lane's register and raises nothing: correct reductions read such "
          "lanes too and never use the value, so an error here needs to follow the value",
    note="a butterfly over 16 lanes that starts at offset 16: every lane reads one outside "
         "the mask")
