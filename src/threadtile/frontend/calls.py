"""Lowering of calls: kernel-language intrinsics, builtins, math functions, casts, device calls.

Each callable a kernel may use is recognised by identity (the ``math.sqrt`` object, the
``threadtile.syncthreads`` object...), never by its spelling, so ``from math import sqrt`` and
``import threadtile as cuda`` work as they would in numba.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..lang import bf16, coop, vectors
from ..lang import thread as lt
from ..lang.collectives import Primitive
from ..lang.records import record_of
from ..lang.types import (
    ArrayType,
    Scalar,
    TupleType,
    bool_,
    float64,
    int32,
    int64,
    is_numba_type,
    scalar_of,
    uint32,
    void,
)
from . import (
    array_views,
    arrays,
    bf16calls,
    complexes,
    coopcalls,
    dataclassdunders,
    dataclassvals,
    dicts,
    enumvals,
    funcs,
    inline,
    mathcalls,
    npufuncs,
    tile_calls,
    tile_more,
    tile_print,
    tiles,
    tupleops,
    tuples,
    user_reduce,
)
from . import typing as ty
from .values import DeclRequest, Py, ScalarMethod, Tup, pyname

if TYPE_CHECKING:
    from .lower import Lowerer

def special_attr(lw: Lowerer, obj, attr: str, node):
    """``threadIdx.x`` and friends; None when ``obj.attr`` is an ordinary Python attribute."""
    if isinstance(obj, dicts.KwDict):
        return dicts.attr(obj, attr)
    if isinstance(obj, lt.Dim3Reg) and attr in ("x", "y", "z"):
        # int64, as index arithmetic is in numba: blockIdx.x * blockDim.x + threadIdx.x cannot
        # overflow on grids of more than 2**31 threads
        loc = lw.loc(node)
        return ir.Cast(int64, loc, ir.Special(int32, loc, f"{obj._name}.{attr}"))
    return None


def subscript_static(lw: Lowerer, obj, node):
    """``Color["red"]``: a member of an Enum class by its name; ``kwargs["key"]``."""
    if isinstance(obj, dicts.KwDict):
        return dicts.getitem(lw, obj, node)
    if isinstance(obj, enum.EnumMeta):
        key = lw.expr(node.slice)
        if not (isinstance(key, Py) and isinstance(key.obj, str)):
            raise lw.error(node, f"{obj.__name__}[...] takes a member's name as a string")
        if key.obj not in obj.__members__:
            raise lw.error(node, f"{obj.__name__} has no member {key.obj!r}")
        return Py(obj[key.obj])
    return None


def special_value(lw: Lowerer, obj, node):
    """``laneid`` used as a value."""
    if isinstance(obj, lt.LaneReg):
        return ir.Special(int32, lw.loc(node), obj._name)
    return None


def lower_call(lw: Lowerer, node: ast.Call):
    f = lw.expr(node.func)
    if dataclassdunders.is_instance(f):  # d(args): the class's __call__
        return dataclassdunders.call(lw, f, node)
    if not isinstance(f, Py):
        raise lw.error(node.func, f"{_what_called(f)} is not callable")
    obj = f.obj
    if funcs.python_function(obj) is None:  # f(*t) where f reads its arguments' syntax
        node = tupleops.expand_starred(lw, node)
    name = getattr(obj, "_threadtile_intrinsic", None)
    if name is None and (alt := bf16.from_numba(obj)) is not None:
        name = alt._threadtile_intrinsic  # numba's own bfloat16 functions
    if name is not None and name.startswith("tile."):
        return tile_calls.lower_call(lw, name, node, obj)
    if name is not None and name.startswith("coop."):  # threadtile.coop's primitives
        return coopcalls.lower(lw, name, node)
    if isinstance(obj, Primitive):  # one made on the host, as cuda.coop's factories do
        return coopcalls.lower_primitive(lw, obj, node)
    if name is not None:
        return _intrinsic(lw, name, node)
    if isinstance(obj, inline.Closure):
        return inline.call_closure(lw, obj, node)
    if isinstance(obj, inline.BoundMethod):
        return inline.call_method(lw, obj, node)
    if isinstance(obj, dicts.DictMethod):
        return dicts.call_method(lw, obj, node)
    if type(obj).__name__ == "TileMethod":
        return tile_calls.call_method(lw, obj, node)
    if isinstance(obj, ScalarMethod):
        return _scalar_method(lw, obj, node)
    if obj is builtins.print:
        if tile_print.is_tile_kernel(lw):  # cuTile's print: once per block
            user_reduce.restrict_call(lw, "print", node)
            return tile_print.lower_print(lw, node)
        return _print(lw, node)
    if obj in (builtins.repr, builtins.str) and len(node.args) == 1 and not node.keywords:
        v = lw.expr(node.args[0])
        conv = tile_print.to_repr if obj is builtins.repr else tile_print.to_str
        return tile_print.make_string(conv(lw, v, node))
    if obj in (builtins.range, builtins.enumerate, builtins.zip, builtins.reversed):
        raise lw.error(node, f"{obj.__name__}() can only be used as the iterable of a for loop")
    if obj is builtins.len:
        a = _args(lw, node, 1)[0]
        if isinstance(a, Tup):
            return ir.Const(int64, lw.loc(node), len(a.items), weak=True)
        if isinstance(a, ir.Expr) and isinstance(a.type, ArrayType):
            return ir.ArrayDim(int64, lw.loc(node), a, "shape", 0)
        raise lw.error(node, "len() of something that is not an array or tuple")
    if obj is builtins.divmod:  # (x // y, x % y)
        return tile_more.divmod_(lw, node)
    if isinstance(obj, enum.EnumMeta):  # Color(1): a member, by a constant value
        return enumvals.make(lw, obj, node)
    if dataclassvals.is_dataclass_type(obj):  # FooBar(2, bar=7): a frozen dataclass
        return dataclassvals.make(lw, obj, node)
    if obj is dataclasses.replace:
        return dataclassvals.replace(lw, node)
    vt = obj if isinstance(obj, vectors.VectorType) else vectors.from_numba(obj)
    if vt is not None:
        return _vector(lw, vt, node)
    fn = funcs.python_function(obj)
    if fn is not None:
        return funcs.device_call(lw, obj, fn, node)
    if complexes.is_builtin_complex(obj):
        return complexes.make(lw, node)
    cm = complexes.CMATH.get(id(obj))
    if cm is not None:
        return complexes.cmath_call(lw, cm, node)
    st = _cast_target(obj)
    if st is not None:
        v = _args(lw, node, 1)[0]
        # np.float64(x), float32(x), numba's types: a typed value, never a weak literal (a
        # literal through Python's own float()/int()/bool() is still a Python number)
        strong = obj not in (builtins.float, builtins.int, builtins.bool)
        if isinstance(v, Py) and isinstance(v.obj, str) and st.is_float:
            try:  # float("nan"), float("inf"): a constant, as numba folds them
                return ir.Const(st, lw.loc(node), float(v.obj), weak=not strong)
            except ValueError:
                raise lw.error(node, f"could not convert string to float: {v.obj!r}") from None
        v = lw.scalar(v, node)
        if isinstance(v, ir.Const) and v.type == st:
            return ty.mark_weak(ir.Const(st, v.loc, v.value), False) if strong else v
        out = ty.convert(v, st)
        if not strong and isinstance(out, ir.Const):  # float(ct.float32(5.0)): cuTile's loose
            return ty.mark_weak(out)                    # constant, as a literal would be
        return ty.mark_weak(out, False) if strong else out
    if npufuncs.is_ufunc(obj):
        v = npufuncs.ufunc_call(lw, obj, node)
        if v is not None:
            return v
    hit = mathcalls.FUNCS.get(id(obj))
    if hit is not None:
        return mathcalls.math_call(lw, hit[0], hit[1], node, obj)
    v = funcs.builtin_call(lw, obj, node)
    if v is not None:
        return v
    raise funcs.refusal(lw, obj, node)


def _coop(lw: Lowerer, name: str, node: ast.Call):
    """``cg.this_grid()`` is the grid group, a compile-time object; a marker statement keeps
    in the IR that the kernel asked for it, which makes it cooperative (numba's rule, even
    without a ``sync()``). ``g.sync()`` is the grid barrier."""
    _args(lw, node, 0)
    call = ir.Call(void, lw.loc(node), name, [])
    if name == "cg.grid_sync":
        return call
    lw.pre.append(ir.ExprStmt(call.loc, call))
    return Py(coop.GRID)


def _vector(lw: Lowerer, vt: vectors.VectorType, node: ast.Call) -> Tup:
    """``float32x4(...)``: a namedtuple of the base type, from numbers and smaller vectors."""
    if node.keywords:
        raise lw.error(node, f"{vt.name}() takes its elements by position")
    items = vectors.flatten([lw.expr(a) for a in node.args], lambda a: isinstance(a, Tup),
                             lambda a: a.items)
    if len(items) != vt.n:
        raise lw.error(node, f"{vt.name}() takes {vt.n} elements (numbers or vectors), got "
                             f"{len(items)}")
    return Tup([ty.convert(lw.scalar(v, node), vt.base) for v in items], vt.fields)


SCALAR_METHODS = ("bit_count", "conjugate")


def scalar_attr(lw: Lowerer, base: ir.Expr, attr: str, node):
    """``x.attr`` of a number, or None where a number has no such attribute."""
    if attr in ("real", "imag") and base.type.is_complex:
        return complexes.part(lw, base, attr, node)
    if attr in ("real",):
        return base
    if attr == "imag":
        return ir.Const(base.type, lw.loc(node), 0)
    if attr in SCALAR_METHODS:
        return Py(ScalarMethod(base, attr))
    if attr == "dtype" and not ty.is_weak(base):  # np.int16(4).dtype: int16
        return Py(base.type)
    if attr == "astype" and tile_print.is_tile_kernel(lw):  # cuTile's scalars convert so too
        return Py(tiles.TileMethod(base, attr))
    return None


def _scalar_method(lw: Lowerer, m: ScalarMethod, node: ast.Call):
    if isinstance(m.base, ir.Expr) and isinstance(m.base.type, ArrayType) and \
            m.name in array_views.METHODS:
        return array_views.call(lw, m, node)
    if m.name == "reshape":
        return arrays.reshape(lw, m.base, node)
    if m.name == "view":
        return arrays.view_as(lw, m.base, node)
    _args(lw, node, 0)
    x = m.base
    if m.name == "copy":  # an array's .copy()
        if x.type.space == "const":  # a global array, frozen: already a copy, read-only
            return x
        raise lw.error(node, "copying an array allocates one, which a kernel cannot",
                       "copy it into a cuda.local.array(shape, dtype) in a loop")
    if m.name == "conjugate":
        return complexes.conjugate(lw, x, node) if x.type.is_complex else x
    if not x.type.is_int:
        raise lw.error(node, f"bit_count() needs an integer, got {x.type}")
    return ir.Cast(int64, lw.loc(node), ir.Call(int32, lw.loc(node), "popc", [x]))


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
    if name in ("cg.this_grid", "cg.grid_sync"):
        return _coop(lw, name, node)
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
        if v.type.is_complex:  # numba's shuffles take no complex numbers either
            raise lw.error(node, f"{name}() of a complex number is not supported",
                           "shuffle its .real and .imag parts")
        if ty.is_weak(v):
            v = ty.convert(v, v.type)
        lane = ty.convert(lw.scalar(lane, node), int32)
        return ir.Call(v.type, loc, name, [_mask(lw, mask, node), v, lane])
    if name in ("all_sync", "any_sync", "eq_sync", "ballot_sync"):
        mask, pred = _args(lw, node, 2)
        t = uint32 if name == "ballot_sync" else int32
        return ir.Call(t, loc, name, [_mask(lw, mask, node), _predicate(lw, pred, node)])
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
        return mathcalls.math_call(lw, "cbrt", "np", node)
    if name == "selp":
        p, a, b = _args(lw, node, 3)
        a, b = lw.scalar(a, node), lw.scalar(b, node)
        t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
        # a call: both operands are evaluated (numba's selp), unlike `a if p else b`
        return ty.mark_weak(ir.Call(t, loc, "selp", [lw.truth(p, node), ty.convert(a, t),
                                                    ty.convert(b, t)]), w)
    if name.startswith("atomic."):
        return _atomic(lw, name, node)
    if name in ("match_any_sync", "match_all_sync"):
        return _match(lw, name, node)
    if name.startswith("bf16."):
        return bf16calls.lower(lw, name[5:], node)
    if name.startswith("fp16."):
        return mathcalls.fp16(lw, name[5:], node)
    raise lw.error(node, f"{name}() is not supported yet")


def _mask(lw, m, node) -> ir.Expr:
    """A warp operation's lane mask: an integer (numba's rule: not a bool, not a float)."""
    m = lw.scalar(m, node)
    if not m.type.is_int:
        raise lw.error(node, f"the mask of a warp operation must be an integer, got {m.type}",
                       "pass a lane mask such as 0xFFFFFFFF")
    return ty.convert(m, uint32)


def _predicate(lw, p, node) -> ir.Expr:
    """A warp vote's predicate: an integer or a bool (numba's rule: not a float)."""
    v = lw.scalar(p, node)
    if not v.type.is_int and v.type.kind != "b":
        raise lw.error(node, f"the predicate of a warp vote must be an integer or a bool, got "
                             f"{v.type}", "compare it: x != 0")
    return lw.truth(v, node)


def _dtype(lw: Lowerer, d, node) -> Scalar:
    obj = d.obj if isinstance(d, Py) else d
    st = (scalar_of(obj) or record_of(obj)) if not isinstance(obj, ir.Expr) else None
    if st is None:
        raise lw.error(node, f"{pyname(obj) if not isinstance(obj, ir.Expr) else 'a value'} "
                             "is not a dtype", "use e.g. np.float32 or threadtile.float32")
    return st


def _shape(lw: Lowerer, s, node) -> tuple[int, ...]:
    items = s.items if isinstance(s, Tup) else [s]
    out = []
    for it in items:
        if isinstance(it, ir.Var) and it.name in lw.literal_locals:
            it = ir.Const(it.type, it.loc, lw.literal_locals[it.name])
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
    if op == "compare_and_swap":  # numba's cas on the first element of a 1-d array
        arr, old, new = _args(lw, node, 3)
        args = [arr, ir.Const(int64, lw.loc(node), 0, weak=True), old, new]
        op, name = "cas", "atomic.cas"
    else:
        args = _args(lw, node, 4 if op == "cas" else 3)
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
          "and_": "iu", "or_": "iu", "xor": "iu", "inc": "u", "dec": "u", "nanmax": "iuf",
          "nanmin": "iuf"}[op]
    if at.dtype.kind not in ok or at.dtype.bits < 16 or (
            at.dtype.bits == 16 and not (op == "add" and at.dtype.is_float)) or (
            op in ("inc", "dec") and at.dtype.bits < 32):
        raise lw.error(node, f"atomic.{op}() does not support {at.dtype} arrays")
    if op in ("nanmax", "nanmin") and not at.dtype.is_float:
        name = f"atomic.{op[3:]}"  # integers have no NaN
    return ir.Call(at.dtype, lw.loc(node), name,
                   [ir.Load(at.dtype, lw.loc(node), arr, indices)] + vals)


def _match(lw: Lowerer, name: str, node: ast.Call):
    """``match_any_sync``/``match_all_sync``: values compare by their bits, 32 or 64 of them
    (narrower integers and bools are widened to int32 first)."""
    mask, value = _args(lw, node, 2)
    v = lw.scalar(value, node)
    if ty.is_weak(v):
        v = ty.convert(v, int64 if v.type.is_int else v.type)
    if v.type.bits < 32 or v.type == bool_:
        v = ty.convert(v, int32)
    if v.type.bits == 16:
        raise lw.error(node, f"{name}() compares 32- or 64-bit values, got {v.type}")
    loc = lw.loc(node)
    if name == "match_any_sync":
        return ir.Call(uint32, loc, name, [_mask(lw, mask, node), v])
    call = ir.Call(TupleType((uint32, bool_)), loc, name, [_mask(lw, mask, node), v])
    return tuples.explode(lw, call)


def _print(lw: Lowerer, node: ast.Call) -> list[ir.Stmt]:
    """``print(a, b, ...)``: the pieces are concatenated, so the spaces between arguments and
    the punctuation of tuples are pieces of text themselves."""
    sep = " "
    for kw in node.keywords:
        v = lw.expr(kw.value)
        if kw.arg != "sep" or not (isinstance(v, Py) and isinstance(v.obj, str)):
            raise lw.error(node, f"print() keyword {kw.arg!r} is not supported in kernels",
                           "print takes values and sep='...'")
        sep = v.obj
    items: list = []
    for k, a in enumerate(node.args):
        if k:
            items.append(sep)
        items += _pieces(lw, lw.expr(a), a)
    merged: list = []
    for it in items:  # adjacent texts as one
        if isinstance(it, str) and merged and isinstance(merged[-1], str):
            merged[-1] += it
        elif not (isinstance(it, str) and it == ""):
            merged.append(it)
    return [ir.Print(lw.loc(node), merged)]


def _pieces(lw: Lowerer, v, node) -> list:
    """What one printed value is made of: text and numbers, a tuple as Python writes it."""
    if isinstance(v, Py) and isinstance(v.obj, lt.Dim3Reg):  # print(cuda.threadIdx)
        v = Tup([ir.Special(int32, lw.loc(node), f"{v.obj._name}.{a}") for a in "xyz"])
    if isinstance(v, Py) and (isinstance(v.obj, str) or v.obj is None):
        return [str(v.obj)]
    if isinstance(v, Tup):
        out: list = ["("]
        for k, x in enumerate(v.items):
            if k:
                out.append(", ")
            if v.names:
                out.append(f"{v.names[k]}=")
            out += _pieces(lw, x, node)
        return out + ([",)"] if len(v.items) == 1 and not v.names else [")"])
    x = lw.scalar(v, node)
    if x.type.is_complex:  # numba's print has no complex numbers either
        raise lw.error(node, "print() of a complex number is not supported in kernels",
                       "print its parts: print(z.real, z.imag)")
    return [x]
