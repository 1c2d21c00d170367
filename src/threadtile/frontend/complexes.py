"""Complex numbers: ``complex(a, b)``, ``z.real``, ``z.imag``, ``z.conjugate()``, ``abs(z)``,
Python's ``cmath`` functions and NumPy's of the same names on complex operands.

The types are complex64 and complex128 (lang/types.py has the promotion rules). Operators on
complex numbers are lowered by operators.py like any other number's; this module has the
calls and attributes. numba's typing is followed: ``complex(x, y)`` is complex128 whatever
its arguments; a cmath function of a real number computes in the complex type of the
number's precision (float32 -> complex64, float64 and integers -> complex128).
"""

from __future__ import annotations

import ast
import builtins
import cmath
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..ir.ops import CMATH1
from ..lang.types import Scalar, bool_, complex64, complex128, float64
from . import typing as ty
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer

# id(callable) -> its name among the cmath functions this module lowers
CMATH: dict[int, str] = {id(getattr(cmath, n)): n for n in (
    *CMATH1, "phase", "polar", "rect", "isnan", "isinf", "isfinite")}
# NumPy's functions on complex operands -> the cmath function that computes them
_NP = {id(getattr(np, a)): n for a, n in (
    ("sqrt", "sqrt"), ("exp", "exp"), ("log", "log"), ("log10", "log10"), ("sin", "sin"),
    ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"), ("arccos", "acos"),
    ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"),
    ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"), ("isnan", "isnan"),
    ("isinf", "isinf"), ("isfinite", "isfinite"), ("angle", "phase"))}


def is_complex(v) -> bool:
    return isinstance(v, ir.Expr) and isinstance(v.type, Scalar) and v.type.is_complex


def complex_type_of(t: Scalar) -> Scalar:
    """The complex type a real number of type ``t`` computes in (numba's cmath typing)."""
    if t.is_complex:
        return t
    return complex64 if t.is_float and t.bits <= 32 else complex128


def literal(value: complex, loc: ir.Loc) -> ir.Const:
    """``1j``, ``2 + 3j`` (folded): a weak complex128, like every Python literal."""
    return ir.Const(complex128, loc, complex(value), weak=True)


def part(lw: Lowerer, z: ir.Expr, attr: str, node) -> ir.Expr:
    """``z.real`` or ``z.imag`` of a complex number."""
    loc = lw.loc(node)
    if isinstance(z, ir.Const):
        v = z.value.real if attr == "real" else z.value.imag
        return ir.Const(z.type.real_type, loc, ty.py_value(v, z.type.real_type),
                        weak=ty.is_weak(z))
    return ty.mark_weak(ir.Call(z.type.real_type, loc, attr, [z]), ty.is_weak(z))


def conjugate(lw: Lowerer, z: ir.Expr, node) -> ir.Expr:
    if isinstance(z, ir.Const):
        return ir.Const(z.type, lw.loc(node), z.value.conjugate(), weak=ty.is_weak(z))
    return ty.mark_weak(ir.Call(z.type, lw.loc(node), "conj", [z]), ty.is_weak(z))


def absolute(lw: Lowerer, z: ir.Expr, node) -> ir.Expr:
    """``abs(z)``: the modulus, a float of the parts' precision."""
    t = z.type.real_type
    if isinstance(z, ir.Const):
        return ir.Const(t, lw.loc(node), ty.py_value(abs(z.value), t), weak=ty.is_weak(z))
    return ty.mark_weak(ir.Call(t, lw.loc(node), "cabs", [z]), ty.is_weak(z))


def make(lw: Lowerer, node: ast.Call) -> ir.Expr:
    """``complex()``, ``complex(x)``, ``complex(re, im)``: complex128, as in numba."""
    loc = lw.loc(node)
    vals = []
    for a in node.args:
        v = lw.expr(a.value if isinstance(a, ast.Starred) else a)
        if isinstance(a, ast.Starred):  # complex(*cmath.polar(z)): a tuple's items
            if not isinstance(v, Tup):
                raise lw.error(a, "complex(*x) needs a tuple x")
            vals += [lw.scalar(x, a) for x in v.items]
        else:
            vals.append(lw.scalar(v, a))
    if node.keywords or len(vals) > 2:
        raise lw.error(node, "complex() takes at most two numbers (real, imag) in kernels")
    if not vals:
        return ir.Const(complex128, loc, 0j)
    if len(vals) == 1:
        return ty.convert(vals[0], complex128)
    if any(v.type.is_complex for v in vals):
        raise lw.error(node, "complex(re, im) of complex numbers is not supported in kernels",
                       "build it from real parts: complex(a.real - b.imag, a.imag + b.real)")
    re, im = (ty.convert(v, float64) for v in vals)
    if isinstance(re, ir.Const) and isinstance(im, ir.Const):
        return ir.Const(complex128, loc, complex(re.value, im.value))
    return ir.Call(complex128, loc, "complex", [re, im])


