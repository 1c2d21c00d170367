"""One kernel per construct of the thread-level language (docs/language.md), each small enough
that its NumPy reference in tests/gpu/test_numerics.py is obviously right."""

import math

import numpy as np

import threadtile as cuda
from threadtile import Constant

from . import example

SCALE = 3  # a global: frozen into kernels as a compile-time constant
OFFSET = 0.25
SHAPE = (4, 8)
COEFFS = np.array([1.5, -2.0, 0.25, 4.0, -0.5], dtype=np.float32)  # global NumPy array
TABLE = np.arange(12, dtype=np.int32).reshape(3, 4)


# ---- indices ---------------------------------------------------------------------------------

@cuda.jit
def thread_indices(out):
    """out[z, y, x] = the 12 special registers of that thread (3-d grid of 3-d blocks)."""
    x, y, z = cuda.grid(3)
    out[z, y, x, 0] = cuda.threadIdx.x
    out[z, y, x, 1] = cuda.threadIdx.y
    out[z, y, x, 2] = cuda.threadIdx.z
    out[z, y, x, 3] = cuda.blockIdx.x
    out[z, y, x, 4] = cuda.blockIdx.y
    out[z, y, x, 5] = cuda.blockIdx.z
    out[z, y, x, 6] = cuda.blockDim.x
    out[z, y, x, 7] = cuda.blockDim.y
    out[z, y, x, 8] = cuda.blockDim.z
    out[z, y, x, 9] = cuda.gridDim.x
    out[z, y, x, 10] = cuda.gridDim.y
    out[z, y, x, 11] = cuda.gridDim.z


@cuda.jit
def grid_helpers(out):
    """out[z, y, x] = grid(1), grid(2), gridsize(1), gridsize(2), gridsize(3)."""
    x, y, z = cuda.grid(3)
    g1 = cuda.grid(1)
    gx, gy = cuda.grid(2)
    s1 = cuda.gridsize(1)
    sx, sy = cuda.gridsize(2)
    nx, ny, nz = cuda.gridsize(3)
    out[z, y, x, 0] = g1
    out[z, y, x, 1] = gx
    out[z, y, x, 2] = gy
    out[z, y, x, 3] = s1
    out[z, y, x, 4] = sx
    out[z, y, x, 5] = sy
    out[z, y, x, 6] = nx
    out[z, y, x, 7] = ny
    out[z, y, x, 8] = nz


@cuda.jit
def lanes(out):
    """out[i] = (laneid, warpsize, linear thread index // warpsize) for a 2-d block."""
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y + t
    out[i, 0] = cuda.laneid
    out[i, 1] = cuda.warpsize
    out[i, 2] = t // cuda.warpsize


# ---- memory spaces ---------------------------------------------------------------------------

@cuda.jit
def local_array(a, out):
    """Per-thread scratch: out[i] = sum_k a[i] ** k (k < 5), then reversed-order weighting."""
    i = cuda.grid(1)
    if i >= a.size:
        return
    powers = cuda.local.array(5, np.float64)
    grid2 = cuda.local.array((2, 3), np.int32)
    p = 1.0
    for k in range(5):
        powers[k] = p
        p *= a[i]
    for r in range(2):
        for c in range(3):
            grid2[r, c] = r * 3 + c
    s = 0.0
    for k in range(4, -1, -1):
        s += powers[k] * (k + 1)
    out[i] = s + grid2[1, 2]


@cuda.jit
def const_arrays(out):
    """Global NumPy arrays in constant memory: through const.array_like and directly."""
    i = cuda.grid(1)
    c = cuda.const.array_like(COEFFS)
    if i < out.shape[0]:
        out[i, 0] = c[i % len(c)] * 2
        out[i, 1] = COEFFS[i % COEFFS.size]
        out[i, 2] = TABLE[i % 3, i % 4]


@cuda.jit
def static_shared_2d(a, out):
    """Each block reverses its 8x16 tile through a 2-d static shared array."""
    tile = cuda.shared.array(SHAPE, np.float32)
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    tile[ty, tx] = a[cuda.blockIdx.x, ty, tx]
    cuda.syncthreads()
    h, w = SHAPE
    out[cuda.blockIdx.x, ty, tx] = tile[h - 1 - ty, w - 1 - tx]


@cuda.jit
def dynamic_shared_views(a, out, n: Constant[int]):
    """Dynamic shared memory cut into an int32 view and two float32 views of n elements."""
    sh = cuda.shared.array(0, np.float32)
    first = sh[:n]
    second = sh[n:2 * n]
    t = cuda.threadIdx.x
    first[t] = a[t]
    second[t] = a[t] * 10
    cuda.syncthreads()
    out[t] = first[n - 1 - t] + second[t] + len(second) + sh.size - 2 * n


