"""Small kernels whose IR and C++ the unit tests inspect (module level: the frontend reads this
file). Lines the tests look up end with ``# L <name>``."""

import math

import numpy as np

import threadtile as cuda

DEBUG = False
HALF = 0.5


@cuda.jit
def weak_accumulator(a, b, out):
    acc = 0.0  # L acc-init
    for i in range(a.size):
        acc += a[i] * b[i]  # L acc-update
    out[0] = acc


@cuda.jit
def literal_mix(x, out):
    i = cuda.grid(1)
    k = 3  # weak: assigned only literals
    out[i] = x[i] * 0.5 + k + HALF - 1


@cuda.jit
def folding(out):
    out[0] = 2 * 3 + 1
    out[1] = -7 // 2
    out[2] = -7 % 3
    out[3] = math.sqrt(16.0)
    out[4] = 2 ** 10
    out[5] = (1 < 2 < 3) + (not 0)
    out[6] = max(3, 9, 4)
    if DEBUG:
        out[7] = 1  # L dead-branch


@cuda.jit
def divides_by_zero(out):
    out[0] = 1 // 0  # L div-zero


@cuda.jit
def fixpoint(a, out):
    """q is read before p gets its real type: settles in a later round."""
    p = 0
    q = p
    for i in range(a.size):
        q = p
        p = a[i]
    out[0] = q


@cuda.jit
def int_promotions(a32, b_u32, c8, out):
    out[0] = a32[0] + b_u32[0]  # int32 + uint32 -> int64
    out[1] = c8[0] + c8[0]  # int8
    out[2] = a32[0] / a32[0]  # true division -> float64
    out[3] = a32[0] // 2  # int32


@cuda.jit
def specials(out):
    t = cuda.threadIdx.x
    g = cuda.grid(1)
    lane = cuda.laneid
    out[0] = t + g + lane


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@cuda.jit
def clamp_f32(a):
    a[0] = clamp(a[0], 0.5, 4.0)


@cuda.jit
def floors(x, out):
    out[0] = math.floor(x[0])
    out[1] = np.floor(x[0])


@cuda.jit
def reserved_names(a):
    new = a[0]  # L reserved
    double = new * 2
    tt_x = double + 1
    a[1] = tt_x


@cuda.jit
def retype_param_literal(a, n):
    n = 0  # a literal fits any parameter type
    a[0] = n + 1


@cuda.jit
def constant_shape(a, out):
    h, w = a.shape
    out[0] = h * w + a.ndim + len(a)


@cuda.jit
def shadows_math(a):
    i = cuda.grid(1)
    log = math.log(a[i])
    exp = math.exp(log)
    isnan = math.isnan(exp)
    a[i] = exp + log + isnan