def _operand(lw: Lowerer, node: ast.Call, n: int, vals=None) -> list[ir.Expr]:
    if vals is not None:
        if len(vals) != n:
            raise lw.error(node, f"{ast.unparse(node.func)}() takes {n} argument"
                                 f"{'s' if n > 1 else ''} in kernels, got {len(vals)}")
        return vals
    if node.keywords or len(node.args) != n:
        raise lw.error(node, f"{ast.unparse(node.func)}() takes {n} argument"
                             f"{'s' if n > 1 else ''} in kernels, got {len(node.args)}")
    return [lw.scalar(lw.expr(a), a) for a in node.args]


def _fold(f, *args):
    try:
        return f(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None


def cmath_call(lw: Lowerer, name: str, node: ast.Call,
               vals: list[ir.Expr] | None = None) -> ir.Expr | Tup:
    """``cmath.<name>(...)`` (and NumPy's function of that name on a complex operand);
    ``vals`` are the arguments where the caller has lowered them already."""
    loc = lw.loc(node)
    nargs = len(vals) if vals is not None else len(node.args)
    if name == "rect":
        r, phi = _operand(lw, node, 2, vals)
        t, _ = ty.unify(r.type, ty.is_weak(r), phi.type, ty.is_weak(phi))
        ct = complex_type_of(t)
        ft = ct.real_type
        if isinstance(r, ir.Const) and isinstance(phi, ir.Const):
            v = _fold(cmath.rect, r.value, phi.value)
            if v is not None:
                return ir.Const(ct, loc, ty.py_value(v, ct))
        return ir.Call(ct, loc, "rect", [ty.convert(r, ft), ty.convert(phi, ft)])
    if name == "log" and nargs == 2:  # cmath.log(z, base) = log(z) / log(base)
        z, b = _operand(lw, node, 2, vals)
        t, _ = ty.unify(z.type, ty.is_weak(z), b.type, ty.is_weak(b))
        ct = complex_type_of(t)
        num = _unary(lw, "log", ty.convert(z, ct), loc)
        den = _unary(lw, "log", ty.convert(b, ct), loc)
        if isinstance(num, ir.Const) and isinstance(den, ir.Const):
            v = _fold(lambda a, c: a / c, num.value, den.value)
            if v is not None:
                return ir.Const(ct, loc, ty.py_value(v, ct))
        return ir.BinOp(ct, loc, "/", num, den)
    (z,) = _operand(lw, node, 1, vals)
    if name in ("isnan", "isinf", "isfinite") and not z.type.is_complex:
        if not z.type.is_float:
            return ir.Const(bool_, loc, name == "isfinite")
        if isinstance(z, ir.Const):
            return ir.Const(bool_, loc, getattr(cmath, name)(z.value))
        return ir.Call(bool_, loc, name, [z])
    z = ty.convert(z, complex_type_of(z.type))
    if name == "polar":
        return Tup([absolute(lw, z, node), _unary(lw, "phase", z, loc)])
    return _unary(lw, name, z, loc)


def _unary(lw: Lowerer, name: str, z: ir.Expr, loc: ir.Loc) -> ir.Expr:
    t = z.type
    if name in ("isnan", "isinf", "isfinite"):
        if isinstance(z, ir.Const):
            return ir.Const(bool_, loc, getattr(cmath, name)(z.value))
        return ir.Call(bool_, loc, "c" + name, [z])
    if name == "phase":
        if isinstance(z, ir.Const):
            return ir.Const(t.real_type, loc, ty.py_value(cmath.phase(z.value), t.real_type))
        return ir.Call(t.real_type, loc, "phase", [z])
    if isinstance(z, ir.Const):
        v = _fold(getattr(cmath, name), z.value)
        if v is not None:
            return ir.Const(t, loc, ty.py_value(v, t))
    return ir.Call(t, loc, f"cmath.{name}", [z])


def math_on_complex(lw: Lowerer, obj, name: str, flavour: str, node: ast.Call,
                    vals: list[ir.Expr]) -> ir.Expr | Tup:
    """A math function of mathcalls.py called on a complex operand (``vals``, lowered):
    NumPy's functions of cmath's names compute it; ``math``'s refuse, as numba does."""
    if name == "abs" and len(vals) == 1:
        return absolute(lw, vals[0], node)
    if name == "pow" and len(vals) == 2:
        return lw.binop("**", vals[0], vals[1], node)
    cname = _NP.get(id(obj))
    if cname is not None:
        return cmath_call(lw, cname, node, vals)
    alt = f"cmath.{name}()" if hasattr(cmath, name) else "its .real, .imag or abs()"
    raise lw.error(node, f"{ast.unparse(node.func)}() takes real numbers, got a complex one",
                   f"use {alt}")


def is_builtin_complex(obj) -> bool:
    return obj is builtins.complex
