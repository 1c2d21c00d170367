"""``cuda.bf16.*``: numba's bfloat16 intrinsics (lang/bf16.py) lowered to the IR.

Arithmetic and comparisons are the operators on bfloat16 values; math runs in float32 and is
rounded once; ``hfma`` runs in float64, where the product and the sum of two bfloat16 values
are exact, so it is rounded once too. A conversion with a directed rounding mode to bfloat16
is one operation (``bf16_round_rz/rd/ru``); one from bfloat16 to an integer rounds the float32
value first (``trunc``/``floor``/``ceil``/``rint``), then converts.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as ir
from ..lang import bf16 as lb
from ..lang.types import bfloat16, bool_, float32, float64, int32
from ..lang.types import scalar_of as _scalar_of
from . import typing as ty
from .mathcalls import _args, _call

if TYPE_CHECKING:
    from .lower import Lowerer

_BINARY = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_ROUND_FN = {"rn": "rint", "rz": "trunc", "rd": "floor", "ru": "ceil"}


def lower(lw: Lowerer, name: str, node: ast.Call) -> ir.Expr:
    loc = lw.loc(node)
    if name in lb.ARITH or name in lb.COMPARE or name in lb.UNORDERED or name in lb.MATH:
        n = lb.ARITH.get(name, 1 if name in lb.MATH else 2)
        vals = [ty.convert(lw.scalar(v, node), bfloat16) for v in _args(lw, node, n, n)]
        return _arith(name, vals, loc)
    (x,) = _args(lw, node, 1, 1)
    x = lw.scalar(x, node)
    if "_as_" in name:  # bit casts between bfloat16 and 16-bit integers
        src, _, dst = name.partition("_as_")
        st, dt = _scalar_of(src), _scalar_of(dst)
        return ir.Call(dt, loc, "bitcast", [ty.convert(x, st)])
    src, _, rest = name.partition("_to_")
    dst, _, mode = rest.partition("_")
    st, dt = _scalar_of(src), _scalar_of(dst)
    x = ty.convert(x, st)
    if dt == bfloat16:
        if mode in ("", "rn"):
            return ir.Cast(bfloat16, loc, x)
        return ir.Call(bfloat16, loc, f"bf16_round_{mode}", [x])
    if dt.is_float:
        return ir.Cast(dt, loc, x)
    return ir.Cast(dt, loc, _call(float32, loc, _ROUND_FN[mode], [x]))


def _arith(name: str, v: list[ir.Expr], loc) -> ir.Expr:
    base = name.removesuffix("_rn").removesuffix("_sat")
    if base in _BINARY:
        r: ir.Expr = ir.BinOp(bfloat16, loc, _BINARY[base], *v)
    elif name in lb.COMPARE:
        if name == "hne":  # ordered: false where an operand is NaN
            return ir.Logical(bool_, loc, "or", ir.Compare(bool_, loc, "<", *v),
                              ir.Compare(bool_, loc, ">", *v))
        return ir.Compare(bool_, loc, lb.COMPARE[name], *v)
    elif name in lb.UNORDERED:  # not the opposite ordered comparison: true where one is NaN
        if name == "hneu":
            return ir.Compare(bool_, loc, "!=", *v)
        if name == "hequ":
            return ir.UnaryOp(bool_, loc, "not", _arith("hne", v, loc))
        return ir.UnaryOp(bool_, loc, "not", ir.Compare(bool_, loc, lb.UNORDERED[name], *v))
    elif name in lb.MATH:
        fn = lb.MATH[name]
        if fn == "rcp":
            one = ir.Const(float32, loc, 1.0)
            return ir.Cast(bfloat16, loc, ir.BinOp(float32, loc, "/", one,
                                                   ty.convert(v[0], float32)))
        if fn == "exp10":
            return _call(bfloat16, loc, "pow", [ir.Const(float32, loc, 10.0), v[0]])
        return _call(bfloat16, loc, fn, v)
    elif base == "habs":
        return ir.Call(bfloat16, loc, "abs", v)
    elif base == "hneg":
        return ir.UnaryOp(bfloat16, loc, "-", v[0])
    elif base == "hfma" or name == "hfma_relu":
        wide = [ty.convert(x, float64) for x in v]
        r = ir.Cast(bfloat16, loc, ir.Call(float64, loc, "fma", wide))
        if name == "hfma_relu":
            return _select(_isnan(r, loc), r, ir.Call(bfloat16, loc, "max", [
                r, ir.Const(bfloat16, loc, 0.0)]), loc)
    elif name in ("hmax", "hmin", "hmax_nan", "hmin_nan"):
        a, b = v
        ab = ir.Call(bfloat16, loc, name[1:4], [a, b])
        if name.endswith("_nan"):  # a NaN operand is the result
            return _select(_isnan(a, loc), a, _select(_isnan(b, loc), b, ab, loc), loc)
        return _select(_isnan(a, loc), b, _select(_isnan(b, loc), a, ab, loc), loc)
    elif name == "hisnan":
        return _isnan(v[0], loc)
    elif name == "hisinf":
        f = ty.convert(v[0], float32)
        one, zero = ir.Const(int32, loc, 1), ir.Const(int32, loc, 0)
        sign = _select(ir.Compare(bool_, loc, ">", f, ir.Const(float32, loc, 0.0)), one,
                       ir.Const(int32, loc, -1), loc)
        return _select(ir.Call(bool_, loc, "isinf", [f]), sign, zero, loc)
    else:  # pragma: no cover  (lang/bf16.py lists no other name)
        raise AssertionError(name)
    if name.endswith("_sat"):  # clamped to [0, 1]; NaN gives 0
        lo, hi = ir.Const(bfloat16, loc, 0.0), ir.Const(bfloat16, loc, 1.0)
        clamped = ir.Call(bfloat16, loc, "min", [ir.Call(bfloat16, loc, "max", [r, lo]), hi])
        return _select(_isnan(r, loc), lo, clamped, loc)
    return r


def _isnan(x: ir.Expr, loc) -> ir.Expr:
    return ir.Call(bool_, loc, "isnan", [ty.convert(x, float32)])


def _select(c: ir.Expr, a: ir.Expr, b: ir.Expr, loc) -> ir.Expr:
    return ir.Select(a.type, loc, c, a, b)



