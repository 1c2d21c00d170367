"""Global-memory races: between threads of one block (no barrier, or no atomic), and between
blocks of a launch (which nothing orders)."""

import numpy as np

import threadtile as cuda
from threadtile.errors import RaceError

from . import bug, ramp, zeros

B0, B1 = (0, 0, 0), (1, 0, 0)


# ---- within a block --------------------------------------------------------------------------

@cuda.jit
def publish_then_read(a, tmp, out):
    t = cuda.threadIdx.x
    tmp[t] = a[t] * 2.0  # PAIR: global-raw-block
    out[t] = tmp[(t + 1) % 64]  # BUG: global-raw-block


@cuda.jit
def publish_sync_read(a, tmp, out):
    t = cuda.threadIdx.x
    tmp[t] = a[t] * 2.0
    cuda.syncthreads()
    out[t] = tmp[(t + 1) % 64]


bug("global-raw-block", "race-global-block", publish_then_read, 1, 64,
    lambda: (ramp(64), zeros(64), zeros(64)), RaceError, where=(B0, B0),
    fixed=publish_sync_read, note="a scratch array in global memory read back without a barrier")


@cuda.jit
def shift_in_place(a):
    t = cuda.threadIdx.x
    if t + 1 < a.size:
        a[t] = a[t + 1]  # BUG: global-shift-in-place


@cuda.jit
def shift_sync(a):
    t = cuda.threadIdx.x
    v = a[t + 1] if t + 1 < a.size else a[t]
    cuda.syncthreads()
    a[t] = v


bug("global-shift-in-place", "race-global-block", shift_in_place, 1, 64, lambda: (ramp(64),),
    RaceError, where=(B0, (1, 0, 0)), fixed=shift_sync,
    note="in-place shift: a thread overwrites the element its left neighbour reads")


@cuda.jit
def racy_max(a, out):
    t = cuda.threadIdx.x
    if a[t] > out[0]:  # PAIR: global-racy-max
        out[0] = a[t]  # BUG: global-racy-max


@cuda.jit
def atomic_max(a, out):
    cuda.atomic.max(out, 0, a[cuda.threadIdx.x])


bug("global-racy-max", "race-global-block", racy_max, 1, 64, lambda: (ramp(64), zeros(1)),
    RaceError, where=(B0, (1, 0, 0)), fixed=atomic_max,
    note="check-then-write maximum without an atomic")


@cuda.jit
def plain_accumulate(a, out):
    out[0] += a[cuda.threadIdx.x]  # BUG: global-plain-accumulate


@cuda.jit
def atomic_accumulate(a, out):
    cuda.atomic.add(out, 0, a[cuda.threadIdx.x])


bug("global-plain-accumulate", "race-global-block", plain_accumulate, 1, 64,
    lambda: (ramp(64) + 1, zeros(1)), RaceError, where=(B0, B0), fixed=atomic_accumulate,
    note="a sum with += instead of atomic.add")


@cuda.jit
def plain_histogram(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        hist[data[i] % 8] += 1  # BUG: global-plain-histogram


@cuda.jit
def atomic_histogram(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i] % 8, 1)


bug("global-plain-histogram", "race-global-block", plain_histogram, 2, 64,
    lambda: (ramp(100, dtype=np.int32), zeros(8, dtype=np.int32)), RaceError,
    where=(B0, B0), fixed=atomic_histogram,
    note="histogram bins incremented with += (threads with one bin race)")


# ---- between blocks --------------------------------------------------------------------------

@cuda.jit
def forgot_block_index(a, out):
    out[cuda.threadIdx.x] = a[cuda.grid(1)]  # BUG: grid-forgot-block-index


@cuda.jit
def with_block_index(a, out):
    i = cuda.grid(1)
    out[i] = a[i]


bug("grid-forgot-block-index", "race-global-grid", forgot_block_index, 2, 32,
    lambda: (ramp(64), zeros(64)), RaceError, where=(B1, B0), fixed=with_block_index,
    note="output indexed by threadIdx alone: every block writes the first elements")


@cuda.jit
def wrong_block_stride(x, y):
    i = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    if i < x.size:
        y[i] = y[i] + 2.0 * x[i]  # BUG: grid-wrong-block-stride


@cuda.jit
def right_block_stride(x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size:
        y[i] = y[i] + 2.0 * x[i]


bug("grid-wrong-block-stride", "race-global-grid", wrong_block_stride, 4, 64,
    lambda: (ramp(256), zeros(256)), RaceError, where=(B0, (32, 0, 0)),
    fixed=right_block_stride,
    note="in-place axpy on blocks of 64 threads placed 32 apart: neighbouring blocks update "
         "the same elements")


@cuda.jit
def plain_ticket(counter, out):
    if cuda.threadIdx.x == 0:
        counter[0] += 1  # BUG: grid-plain-ticket
    out[cuda.grid(1)] = 1.0


@cuda.jit
def atomic_ticket(counter, out):
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(counter, 0, 1)
    out[cuda.grid(1)] = 1.0


bug("grid-plain-ticket", "race-global-grid", plain_ticket, 4, 32,
    lambda: (zeros(1, dtype=np.int32), zeros(128)), RaceError, where=(B0, B0),
    fixed=atomic_ticket, note="one thread a block bumps a global counter without an atomic")


@cuda.jit
def smooth_in_place(a):
    i = cuda.grid(1)
    n = a.size
    v = a[i]
    if 0 < i < n - 1:
        v = (a[i - 1] + a[i] * 2.0 + a[i + 1]) * 0.25  # PAIR: grid-smooth-in-place
    cuda.syncthreads()
    a[i] = v  # BUG: grid-smooth-in-place


@cuda.jit
def smooth_out_of_place(a, out):
    i = cuda.grid(1)
    n = a.size
    v = a[i]
    if 0 < i < n - 1:
        v = (a[i - 1] + a[i] * 2.0 + a[i + 1]) * 0.25
    out[i] = v


bug("grid-smooth-in-place", "race-global-grid", smooth_in_place, 2, 32,
    lambda: (ramp(64) ** 2,), RaceError, where=(B0, (31, 0, 0)),
    fixed=smooth_out_of_place, fixed_args=lambda: (ramp(64) ** 2, zeros(64)),
    note="in-place stencil: syncthreads orders the block's own reads, not the next block's")


@cuda.jit
def read_total_early(a, total, out):
    s = a[cuda.grid(1)]
    cuda.atomic.add(total, 0, s)  # PAIR: grid-read-total-early
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = total[0]  # BUG: grid-read-total-early


@cuda.jit
def read_own_ticket(a, total, out):
    s = a[cuda.grid(1)]
    old = cuda.atomic.add(total, 0, s)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = old


bug("grid-read-total-early", "race-global-grid", read_total_early, 2, 32,
    lambda: (ramp(64), zeros(1), zeros(2)), RaceError, where=(B0, B0),
    fixed=read_own_ticket,
    note="a block reads a global total that other blocks are still adding to atomically")


@cuda.jit
def chained_carry(a, carry):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        prev = carry[b - 1] if b > 0 else np.float32(0)  # PAIR: grid-chained-carry
        carry[b] = prev + a[b]  # BUG: grid-chained-carry


@cuda.jit
def pairwise_carry(a, carry):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        prev = a[b - 1] if b > 0 else np.float32(0)
        carry[b] = prev + a[b]


bug("grid-chained-carry", "race-global-grid", chained_carry, 4, 32,
    lambda: (ramp(4) + 1, zeros(4)), RaceError, where=(B0, B0), fixed=pairwise_carry,
    note="a carry chained from block to block: block b reads what block b-1 writes, with no "
         "order between them")
