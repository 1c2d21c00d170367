"""NumPy ufuncs called in a kernel, as numba compiles them.

- On numbers, ``np.add(x, y)``, ``np.less(x, y)``, ``np.logical_and(x, y)``, ``np.invert(x)``...
  are the operator they name (``x + y``, ``x < y``, ``bool(x) and bool(y)``, ``~x``); the math
  ufuncs (``np.sin``...) are frontend/mathcalls.py's.
- With output arrays, positional after the inputs or ``out=``, the ufunc runs over the
  output's elements in this thread: ``np.sin(a, out)`` is
  ``for i...: out[i...] = np.sin(a[i...])``, where an input array broadcasts as in NumPy (its
  trailing axes match the output's; an axis of length 1 repeats) and a number is used for
  every element. The call returns nothing (numba's returns the output array).

An array input without an output would need a new array, which a kernel cannot allocate.

The loops are built as Python syntax and lowered like the user's own code, so the element
operation is exactly the scalar call (its types, its NumPy casting into the output).
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..lang.types import ArrayType, bool_
from . import complexes
from . import typing as ty

if TYPE_CHECKING:
    from .lower import Lowerer

_BIN = {np.add: ast.Add, np.subtract: ast.Sub, np.multiply: ast.Mult,
        np.divide: ast.Div, np.true_divide: ast.Div, np.floor_divide: ast.FloorDiv,
        np.remainder: ast.Mod, np.bitwise_and: ast.BitAnd,
        np.bitwise_or: ast.BitOr, np.bitwise_xor: ast.BitXor, np.left_shift: ast.LShift,
        np.right_shift: ast.RShift}
_CMP = {np.equal: ast.Eq, np.not_equal: ast.NotEq, np.less: ast.Lt, np.less_equal: ast.LtE,
        np.greater: ast.Gt, np.greater_equal: ast.GtE}
_UNARY = {np.negative: ast.USub, np.positive: ast.UAdd}
_LOGICAL = (np.logical_and, np.logical_or, np.logical_xor, np.logical_not)
OPERATORS = {id(u) for u in (*_BIN, *_CMP, *_UNARY, *_LOGICAL, np.invert, np.square)}


def is_ufunc(obj) -> bool:
    return isinstance(obj, np.ufunc)


def ufunc_call(lw: Lowerer, uf: np.ufunc, node: ast.Call):
    """``node``, a call of ufunc ``uf``: statements (with outputs), an expression (an operator
    ufunc on numbers), or None where frontend/mathcalls.py lowers it (a math ufunc)."""
    name = f"np.{uf.__name__}"
    args = list(node.args)
    outs: list[ast.expr] = []
    for kw in node.keywords:
        if kw.arg != "out":
            raise lw.error(node, f"{name}() keyword {kw.arg!r} is not supported in kernels",
                           "pass the inputs and the output arrays by position")
        outs = list(kw.value.elts) if isinstance(kw.value, ast.Tuple) else [kw.value]
    if len(args) > uf.nin:
        outs, args = args[uf.nin:] + outs, args[:uf.nin]
    if len(args) != uf.nin or len(outs) not in (0, uf.nout):
        raise lw.error(node, f"{name}() takes {uf.nin} input(s) and optionally {uf.nout} "
                             f"output array(s), got {len(node.args)} argument(s)")
    if outs:
        return _over_outputs(lw, uf, node, args, outs)
    vals = [lw.expr(a) for a in args]
    if any(isinstance(v, ir.Expr) and isinstance(v.type, ArrayType) for v in vals):
        raise lw.error(node, f"{name}() of an array makes a new array, which a kernel cannot "
                             "allocate", f"give the output array: {name}(..., out)")
    if any(complexes.is_complex(v) for v in vals) and uf in _COMPLEX:
        return _COMPLEX[uf](lw, [lw.scalar(v, node) for v in vals], node)
    if id(uf) not in OPERATORS:
        return None
    return lw.expr(_scalar_syntax(uf, args, node))


# -- complex numbers: NumPy orders them by real part, then imaginary part -------------------

def _ordered(lw: Lowerer, op: str, a: ir.Expr, b: ir.Expr, node) -> ir.Expr:
    """``a op b`` of complex numbers in NumPy's lexicographic order (op: < <= > >=)."""
    t = complexes.complex_type_of(ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))[0])
    a, b = ty.convert(a, t), ty.convert(b, t)
    loc = lw.loc(node)
    ar, ai = complexes.part(lw, a, "real", node), complexes.part(lw, a, "imag", node)
    br, bi = complexes.part(lw, b, "real", node), complexes.part(lw, b, "imag", node)
    strict = ir.Compare(bool_, loc, op[0], ar, br)
    tie = ir.Logical(bool_, loc, "and", ir.Compare(bool_, loc, "==", ar, br),
                     ir.Compare(bool_, loc, op, ai, bi))
    return ir.Logical(bool_, loc, "or", strict, tie)


