"""Calls of Python functions from kernels, and what other callables a kernel may not call.

A function written in Python, decorated or not (a ``@jit(device=True)`` function, a plain
``def``, a numba ``@njit`` dispatcher's function), is a device function: lowered once per
signature of argument types, as numba inlines its device functions and cuTile compiles the
functions a kernel calls. Arguments bind as in Python (positions, keywords, defaults,
``*args`` from a tuple); numbers and arrays are runtime arguments, a tuple one tuple value, and
a compile-time object (a function, a dtype, ``None``) a constant of that specialization.
``operator.add`` and friends are the operators; a namedtuple's class builds one.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types
import weakref
from typing import TYPE_CHECKING

from ..errors import KernelCompileError, TileCodeTypeError, TileCodeUnsupportedCallError
from ..ir import nodes as ir
from ..lang.substitutes import substitute
from ..lang.types import NoneType, Scalar, TupleType, Type, void
from . import comprehensions, tuples
from . import typing as ty
from .source import get_source
from .values import Py, Tup, pyname

if TYPE_CHECKING:
    from .lower import Lowerer

# packages whose Python functions are library code, not kernel code
_NOT_KERNEL_CODE = ("numpy", "math", "builtins", "threadtile", "operator")

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
           operator.rshift: ">>", operator.iadd: "+", operator.isub: "-",
           operator.imul: "*", operator.itruediv: "/", operator.ifloordiv: "//",
           operator.imod: "%"}
_COMPARE = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
            operator.eq: "==", operator.ne: "!="}
_UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.invert: ast.Invert,
          operator.not_: ast.Not}


def python_function(obj) -> types.FunctionType | None:
    """The Python function a kernel may call as a device function, or None: a ``@jit``
    function, a plain function (not one of NumPy's or the standard library's), or the
    function behind a numba dispatcher (``py_func``)."""
    obj = substitute(obj)  # another library's function threadtile implements (lang/substitutes)
    if getattr(obj, "_threadtile_kernel", False):
        return obj.py_func
    f = obj if isinstance(obj, types.FunctionType) else getattr(obj, "py_func", None)
    if not isinstance(f, types.FunctionType):
        return None
    if (f.__module__ or "").split(".")[0] in _NOT_KERNEL_CODE and f is obj:
        return None
    return f


class ReturnsObject(KernelCompileError):
    """A device function's ``return`` gives a compile-time object (``return tv.atomic_store_add``,
    a function, a dtype), which no device function can return, or a tile kernel's helper calls
    itself (``Specializer.recursive_tile_call``): its call is inlined instead."""


def device_call(lw: Lowerer, callee, fn: types.FunctionType, node: ast.Call):
    from . import inline  # inline imports this module's neighbours

    args, kwargs = inline.call_args(lw, node)
    if inline.wants_inline(fn, args, kwargs):
        return inline.call_function(lw, fn, args, kwargs, node)
    if lw.spec.recursive_tile_call(fn):  # its outer call, being lowered, is inlined instead
        raise ReturnsObject(f"{fn.__name__}() calls itself")
    try:
        func, call_args = lw.spec.device_function(lw, callee, fn, bind(lw, fn, args, kwargs,
                                                                       node), node)
    except ReturnsObject:
        if getattr(callee, "declared_signatures", None):
            raise
        func = None
    except KernelCompileError as e:  # in the callee's code: this call is a frame of it
        inline.note_caller(lw, node, e)
        raise
    if func is None:  # (outside the handler: an error inside has no chain of contexts)
        return inline.call_function(lw, fn, args, kwargs, node)
    lw.callees.append(func)
    res = ty.mark_weak(ir.CallFunc(func.return_type, lw.loc(node), func, call_args),
                       func.return_weak)
    return tuples.explode(lw, res) if isinstance(res.type, TupleType) else res


def bind(lw: Lowerer, fn, args: list, kwargs: dict, node) -> list[tuple[str, object]]:
    """(parameter, value) for every parameter of ``fn``, bound as Python binds a call."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    for p in params:
        if p.kind == p.VAR_KEYWORD:
            raise lw.error(node, f"{fn.__name__}() takes **kwargs, which device functions do "
                                 "not", "name its parameters")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
    if len(args) > len(positional) and star is None:
        raise lw.error(node, f"{fn.__name__}() takes {len(positional)} positional arguments, "
                             f"got {len(args)}")
    bound = {p.name: a for p, a in zip(positional, args)}
    if star is not None:  # *items: the positional arguments past the named ones, a tuple
        bound[star.name] = Tup(list(args[len(positional):]))
    for k, v in kwargs.items():
        p = sig.parameters.get(k)
        if p is None or p.kind == p.POSITIONAL_ONLY:
            raise lw.error(node, f"{fn.__name__}() has no parameter {k!r}")
        if k in bound:
            raise lw.error(node, f"{fn.__name__}() got two values for {k!r}")
        bound[k] = v
    out = []
    for p in params:
        if p.name not in bound:
            if p.kind == p.VAR_KEYWORD:
                continue
            if p.default is p.empty:
                raise lw.error(node, f"{fn.__name__}() is missing its argument {p.name!r}")
            bound[p.name] = lw.py_to_value(p.default, node)
        out.append((p.name, bound[p.name]))
    return out