# ---- barriers and fences ---------------------------------------------------------------------

@cuda.jit
def barrier_votes(a, out):
    """Per block: how many a > 0, whether all are, whether any is."""
    i = cuda.grid(1)
    pos = a[i] > 0
    cnt = cuda.syncthreads_count(pos)
    every = cuda.syncthreads_and(pos)
    some = cuda.syncthreads_or(a[i] > 100)
    if cuda.threadIdx.x == 0:
        b = cuda.blockIdx.x
        out[b, 0] = cnt
        out[b, 1] = every
        out[b, 2] = some


@cuda.jit
def last_block_sum(a, partial, counter, out):
    """The threadfence reduction: each block publishes a partial sum, fences, and takes a ticket;
    the block that takes the last ticket adds the partials."""
    sh = cuda.shared.array(64, np.float64)
    is_last = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t == 0:
        s = 0.0
        for k in range(cuda.blockDim.x):
            s += sh[k]
        partial[cuda.blockIdx.x] = s
        cuda.threadfence()
        ticket = cuda.atomic.add(counter, 0, 1)
        is_last[0] = ticket == cuda.gridDim.x - 1
    cuda.syncthreads()
    if is_last[0] and t == 0:
        cuda.threadfence_block()
        total = 0.0
        for b in range(cuda.gridDim.x):
            total += partial[b]
        out[0] = total


@cuda.jit
def warp_sync_exchange(a, out):
    """Lanes exchange values through shared memory with syncwarp between write and read."""
    sh = cuda.shared.array(64, np.int32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncwarp()
    v = sh[t ^ 1]
    cuda.syncwarp(0xFFFFFFFF)
    out[t] = v


# ---- control flow ----------------------------------------------------------------------------

@cuda.jit
def branches(a, out):
    """if/elif/else, a ternary, and/or/not, chained comparisons, on every element."""
    i = cuda.grid(1)
    if i >= a.size:
        return
    x = a[i]
    if x < -5:
        k = 0
    elif -5 <= x < 0:
        k = 1
    elif x == 0 or x == 7:
        k = 2
    elif not (x > 10) and x != 3:
        k = 3
    else:
        k = 4
    flag = 10 if x % 2 == 0 else 20
    both = 100 if (x > 0 and x < 20) else 0
    neither = 1000 if not (x < -3 or x > 3) else 0
    out[i] = k + flag + both + neither


@cuda.jit
def loops(n, out):
    """range with 1-3 arguments and negative steps, while, break and continue."""
    i = cuda.grid(1)
    if i >= n.size:
        return
    m = n[i]
    s = 0
    for k in range(m):
        s += k
    out[i, 0] = s
    s = 0
    for k in range(2, m):
        s += k
    out[i, 1] = s
    s = 0
    for k in range(1, m, 3):
        s += k
    out[i, 2] = s
    s = 0
    for k in range(m, -1, -2):
        s += k
    out[i, 3] = s
    s = 0
    step = -1 - (m % 3)  # a negative step that is not a constant
    for k in range(m, 0, step):
        s += k
    out[i, 4] = s
    s = 0
    k = 0
    while True:
        k += 1
        if k > m:
            break
        if k % 2 == 0:
            continue
        s += k
    out[i, 5] = s
    s = 0
    j = m
    while j > 0:
        s += j
        j -= 3
    out[i, 6] = s


@cuda.jit
def early_return(a, out):
    i = cuda.grid(1)
    if i >= out.size:
        return
    out[i] = -1
    if a[i] < 0:
        return
    for k in range(10):
        if k * k > a[i]:
            out[i] = k
            return
    out[i] = 100


@cuda.jit
def augmented(a, f, out, fout):
    """Every augmented operator, on variables and on array elements."""
    i = cuda.grid(1)
    if i >= a.size:
        return
    x = a[i]
    y = x
    y += 7
    y -= 2
    y *= 3
    y //= 4
    y %= 1000
    y <<= 2
    y >>= 1
    y &= 0xFFF
    y |= 1
    y ^= 5
    out[i, 0] = y
    out[i, 1] = x
    out[i, 1] += 1
    out[i, 1] *= 2
    out[i, 1] -= 3
    z = f[i]
    z /= 2
    z **= 2
    z += 1.5
    fout[i] = z
    fout[i] -= 0.25


@cuda.jit
def shapes(m, out):
    """Tuple unpacking of .shape, len, .size, .ndim of a 3-d array."""
    d0, d1, d2 = m.shape
    out[0] = d0
    out[1] = d1
    out[2] = d2
    out[3] = len(m)
    out[4] = m.size
    out[5] = m.ndim
    out[6] = m.shape[-1]


@cuda.jit
def strided_copy(src, dst):
    """dst = 2 * src + 1 through 2-d indexing; src and dst may be any strided views."""
    i, j = cuda.grid(2)
    h, w = dst.shape
    if i < h and j < w:
        dst[i, j] = src[i, j] * 2 + 1


@cuda.jit
def strided_3d(src, dst):
    """dst[i, j, k] = src[i, j, k] - src[0, j, k] over a 3-d grid (z = i, y = j, x = k)."""
    k, j, i = cuda.grid(3)
    a, b, c = src.shape
    if i < a and j < b and k < c:
        dst[i, j, k] = src[i, j, k] - src[0, j, k]


@cuda.jit
def row_views(m, out):
    """A row of a 2-d array is a 1-d view; slicing a view with a start and a step."""
    r = cuda.grid(1)
    if r < m.shape[0]:
        row = m[r]
        tail = row[1::2]
        s = 0.0
        for k in range(tail.size):
            s += tail[k]
        out[r] = s + row[0]


@cuda.jit
def printer(a):
    i = cuda.grid(1)
    if i == 0:
        print("value", a[0], "index", i, "positive", a[0] > 0)


@cuda.jit
def loop_variables(n, out):
    """Python's loop variable: after the loop it holds the last value (unchanged when the
    loop is empty); assigning it in the body does not change the iteration."""
    k = -1
    for k in range(n[0]):  # noqa: B007  (k is read after the loop)
        pass
    out[0] = k
    c = 0
    for j in range(5):
        j += 10
        c += 1
    out[1] = c
    out[2] = j
    s = 0
    for q in range(n[1]):
        s += q
    for q in range(n[2]):
        s += q
    out[3] = s


@cuda.jit
def unsigned_countdown(n, out):
    """range(n, 0, -1) with n unsigned: the loop variable is signed, so the loop ends at 1."""
    s = 0
    for i in range(n, 0, -1):
        s += i
    out[0] = s
    c = 0
    for _i in range(n, -1, -2):
        c += 1
    out[1] = c


# ---- arithmetic ----------------------------------------------------------------------------

@cuda.jit
def pydivmod(a, b, q, r):
    """Python // and % on signed integers and floats (rounding towards -inf)."""
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@cuda.jit
def true_division(a, b, out):
    """/ of two integers is a float64 division, as in Python (not C's integer division)."""
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] / b[i]
        out[i, 1] = math.ceil(a[i] / b[i])
        out[i, 2] = a[i] / b[i] > a[i] // b[i]


