"""Warp-level operations: shuffles, votes, active masks and bit functions."""

import numpy as np

import threadtile as cuda

from . import example

FULL = 0xFFFFFFFF


@cuda.jit
def shuffles(a, out):
    """out[k, i] = the value lane i receives from shfl_sync / up / down / xor."""
    i = cuda.grid(1)
    lane = cuda.laneid
    v = a[i]
    out[0, i] = cuda.shfl_sync(FULL, v, (lane + 3) % 32)
    out[1, i] = cuda.shfl_up_sync(FULL, v, 2)
    out[2, i] = cuda.shfl_down_sync(FULL, v, 5)
    out[3, i] = cuda.shfl_xor_sync(FULL, v, 7)


@cuda.jit
def warp_sum(a, out):
    """Butterfly reduction with shfl_xor_sync; lane 0 of each warp writes the warp's sum."""
    i = cuda.grid(1)
    v = a[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def votes(a, out):
    """all/any/ballot over the warp, and activemask inside a branch taken by even lanes."""
    i = cuda.grid(1)
    w = i // 32
    p = a[i] > 0
    al = cuda.all_sync(FULL, p)
    an = cuda.any_sync(FULL, p)
    bal = cuda.ballot_sync(FULL, p)
    if cuda.laneid == 0:
        out[w, 0] = al
        out[w, 1] = an
        out[w, 2] = bal
    if cuda.laneid % 2 == 0:
        m = cuda.activemask()
        if cuda.laneid == 0:
            out[w, 3] = m
    cuda.syncwarp()
    everyone = cuda.activemask()
    if cuda.laneid == 0:
        out[w, 4] = everyone


@cuda.jit
def bit_ops(x, out):
    """popc, clz, ffs, brev of each element (any integer dtype)."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = cuda.popc(v)
        out[i, 1] = cuda.clz(v)
        out[i, 2] = cuda.ffs(v)
        out[i, 3] = cuda.brev(v)


EXAMPLES = {
    "shuffles": [example(np.zeros(64, dt), np.zeros((4, 64), dt))
                 for dt in (np.int32, np.float32, np.float64, np.int64, np.uint32)],
    "warp_sum": [example(np.zeros(64, np.float32), np.zeros(2, np.float32)),
                 example(np.zeros(64, np.int32), np.zeros(2, np.int32))],
    "votes": [example(np.zeros(64, np.int32), np.zeros((2, 5), np.uint32))],
    "bit_ops": [example(np.zeros(8, dt), np.zeros((8, 4), dt))
                for dt in (np.uint32, np.int32, np.uint64, np.int64, np.int8, np.uint8,
                           np.int16, np.uint16)],
}