_ARRAY_MAKERS = ("array", "array_like")
# cuTile's calls whose arguments give a tile's shape: cuTile inlines a helper, so a
# `shape=(1, TILE_N)` in it sees the caller's compile-time TILE_N
_TILE_SHAPERS = ("load", "full", "zeros", "ones", "arange", "reshape", "broadcast_to",
                 "num_tiles", "expand_dims", "permute", "transpose")


def shape_params(fn) -> frozenset[str]:
    """The parameters of ``fn`` read in the shape or dtype of a ``shared.array``,
    ``local.array`` or ``const.array_like`` call, or in the arguments of a tile operation that
    takes a shape (``ct.load(..., shape=(1, n))``, ``ct.arange(n)``...). A call passing a
    compile-time integer for one makes it a constant of that specialization (numba types such
    an argument as a literal), so ``sm = cuda.shared.array(n, dtype)`` in a device function
    takes ``n`` from its caller; other parameters stay runtime values."""
    hit = _SHAPE_PARAMS.get(fn)
    if hit is not None:
        return hit
    tree = get_source(fn).tree
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    found: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and (
                isinstance(n.func, ast.Attribute) and n.func.attr in _ARRAY_MAKERS
                + _TILE_SHAPERS
                or isinstance(n.func, ast.Name) and n.func.id in _ARRAY_MAKERS):
            for a in list(n.args) + [k.value for k in n.keywords]:
                found |= {m.id for m in ast.walk(a) if isinstance(m, ast.Name)} & params
    out = frozenset(found)
    _SHAPE_PARAMS[fn] = out
    return out


_SHAPE_PARAMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def param_for(lw: Lowerer, fn, name: str, value, node, constant: bool
              ) -> tuple[ir.Param, ir.Expr | None]:
    """The callee's parameter for an argument, and the argument as the call passes it (None
    for a compile-time one)."""
    if constant:
        if isinstance(value, Tup) and tuples.py_value(value) is not None:
            return ir.Param(name, NoneType, tuples.py_value(value), True), None
        if not isinstance(value, ir.Const):
            raise lw.error(node, f"argument {name!r} of {fn.__name__}() is a Constant and needs "
                                 "a compile-time value")
        return ir.Param(name, value.type, value.value, True), None
    if isinstance(value, Tup):
        if tuples.static(value) or lw.spec.threads is not None and \
                tuples.py_value(value) is not None:
            # (in a tile kernel cuTile inlines its helpers: a tuple of constants, `(TILE,)`,
            # stays one in the helper, as static_assert and tile shapes need)
            pv = tuples.py_value(value)
            if pv is None:
                raise lw.error(node, f"argument {name!r} of {fn.__name__}() mixes compile-time "
                                     "objects with runtime values in one tuple")
            return ir.Param(name, NoneType, pv, True), None
        value = tuples.make(lw, value, node)
    if isinstance(value, Py):
        if isinstance(value.obj, (bool, int, float)):
            value = lw.scalar(value, node)
        else:  # a function, a dtype, None, a string: a constant of this specialization
            return ir.Param(name, NoneType, value.obj, True), None
    if not isinstance(value, ir.Expr):
        raise lw.error(node, f"argument {name!r} of {fn.__name__}() cannot be passed")
    t = value.type
    # a Python literal stays weak inside the callee: clamp(x, 0.5, 4.0) with x float32
    # computes in float32, as the same expression written inline would
    weak = isinstance(t, Scalar) and ty.is_weak(value)
    if weak and isinstance(value, ir.Const):
        t = ty.literal_type(value.value)
    return ir.Param(name, t, weak=weak), value


def builtin_call(lw: Lowerer, obj, node: ast.Call):
    """``operator.add(a, b)`` and the other operators as functions; a namedtuple class
    building one. None for anything else."""
    if obj in _BINARY or obj in _COMPARE:
        if len(node.args) != 2 or node.keywords:
            raise lw.error(node, f"{pyname(obj)}() takes two arguments")
        a, b = (lw.expr(x) for x in node.args)
        if obj in _BINARY:
            return lw.binop(_BINARY[obj], a, b, node)
        return lw.compare(_COMPARE[obj], a, b, node)
    if obj in _UNARY:
        if len(node.args) != 1 or node.keywords:
            raise lw.error(node, f"{pyname(obj)}() takes one argument")
        return lw.visit(ast.UnaryOp(_UNARY[obj](), node.args[0], **_pos(node)))
    if obj is operator.abs:
        return lw.visit(ast.Call(ast.Name("abs", ast.Load(), **_pos(node)), node.args, [],
                                 **_pos(node)))
    if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
        return _namedtuple(lw, obj, node)
    if obj is builtins.tuple:
        if not node.args:
            return Tup([])
        if comprehensions.is_tuple_comprehension(node):
            return comprehensions.lower(lw, node.args[0], node)
        v = lw.expr(node.args[0])
        if len(node.args) == 1 and not node.keywords and isinstance(v, Tup):
            return Tup(list(v.items))
    return None


