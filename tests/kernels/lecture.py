"""The lecture's matmul kernels: naive, static-shared tiled (TW a global), dynamic-shared tiled
with the tile width a ``Constant[int]`` and the two tiles as slices of one dynamic array."""

import math

import numpy as np

import threadtile as cuda
from threadtile import Constant

from . import example

TW = 16


@cuda.jit
def matmul_naive(m, n, out):
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h, k = m.shape
    w = n.shape[1]
    if r < h and c < w:
        acc = 0.0
        for i in range(k):
            acc += m[r, i] * n[i, c]
        out[r, c] = acc


@cuda.jit
def matmul_static(m, n, out):
    ms = cuda.shared.array((TW, TW), np.float32)
    ns = cuda.shared.array((TW, TW), np.float32)
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    h, k = m.shape
    w = n.shape[1]
    p = 0.0
    for ph in range(math.ceil(k / TW)):
        idx = ph * TW
        ms[tr, tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr, tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(TW):
            p += ms[tr, i] * ns[i, tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


@cuda.jit
def matmul_dynamic(m, n, out, tw: Constant[int]):
    sh = cuda.shared.array(0, np.float32)
    ms = sh[:tw * tw]
    ns = sh[tw * tw:2 * tw * tw]
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    h, k = m.shape
    w = n.shape[1]
    p = 0.0
    for ph in range(math.ceil(k / tw)):
        idx = ph * tw
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        cuda.syncthreads()
    if r < h and c < w:
        out[r, c] = p


_m = np.zeros((8, 8), np.float32)
EXAMPLES = {
    "matmul_naive": [example(_m, _m, _m), example(_m.T, _m, _m)],
    "matmul_static": [example(_m, _m, _m)],
    "matmul_dynamic": [example(_m, _m, _m, tw=16), example(_m, _m, _m, tw=8)],
}
