"""Math functions, NaN/inf handling and min/max/abs, generic over the float dtypes."""

import math

import numpy as np

import threadtile as cuda
from threadtile import bfloat16
from threadtile.lang.types import ArrayType

from . import example

N_UNARY = 16  # rows of unary_math's output


@cuda.jit
def unary_math(x, out):
    """out[k, i] = the k-th function of x[i] (x in (-3, 3), nonzero)."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        a = abs(v)
        out[0, i] = math.sqrt(a)
        out[1, i] = math.exp(v)
        out[2, i] = math.log(a)
        out[3, i] = math.pow(a, 1.5)
        out[4, i] = math.sin(v)
        out[5, i] = math.cos(v)
        out[6, i] = math.tanh(v)
        out[7, i] = math.floor(v)
        out[8, i] = math.ceil(v)
        out[9, i] = math.fabs(v)
        out[10, i] = math.erf(v)
        out[11, i] = np.sqrt(a) + np.exp(-a)
        out[12, i] = np.floor(v * 2) / 2
        out[13, i] = a ** 2 + a ** 0.5
        out[14, i] = math.exp(v * 0.5) - math.log(a * 2)
        out[15, i] = v * math.pi - math.e


@cuda.jit
def nan_inf(x, flags, vals):
    """isnan/isinf of each element; math.inf, -math.inf and math.nan as values."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        flags[i, 0] = math.isnan(v)
        flags[i, 1] = math.isinf(v)
        flags[i, 2] = not (math.isnan(v) or math.isinf(v))
        vals[i, 0] = math.inf if v > 0 else -math.inf
        vals[i, 1] = math.nan if math.isnan(v) else v
        vals[i, 2] = min(v, math.inf) if not math.isnan(v) else 0.0


@cuda.jit
def int_math(x, out):
    """math functions of integers compute in float64; math.floor returns an int."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.sqrt(v * v)
        out[i, 1] = math.floor(v / 3)
        out[i, 2] = abs(v) + max(v, 2) - min(v, -2)


_FLOATS = (np.float32, np.float64, np.float16)
EXAMPLES = {
    "unary_math": [example(np.zeros(8, dt), np.zeros((N_UNARY, 8), dt)) for dt in _FLOATS]
    + [example(ArrayType(bfloat16, 1, "C"), ArrayType(bfloat16, 2, "C"))],
    "nan_inf": [example(np.zeros(8, dt), np.zeros((8, 3), np.bool_), np.zeros((8, 3), dt))
                for dt in _FLOATS],
    "int_math": [example(np.zeros(8, np.int32), np.zeros((8, 3))),
                 example(np.zeros(8, np.int64), np.zeros((8, 3), np.float32))],
}