@cuda.jit
def scale_half(x, out):
    """The float rule: x * 0.5 stays float32."""
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 0.5


@cuda.jit
def dot_acc(a, b, out):
    """The float rule: acc = 0.0; acc += a[i] * b[i] accumulates in the arrays' type."""
    acc = 0.0
    for i in range(a.size):
        acc += a[i] * b[i]
    out[0] = acc


@cuda.jit
def casts(x, out):
    """np.float32(x), threadtile.float32(x), int(x), float(x), bool(x), np.int16(x)."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = np.float32(v) * np.float32(1.5)
        out[i, 1] = cuda.float32(v) + cuda.float32(0.25)
        out[i, 2] = int(v)
        out[i, 3] = float(v)
        out[i, 4] = bool(v)
        out[i, 5] = np.int16(v * 1000)
        out[i, 6] = cuda.uint8(int(v) & 0xFF)


@cuda.jit
def min_max_abs(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = min(a[i], b[i])
        out[i, 1] = max(a[i], b[i])
        out[i, 2] = abs(a[i])
        out[i, 3] = min(a[i], b[i], 0.5)
        out[i, 4] = max(abs(a[i]), abs(b[i]), 1)


# ---- functions and constants ---------------------------------------------------------------

@cuda.jit(device=True)
def square(x):
    return x * x


@cuda.jit(device=True)
def hypot2(a, b):
    return math.sqrt(square(a) + square(b))  # a device function calling another


@cuda.jit(device=True)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@cuda.jit(device=True)
def store_pair(arr, i, v):
    arr[i, 0] = v
    arr[i, 1] = -v


@cuda.jit
def device_calls(a, b, out, pairs):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = clamp(hypot2(a[i], b[i]), 0.5, 4.0)
        store_pair(pairs, i, square(i))


@cuda.jit
def inner_kernel(out, i):
    out[i] = i * 2


@cuda.jit
def kernel_calls_kernel(out):
    i = cuda.grid(1)
    if i < out.size:
        inner_kernel(out, i)


@cuda.jit
def frozen_globals(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * SCALE + OFFSET


def make_affine(mul, add):
    """A kernel closing over ``mul`` and ``add``: both frozen at compile time."""

    @cuda.jit
    def affine(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] * mul + add

    return affine


affine_2_1 = make_affine(2.0, 1.0)
affine_m3_half = make_affine(-3, 0.5)


@cuda.jit
def unrolled_sum(a, out, n: Constant[int]):
    """out[i] = a[i] + ... + a[i + n - 1], with n a compile-time constant."""
    i = cuda.grid(1)
    if i + n <= a.size:
        s = a[i]
        for k in range(1, n):
            s += a[i + k]
        out[i] = s


_f = np.zeros(8, np.float32)
_i = np.zeros(8, np.int32)
EXAMPLES = {
    "thread_indices": [example(np.zeros((2, 2, 2, 12), np.int32))],
    "grid_helpers": [example(np.zeros((2, 2, 2, 9), np.int64))],
    "lanes": [example(np.zeros((4, 3), np.int32))],
    "local_array": [example(_f, np.zeros(8))],
    "const_arrays": [example(np.zeros((8, 3), np.float32))],
    "static_shared_2d": [example(np.zeros((2, 4, 8), np.float32), np.zeros((2, 4, 8),
                                                                           np.float32))],
    "dynamic_shared_views": [example(_f, _f, n=32), example(_f, _f, n=64)],
    "barrier_votes": [example(_i, _i.reshape(2, 4))],
    "last_block_sum": [example(np.zeros(8), np.zeros(8), np.zeros(1, np.int32), np.zeros(1))],
    "warp_sync_exchange": [example(_i, _i)],
    "branches": [example(_i, _i), example(np.zeros(8, np.int64), _i)],
    "loops": [example(_i, np.zeros((8, 7), np.int64))],
    "early_return": [example(_f, _i)],
    "loop_variables": [example(_i, np.zeros(4, np.int64))],
    "unsigned_countdown": [example(np.uint32(5), np.zeros(2, np.int64)),
                           example(np.uint64(5), np.zeros(2, np.int64))],
    "augmented": [example(_i, _f, np.zeros((8, 2), np.int32), _f),
                  example(np.zeros(8, np.int64), np.zeros(8), np.zeros((8, 2), np.int64),
                          np.zeros(8))],
    "shapes": [example(np.zeros((2, 3, 4), np.float32), np.zeros(7, np.int64))],
    "strided_copy": [example(np.zeros((4, 4), np.float32).T, np.zeros((4, 4), np.float32)),
                     example(np.zeros((4, 8))[:, ::2], np.zeros((4, 8))[::2].T)],
    "strided_3d": [example(np.zeros((2, 3, 4)).transpose(2, 0, 1), np.zeros((4, 2, 3)))],
    "row_views": [example(np.zeros((4, 5), np.float32), _f),
                  example(np.zeros((4, 5), np.float32).T, _f)],
    "printer": [example(_f), example(_i)],
    "pydivmod": [example(_i, _i, _i, _i), example(np.zeros(8, np.int64), np.zeros(8, np.int64),
                                                  np.zeros(8, np.int64), np.zeros(8, np.int64)),
                 example(_f, _f, _f, _f), example(np.zeros(8, np.int8), np.zeros(8, np.int8),
                                                  np.zeros(8, np.int8), np.zeros(8, np.int8))],
    "true_division": [example(_i, _i, np.zeros((8, 3))),
                      example(np.zeros(8, np.int64), _i, np.zeros((8, 3), np.float32))],
    "scale_half": [example(_f, _f)],
    "dot_acc": [example(_f, _f, _f)],
    "casts": [example(_f, np.zeros((8, 7)))],
    "min_max_abs": [example(_f, _f, np.zeros((8, 5), np.float32)),
                    example(_i, _i, np.zeros((8, 5), np.int32))],
    "device_calls": [example(_f, _f, _f, np.zeros((8, 2), np.int64))],
    "inner_kernel": [example(_i, 3)],
    "kernel_calls_kernel": [example(_i)],
    "frozen_globals": [example(_f, _f)],
    "affine_2_1": [example(_f, _f)],
    "affine_m3_half": [example(_f, _f)],
    "unrolled_sum": [example(_f, _f, n=1), example(_f, _f, n=4)],
}
