"""Lowering of calls: kernel-language intrinsics, builtins, math functions, casts, device calls.

Each callable a kernel may use is recognised by identity (the ``math.sqrt`` object, the
``threadtile.syncthreads`` object...), never by its spelling, so ``from math import sqrt`` and
``import threadtile as cuda`` work as they would in numba.
"""

from __future__ import annotations

import ast
import builtins
import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..lang import thread as lt
from ..lang.types import (
    ArrayType,
    Scalar,
    bool_,
    float32,
    float64,
    int32,
    int64,
    is_numba_type,
    scalar_of,
    uint32,
    void,
)
from . import tile_calls, tiles
from . import typing as ty
from .values import DeclRequest, Py, Tup, pyname

if TYPE_CHECKING:
    from .lower import Lowerer

# name -> (python implementation used for constant folding, result rule)
# result rule: 'float' (int args give float64), 'same', 'bool', 'int' (math.floor: int64)
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
          "copysign": math.copysign, "fmod": math.fmod}
_PRED = {"isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite}

_FUNCS: dict[int, tuple[str, str]] = {}  # id(callable) -> (intrinsic, flavour)


def _register(obj, name: str, flavour: str) -> None:
    if obj is not None:
        _FUNCS[id(obj)] = (name, flavour)


for _n in _MATH1:
    _register(getattr(math, _n, None), _n, "math")
    _register(getattr(np, _n, None), _n, "np")
for _n in _MATH2:
    _register(getattr(math, _n, None), _n, "math")
for _n in _PRED:
    _register(getattr(math, _n, None), _n, "pred")
    _register(getattr(np, _n, None), _n, "pred")
_register(np.power, "pow", "np")
_register(np.arctan2, "atan2", "np")
_register(np.arcsin, "asin", "np")
_register(np.arccos, "acos", "np")
_register(np.arctan, "atan", "np")
_register(np.absolute, "abs", "builtin")
_register(np.fabs, "fabs", "np")
_register(np.minimum, "min", "builtin")
_register(np.maximum, "max", "builtin")
_register(np.fmin, "min", "builtin")
_register(np.fmax, "max", "builtin")
_register(lt.cbrt, "cbrt", "np")
_register(builtins.abs, "abs", "builtin")
_register(builtins.min, "min", "builtin")
_register(builtins.max, "max", "builtin")
_register(builtins.pow, "pow", "builtin")
_register(builtins.round, "round", "builtin")


def special_attr(lw: Lowerer, obj, attr: str, node):
    """``threadIdx.x`` and friends; None when ``obj.attr`` is an ordinary Python attribute."""
    if isinstance(obj, lt.Dim3Reg) and attr in ("x", "y", "z"):
        return ir.Special(int32, lw.loc(node), f"{obj._name}.{attr}")
    return None


def subscript_static(lw: Lowerer, obj, node):
    return None


def special_value(lw: Lowerer, obj, node):
    """``laneid`` used as a value."""
    if isinstance(obj, lt.LaneReg):
        return ir.Special(int32, lw.loc(node), obj._name)
    return None


def lower_call(lw: Lowerer, node: ast.Call):
    f = lw.expr(node.func)
    if not isinstance(f, Py):
        raise lw.error(node.func, f"{_what_called(f)} is not callable")
    obj = f.obj
    name = getattr(obj, "_threadtile_intrinsic", None)
    if name is not None and name.startswith("tile."):
        return tile_calls.lower_call(lw, name, node, obj)
    if name is not None:
        return _intrinsic(lw, name, node)
    if type(obj).__name__ == "TileMethod":
        return tiles.call_method(lw, obj, node)
    if obj is builtins.print:
        return _print(lw, node)
    if obj is builtins.range:
        raise lw.error(node, "range() can only be used as the iterable of a for loop")
    if obj is builtins.len:
        a = _args(lw, node, 1)[0]
        if isinstance(a, Tup):
            return ir.Const(int64, lw.loc(node), len(a.items), weak=True)
        if isinstance(a, ir.Expr) and isinstance(a.type, ArrayType):
            return ir.ArrayDim(int64, lw.loc(node), a, "shape", 0)
        raise lw.error(node, "len() of something that is not an array or tuple")
    if getattr(obj, "_threadtile_kernel", False):
        return _device_call(lw, obj, node)
    st = _cast_target(obj)
    if st is not None:
        v = lw.scalar(_args(lw, node, 1)[0], node)
        return ty.convert(v, st) if not (isinstance(v, ir.Const) and v.type == st) else v
    hit = _FUNCS.get(id(obj))
    if hit is not None:
        return math_call(lw, hit[0], hit[1], node)
    hint = None
    mod = getattr(obj, "__module__", "") or ""
    if mod.startswith("numpy") or mod == "math":
        hint = "see docs/language.md for the math functions kernels support"
    elif callable(obj):
        hint = ("decorate it with @threadtile.jit(device=True) to call it from a kernel "
                "(did you forget @jit?)")
    raise lw.error(node, f"calling {pyname(obj)} is not supported in kernels", hint)


def _what_called(v) -> str:
    if isinstance(v, Tup):
        return "a tuple"
    return ty.describe(v.type)


def _cast_target(obj) -> Scalar | None:
    if isinstance(obj, Scalar):
        return obj
    if obj in (builtins.float, builtins.int, builtins.bool):
        return scalar_of(obj)
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return scalar_of(obj)
    if is_numba_type(obj):  # numba.cuda.types.float32(x), in a kernel ported from numba
        return scalar_of(obj)
    return None


def _args(lw: Lowerer, node: ast.Call, n: int | tuple[int, int], names: tuple = ()) -> list:
    lo, hi = (n, n) if isinstance(n, int) else n
    args = [lw.expr(a) for a in node.args]
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in names:
            raise lw.error(node, f"unexpected keyword argument {kw.arg!r}")
        pos = names.index(kw.arg)
        while len(args) <= pos:
            args.append(None)
        args[pos] = lw.expr(kw.value)
    if not lo <= len(args) <= hi or any(a is None for a in args[:lo]):
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise lw.error(node, f"{_fname(node)}() takes {want} arguments, got {len(args)}")
    return args


def _fname(node: ast.Call) -> str:
    return ast.unparse(node.func)


def _intrinsic(lw: Lowerer, name: str, node: ast.Call):
    loc = lw.loc(node)
    if name in ("grid", "gridsize"):
        (nd,) = _args(lw, node, 1)
        if not (isinstance(nd, ir.Const) and nd.value in (1, 2, 3)):
            raise lw.error(node, f"{name}() takes a constant 1, 2 or 3")
        items = []
        for ax in "xyz"[:nd.value]:
            def reg(r, ax=ax):
                return ir.Cast(int64, loc, ir.Special(int32, loc, f"{r}.{ax}"))
            if name == "grid":
                e = ir.BinOp(int64, loc, "+", reg("threadIdx"),
                             ir.BinOp(int64, loc, "*", reg("blockIdx"), reg("blockDim")))
            else:
                e = ir.BinOp(int64, loc, "*", reg("blockDim"), reg("gridDim"))
            items.append(e)
        return items[0] if nd.value == 1 else Tup(items)
    if name in ("shared.array", "local.array"):
        shape, dtype = _args(lw, node, 2, ("shape", "dtype"))
        return DeclRequest(name.split(".")[0], _dtype(lw, dtype, node), _shape(lw, shape, node))
    if name == "const.array_like":
        (a,) = _args(lw, node, 1)
        if isinstance(a, ir.Expr) and isinstance(a.type, ArrayType) and a.type.space == "const":
            return a  # a global NumPy array is already a constant array
        raise lw.error(node, "const.array_like() takes a global NumPy array")
    if name in ("syncthreads", "threadfence", "threadfence_block", "threadfence_system",
                "activemask", "lanemask_lt"):
        _args(lw, node, 0)
        t = uint32 if name in ("activemask", "lanemask_lt") else void
        return ir.Call(t, loc, name, [])
    if name in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
        (p,) = _args(lw, node, 1)
        return ir.Call(int32, loc, name, [lw.truth(p, node)])
    if name == "syncwarp":
        args = _args(lw, node, (0, 1), ("mask",))
        mask = args[0] if args else ir.Const(uint32, loc, 0xFFFFFFFF)
        return ir.Call(void, loc, name, [_mask(lw, mask, node)])
    if name in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
        mask, value, lane = _args(lw, node, 3)
        v = lw.scalar(value, node)
        if ty.is_weak(v):
            v = ty.convert(v, v.type)
        lane = ty.convert(lw.scalar(lane, node), int32)
        return ir.Call(v.type, loc, name, [_mask(lw, mask, node), v, lane])
    if name in ("all_sync", "any_sync", "eq_sync", "ballot_sync"):
        mask, pred = _args(lw, node, 2)
        t = uint32 if name == "ballot_sync" else int32
        return ir.Call(t, loc, name, [_mask(lw, mask, node), lw.truth(pred, node)])
    if name in ("popc", "clz", "ffs", "brev"):
        (x,) = _args(lw, node, 1)
        x = lw.scalar(x, node)
        if not x.type.is_int:
            raise lw.error(node, f"{name}() needs an integer, got {x.type}")
        if ty.is_weak(x):
            x = ty.convert(x, int64)
        return ir.Call(x.type if name == "brev" else int32, loc, name, [x])
    if name == "fma":
        a, b, c = (lw.scalar(v, node) for v in _args(lw, node, 3))
        t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
        t, w = ty.unify(t, w, c.type, ty.is_weak(c))
        t = t if t.is_float else float64
        return ir.Call(t, loc, "fma", [ty.convert(v, t) for v in (a, b, c)])
    if name == "cbrt":
        return math_call(lw, "cbrt", "np", node)
    if name == "selp":
        p, a, b = _args(lw, node, 3)
        a, b = lw.scalar(a, node), lw.scalar(b, node)
        t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
        return ty.mark_weak(ir.Select(t, loc, lw.truth(p, node), ty.convert(a, t),
                                      ty.convert(b, t)), w)
    if name.startswith("atomic."):
        return _atomic(lw, name, node)
    raise lw.error(node, f"{name}() is not supported yet")


def _mask(lw, m, node) -> ir.Expr:
    return ty.convert(lw.scalar(m, node), uint32)


def _dtype(lw: Lowerer, d, node) -> Scalar:
    obj = d.obj if isinstance(d, Py) else d
    st = scalar_of(obj) if not isinstance(obj, ir.Expr) else None
    if st is None:
        raise lw.error(node, f"{pyname(obj) if not isinstance(obj, ir.Expr) else 'a value'} "
                             "is not a dtype", "use e.g. np.float32 or threadtile.float32")
    return st


def _shape(lw: Lowerer, s, node) -> tuple[int, ...]:
    items = s.items if isinstance(s, Tup) else [s]
    out = []
    for it in items:
        if not (isinstance(it, ir.Const) and isinstance(it.value, int)
                and not isinstance(it.value, bool)):
            raise lw.error(node, "array shapes must be compile-time integer constants",
                           "use a literal, a global, or a Constant[int] parameter; shape 0 "
                           "makes a dynamic shared array sized at launch")
        if it.value < 0:
            raise lw.error(node, f"negative array dimension {it.value}")
        out.append(it.value)
    return tuple(out)


def _atomic(lw: Lowerer, name: str, node: ast.Call):
    op = name.split(".")[1]
    n = 4 if op == "cas" else 3
    args = _args(lw, node, n)
    arr = args[0]
    if not (isinstance(arr, ir.Expr) and isinstance(arr.type, ArrayType)):
        raise lw.error(node, f"atomic.{op}() needs an array as its first argument")
    at: ArrayType = arr.type
    if at.space not in ("global", "shared"):
        raise lw.error(node, f"atomic.{op}() works on global and shared arrays, not {at.space}")
    idx = args[1].items if isinstance(args[1], Tup) else [args[1]]
    if len(idx) != at.ndim:
        raise lw.error(node, f"atomic.{op}() needs {at.ndim} indices for a {at.ndim}-d array")
    indices = lw.indices(arr, idx, node)
    vals = [ty.convert(lw.scalar(v, node), at.dtype) for v in args[2:]]
    ok = {"add": "iuf", "sub": "iuf", "max": "iuf", "min": "iuf", "exch": "iuf", "cas": "iuf",
          "and_": "iu", "or_": "iu", "xor": "iu", "inc": "u", "dec": "u"}[op]
    if at.dtype.kind not in ok or at.dtype.bits < 16 or (
            at.dtype.bits == 16 and not (op == "add" and at.dtype.is_float)) or (
            op in ("inc", "dec") and at.dtype.bits != 32):
        raise lw.error(node, f"atomic.{op}() does not support {at.dtype} arrays")
    return ir.Call(at.dtype, lw.loc(node), name,
                   [ir.Load(at.dtype, lw.loc(node), arr, indices)] + vals)


def math_call(lw: Lowerer, name: str, flavour: str, node: ast.Call):
    loc = lw.loc(node)
    if name in ("min", "max"):
        raw = [lw.expr(a) for a in node.args]
        if len(raw) == 1 and isinstance(raw[0], Tup):
            raw = raw[0].items
        if len(raw) < 2 or node.keywords:
            raise lw.error(node, f"{name}() takes two or more numbers in kernels")
        vals = [lw.scalar(v, node) for v in raw]
        acc = vals[0]
        for v in vals[1:]:
            t, w = ty.unify(acc.type, ty.is_weak(acc), v.type, ty.is_weak(v))
            if isinstance(acc, ir.Const) and isinstance(v, ir.Const):
                acc = ir.Const(t, loc, ty.py_value((min if name == "min" else max)(
                    acc.value, v.value), t), weak=w)
                continue
            acc = ty.mark_weak(ir.Call(t, loc, name, [ty.convert(acc, t), ty.convert(v, t)]), w)
        return acc
    if name in ("abs", "round"):
        (x,) = _args(lw, node, (1, 1))
        x = lw.scalar(x, node)
        if isinstance(x, ir.Const):
            v = abs(x.value) if name == "abs" else round(x.value)
            t = x.type if name == "abs" else int64
            return ir.Const(t, loc, ty.py_value(v, t), weak=ty.is_weak(x))
        if name == "round":  # Python's round() of a float returns an int, ties to even
            return ir.Cast(int64, loc, ir.Call(x.type, loc, "rint", [x])) if x.type.is_float \
                else x
        return ty.mark_weak(ir.Call(x.type, loc, "abs", [x]), ty.is_weak(x))
    if name in _PRED:
        (x,) = _args(lw, node, 1)
        x = lw.scalar(x, node)
        if not x.type.is_float:
            return ir.Const(bool_, loc, name == "isfinite")
        if isinstance(x, ir.Const):
            return ir.Const(bool_, loc, _PRED[name](x.value))
        return ir.Call(bool_, loc, name, [x])
    nargs = 2 if name in _MATH2 else 1
    vals = [lw.scalar(v, node) for v in _args(lw, node, nargs)]
    t, w = vals[0].type, ty.is_weak(vals[0])
    for v in vals[1:]:
        t, w = ty.unify(t, w, v.type, ty.is_weak(v))
    if not t.is_float:
        t = float64
    if all(isinstance(v, ir.Const) for v in vals):
        try:
            r = (_MATH1.get(name) or _MATH2[name])(*[v.value for v in vals])
        except (ValueError, OverflowError, ZeroDivisionError):
            r = math.nan
        if name in ("floor", "ceil", "trunc") and flavour == "math":
            return ir.Const(int64, loc, int(r), weak=w)
        return ir.Const(t, loc, ty.py_value(r, t), weak=w)
    # float16/bfloat16 math is computed in float32, as the hardware's half math would lose
    # more precision than one rounding at the end
    ct = float32 if t.bits == 16 else t
    call: ir.Expr = ir.Call(ct, loc, name, [ty.convert(v, ct) for v in vals])
    if ct != t:
        call = ir.Cast(t, loc, call)
    if name in ("floor", "ceil", "trunc") and flavour == "math":
        return ir.Cast(int64, loc, call)  # math.floor returns an int, as in Python and numba
    return ty.mark_weak(call, w)


def _print(lw: Lowerer, node: ast.Call) -> list[ir.Stmt]:
    items: list = []
    for kw in node.keywords:
        raise lw.error(node, f"print() keyword {kw.arg!r} is not supported in kernels")
    for a in node.args:
        v = lw.expr(a)
        if isinstance(v, Py) and isinstance(v.obj, str):
            items.append(v.obj)
        elif isinstance(v, Tup):
            items.extend(lw.scalar(x, a) for x in v.items)
        else:
            items.append(lw.scalar(v, a))
    return [ir.Print(lw.loc(node), items)]


def _device_call(lw: Lowerer, kernel, node: ast.Call):
    args = [lw.expr(a) for a in node.args]
    if node.keywords:
        raise lw.error(node, "keyword arguments to device functions are not supported")
    params_in = []
    for a, an in zip(args, node.args):
        if isinstance(a, Tup):
            raise lw.error(an, "tuples cannot be passed to device functions")
        if isinstance(a, Py):
            a = lw.scalar(a, an)
        params_in.append(a)
    fn = lw.spec.device_function(lw, kernel, params_in, node)
    lw.callees.append(fn)
    call_args = [ty.convert(a, p.type) if isinstance(p.type, Scalar) else a
                 for a, p in zip(params_in, fn.params) if not p.is_constant]
    return ty.mark_weak(ir.CallFunc(fn.return_type, lw.loc(node), fn, call_args),
                        fn.return_weak)

