"""The kernels of bench/sim_vs_numba.py, written once against numba.cuda's names.

The file is loaded twice, as two modules: once with ``cuda`` = ``threadtile`` and once with
``cuda`` = ``numba.cuda``. ``cuda`` must be a module global (not a closure variable, as in
lecture_kernels.py): numba's simulator swaps in its fake ``cuda`` module only through the kernel's
globals.
"""

import math
import os

import numpy as np

if os.environ.get("SIM_KERNELS_TARGET") == "numba":
    from numba import cuda
else:
    import threadtile as cuda

TW = 16
RED_THREADS = 256
# numba's simulator sizes a dynamic shared array with dtype.itemsize, so it needs a dtype
# object, not the scalar type np.float32 (threadtile accepts both)
F32 = np.dtype(np.float32)


@cuda.jit
def matmul_dynamic(m, n, out, tw):
    """The lecture's tiled matmul with dynamic shared memory cut into two tiles."""
    sh = cuda.shared.array(0, F32)
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


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def block_reduce(a, out):
    """Tree reduction in shared memory; thread 0 writes the block's sum."""
    sh = cuda.shared.array(RED_THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def warm_up(out):
    """Launched once before timing, so that no case pays the process's one-time imports."""
    out[cuda.grid(1)] = 1.0
