"""CUDA's vector types, numba's ``cuda.float32x4`` and friends (``int8x1`` ... ``uint64x4``,
``float32x1`` ... ``float64x4``, and CUDA's names for them: ``float4``, ``int2``, ``char3``,
``ulonglong2``...).

A vector is a small value with fields ``.x .y .z .w``: in a kernel it is a namedtuple of its
base type, taken apart at compile time (docs/language.md, "Tuples"), so it costs nothing and
crosses device-function boundaries as a tuple does. The constructor takes the elements, or
any mix of numbers and smaller vectors whose elements add up to the vector's length (numba's
"fancy creation": ``float4(float2(a, b), c, d)``); each element converts to the base type.

numba's own vector objects (``numba.cuda.float32x4``) are recognised by name
(:func:`from_numba`): threadtile never imports numba.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .types import Scalar, scalar_of

FIELDS = ("x", "y", "z", "w")
_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
          "float64")
_ALIASES = {"int8": ("char",), "int16": ("short",), "int32": ("int",),
            "int64": ("long", "longlong"), "uint8": ("uchar",), "uint16": ("ushort",),
            "uint32": ("uint",), "uint64": ("ulong", "ulonglong"), "float32": ("float",),
            "float64": ("double",)}


class VectorType:
    """``float32x4`` and the others: called with elements (or smaller vectors), a vector."""

    def __init__(self, base: str, n: int):
        self.name = f"{base}x{n}"
        self.base: Scalar = scalar_of(base)
        self.n = n
        self.fields = FIELDS[:n]
        self.aliases = [f"{a}{n}" for a in _ALIASES[base]]
        self._tuple = namedtuple(self.name, self.fields)
        self.__name__ = self.__qualname__ = self.name
        self.__doc__ = (f"{self.name}(...) -> a vector of {n} {base} values with fields "
                        f"{', '.join('.' + f for f in self.fields)}")

    def __repr__(self) -> str:
        return f"threadtile.{self.name}"

    def __call__(self, *args):
        """The vector in Python (the simulator's python mode)."""
        items = flatten(args, lambda a: isinstance(a, tuple))
        if len(items) != self.n:
            raise TypeError(f"{self.name}() takes {self.n} elements, got {len(items)}")
        # a C conversion: an integer out of range wraps, as it does in a kernel
        return self._tuple(*(np.asarray(v).astype(self.base.numpy)[()] for v in items))


def flatten(args, is_vector, items=lambda v: v) -> list:
    """The elements of ``args``, a mix of numbers and vectors (``items(v)``: a vector's
    elements), in order."""
    out = []
    for a in args:
        if is_vector(a):
            out += flatten(items(a), is_vector, items)
        else:
            out.append(a)
    return out


VECTORS: dict[str, VectorType] = {}
for _b in _BASES:
    for _n in (1, 2, 3, 4):
        _v = VectorType(_b, _n)
        VECTORS[_v.name] = _v
        for _a in _v.aliases:
            VECTORS[_a] = _v


globals().update(VECTORS)  # threadtile.float32x4, threadtile.float4...
__all__ = list(VECTORS)


def from_numba(obj) -> VectorType | None:
    """threadtile's vector type for one of numba's (``numba.cuda.stubs.float32x4``), or None."""
    if not isinstance(obj, type) or getattr(obj, "__module__", None) != "numba.cuda.stubs":
        return None
    return VECTORS.get(obj.__name__)
