"""Calls of math functions: ``math``'s, NumPy's of the same names, the builtins ``abs``,
``min``, ``max``, ``round``, ``pow``.

Each function is recognised by identity (``_FUNCS``: the callable's id -> the intrinsic of the
registry in ir/ops.py and a flavour, ``math`` or ``np``: ``math.floor`` returns an int,
``np.floor`` a float). Float arguments keep their precision, integers become float64;
float16/bfloat16 math runs in float32 and is rounded once; calls on constants are folded.
"""

from __future__ import annotations

import ast
import builtins
import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..lang import thread as lt
from ..lang.types import Scalar, TupleType, bool_, float16, float32, float64, int32, int64
from . import complexes, tuples
from . import typing as ty
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer

# name -> the Python implementation that folds calls on constants
_MATH1 = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log2": math.log2,
    "log10": math.log10, "log1p": math.log1p, "expm1": math.expm1, "sin": math.sin,
    "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "asinh": math.asinh,
    "acosh": math.acosh, "atanh": math.atanh, "erf": math.erf, "erfc": math.erfc,
    "lgamma": math.lgamma, "tgamma": math.gamma, "exp2": lambda x: 2.0 ** x,
    "rsqrt": lambda x: 1 / math.sqrt(x), "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "fabs": math.fabs,
}
_MATH2 = {"pow": math.pow, "atan2": math.atan2, "hypot": math.hypot,
          "copysign": math.copysign, "fmod": math.fmod, "remainder": math.remainder,
          "nextafter": math.nextafter}
