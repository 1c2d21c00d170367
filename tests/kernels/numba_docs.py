"""The examples of numba's CUDA documentation, written against ``import threadtile as cuda``:
vector add (``increment_by_one``, a 2-d increment, a grid-stride ``add``), the naive matmul,
the shared-memory ``fast_matmul`` and a shared-memory sum reduction."""

import numpy as np
from numpy import float32

import threadtile as cuda

from . import example

TPB = 16  # threads per block along each axis of fast_matmul
RED_THREADS = 128  # block size of the reduction


@cuda.jit
def increment_by_one(an_array):
    pos = cuda.grid(1)
    if pos < an_array.size:
        an_array[pos] += 1


@cuda.jit
def increment_a_2D_array(an_array):
    x, y = cuda.grid(2)
    if x < an_array.shape[0] and y < an_array.shape[1]:
        an_array[x, y] += 1


@cuda.jit
def add(x, y, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = x[i] + y[i]


@cuda.jit
def matmul(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@cuda.jit
def sum_reduce(data, partial):
    """Each block sums its RED_THREADS elements in shared memory by halving strides."""
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    shr = cuda.shared.array(RED_THREADS, float32)
    shr[tid] = data[i] if i < len(data) else 0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            shr[tid] += shr[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = shr[0]


_v = np.zeros(16, np.float32)
_m = np.zeros((4, 4), np.float32)
EXAMPLES = {
    "increment_by_one": [example(_v), example(np.zeros(4, np.int32))],
    "increment_a_2D_array": [example(_m)],
    "add": [example(_v, _v, _v)],
    "matmul": [example(_m, _m, _m), example(_m.astype(np.float64), _m.astype(np.float64),
                                            _m.astype(np.float64))],
    "fast_matmul": [example(_m, _m, _m)],
    "sum_reduce": [example(_v, _v)],
}