def _has_nan(lw: Lowerer, z: ir.Expr, node) -> ir.Expr:
    loc = lw.loc(node)
    parts = [complexes.part(lw, z, p, node) for p in ("real", "imag")]
    nan = [ir.Compare(bool_, loc, "!=", x, x) for x in parts]
    return ir.Logical(bool_, loc, "or", *nan)


def _extreme(op: str, keep_nan: bool):
    """maximum/minimum (a NaN operand wins) and fmax/fmin (the other operand wins)."""
    def lower(lw: Lowerer, vals: list[ir.Expr], node) -> ir.Expr:
        a, b = vals
        t = complexes.complex_type_of(ty.unify(a.type, ty.is_weak(a), b.type,
                                               ty.is_weak(b))[0])
        a, b = ty.convert(a, t), ty.convert(b, t)
        loc = lw.loc(node)
        nan = _has_nan(lw, a if keep_nan else b, node)
        first = ir.Logical(bool_, loc, "or", _ordered(lw, op, a, b, node), nan)
        return ir.Select(t, loc, first, a, b)
    return lower


def _log2(lw: Lowerer, vals: list[ir.Expr], node) -> ir.Expr:
    """log(z) with each part times log2(e), as numba computes it (a complex product would
    make log2(0j)'s imaginary part NaN)."""
    z = vals[0]
    log = lw.hoist(complexes.cmath_call(lw, "log", node, [z]), "log")
    rt = z.type.real_type
    k = ir.Const(rt, lw.loc(node), ty.py_value(1 / math.log(2), rt))
    parts = [ir.BinOp(rt, lw.loc(node), "*", complexes.part(lw, log, p, node), k)
             for p in ("real", "imag")]
    return ir.Call(z.type, lw.loc(node), "complex", parts)


_COMPLEX = {
    np.less: lambda lw, v, n: _ordered(lw, "<", v[0], v[1], n),
    np.less_equal: lambda lw, v, n: _ordered(lw, "<=", v[0], v[1], n),
    np.greater: lambda lw, v, n: _ordered(lw, ">", v[0], v[1], n),
    np.greater_equal: lambda lw, v, n: _ordered(lw, ">=", v[0], v[1], n),
    np.maximum: _extreme(">=", True), np.minimum: _extreme("<=", True),
    np.fmax: _extreme(">=", False), np.fmin: _extreme("<=", False),
    np.log2: _log2,
}


def _scalar_syntax(uf: np.ufunc, args: list[ast.expr], node: ast.Call) -> ast.expr:
    """The Python expression that ``uf`` on numbers ``args`` is."""
    if uf in _BIN:
        e = ast.BinOp(args[0], _BIN[uf](), args[1])
    elif uf in _CMP:
        e = ast.Compare(args[0], [_CMP[uf]()], [args[1]])
    elif uf in _UNARY:
        e = ast.UnaryOp(_UNARY[uf](), args[0])
    elif uf is np.square:
        e = ast.BinOp(args[0], ast.Mult(), args[0])
    elif uf is np.invert:  # ~ of a bool is `not` (NumPy's), as lower's ~ already does
        e = ast.UnaryOp(ast.Invert(), args[0])
    else:
        # a number's truth is `x != 0` (NaN is true; a complex number is true unless 0j)
        truth = [ast.Compare(a, [ast.NotEq()], [ast.Constant(0)]) for a in args]
        if uf is np.logical_not:
            e = ast.UnaryOp(ast.Not(), args[0])
        elif uf is np.logical_xor:
            e = ast.Compare(truth[0], [ast.NotEq()], [truth[1]])
        else:
            e = ast.BoolOp(ast.And() if uf is np.logical_and else ast.Or(), truth)
    return ast.fix_missing_locations(ast.copy_location(e, node))


