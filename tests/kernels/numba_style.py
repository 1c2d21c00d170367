"""Kernels written the way numba programs write them: aliases of the kernel language's names,
plain Python helpers called as device functions (defaults, keywords, tuples returned), local
tuples, tuple and namedtuple arguments, loops over arrays, enumerate, zip and reversed ranges,
the math functions numba supports, numba's atomics and warp matches. Their NumPy references
are in tests/gpu/test_numerics_numba_style.py."""

import math
from collections import namedtuple

import numpy as np

import threadtile as cuda

TPB = 16  # the tile width of the shared-memory matmul
Point = namedtuple("Point", ["x", "y"])


# ---- aliases: the lecture's shared-memory matmul as numba code writes it ---------------------

@cuda.jit
def matmul_aliases(m, n, out):
    cbi, cbd, tid = cuda.blockIdx, cuda.blockDim, cuda.threadIdx
    sm = cuda.shared
    sync = cuda.syncthreads
    tc, tr = tid.x, tid.y
    c, r = cbi.x * cbd.x + tc, cbi.y * cbd.y + tr
    ms = sm.array((TPB, TPB), np.float32)
    ns = sm.array((TPB, TPB), np.float32)
    h, k = m.shape
    w = n.shape[1]
    acc = 0.0
    for ph in range((k + TPB - 1) // TPB):
        ms[tr, tc] = m[r, ph * TPB + tc] if r < h and ph * TPB + tc < k else 0.0
        ns[tr, tc] = n[ph * TPB + tr, c] if c < w and ph * TPB + tr < k else 0.0
        sync()
        for i in range(TPB):
            acc += ms[tr, i] * ns[i, tc]
        sync()
    if r < h and c < w:
        out[r, c] = acc


@cuda.jit
def atomic_alias(counts, values):
    at = cuda.atomic
    i = cuda.grid(1)
    if i < values.size:
        at.add(counts, values[i] % counts.size, 1)


# ---- plain Python functions as device functions ----------------------------------------------

def axpy(a, x, y=0.0, *, scale=1.0):
    """Not decorated: a kernel that calls it compiles it."""
    return scale * (a * x + y)


def minmax(x, y):
    return (x, y) if x < y else (y, x)


def stats(a, i):
    """A nested tuple back: ((min, max), sum) of a[i] and a[i + 1]."""
    lo, hi = minmax(a[i], a[i + 1])
    return (lo, hi), a[i] + a[i + 1]


def norm2(p):
    """A tuple parameter."""
    return p[0] * p[0] + p[1] * p[1]


@cuda.jit(device=True)
def clamp(x, lo=0.0, hi=1.0):
    return min(max(x, lo), hi)


@cuda.jit
def device_functions(a, out):
    i = cuda.grid(1)
    if i + 1 < a.size:
        out[i, 0] = axpy(2.0, a[i])
        out[i, 1] = axpy(2.0, a[i], 1.0)
        out[i, 2] = axpy(2.0, a[i], scale=3.0)
        out[i, 3] = axpy(x=a[i], a=0.5, y=a[i + 1])
        (lo, hi), s = stats(a, i)
        out[i, 4] = lo
        out[i, 5] = hi
        out[i, 6] = s
        t = minmax(a[i + 1], a[i])
        out[i, 7] = t[0] - t[1]
        out[i, 8] = norm2((a[i], a[i + 1]))
        out[i, 9] = clamp(a[i]) + clamp(a[i], hi=0.5) + clamp(a[i], -1.0, 2.0)


# ---- local tuples ----------------------------------------------------------------------------

@cuda.jit
def local_tuples(a, out):
    i = cuda.grid(1)
    if i < a.size:
        t = (a[i], 2 * a[i], i)
        x, y, z = t
        u = t[1:]
        nested = ((x, y), (z, len(t)))
        out[i, 0] = x + t[-1]
        out[i, 1] = u[0] - u[1]
        out[i, 2] = nested[1][1] + nested[0][1]
        w = (i, i + 1, i + 2)
        out[i, 3] = w[i % 3]  # a variable index into a tuple of numbers
        p = Point(a[i], 3.0)
        out[i, 4] = p.x * p.y


# ---- tuple and namedtuple arguments ----------------------------------------------------------

@cuda.jit
def tuple_arguments(out, scalars, nested, arrays, point, empty):
    out[0] = scalars[0] + scalars[1] + scalars[2]
    out[1] = nested[0] + nested[1][0] * nested[1][1]
    x, v = arrays
    out[2] = x * v[1]
    out[3] = point.x - point.y
    out[4] = len(empty) + len(scalars)
    for k in range(v.size):
        v[k] += x


# ---- loops over what is not a range ----------------------------------------------------------

@cuda.jit
def loops(a, b, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    s = 0.0
    for x in a:  # the items of a 1-d array
        s += x * (i + 1)
    out[i, 0] = s
    d = 0.0
    for k, (x, y) in enumerate(zip(a, b), start=i):
        d += k * x * y
    out[i, 1] = d
    r = 0.0
    for j in reversed(range(i, 20, 3)):
        r = r * 2 + j
    out[i, 2] = r
    n = 0.0
    for j in range(20, i, -4):  # a negative step
        n = n * 3 + j
    out[i, 3] = n
    m = 0.0
    for (k, x), y in zip(enumerate(b), reversed(a)):
        m += k * x - y
    out[i, 4] = m
    q = 0.0
    for v in (1.5, i, 2.5):  # a tuple of numbers
        q = q * 10 + v
    out[i, 5] = q


@cuda.jit
def loop_rows(m, out):
    """``for row in m`` over a 2-d array gives its rows."""
    i = cuda.grid(1)
    if i < m.shape[1]:
        s = 0.0
        for row in m:
            s += row[i]
        out[i] = s


# ---- math --------------------------------------------------------------------------------------

@cuda.jit
def math_numba(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        v, w = x[i], y[i]
        m, e = math.frexp(v)
        out[i, 0] = m
        out[i, 1] = e
        out[i, 2] = math.ldexp(v, 3)
        f, n = math.modf(v)
        out[i, 3] = f
        out[i, 4] = n
        out[i, 5] = math.degrees(v)
        out[i, 6] = math.radians(v)
        out[i, 7] = math.remainder(v, w)
        out[i, 8] = math.nextafter(v, w)
        out[i, 9] = math.gamma(w)
        out[i, 10] = math.lgamma(w)
        out[i, 11] = round(v, 2)
        out[i, 12] = round(v * 1000, -2)
        out[i, 13] = math.log(w, 3)
        out[i, 14] = round(v)


# ---- atomics and warp matches -----------------------------------------------------------------

@cuda.jit
def cas_claims(first, olds, hits, slots):
    """compare_and_swap: exactly one thread finds first[0] still 0; cas claims free slots."""
    i = cuda.grid(1)
    if i < hits.size:
        olds[i] = cuda.atomic.compare_and_swap(first, 0, i + 1)
        for s in range(slots.size):
            if cuda.atomic.cas(slots, s, -1, i) == -1:
                hits[i] = s
                break


@cuda.jit
def nan_extrema(a, out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.nanmax(out, 0, a[i])
        cuda.atomic.nanmin(out, 1, a[i])
        cuda.atomic.max(out, 2, a[i])


@cuda.jit
def matches(keys, any_out, all_out, pred_out):
    i = cuda.grid(1)
    if i < keys.size:
        k = keys[i]
        any_out[i] = cuda.match_any_sync(0xFFFFFFFF, k)
        m, p = cuda.match_all_sync(0xFFFFFFFF, k // 1000)
        all_out[i] = m
        pred_out[i] = p


@cuda.jit
def half_intrinsics(a, b, c, out, flags):
    i = cuda.grid(1)
    if i < a.size:
        h = cuda.fp16
        x, y, z = a[i], b[i], c[i]
        out[i, 0] = h.hadd(x, y)
        out[i, 1] = h.hsub(x, y)
        out[i, 2] = h.hmul(x, y)
        out[i, 3] = h.hdiv(x, y)
        out[i, 4] = h.hneg(x)
        out[i, 5] = h.habs(x)
        out[i, 6] = h.hfma(x, y, z)
        out[i, 7] = h.hmax(x, y)
        out[i, 8] = h.hmin(x, y)
        out[i, 9] = h.hsqrt(h.habs(x))
        out[i, 10] = h.hexp(x)
        out[i, 11] = h.hlog(h.habs(y))
        out[i, 12] = h.hsin(x)
        out[i, 13] = h.hexp10(x)
        out[i, 14] = h.hrcp(y)
        out[i, 15] = h.hfloor(x)
        flags[i, 0] = h.hlt(x, y)
        flags[i, 1] = h.hge(x, y)
        flags[i, 2] = h.heq(x, x)
        flags[i, 3] = h.hne(x, y)


@cuda.jit
def printer_tuples(a):
    tid = cuda.threadIdx
    if tid.x == 0:
        print("t =", (a[0], (1, 2.5)), (7,), sep=" ")
        print(cuda.threadIdx)


def example(*args, **constants):
    return args, constants


_f32 = np.zeros(8, np.float32)
_f64 = np.zeros(8)
EXAMPLES = {
    "matmul_aliases": [example(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32),
                               np.zeros((4, 4), np.float32))],
    "atomic_alias": [example(np.zeros(7, np.int32), np.zeros(8, np.int32))],
    "device_functions": [example(_f64, np.zeros((7, 10)))],
    "local_tuples": [example(_f32, np.zeros((8, 5), np.float32))],
    "tuple_arguments": [example(_f64, (1, 2.5, np.float32(0.25)), (1.5, (np.int32(3), 4.0)),
                                (2.0, _f64), Point(7, 3), ())],
    "loops": [example(_f64, _f64, np.zeros((4, 6)))],
    "loop_rows": [example(np.zeros((3, 8), np.float32), _f32)],
    "math_numba": [example(_f32, _f32, np.zeros((8, 15), np.float32)),
                   example(_f64, _f64, np.zeros((8, 15)))],
    "cas_claims": [example(np.zeros(1, np.int32), np.zeros(8, np.int32),
                           np.zeros(8, np.int32), np.zeros(4, np.int32))],
    "nan_extrema": [example(_f64, np.zeros(3))],
    "matches": [example(np.zeros(8, np.int64), np.zeros(8, np.uint32), np.zeros(8, np.uint32),
                        np.zeros(8, np.int32))],
    "printer_tuples": [example(np.zeros(1))],
    "half_intrinsics": [example(*(np.zeros(8, np.float16),) * 3, np.zeros((8, 16), np.float16),
                                np.zeros((8, 4), np.bool_))],
}
