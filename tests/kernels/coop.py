"""Kernels calling threadtile.coop's block and warp primitives (tests/coop/). The block shape
and the items per thread are Constant parameters, as a kernel written for one block would
have them as globals."""

import numpy as np

import threadtile as cuda
from threadtile import Constant, coop
from threadtile.lang.types import ArrayType, float32, float64, int32, int64, uint8, uint32, uint64

from . import example

M32 = 0xFFFFFFFF


def add_op(a, b):
    return a + b


def affine(a, b):
    """(m1, c1) then (m2, c2): x -> (x*m1 + c1)*m2 + c2, each part 32 bits of a uint64:
    associative, not commutative."""
    m = ((a >> 32) * (b >> 32)) & M32
    c = ((a & M32) * (b >> 32) + (b & M32)) & M32
    return (m << 32) | c


def less_abs(a, b):
    """Orders by magnitude: a strict weak order with ties (-x and x) that a stable sort keeps
    in their order."""
    return abs(a) < abs(b)


@cuda.jit
def block_values(x, out, tpb: Constant[int]):
    i = cuda.grid(1)
    v = x[i]
    out[0, i] = coop.block.sum(v, threads_per_block=tpb)
    out[1, i] = coop.block.reduce(v, min, threads_per_block=tpb)
    out[2, i] = coop.block.reduce(v, max, threads_per_block=tpb)
    out[3, i] = coop.block.inclusive_sum(v, threads_per_block=tpb)
    out[4, i] = coop.block.exclusive_sum(v, threads_per_block=tpb)
    out[5, i] = coop.block.reduce(v, add_op, threads_per_block=tpb)


BLOCK_2D = (16, 6)  # a block of two axes: threads ranked x first, as CUB ranks them


@cuda.jit
def block_values_2d(x, out):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y + t
    v = x[i]
    out[0, i] = coop.block.sum(v, threads_per_block=BLOCK_2D)
    out[1, i] = coop.block.exclusive_sum(v, threads_per_block=BLOCK_2D)


@cuda.jit
def block_items(x, out, tot, tpb: Constant[int], n: Constant[int]):
    i = cuda.grid(1)
    items = cuda.local.array(n, float64)
    for k in range(n):
        items[k] = x[i * n + k]
    tot[0, i] = coop.block.sum(items, threads_per_block=tpb)
    tot[1, i] = coop.block.reduce(items, max, threads_per_block=tpb)
    ex = cuda.local.array(n, float64)
    coop.block.exclusive_sum(items, ex, threads_per_block=tpb)
    coop.block.inclusive_sum(items, items, threads_per_block=tpb)
    for k in range(n):
        out[0, i * n + k] = items[k]
        out[1, i * n + k] = ex[k]


@cuda.jit
def affine_scans(x, out, tpb: Constant[int], n: Constant[int]):
    i = cuda.grid(1)
    one = np.uint64(1 << 32)  # the identity map: m = 1, c = 0
    v = x[i * n]
    out[0, i * n] = coop.block.inclusive_scan(v, affine, threads_per_block=tpb)
    out[1, i * n] = coop.block.exclusive_scan(v, affine, one, threads_per_block=tpb)
    out[2, i * n] = coop.block.reduce(v, affine, threads_per_block=tpb)
    items = cuda.local.array(n, uint64)
    res = cuda.local.array(n, uint64)
    for k in range(n):
        items[k] = x[i * n + k]
    coop.block.inclusive_scan(items, res, affine, threads_per_block=tpb)
    coop.block.exclusive_scan(items, items, affine, one, threads_per_block=tpb)
    for k in range(n):
        out[3, i * n + k] = res[k]
        out[4, i * n + k] = items[k]


@cuda.jit
def warp_values(x, out, w: Constant[int]):
    i = cuda.grid(1)
    v = x[i]
    out[0, i] = coop.warp.sum(v, threads_in_warp=w)
    out[1, i] = coop.warp.reduce(v, max, threads_in_warp=w)
    out[2, i] = coop.warp.inclusive_sum(v, threads_in_warp=w)
    out[3, i] = coop.warp.exclusive_sum(v, threads_in_warp=w)