def _namedtuple(lw: Lowerer, cls, node: ast.Call) -> Tup:
    fields = list(cls._fields)
    vals = dict(zip(fields, (lw.expr(a) for a in node.args)))
    if len(node.args) > len(fields):
        raise lw.error(node, f"{cls.__name__}() takes {len(fields)} values")
    for kw in node.keywords:
        if kw.arg not in fields or kw.arg in vals:
            raise lw.error(node, f"{cls.__name__}() has no field {kw.arg!r} or got it twice")
        vals[kw.arg] = lw.expr(kw.value)
    defaults = getattr(cls, "_field_defaults", {})
    for f in fields:
        if f not in vals:
            if f not in defaults:
                raise lw.error(node, f"{cls.__name__}() is missing the field {f!r}")
            vals[f] = lw.py_to_value(defaults[f], node)
    return Tup([vals[f] for f in fields], tuple(fields))


_BUILTIN_HINTS = {
    "sum": "add the values in a loop: s = 0.0; for v in a: s += v",
    "list": "use a tuple, or local.array(shape, dtype) for a per-thread array",
    "dict": "kernels work on numbers, tuples and arrays",
    "set": "kernels work on numbers, tuples and arrays",
    "isinstance": "types are known at compile time: specialize with a Constant parameter",
    "sorted": "sort in a loop over a local.array",
    "any": "combine the conditions with `or`",
    "all": "combine the conditions with `and`",
}
_ALLOCATORS = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
               "full_like", "array", "arange", "linspace", "asarray", "copy"}


def refusal(lw: Lowerer, obj, node: ast.Call):
    """The error for calling ``obj``, which kernels cannot call, with what to do instead (in a
    tile kernel, a builtin or a class in cuTile's words)."""
    name = getattr(obj, "__name__", "")
    mod = getattr(obj, "__module__", "") or ""
    tile = getattr(lw.spec, "tile_kernel", False)
    if getattr(builtins, name, None) is obj:
        hint = _BUILTIN_HINTS.get(name, "kernels have the builtins abs, bool, enumerate, float, "
                                        "int, len, max, min, pow, print, range, reversed, "
                                        "round, tuple and zip")
        what = f"{name}() is not supported in device code" if tile else \
            f"the builtin {name}() is not supported in kernels"
        return lw.error(node, what, hint, cls=TileCodeUnsupportedCallError)
    if mod.startswith("numpy") and name in _ALLOCATORS:
        return lw.error(node, f"{pyname(obj)}() allocates an array, which a kernel cannot",
                        "use cuda.local.array(shape, dtype) for a per-thread array, or "
                        "cuda.shared.array(shape, dtype) for one the block shares")
    if mod.startswith("numpy") or mod == "math":
        return lw.error(node, f"calling {pyname(obj)} is not supported in kernels",
                        "see docs/language.md for the math functions kernels support")
    if isinstance(obj, type):
        what = f'Creating instances of type "{name}" is not supported in device code: ' \
            if tile else ""
        return lw.error(node, f"{what}creating a {pyname(obj)} is not supported in kernels",
                        "kernels work on numbers, tuples and arrays",
                        cls=TileCodeUnsupportedCallError)
    return lw.error(node, f"calling {pyname(obj)} is not supported in kernels",
                    "kernels call functions written in Python (and @jit ones), the math "
                    "functions and the kernel language's intrinsics")


def _pos(node: ast.AST) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


def return_type(lw: Lowerer, fn, src) -> tuple[Type, bool]:
    """The type a device function returns (and whether loosely): its returns' types unified,
    numbers by the promotion rules. In a tile kernel's callee (cuTile's rule) the type may not
    depend on the path: numbers of different kinds (bool, integer, float), or of two strict
    types, are an error, as are values with no common type anywhere."""
    if not lw.return_types:
        return void, False
    t, w = lw.return_types[0]
    strict = getattr(lw.spec, "tile_kernel", False)
    for t2, w2 in lw.return_types[1:]:
        u = tuples.unify(t, w, t2, w2)
        if u is None or strict and _path_dependent(t, w, t2, w2):
            raise TileCodeTypeError(
                f"Type of return value depends on path taken: {ty.describe(t2)} vs. "
                f"{ty.describe(t)}: {fn.__name__}() returns both", loc=src.loc(
                    src.tree, fn.__name__), hint="return values of one type from every return")
        t, w = u
    return t, w


def _kind(t: Scalar) -> str:
    return "i" if t.is_int else t.kind


def _path_dependent(a, aw: bool, b, bw: bool) -> bool:
    if not (isinstance(a, Scalar) and isinstance(b, Scalar)):
        return False
    return _kind(a) != _kind(b) or (not aw and not bw and a != b)
