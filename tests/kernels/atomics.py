"""Atomics: every operation returns the old value; tests check both the final value and the
multiset of old values each thread saw."""

import numpy as np

import threadtile as cuda

from . import example


@cuda.jit
def atomic_arith(vals, res, olds):
    """Thread i applies each arithmetic atomic with vals[i] to one slot of res and records the
    old value it got: res = [add, sub, max, min, exch, cas-claim]."""
    i = cuda.grid(1)
    if i < vals.size:
        v = vals[i]
        olds[0, i] = cuda.atomic.add(res, 0, v)
        olds[1, i] = cuda.atomic.sub(res, 1, v)
        olds[2, i] = cuda.atomic.max(res, 2, v)
        olds[3, i] = cuda.atomic.min(res, 3, v)
        olds[4, i] = cuda.atomic.exch(res, 4, v)
        olds[5, i] = cuda.atomic.cas(res, 5, 0, v)  # only the first thread to arrive wins


@cuda.jit
def atomic_bits(vals, res, olds):
    """res = [and_, or_, xor] of vals into the initial res; olds as in atomic_arith."""
    i = cuda.grid(1)
    if i < vals.size:
        v = vals[i]
        olds[0, i] = cuda.atomic.and_(res, 0, v)
        olds[1, i] = cuda.atomic.or_(res, 1, v)
        olds[2, i] = cuda.atomic.xor(res, 2, v)


@cuda.jit
def shared_histogram(data, hist):
    """Per-block histogram in shared memory (shared atomics), merged with global atomics; a
    2-d hist indexed with a tuple."""
    sh = cuda.shared.array(16, np.int32)
    t = cuda.threadIdx.x
    if t < 16:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(sh, data[i] % 16, 1)
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(hist, (t // 4, t % 4), sh[t])


@cuda.jit
def atomic_counter_slots(out, counter):
    """Each thread takes a unique ticket and writes its index into that slot."""
    i = cuda.grid(1)
    if i < out.size:
        slot = cuda.atomic.add(counter, 0, 1)
        out[slot] = i


@cuda.jit
def atomic_wrap(res, limit, olds):
    """res = [inc, dec] with a wrapping limit: inc resets to 0 past the limit, dec to the
    limit at 0 or above it (CUDA's atomicInc/atomicDec, 64-bit ones too)."""
    i = cuda.grid(1)
    if i < olds.shape[1]:
        olds[0, i] = cuda.atomic.inc(res, 0, limit[0])
        olds[1, i] = cuda.atomic.dec(res, 1, limit[0])


_n = 8
EXAMPLES = {
    "atomic_wrap": [example(np.zeros(2, dt), np.zeros(1, dt), np.zeros((2, _n), dt))
                    for dt in (np.uint32, np.uint64)],
    "atomic_arith": [example(np.zeros(_n, dt), np.zeros(6, dt), np.zeros((6, _n), dt))
                     for dt in (np.int32, np.uint32, np.int64, np.uint64, np.float32,
                                np.float64)],
    "atomic_bits": [example(np.zeros(_n, dt), np.zeros(3, dt), np.zeros((3, _n), dt))
                    for dt in (np.int32, np.uint32, np.int64, np.uint64)],
    "shared_histogram": [example(np.zeros(_n, np.int32), np.zeros((4, 4), np.int32))],
    "atomic_counter_slots": [example(np.zeros(_n, np.int64), np.zeros(1, np.uint32))],
}