@cuda.jit
def warp_affine(x, out, w: Constant[int]):
    i = cuda.grid(1)
    v = x[i]
    out[0, i] = coop.warp.inclusive_scan(v, affine, threads_in_warp=w)
    out[1, i] = coop.warp.exclusive_scan(v, affine, np.uint64(1 << 32), threads_in_warp=w)
    out[2, i] = coop.warp.reduce(v, affine, threads_in_warp=w)


@cuda.jit
def radix_sort(keys, out, tpb: Constant[int], n: Constant[int], descending: Constant[int],
               begin: Constant[int], end: Constant[int]):
    base = cuda.blockIdx.x * tpb * n
    items = cuda.local.array(n, keys.dtype)
    coop.block.load(keys[base:], items, threads_per_block=tpb, algorithm="transpose")
    if descending:
        coop.block.radix_sort_keys_descending(items, threads_per_block=tpb, begin_bit=begin,
                                              end_bit=end)
    else:
        coop.block.radix_sort_keys(items, threads_per_block=tpb, begin_bit=begin,
                                   end_bit=end)
    coop.block.store(out[base:], items, threads_per_block=tpb)


@cuda.jit
def radix_sort_pairs(keys, values, out_keys, out_values, tpb: Constant[int], n: Constant[int],
                     descending: Constant[int]):
    i = cuda.grid(1)
    k = cuda.local.array(n, keys.dtype)
    v = cuda.local.array(n, values.dtype)
    for j in range(n):
        k[j] = keys[i * n + j]
        v[j] = values[i * n + j]
    if descending:
        coop.block.radix_sort_pairs_descending(k, v, threads_per_block=tpb)
    else:
        coop.block.radix_sort_pairs(k, v, threads_per_block=tpb)
    for j in range(n):
        out_keys[i * n + j] = k[j]
        out_values[i * n + j] = v[j]


@cuda.jit
def merge_sort(keys, values, out_keys, out_values, tpb: Constant[int], n: Constant[int]):
    i = cuda.grid(1)
    k = cuda.local.array(n, float32)
    v = cuda.local.array(n, int32)
    k2 = cuda.local.array(n, float32)
    for j in range(n):
        k[j] = keys[i * n + j]
        k2[j] = keys[i * n + j]
        v[j] = values[i * n + j]
    coop.block.merge_sort_pairs(k, v, less_abs, threads_per_block=tpb)
    coop.block.merge_sort_keys(k2, less_abs, threads_per_block=tpb)
    for j in range(n):
        out_keys[0, i * n + j] = k[j]
        out_keys[1, i * n + j] = k2[j]
        out_values[i * n + j] = v[j]


@cuda.jit
def warp_merge_sort(keys, out, tpb: Constant[int], n: Constant[int], w: Constant[int]):
    i = cuda.grid(1)
    k = cuda.local.array(n, float32)
    for j in range(n):
        k[j] = keys[i * n + j]
    coop.warp.merge_sort_keys(k, less_abs, threads_per_block=tpb, threads_in_warp=w)
    for j in range(n):
        out[i * n + j] = k[j]


@cuda.jit
def load_store(src, dst, valid, tpb: Constant[int], n: Constant[int]):
    """Each algorithm's load of the block's tile (the first ``valid`` elements, -1 past
    them), stored back with the same algorithm into row a of dst; rows 4 to 7: loaded
    directly, stored with algorithm a."""
    base = cuda.blockIdx.x * tpb * n
    m = valid - base
    a = cuda.local.array(n, int32)
    coop.block.load(src[base:], a, threads_per_block=tpb, num_valid_items=m, oob_default=-1)
    coop.block.store(dst[0, base:], a, threads_per_block=tpb)
    b = cuda.local.array(n, int32)
    coop.block.load(src[base:], b, threads_per_block=tpb, algorithm="striped",
                    num_valid_items=m, oob_default=-1)
    coop.block.store(dst[1, base:], b, threads_per_block=tpb, algorithm="striped")
    c = cuda.local.array(n, int32)
    coop.block.load(src[base:], c, threads_per_block=tpb, algorithm="vectorize",
                    num_valid_items=m, oob_default=-1)
    coop.block.store(dst[2, base:], c, threads_per_block=tpb, algorithm="vectorize")
    d = cuda.local.array(n, int32)
    coop.block.load(src[base:], d, threads_per_block=tpb, algorithm="transpose",
                    num_valid_items=m, oob_default=-1)
    coop.block.store(dst[3, base:], d, threads_per_block=tpb, algorithm="transpose")
    coop.block.store(dst[4, base:], a, threads_per_block=tpb, num_valid_items=m)
    coop.block.store(dst[5, base:], a, threads_per_block=tpb, algorithm="striped")
    coop.block.store(dst[6, base:], a, threads_per_block=tpb, algorithm="vectorize")
    coop.block.store(dst[7, base:], a, threads_per_block=tpb, algorithm="transpose")


