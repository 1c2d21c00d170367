"""Typing rules of kernel expressions: promotion with weak literals, operator result types.

A Python literal (``0.5``, ``2``) is *weak*: it takes the type of the other operand
(NumPy's NEP 50 rule), so ``x * 0.5`` with ``x`` float32 is float32, never float64. A variable
assigned only from literals is weak too, until another assignment gives it a real type:
``acc = 0.0`` followed by ``acc += a[i] * b[i]`` on float32 arrays makes ``acc`` float32.
"""

from __future__ import annotations

from ..errors import KernelCompileError, TileCodeValueError
from ..ir.nodes import Cast, Const, Expr
from ..lang.types import (
    NARROW_FLOATS,
    ArrayType,
    Scalar,
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int32,
    int64,
    promote,
    uint64,
)


def is_weak(e: Expr) -> bool:
    return bool(getattr(e, "weak", False))


def mark_weak(e: Expr, weak: bool = True) -> Expr:
    e.weak = weak
    return e


def literal_type(value) -> Scalar:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return complex128
    return float64


def materialized_int(value: int) -> Scalar:
    """cuTile's type of a Python int that becomes a runtime value: the first of int32, int64
    and uint64 that holds it."""
    if -(1 << 31) <= value < (1 << 31):
        return int32
    return int64 if -(1 << 63) <= value < (1 << 63) else uint64


def literal(value, loc) -> Const:
    """A Python number written in the kernel: a loosely typed constant. An integer no
    supported type holds (beyond uint64 and int64) is cuTile's ``TileValueError``."""
    if isinstance(value, int) and not isinstance(value, bool) and not \
            -(1 << 63) <= value < (1 << 64):
        raise TileCodeValueError(f"Integer constant {value} is out of range of any supported "
                                 "integer type", loc=loc)
    return Const(literal_type(value), loc, value, weak=True)


def unify(a: Scalar, a_weak: bool, b: Scalar, b_weak: bool) -> tuple[Scalar, bool]:
    """The common type of two operands, and whether the result is still weak."""
    if a_weak and not b_weak:
        return weak_with(a, b), False
    if b_weak and not a_weak:
        return weak_with(b, a), False
    return promote(a, b), a_weak and b_weak


def weak_with(weak: Scalar, strong: Scalar) -> Scalar:
    """A weak operand of type ``weak`` meeting a strong one: NEP 50."""
    if weak.kind == "b":
        return strong
    if weak.is_int:
        return strong if strong.kind != "b" else int64
    if weak.is_complex:  # `x * 1j`: the complex type of x's precision
        if strong.is_complex:
            return strong
        return complex64 if strong.is_float and strong.bits <= 32 else complex128
    # weak float: keeps a float operand's type, an integer operand becomes float64
    return strong if strong.is_float or strong.is_complex else float64


def arith_type(op: str, a: Scalar, aw: bool, b: Scalar, bw: bool) -> tuple[Scalar, bool]:
    t, w = unify(a, aw, b, bw)
    if t == bool_ and op in "+-*//%**":
        t = int64
    if op == "/" and not (t.is_float or t.is_complex):
        t = float64
    return t, w


def convert(e: Expr, t: Scalar) -> Expr:
    """``e`` converted to ``t``: literals are folded, others wrapped in a Cast. A complex
    number never converts to a real type (numba refuses it too): take ``.real`` or ``abs``."""
    if e.type == t:
        return e
    if isinstance(e.type, Scalar) and e.type.is_complex and not t.is_complex:
        raise KernelCompileError(f"a {e.type} value cannot become a {t}", loc=e.loc,
                                 hint="take its .real or .imag, or abs() of it")
    if isinstance(e, Const) and isinstance(e.type, Scalar):
        if t.name == "float8_e8m0fnu" and e.value < 0:  # cuTile's words
            raise TileCodeValueError("Negative values cannot be represented in an unsigned "
                                     f"float format ({t} of {e.value!r})", loc=e.loc)
        return Const(t, e.loc, py_value(e.value, t), weak=False)
    return Cast(t, e.loc, e)


def py_value(v, t: Scalar):
    if t.is_complex:
        import numpy as np  # noqa: PLC0415

        return complex(np.complex64(v)) if t == complex64 else complex(v)
    if t.kind == "b":
        return bool(v)
    if t.is_int:
        v = int(v)
        bits = t.bits
        if t.kind == "u":
            return v & ((1 << bits) - 1)
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >= 1 << (bits - 1) else v
    if t == float32:
        import numpy as np  # noqa: PLC0415

        return float(np.float32(v))
    if t in (float16, bfloat16) or t.name in NARROW_FLOATS:
        return _narrow(float(v), t)
    return float(v)


def _narrow(v: float, t: Scalar) -> float:
    """``v`` rounded to the 16-bit or narrower float ``t`` (to nearest, ties to even, but
    float8_e8m0fnu up; the narrow formats saturate, lang/minifloat.py), as a Python float: a
    constant of type ``t`` holds the value ``t`` can represent."""
    import numpy as np  # noqa: PLC0415

    if t == float16:
        return float(np.float16(v))
    if t == bfloat16:
        bits = int(np.array(v, np.float32).view(np.uint32))
        if v != v:
            return v
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return float(np.array(bits, np.uint32).view(np.float32))
    from ..lang import minifloat  # noqa: PLC0415

    mode = "rp" if t.name == "float8_e8m0fnu" else "rn"  # as cuda_fp8.h's constructors
    return float(minifloat.round_to(np.array([v], np.float32), t.name, mode)[0])


def describe(t) -> str:
    if isinstance(t, ArrayType) and type(t) is not ArrayType:  # a tiled view, raw memory
        return repr(t)
    if isinstance(t, ArrayType):
        return f"array({t.dtype}, {t.ndim}d)"
    return repr(t)
