"""The lecture's matmul kernels, written once against numba.cuda's names.

``make(cuda)`` builds them for any module with those names: ``threadtile`` or ``numba.cuda``,
so both sides of a benchmark run the same source.
"""

import math

import numpy as np

TW = 16


def make(cuda):
    @cuda.jit
    def matmul_naive(m, n, out):
        r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        h, k = m.shape
        w = n.shape[1]
        if r < h and c < w:
            acc = np.float32(0.0)
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
        p = np.float32(0.0)
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
    def matmul_dynamic(m, n, out, tw):
        sh = cuda.shared.array(0, np.float32)
        ms = sh[:tw * tw]
        ns = sh[tw * tw:2 * tw * tw]
        tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
        r = cuda.blockIdx.y * cuda.blockDim.y + tr
        c = cuda.blockIdx.x * cuda.blockDim.x + tc
        h, k = m.shape
        w = n.shape[1]
        p = np.float32(0.0)
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

    return {"naive": matmul_naive, "static": matmul_static, "dynamic": matmul_dynamic}


def make_constant(cuda):
    """The dynamic-shared kernel with the tile width as a compile-time ``Constant``."""
    Constant = cuda.Constant

    @cuda.jit
    def matmul_dynamic_const(m, n, out, tw: Constant[int]):
        sh = cuda.shared.array(0, np.float32)
        ms = sh[:tw * tw]
        ns = sh[tw * tw:2 * tw * tw]
        tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
        r = cuda.blockIdx.y * cuda.blockDim.y + tr
        c = cuda.blockIdx.x * cuda.blockDim.x + tc
        h, k = m.shape
        w = n.shape[1]
        p = np.float32(0.0)
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

    return matmul_dynamic_const