@cuda.jit
def exchange(src, dst, tpb: Constant[int], n: Constant[int]):
    i = cuda.grid(1)
    a = cuda.local.array(n, int32)
    b = cuda.local.array(n, int32)
    for k in range(n):
        a[k] = src[i * n + k]
    coop.block.exchange(a, b, "blocked_to_striped", threads_per_block=tpb)
    coop.block.exchange(b, a, "striped_to_blocked", threads_per_block=tpb)
    for k in range(n):
        dst[0, i * n + k] = b[k]
        dst[1, i * n + k] = a[k]


@cuda.jit
def diverged_block(x, out, tpb: Constant[int]):
    i = cuda.grid(1)
    if cuda.threadIdx.x < 40:
        out[i] = coop.block.sum(x[i], threads_per_block=tpb)


@cuda.jit
def returned_early(x, out, tpb: Constant[int]):
    i = cuda.grid(1)
    if cuda.threadIdx.x >= 50:
        return
    out[i] = coop.block.reduce(x[i], max, threads_per_block=tpb)


@cuda.jit
def diverged_warp(x, out):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        out[i] = coop.warp.sum(x[i])


@cuda.jit
def diverged_sort(x, out, tpb: Constant[int]):
    i = cuda.grid(1)
    k = cuda.local.array(2, uint32)
    k[0] = x[i]
    k[1] = x[i]
    if x[i] > 7:
        coop.block.radix_sort_keys(k, threads_per_block=tpb)
    out[i] = k[0]


F32 = ArrayType(float32, 1, "C")
F64 = ArrayType(float64, 1, "C")
I32 = ArrayType(int32, 1, "C")
I64 = ArrayType(int64, 1, "C")
U32 = ArrayType(uint32, 1, "C")
U64 = ArrayType(uint64, 1, "C")
U8 = ArrayType(uint8, 1, "C")


def _2d(t):
    return ArrayType(t.dtype, 2, "C")


EXAMPLES = {
    "block_values": [example(F32, _2d(F32), tpb=96), example(I32, _2d(I32), tpb=1024),
                     example(F64, _2d(F64), tpb=33), example(U8, _2d(U8), tpb=128)],
    "block_values_2d": [example(I64, _2d(I64))],
    "block_items": [example(F64, _2d(F64), _2d(F64), tpb=160, n=4)],
    "affine_scans": [example(U64, _2d(U64), tpb=64, n=3)],
    "warp_values": [example(I64, _2d(I64), w=32), example(F32, _2d(F32), w=8)],
    "warp_affine": [example(U64, _2d(U64), w=16)],
    "radix_sort": [example(F32, F32, tpb=256, n=8, descending=0, begin=0, end=32),
                   example(I64, I64, tpb=96, n=3, descending=1, begin=0, end=64),
                   example(U8, U8, tpb=32, n=5, descending=0, begin=2, end=6)],
    "radix_sort_pairs": [example(F64, I32, F64, I32, tpb=128, n=4, descending=1)],
    "merge_sort": [example(F32, I32, _2d(F32), I32, tpb=64, n=5)],
    "warp_merge_sort": [example(F32, F32, tpb=64, n=3, w=16)],
    "load_store": [example(I32, _2d(I32), np.int64(0), tpb=64, n=4)],
    "exchange": [example(I32, _2d(I32), tpb=96, n=3)],
    "diverged_block": [example(F32, F32, tpb=64)],
    "returned_early": [example(F32, F32, tpb=64)],
    "diverged_warp": [example(F32, F32)],
    "diverged_sort": [example(U32, U32, tpb=64)],
}