def _over_outputs(lw: Lowerer, uf: np.ufunc, node: ast.Call, args: list[ast.expr],
                  outs: list[ast.expr]) -> list[ir.Stmt]:
    name = f"np.{uf.__name__}"
    pre: list[ast.stmt] = []

    def named(e: ast.expr) -> tuple[ast.expr, object]:
        """``e`` as a name bound once (its value's type known), so the loop reads it only."""
        v = lw.expr(e)
        if isinstance(e, ast.Name):
            return e, v
        tmp = lw.spec.fresh("ufarg")
        pre.append(ast.Assign([ast.Name(tmp, ast.Store())], e))
        return ast.Name(tmp, ast.Load()), v

    ins = [named(a) for a in args]
    out_names = [named(o) for o in outs]
    ndim = None
    for (_, v), src in zip(out_names, outs):
        if not (isinstance(v, ir.Expr) and isinstance(v.type, ArrayType)):
            raise lw.error(src, f"{name}()'s output must be an array")
        if ndim is not None and v.type.ndim != ndim:
            raise lw.error(src, f"{name}()'s outputs must have the same number of dimensions")
        ndim = v.type.ndim
    for (_, v), src in zip(ins, args):
        if isinstance(v, ir.Expr) and isinstance(v.type, ArrayType) and v.type.ndim > ndim:
            raise lw.error(src, f"{name}(): an input of {v.type.ndim} dimensions does not "
                                f"broadcast to an output of {ndim}")
    idx = [lw.spec.fresh("ufi") for _ in range(ndim)]
    first = out_names[0][0]

    def element(e: ast.expr, v) -> ast.expr:
        if not (isinstance(v, ir.Expr) and isinstance(v.type, ArrayType)):
            return e
        lead = ndim - v.type.ndim
        # axis k of the input is axis lead + k of the output; a length-1 axis repeats
        subs = [ast.BinOp(ast.Name(idx[lead + k], ast.Load()), ast.Mult(),
                          ast.Compare(_dim(e, k), [ast.NotEq()], [ast.Constant(1)]))
                for k in range(v.type.ndim)]
        return _subscript(e, subs, ast.Load())

    call = ast.Call(node.func, [element(e, v) for e, v in ins], [])
    targets = [_subscript(o, [ast.Name(i, ast.Load()) for i in idx], ast.Store())
               for o, _ in out_names]
    target = targets[0] if len(targets) == 1 else ast.Tuple(targets, ast.Store())
    body: ast.stmt = ast.Assign([target], call)
    for k in reversed(range(ndim)):
        body = ast.For(ast.Name(idx[k], ast.Store()),
                       ast.Call(ast.Name("range", ast.Load()), [_dim(first, k)], []),
                       [body], [])
    stmts = pre + [body]
    for s in stmts:  # the new nodes at the call's position (the user's keep their own)
        ast.fix_missing_locations(ast.copy_location(s, node))
    return lw.lower_body(stmts)


def _dim(arr: ast.expr, k: int) -> ast.expr:
    shape = ast.Attribute(arr, "shape", ast.Load())
    return ast.Subscript(shape, ast.Constant(k), ast.Load())


def _subscript(arr: ast.expr, subs: list[ast.expr], ctx) -> ast.expr:
    index = subs[0] if len(subs) == 1 else ast.Tuple(subs, ast.Load())
    return ast.Subscript(arr, index, ctx)
