"""The benchmarks' kernels, written once against numba.cuda's names.

Load this file with ``_common.load_kernels(target)``: it runs it as a fresh module whose global
``TARGET`` is set before the body runs, so ``cuda`` is ``threadtile`` (``TARGET="threadtile"``,
also the default for a plain import) or ``numba.cuda`` (``TARGET="numba"``: the GPU, or numba's
simulator under ``NUMBA_ENABLE_CUDASIM=1``). ``cuda`` must be a module global, not a closure
variable: numba's simulator swaps in its fake ``cuda`` module only through the kernel's globals,
and numba's ``cache=True`` needs the kernel in a real file (bench/_compile_child.py copies this
one into its cache dir).

- ``matmul_naive``, ``matmul_static``, ``matmul_dynamic`` (``MATMULS``): the lecture's matmuls;
- ``matmul_dynamic_const`` (threadtile only, also in ``MATMULS``): the dynamic-shared kernel
  with the tile width a compile-time ``Constant``;
- ``vector_add``, ``block_reduce``, ``warm_up``: bench/sim_vs_numba.py's other cases.
"""

import math

import numpy as np

TARGET = globals().get("TARGET", "threadtile")
if TARGET == "numba":
    from numba import cuda
elif TARGET == "threadtile":
    import threadtile as cuda
else:
    raise ImportError(f"bench/kernels.py: TARGET must be 'threadtile' or 'numba', not {TARGET!r}")

TW = 16
RED_THREADS = 256
# numba's simulator sizes a dynamic shared array with dtype.itemsize, so it needs a dtype
# object, not the scalar type np.float32 (threadtile and numba-cuda accept both)
F32 = np.dtype(np.float32)


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
    """The lecture's tiled matmul with two static TW x TW shared tiles."""
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


MATMULS = {"naive": matmul_naive, "static": matmul_static, "dynamic": matmul_dynamic}

if TARGET == "threadtile":
    Constant = cuda.Constant

    @cuda.jit
    def matmul_dynamic_const(m, n, out, tw: Constant[int]):
        """matmul_dynamic with the tile width as a compile-time ``Constant``."""
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

    MATMULS["dynamic_const"] = matmul_dynamic_const


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