_PRED = {"isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite}
# degrees and radians are one multiplication, by a constant of the argument's precision
_SCALE = {"degrees": 180.0 / math.pi, "radians": math.pi / 180.0}

FUNCS: dict[int, tuple[str, str]] = {}  # id(callable) -> (intrinsic, flavour)


def _register(obj, name: str, flavour: str) -> None:
    if obj is not None:
        FUNCS[id(obj)] = (name, flavour)


for _n in _MATH1:
    _register(getattr(math, _n, None), _n, "math")
    _register(getattr(np, _n, None), _n, "np")
for _n in _MATH2:
    _register(getattr(math, _n, None), _n, "math")
for _n in _PRED:
    _register(getattr(math, _n, None), _n, "pred")
    _register(getattr(np, _n, None), _n, "pred")
for _n in ("degrees", "radians", "ldexp", "frexp", "modf"):
    _register(getattr(math, _n), _n, "math")
for _n, _m in (("degrees", "degrees"), ("rad2deg", "degrees"), ("radians", "radians"),
               ("deg2rad", "radians"), ("ldexp", "ldexp"), ("frexp", "frexp"),
               ("modf", "modf"), ("nextafter", "nextafter"), ("power", "pow"),
               ("arctan2", "atan2"), ("arcsin", "asin"), ("arccos", "acos"),
               ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
               ("arctanh", "atanh"), ("fabs", "fabs"), ("copysign", "copysign"),
               ("hypot", "hypot"), ("fmod", "fmod")):
    _register(getattr(np, _n), _m, "np")
_register(math.gamma, "tgamma", "math")
_register(np.absolute, "abs", "builtin")
_register(np.minimum, "minimum", "np")
_register(np.maximum, "maximum", "np")
_register(np.fmin, "fmin", "np")
_register(np.fmax, "fmax", "np")
_register(lt.cbrt, "cbrt", "np")
_register(builtins.abs, "abs", "builtin")
_register(builtins.min, "min", "builtin")
_register(builtins.max, "max", "builtin")
_register(builtins.pow, "pow", "builtin")
_register(builtins.round, "round", "builtin")


class _ComplexArgs(Exception):  # noqa: N818  (control flow, never seen by users)
    """Raised by ``_args`` when an operand is complex: ``math_call`` hands the lowered
    operands to complexes.py."""

    def __init__(self, vals: list[ir.Expr]):
        self.vals = vals


def _args(lw: Lowerer, node: ast.Call, lo: int, hi: int) -> list[ir.Expr]:
    if node.keywords or not lo <= len(node.args) <= hi:
        want = f"{lo}" if lo == hi else f"{lo} or {hi}"
        raise lw.error(node, f"{ast.unparse(node.func)}() takes {want} positional "
                             f"argument{'s' if hi > 1 else ''}, got {len(node.args)}")
    vals = [lw.scalar(lw.expr(a), a) for a in node.args]
    if any(complexes.is_complex(v) for v in vals):
        raise _ComplexArgs(vals)
    return vals


def _float_type(vals: list[ir.Expr]) -> tuple[Scalar, bool]:
    """The type math on ``vals`` computes in: the common float type; integers give float64."""
    t, w = vals[0].type, ty.is_weak(vals[0])
    for v in vals[1:]:
        t, w = ty.unify(t, w, v.type, ty.is_weak(v))
    return (t if t.is_float else float64), w


def _call(t: Scalar, loc, name: str, args: list[ir.Expr], more: list | None = None) -> ir.Expr:
    """``name(args)`` computed in ``t``: float16/bfloat16 math runs in float32 (the hardware's
    half math would lose more than one rounding at the end). ``more`` are operands that keep
    their own types (ldexp's exponent)."""
    ct = float32 if t.bits == 16 else t
    call: ir.Expr = ir.Call(ct, loc, name, [ty.convert(v, ct) for v in args] + (more or []))
    return ir.Cast(t, loc, call) if ct != t else call


def math_call(lw: Lowerer, name: str, flavour: str, node: ast.Call, obj=None):
    """``name(...)`` of ``node`` (``obj`` is the function called, where known)."""
    try:
        return _math_call(lw, name, flavour, node)
    except _ComplexArgs as c:
        return complexes.math_on_complex(lw, obj, name, flavour, node, c.vals)


def _math_call(lw: Lowerer, name: str, flavour: str, node: ast.Call):
    loc = lw.loc(node)
    if name in _EXTREMES:
        return _minmax(lw, name, node)
    if name == "abs":
        (x,) = _args(lw, node, 1, 1)
        if isinstance(x, ir.Const):
            return ir.Const(x.type, loc, ty.py_value(abs(x.value), x.type), weak=ty.is_weak(x))
        return ty.mark_weak(ir.Call(x.type, loc, "abs", [x]), ty.is_weak(x))
    if name == "round":
        return _round(lw, node)
    if name in _PRED:
        (x,) = _args(lw, node, 1, 1)
        if not x.type.is_float:
            return ir.Const(bool_, loc, name == "isfinite")
        if isinstance(x, ir.Const):
            return ir.Const(bool_, loc, _PRED[name](x.value))
        return ir.Call(bool_, loc, name, [x])
    if name in _SCALE:
        (x,) = _args(lw, node, 1, 1)
        t, w = _float_type([x])
        k = ir.Const(t, loc, ty.py_value(_SCALE[name], t))
        if isinstance(x, ir.Const):
            return ir.Const(t, loc, ty.py_value(x.value * _SCALE[name], t), weak=w)
        return ty.mark_weak(ir.BinOp(t, loc, "*", ty.convert(x, t), k), w)
    if name == "ldexp":
        x, e = _args(lw, node, 2, 2)
        if not e.type.is_int and e.type != bool_:
            raise lw.error(node, f"ldexp()'s exponent must be an integer, got {e.type}")
        t, w = _float_type([x])
        if isinstance(x, ir.Const) and isinstance(e, ir.Const):
            return ir.Const(t, loc, ty.py_value(_fold(math.ldexp, x.value, e.value), t), weak=w)
        return ty.mark_weak(_call(t, loc, "ldexp", [x], [ty.convert(e, int32)]), w)
    if name in ("frexp", "modf"):
        (x,) = _args(lw, node, 1, 1)
        t, _ = _float_type([x])
        ct = float32 if t.bits == 16 else t
        second = int32 if name == "frexp" else ct
        call = ir.Call(TupleType((ct, second)), loc, name, [ty.convert(x, ct)])
        parts = tuples.explode(lw, call)
        if ct != t:  # the mantissa (the fraction) back in the argument's precision
            parts.items[0] = ir.Cast(t, loc, parts.items[0])
            if name == "modf":
                parts.items[1] = ir.Cast(t, loc, parts.items[1])
        return parts
    if name == "log" and len(node.args) == 2:  # math.log(x, base)
        x, b = _args(lw, node, 2, 2)
        t, w = _float_type([x, b])
        if isinstance(x, ir.Const) and isinstance(b, ir.Const):
            return ir.Const(t, loc, ty.py_value(_fold(math.log, x.value, b.value), t), weak=w)
        return ty.mark_weak(ir.BinOp(t, loc, "/", _call(t, loc, "log", [x]),
                                     _call(t, loc, "log", [b])), w)
    nargs = 2 if name in _MATH2 else 1
    vals = _args(lw, node, nargs, nargs)
    t, w = _float_type(vals)
    if all(isinstance(v, ir.Const) for v in vals):
        r = _fold(_MATH1.get(name) or _MATH2[name], *[v.value for v in vals])
        if name in ("floor", "ceil", "trunc") and flavour == "math" and math.isfinite(r):
            return ir.Const(int64, loc, int(r), weak=w)
        return ir.Const(t, loc, ty.py_value(r, t), weak=w)
    call = _call(t, loc, name, vals)
    if name in ("floor", "ceil", "trunc") and flavour == "math":
        return ir.Cast(int64, loc, call)  # math.floor returns an int, as in Python and numba
    return ty.mark_weak(call, w)


def _fold(f, *args) -> float:
    try:
        return f(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        return math.nan


# min/max of floats as numba computes them: the builtins and np.fmin/np.fmax are C's fmin and
# fmax (a NaN operand loses); np.minimum/np.maximum keep a NaN (NumPy's). On integers all are
# Python's min and max.
_EXTREMES = {"min": "fmin", "max": "fmax", "fmin": "fmin", "fmax": "fmax",
             "minimum": "minimum", "maximum": "maximum"}
_FOLD_EXTREMES = {"fmin": np.fmin, "fmax": np.fmax, "minimum": np.minimum,
                  "maximum": np.maximum}


def _extreme(t: Scalar, loc, how: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """``how`` (a value of _EXTREMES) of ``a`` and ``b``, both of float type ``t``."""
    if how in ("fmin", "fmax"):
        return _call(t, loc, how, [a, b])
    # NumPy's maximum: a if a >= b or a is NaN, else b (then NaN if b is)
    keep = ir.Logical(bool_, loc, "or", ir.Compare(bool_, loc, ">=" if how == "maximum"
                                                   else "<=", a, b),
                      ir.Compare(bool_, loc, "!=", a, a))
    return ir.Select(t, loc, keep, a, b)


def _minmax(lw: Lowerer, name: str, node: ast.Call) -> ir.Expr:
    loc = lw.loc(node)
    how = _EXTREMES[name]
    if how in ("minimum", "maximum", "fmin", "fmax") and name == how and \
            len(node.args) != 2:
        raise lw.error(node, f"np.{name}() takes two numbers in kernels")
    raw = [lw.expr(a) for a in node.args]
    if len(raw) == 1 and isinstance(raw[0], Tup):
        raw = raw[0].items
    if len(raw) < 2 or node.keywords:
        raise lw.error(node, f"{name}() takes two or more numbers in kernels")
    from . import tiles  # noqa: PLC0415  (tiles imports this module's users)

    if any(tiles.is_tile(v) for v in raw):  # max(t, u) of tiles: elementwise, as cuTile's
        acc = raw[0]
        for v in raw[1:]:
            acc = tiles.binop(lw, "min" if how in ("fmin", "minimum") else "max", acc, v, node)
        return acc
    vals = [lw.scalar(v, node) for v in raw]
    if any(complexes.is_complex(v) for v in vals):
        raise lw.error(node, f"{name}() of complex numbers: they have no order")
    acc = vals[0]
    for v in vals[1:]:
        t, w = ty.unify(acc.type, ty.is_weak(acc), v.type, ty.is_weak(v))
        small = how in ("fmin", "minimum")
        if isinstance(acc, ir.Const) and isinstance(v, ir.Const):
            f = _FOLD_EXTREMES[how] if t.is_float else (min if small else max)
            acc = ir.Const(t, loc, ty.py_value(f(acc.value, v.value), t), weak=w)
            continue
        a, b = ty.convert(acc, t), ty.convert(v, t)
        if t.is_float:
            acc = ty.mark_weak(_extreme(t, loc, how, a, b), w)
        else:
            acc = ty.mark_weak(ir.Call(t, loc, "min" if small else "max", [a, b]), w)
    return acc


def _round(lw: Lowerer, node: ast.Call) -> ir.Expr:
    """``round(x)``: an int, ties to even; ``round(x, n)``: a number of x's type rounded to
    ``n`` decimal digits (negative ``n``: to tens, hundreds...)."""
    loc = lw.loc(node)
    vals = _args(lw, node, 1, 2)
    x = vals[0]
    if len(vals) == 1:
        if isinstance(x, ir.Const):
            return ir.Const(int64, loc, round(x.value), weak=ty.is_weak(x))
        return ir.Cast(int64, loc, ir.Call(x.type, loc, "rint", [x])) if x.type.is_float \
            else x
    n = vals[1]
    if not n.type.is_int:
        raise lw.error(node, f"round()'s ndigits must be an integer, got {n.type}")
    if not x.type.is_float:
        if isinstance(n, ir.Const) and n.value >= 0:
            return x  # an integer rounded to digits after the point is itself
        raise lw.error(node, "round() of an integer to tens or hundreds is not supported",
                       "round a float: round(float(x), n)")
    if isinstance(x, ir.Const) and isinstance(n, ir.Const):
        return ir.Const(x.type, loc, ty.py_value(round(x.value, n.value), x.type),
                        weak=ty.is_weak(x))
    return ty.mark_weak(_call(x.type, loc, "round_ndigits", [x], [ty.convert(n, int64)]),
                        ty.is_weak(x))


_FP16_BINARY = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_FP16_COMPARE = {"heq": "==", "hne": "!=", "hge": ">=", "hgt": ">", "hle": "<=", "hlt": "<"}
_FP16_MATH = {"hsin": "sin", "hcos": "cos", "hlog": "log", "hlog2": "log2", "hlog10": "log10",
              "hexp": "exp", "hexp2": "exp2", "hsqrt": "sqrt", "hrsqrt": "rsqrt",
              "hceil": "ceil", "hfloor": "floor", "htrunc": "trunc", "hrint": "rint"}


def fp16(lw: Lowerer, name: str, node: ast.Call) -> ir.Expr:
    """``cuda.fp16.hadd(a, b)`` and the rest of numba's half-precision intrinsics: the
    operands become float16, then the operator or math function of that name (math in float32,
    rounded once; ``hfma`` in float64, where the product and the sum are exact, so it is
    rounded once too)."""
    loc = lw.loc(node)
    n = 3 if name == "hfma" else 2 if name in _FP16_BINARY or name in _FP16_COMPARE or name in (
        "hmax", "hmin") else 1
    vals = [ty.convert(v, float16) for v in _args(lw, node, n, n)]
    if name in _FP16_BINARY:
        return ir.BinOp(float16, loc, _FP16_BINARY[name], *vals)
    if name in _FP16_COMPARE:
        return ir.Compare(bool_, loc, _FP16_COMPARE[name], *vals)
    if name in ("hmax", "hmin"):
        return ir.Call(float16, loc, name[1:], vals)
    if name == "hneg":
        return ir.UnaryOp(float16, loc, "-", vals[0])
    if name == "habs":
        return ir.Call(float16, loc, "abs", vals)
    if name == "hfma":
        wide = [ty.convert(v, float64) for v in vals]
        return ir.Cast(float16, loc, ir.Call(float64, loc, "fma", wide))
    if name == "hrcp":
        return ir.Cast(float16, loc, ir.BinOp(float32, loc, "/", ir.Const(float32, loc, 1.0),
                                              ty.convert(vals[0], float32)))
    if name == "hexp10":
        return _call(float16, loc, "pow", [ir.Const(float16, loc, 10.0), vals[0]])
    return _call(float16, loc, _FP16_MATH[name], vals)
