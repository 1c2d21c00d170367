"""The same kernels specialized for every dtype the language supports."""

import numpy as np

import threadtile as cuda
from threadtile import bfloat16
from threadtile.lang.types import ArrayType

from . import example

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64")


@cuda.jit
def add_arrays(x, y, out):
    """out = x + y in the arrays' dtype (bool + bool is an int, stored back as x or y)."""
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + y[i]


@cuda.jit
def affine_literal(x, out):
    """out = x * 3 - 1: weak literals keep x's dtype."""
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 3 - 1


@cuda.jit
def to_float64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float(x[i])


@cuda.jit
def from_float64(src, out):
    """A float64 value stored into an array of any dtype converts (truncating for ints)."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = src[i]


@cuda.jit
def logic(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] and not b[i]
        out[i, 1] = a[i] or b[i]
        out[i, 2] = a[i] == b[i]
        out[i, 3] = a[i] != b[i] and (a[i] or b[i])


@cuda.jit
def small_int_math(a, b, out):
    """8- and 16-bit integers wrap after every operation, as NumPy's do: uint8 3 - 7 is 252
    before the %, and the comparison sees the wrapped value."""
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = min(a[i], 2)
        out[i, 1] = max(a[i] + b[i], b[i])
        out[i, 2] = (a[i] + b[i]) // 3
        out[i, 3] = (a[i] - b[i]) % 5
        out[i, 4] = a[i] ** 2
        out[i, 5] = 1 if a[i] - b[i] > 4 else 0
        out[i, 6] = -a[i]


SMALL_INTS = ("int8", "uint8", "int16", "uint16")


def _ex(dt, n=8, nd=1):
    if dt == "bfloat16":
        return ArrayType(bfloat16, nd, "C")
    return np.zeros((n,) * nd, dt)


EXAMPLES = {
    "add_arrays": [example(_ex(d), _ex(d), _ex(d)) for d in DTYPES],
    "affine_literal": [example(_ex(d), _ex(d)) for d in DTYPES if d != "bool"],
    "to_float64": [example(_ex(d), _ex("float64")) for d in DTYPES],
    "from_float64": [example(_ex("float64"), _ex(d)) for d in DTYPES],
    "small_int_math": [example(_ex(d), _ex(d), np.zeros((8, 7), d)) for d in SMALL_INTS],
    "logic": [example(_ex("bool"), _ex("bool"), np.zeros((8, 4), np.bool_))],
}
