"""Lowering of tile operations (``threadtile.tile``, cuTile's names) to ``ir.TileOp`` nodes.

The Lowerer hands over here whenever a tile is involved: calls of ``threadtile.tile``
functions, operators with a tile operand, methods and attributes of tiles. What comes out is
typed: every ``TileOp`` has its result ``TileType``, operands already converted to the result
dtype and broadcast to the result shape (scalars stay scalars: the backends broadcast them), so
the backends do no type reasoning of their own.

Promotion follows cuTile (and NumPy 2 for weak scalars): a Python literal or a scalar kernel
argument of a tile kernel adopts the tile's dtype; a float literal with an integer tile gives
float32; two tiles promote as two scalars do (docs/language.md).
"""

from __future__ import annotations

import ast
import builtins
import enum
from typing import TYPE_CHECKING

import numpy as np

from ..errors import KernelCompileError, TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import (
    ArrayType,
    Scalar,
    TileType,
    bool_,
    float32,
    int32,
    int64,
    promote,
    scalar_of,
    tfloat32,
)
from . import typing as ty
from . import versions
from .values import Py, Tup, describe_value, pyname

if TYPE_CHECKING:
    from .lower import Lowerer

MAX_SLOTS = 1024  # elements per thread: beyond this the unrolled C++ is unreasonable


def is_tile(v) -> bool:
    return isinstance(v, ir.Expr) and isinstance(v.type, TileType)


def static_value(obj) -> bool:
    """Compile-time objects a kernel may bind to a name: dtypes and tile-language enums."""
    if isinstance(obj, Scalar):
        return True
    if isinstance(obj, enum.Enum):
        return True
    return isinstance(obj, type) and issubclass(obj, np.generic)


def same_static(a, b) -> bool:
    sa = scalar_of(a) if not isinstance(a, (str, int, float)) else None
    sb = scalar_of(b) if not isinstance(b, (str, int, float)) else None
    if sa is not None and sb is not None:
        return sa == sb
    return a is b or a == b


def assign_static(lw: Lowerer, node, name: str, value: Py) -> list:
    """``tid = cuda.threadIdx``, ``sm = cuda.shared``, ``dtype = ct.tfloat32 if ... else
    a.dtype``: a name bound at compile time to a Python object (a module, a function, a dtype,
    an enum member). The name has no runtime value; each use stands for the object."""
    if name in lw.observed:
        raise lw.error(node, f"'{name}' holds a number or an array elsewhere; it cannot also "
                             f"be {pyname(value.obj)}", "use a different variable for each")
    prev = lw.statics.get(name)
    if isinstance(prev, Py) and prev.obj is not value.obj and not same_static(prev.obj, value.obj):
        raise lw.error(node, f"Type of `{name}` depends on path taken: "
                             f"{_static_name(value.obj)} (this path) vs. "
                             f"{_static_name(prev.obj)} (another path): '{name}' is bound to a "
                             "different compile-time object on each",
                       "use two names", cls=TileCodeTypeError)
    lw.statics[name] = value
    return []


def _static_name(obj) -> str:
    """A compile-time object as cuTile names it in an error (an enum member as
    ``<enum constant MemoryOrder.WEAK>``)."""
    if isinstance(obj, enum.Enum):
        return f"<enum constant {type(obj).__name__}.{obj.name}>"
    return pyname(obj)


def static_compare(lw: Lowerer, op: str, a: Py, b: Py, node) -> ir.Expr:
    if not (static_value(a.obj) or static_value(b.obj)):
        return lw.scalar(a, node)  # raises the usual "expected a number"
    same = same_static(a.obj, b.obj)
    return ir.Const(bool_, lw.loc(node), same if op == "==" else not same)


def no_tiles(lw: Lowerer, vals, node, what: str) -> None:
    if any(is_tile(v) for v in vals):
        raise lw.error(node, f"{what} with tiles",
                       "use ct.where(cond, x, y), which selects elementwise")


class TileMethod:
    """``x.astype`` and friends before the call: the tile and the method's name."""

    def __init__(self, base: ir.Expr, name: str):
        self.base = base
        self.name = name


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def need_block(lw: Lowerer, node, what: str) -> None:
    if lw.spec.threads is None:
        raise lw.error(node, f"{what} needs the block size at compile time",
                       "declare the kernel with @threadtile.tile.kernel, or give a thread-level "
                       "kernel that uses tile operations a fixed block: @threadtile.jit("
                       "num_warps=4), launched with 128 threads per block")


def tile_op(lw: Lowerer, node, t, tileop: str, args: list, **attrs) -> ir.TileOp:
    if isinstance(t, TileType):
        need_block(lw, node, f"the tile operation {tileop}")
        slots = -(-t.size // lw.spec.threads)
        if slots > MAX_SLOTS and lw.too_big is None:  # raised once the body is lowered
            lw.too_big = lw.error(node, f"a tile of {t.size} elements needs {slots} registers "
                                        f"per thread in a block of {lw.spec.threads} threads",
                                  "use smaller tiles, or more warps (num_warps=...)")
    elif tileop in ("store", "printf", "item"):
        need_block(lw, node, f"the tile operation {tileop}")
    return ir.TileOp(t, lw.loc(node), tileop, args, attrs)


def bind_args(lw: Lowerer, node: ast.Call, fname: str, params: list[str], defaults: dict,
          lowered_args: list | None = None) -> dict:
    """The call's arguments by parameter name (cuTile's signatures), lowered. ``params`` lists
    every parameter in order; those not in ``defaults`` are required."""
    vals: dict = {}
    args = lowered_args if lowered_args is not None else [lw.expr(a) for a in node.args]
    if len(args) > len(params):
        raise lw.error(node, f"{fname}() takes at most {len(params)} positional arguments, "
                             f"got {len(args)}")
    for p, a in zip(params, args):
        vals[p] = a
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in params:
            raise lw.error(node, f"{fname}() got an unexpected keyword argument {kw.arg!r}")
        if kw.arg in vals:
            raise lw.error(node, f"{fname}() got multiple values for {kw.arg!r}")
        vals[kw.arg] = lw.expr(kw.value)
    for p in params:
        if p not in vals:
            if p not in defaults:
                raise lw.error(node, f"{fname}() missing required argument {p!r}")
            vals[p] = defaults[p]
    return vals


def array_arg(lw: Lowerer, v, node, fname: str) -> ir.Expr:
    """An array operand of a tile operation (a kernel argument, a view, a shared array)."""
    if not (isinstance(v, ir.Expr) and isinstance(v.type, ArrayType)):
        raise lw.error(node, f"{fname}() needs an array, got {describe_value(v)}")
    return v


def static_int(lw: Lowerer, v, node, what: str) -> int:
    if isinstance(v, Py) and isinstance(v.obj, (int, np.integer)) and not isinstance(v.obj, bool):
        return int(v.obj)
    if isinstance(v, ir.Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return v.value
    if isinstance(v, ir.Var) and v.name in lw.literal_locals:  # `T = 32` in the kernel's body
        return lw.literal_locals[v.name]
    c = lw.const_locals.get(v.name) if isinstance(v, ir.Var) else None
    if isinstance(c, int) and not isinstance(c, bool):  # `F1F2 = F1 * F2` of constants
        return c
    raise lw.error(node, f"{what} must be a compile-time integer",
                   "use a literal, a global or a Constant[int] parameter")


def is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def call_name(node) -> str | None:
    """The name a call is made by: ``full`` of ``ct.full(...)`` and of ``full(...)``."""
    f = node.func if isinstance(node, ast.Call) else None
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def static_shape(lw: Lowerer, v, node, what: str = "a tile shape",
                 allow_neg: bool = False) -> tuple:
    items = v.items if isinstance(v, Tup) else [v]
    try:
        out = tuple(static_int(lw, x, node, what) for x in items)
    except KernelCompileError as e:
        fname = call_name(node)
        if fname is None:
            raise
        # cuTile's words: the shape argument of a tile function is a constant
        raise lw.error(node, f'Invalid argument "shape" of {fname}(): Expected a constant '
                             f"integer tuple, but given value is not constant ({what} must be "
                             "a compile-time integer)", e.hint, cls=TileCodeTypeError) from None
    for d in out:
        if allow_neg and d == -1:
            continue
        if not is_pow2(d):
            raise lw.error(node, f"{what} {out}: every dimension must be a power of two",
                           "pad the data to a power of two and use padding_mode / masks")
    return out


def norm_axes(lw: Lowerer, v, ndim: int, node) -> tuple[int, ...]:
    """Normalized axes of ``v`` (None: all)."""
    if v is None or isinstance(v, Py) and v.obj is None:
        return tuple(range(ndim))
    items = v.items if isinstance(v, Tup) else [v]
    out = []
    for x in items:
        a = static_int(lw, x, node, "an axis")
        if not -ndim <= a < ndim:
            raise lw.error(node, f"axis {a} is out of range for a {ndim}-d tile")
        out.append(a % ndim)
    dup = sorted(a for a in set(out) if out.count(a) > 1)
    if dup:
        raise lw.error(node, f"Repeated reduction axis {dup[0]}", f"the axes were {tuple(out)}",
                       cls=TileCodeTypeError)
    return tuple(sorted(out))


def static_bool(lw: Lowerer, v, node, what: str) -> bool:
    if isinstance(v, ir.Const) and isinstance(v.value, bool):
        return v.value
    if isinstance(v, Py) and isinstance(v.obj, bool):
        return v.obj
    if isinstance(v, ir.Const) and isinstance(v.value, int):
        return bool(v.value)
    raise lw.error(node, f"{what} must be a compile-time True or False")


def dtype_of(lw: Lowerer, v, node) -> Scalar:
    obj = v.obj if isinstance(v, Py) else v
    st = None if isinstance(obj, ir.Expr) else scalar_of(obj)
    if st is None:
        raise lw.error(node, f"{describe_value(v)} is not a dtype",
                       "use e.g. ct.float32 or x.dtype")
    return st


def enum_member(lw: Lowerer, v, cls, node, what: str):
    if isinstance(v, Py) and isinstance(v.obj, cls):
        return v.obj
    if isinstance(v, Py) and isinstance(v.obj, enum.Enum) and type(v.obj).__name__ == \
            cls.__name__:  # cuTile's own enum, when a ported kernel still imports it
        return cls(v.obj.value)
    raise lw.error(node, f"{what} must be a {cls.__name__} member, got {describe_value(v)}")


def scalar_arg(lw: Lowerer, v, node) -> ir.Expr:
    """A scalar operand of a tile operation (a number, a kernel value, a 1-element tile)."""
    if is_tile(v):
        return item(lw, v, node)
    return lw.scalar(v, node)


def tile_or_scalar(lw: Lowerer, v, node):
    if is_tile(v):
        return v
    return lw.scalar(v, node)


def dtype_weak(v) -> tuple[Scalar, bool]:
    """(dtype, weak) of a tile or scalar operand."""
    if is_tile(v):
        return v.type.dtype, False
    return v.type, ty.is_weak(v)


def _weak_with(weak: Scalar, strong: Scalar) -> Scalar:
    # cuTile: a loose float constant with an integer tile picks float32, not float64
    if weak.is_float and not strong.is_float:
        return float32
    if weak.is_int and strong.kind == "b":
        return int32
    return strong


_TILE_FLOATS = ("float16", "bfloat16", "float32", "float64")
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}


def tile_promote(a: Scalar, b: Scalar) -> Scalar | None:
    """The common dtype of two tile dtypes by cuTile's rule (its "Arithmetic Promotion"), or
    None where cuTile asks for an explicit cast.

    The categories bool < integral < floating point: a dtype of a higher category wins;
    within a category the wider dtype wins, but signed with unsigned integers, float16 with
    bfloat16, and tfloat32 or a float8/float4 dtype with any other have no common dtype.
    (Unlike the thread level's NumPy rule: int16 with float16 is float16 here, float32
    there.) Complex dtypes, a threadtile extension, promote as at the thread level."""
    if a == b:
        return a
    if a.kind not in _CATEGORY or b.kind not in _CATEGORY:  # complex
        return promote(a, b)
    if any(x.kind == "f" and x.name not in _TILE_FLOATS for x in (a, b)):
        return None
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb:
        return a if ca > cb else b
    if ca == 1 and a.kind != b.kind or {a.name, b.name} == {"float16", "bfloat16"}:
        return None
    return a if a.bits >= b.bits else b


def unify(lw: Lowerer, a, b, node) -> Scalar:
    """The dtype two tile operands (tiles or scalars) combine in: a loosely typed operand
    takes the other's dtype (``_weak_with``), two typed ones :func:`tile_promote`'s, an error
    at ``node`` where cuTile has none."""
    at, aw = dtype_weak(a)
    bt, bw = dtype_weak(b)
    if aw and not bw:
        return _weak_with(at, bt)
    if bw and not aw:
        return _weak_with(bt, at)
    t = tile_promote(at, bt)
    if t is None:
        raise lw.error(node, f"Implicit promotion of {at} and {bt} is not supported",
                       "convert one of them first: .astype(dtype)", cls=TileCodeTypeError)
    return t


def shape_of(v) -> tuple:
    return v.type.shape if is_tile(v) else ()


def broadcast_shapes(lw: Lowerer, shapes: list[tuple], node) -> tuple:
    nd = builtins.max(len(s) for s in shapes)
    out = []
    for k in range(nd):
        dims = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise lw.error(node, f"tile shapes {' and '.join(map(str, shapes))} do not "
                                 "broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def cast(lw: Lowerer, v, t: Scalar, node):
    """``v`` (tile or scalar) converted to dtype ``t``."""
    if is_tile(v):
        if v.type.dtype == t:
            return v
        if v.type.dtype == tfloat32 and t != float32:
            v = cast(lw, v, float32, node)
        return tile_op(lw, node, TileType(t, v.type.shape), "cast", [v])
    return ty.convert(v, t)


def broadcast(lw: Lowerer, v, shape: tuple, node):
    """A tile broadcast to ``shape`` (scalars are left as they are)."""
    if not is_tile(v) or v.type.shape == shape:
        return v
    return tile_op(lw, node, TileType(v.type.dtype, shape), "broadcast", [v])


def item(lw: Lowerer, v: ir.Expr, node) -> ir.Expr:
    """The value of a one-element tile, as a scalar."""
    if v.type.size != 1:
        raise lw.error(node, f"Cannot reshape {tuple(v.type.shape)} to (): a {v.type} is used "
                             "where a number is needed", "reduce it first (ct.sum, ct.max, ...) "
                             "to one element", cls=TileCodeTypeError)
    return tile_op(lw, node, v.type.dtype, "item", [v])


def no_tf32(lw: Lowerer, v, node, what: str) -> None:
    """The error for arithmetic on a restricted float tile (tfloat32, the 8-bit floats,
    float4_e2m1fn): frontend/tile_dtypes.py's no_arith."""
    if is_tile(v) and v.type.dtype.restricted:
        t = v.type.dtype
        raise lw.error(node, f"Non-arithmetic dtype {t} is unsupported for {what}",
                       f"{t} tiles are operands of mma/matmul, or converted: "
                       ".astype(ct.float32)", cls=TileCodeTypeError)


# ---------------------------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------------------------

_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod",
          "**": "pow", "&": "and", "|": "or", "^": "xor", "<<": "shl", ">>": "shr",
          "max": "max", "min": "min"}
_CMP = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


def binop(lw: Lowerer, op: str, a, b, node) -> ir.Expr:
    """``a op b`` where at least one side is a tile."""
    a, b = tile_or_scalar(lw, a, node), tile_or_scalar(lw, b, node)
    for v in (a, b):
        no_tf32(lw, v, node, f"operator {op}")
    if op == "**" and isinstance(b, ir.Const) and isinstance(b.value, int) and \
            b.value in (1, 2, 3) and is_tile(a):
        r = a
        for _ in range(b.value - 1):
            r = binop(lw, "*", r, a, node)
        return r
    t = unify(lw, a, b, node)
    if op in ("&", "|", "^", "<<", ">>") and t.is_float:
        raise lw.error(node, f"operator {op} needs integer or bool tiles, got {t}")
    if op in ("+", "-", "*", "//", "%", "**") and t == bool_:
        t = int32
    if op == "/" and not t.is_float:
        t = float32  # cuTile divides integer tiles to float32, keeping tiles off float64
    shape = broadcast_shapes(lw, [shape_of(a), shape_of(b)], node)
    args = [broadcast(lw, cast(lw, v, t, node), shape, node) for v in (a, b)]
    return tile_op(lw, node, TileType(t, shape), "binop", args, op=_ARITH[op])


def compare(lw: Lowerer, op: str, a, b, node) -> ir.Expr:
    a, b = tile_or_scalar(lw, a, node), tile_or_scalar(lw, b, node)
    t = unify(lw, a, b, node)
    shape = broadcast_shapes(lw, [shape_of(a), shape_of(b)], node)
    args = [broadcast(lw, cast(lw, v, t, node), shape, node) for v in (a, b)]
    return tile_op(lw, node, TileType(bool_, shape), "binop", args, op=_CMP[op])


def unary(lw: Lowerer, op: str, v: ir.Expr, node) -> ir.Expr:
    if op == "+":
        return v
    no_tf32(lw, v, node, f"operator {op}")
    t = v.type.dtype
    if op == "not":
        raise lw.error(node, "`not` of a tile", "use ~mask for an elementwise not of a bool tile")
    if op == "~" and t.is_float:
        raise lw.error(node, "operator ~ needs an integer or bool tile")
    if op == "-" and t == bool_:
        v, t = cast(lw, v, int32, node), int32
    return tile_op(lw, node, v.type, "unary", [v], op={"-": "neg", "~": "invert"}[op])


def where(lw: Lowerer, c, x, y, node) -> ir.Expr:
    c = tile_or_scalar(lw, c, node)
    x, y = tile_or_scalar(lw, x, node), tile_or_scalar(lw, y, node)
    if not is_tile(c) and not is_tile(x) and not is_tile(y):
        raise lw.error(node, "ct.where() needs at least one tile", "use `x if c else y`")
    if is_tile(c) and c.type.dtype != bool_:
        c = compare(lw, "!=", c, ir.Const(int64, lw.loc(node), 0, weak=True), node)
    elif not is_tile(c):
        c = lw.truth(c, node)
    if is_tile(x) or is_tile(y):
        t = unify(lw, x, y, node)
    else:
        t, weak = ty.unify(x.type, ty.is_weak(x), y.type, ty.is_weak(y))
        if weak and t != bool_:  # two literals: cuTile's default dtypes, int32 and float32
            t = float32 if t.is_float else int32
    shape = broadcast_shapes(lw, [shape_of(c), shape_of(x), shape_of(y)], node)
    if not is_tile(c):  # a number as the condition: the same for every element
        c = tile_op(lw, node, TileType(bool_, shape), "full", [c])
    args = [broadcast(lw, c, shape, node)] + [broadcast(lw, cast(lw, v, t, node), shape, node)
                                              for v in (x, y)]
    return tile_op(lw, node, TileType(t, shape), "where", args)


MATH_FUNCS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "sinh",
         "cosh", "floor", "ceil")


def math(lw: Lowerer, name: str, v, node, approx: bool = False) -> ir.Expr:
    """An elementwise math function of a tile; integer tiles compute in float32. ``approx``
    (exp only) asks for the fast hardware exponential, on float32 and 16-bit float tiles."""
    no_tf32(lw, v, node, name)
    t = v.type.dtype
    if approx:
        if t.name == "float64":
            raise lw.error(node, "exp(): rounding_mode=RoundingMode.APPROX is for float32 "
                                 "(and 16-bit float) tiles, not float64",
                           "drop the rounding_mode, or cast the tile to float32")
        name = "exp_approx"
    if name == "abs":
        if t.kind in "ub":
            return v
        return tile_op(lw, node, v.type, "math", [v], fn="abs")
    if name == "isnan":
        if not t.is_float:
            return full_like(lw, v.type.shape, False, bool_, node)
        return tile_op(lw, node, TileType(bool_, v.type.shape), "math", [v], fn="isnan")
    if not t.is_float:
        v, t = cast(lw, v, float32, node), float32
    return tile_op(lw, node, v.type, "math", [v], fn=name)


def full_like(lw: Lowerer, shape: tuple, value, t: Scalar, node) -> ir.Expr:
    c = ir.Const(t, lw.loc(node), ty.py_value(value, t))
    return tile_op(lw, node, TileType(t, shape), "full", [c])


# ---------------------------------------------------------------------------------------------
# assignment, attributes, methods, subscripts (the Lowerer's hooks)
# ---------------------------------------------------------------------------------------------

def assign(lw: Lowerer, node, name: str, value: ir.Expr) -> list[ir.Stmt]:
    """``name = tile``: a name re-bound to a tile of another shape or dtype is a new variable
    (versions.py)."""
    return versions.assign(lw, node, name, value)


_METHODS = ("astype", "reshape", "permute", "transpose", "item", "extract", "insert")


def tile_attr(lw: Lowerer, base: ir.Expr, attr: str, node):
    t: TileType = base.type
    loc = lw.loc(node)
    if attr == "shape":
        return Tup([ir.Const(int64, loc, d, weak=True) for d in t.shape])
    if attr == "dtype":
        return Py(t.dtype)
    if attr == "ndim":
        return ir.Const(int64, loc, t.ndim, weak=True)
    if attr in _METHODS:
        return Py(TileMethod(base, attr))
    if attr == "T" and t.ndim == 2:
        return permute(lw, base, (1, 0), node)
    raise lw.unsupported(node, f"tile attribute '{attr}'",
                         "tiles have .shape, .dtype, .ndim, .astype(), .reshape(), "
                         ".permute(), .transpose() and .item()")


def call_method(lw: Lowerer, m: TileMethod, node: ast.Call):
    name = m.name
    x = m.base
    if name == "reshape":
        args = [lw.expr(a) for a in node.args]
        shape = args[0] if len(args) == 1 else Tup(args)
        if node.keywords:
            shape = bind_args(lw, node, "reshape", ["shape"], {})["shape"]
        return reshape(lw, x, shape, node)
    if name == "permute":
        args = [lw.expr(a) for a in node.args]
        axes = args[0] if len(args) == 1 else Tup(args)
        if node.keywords:
            axes = bind_args(lw, node, "permute", ["axes"], {})["axes"]
        return permute(lw, x, permutation(lw, axes, x.type.ndim, node), node)
    if name == "transpose":
        v = bind_args(lw, node, "transpose", ["axis0", "axis1"], {"axis0": None, "axis1": None})
        return transpose(lw, x, v["axis0"], v["axis1"], node)
    if name == "item":
        bind_args(lw, node, "item", [], {})
        return item(lw, x, node)
    raise lw.unsupported(node, f"the tile method {name}()", "see docs/tiles.md")


def subscript(lw: Lowerer, base: ir.Expr, node: ast.Subscript):
    """``x[:, None]``: only new axes (cuTile's extract is not supported yet)."""
    sl = node.slice
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    shape, k = [], 0
    for p in parts:
        if isinstance(p, ast.Constant) and p.value is None:
            shape.append(1)
        elif isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None:
            if k >= base.type.ndim:
                raise lw.error(node, "too many axes in the tile subscript")
            shape.append(base.type.shape[k])
            k += 1
        else:
            raise lw.error(node, "Directly indexing a tile is not supported: a tile subscript "
                                 "only adds axes (x[:, None])", "pick elements with "
                                 "ct.extract, ct.where or a reduction", cls=TileCodeTypeError)
    shape += base.type.shape[k:]
    return tile_op(lw, node, TileType(base.type.dtype, tuple(shape)), "reshape", [base])


# ---------------------------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------------------------

def reshape(lw: Lowerer, x, shape_v, node) -> ir.Expr:
    shape = list(static_shape(lw, shape_v, node, "a reshape", allow_neg=True))
    n = x.type.size
    if shape.count(-1) > 1:
        raise lw.error(node, f"Only one dimension can be -1 in a reshape, got {tuple(shape)}",
                       cls=TileCodeTypeError)
    if -1 in shape:
        rest = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = n // rest if rest else 0
    if int(np.prod(shape)) != n:
        raise lw.error(node, f"Cannot reshape {tuple(x.type.shape)} to {tuple(shape)}: the "
                             f"{x.type} has {n} elements", cls=TileCodeTypeError)
    return tile_op(lw, node, TileType(x.type.dtype, tuple(shape)), "reshape", [x])


def permutation(lw: Lowerer, v, ndim: int, node) -> tuple:
    items = v.items if isinstance(v, Tup) else [v]
    given = tuple(static_int(lw, a, node, "an axis") for a in items)
    if len(given) != ndim:
        raise lw.error(node, f"Expected tuple of length {ndim}, got {len(given)}: {given} is "
                             f"not a permutation of the {ndim} axes", cls=TileCodeTypeError)
    for a in given:
        if not -ndim <= a < ndim:
            raise lw.error(node, f"Axis {a} is out of range for rank {ndim}",
                           cls=TileCodeTypeError)
    perm = tuple(a % ndim for a in given)
    for a in perm:
        if perm.count(a) > 1:
            raise lw.error(node, f"Axis order must be a permutation, but axis {a} is used at "
                                 f"least twice: {given} is not a permutation of the {ndim} axes",
                           cls=TileCodeTypeError)
    return perm


def permute(lw: Lowerer, x, perm: tuple, node) -> ir.Expr:
    if perm == tuple(range(len(perm))):
        return x
    shape = tuple(x.type.shape[p] for p in perm)
    return tile_op(lw, node, TileType(x.type.dtype, shape), "permute", [x], perm=perm)


def transpose(lw: Lowerer, x, a0, a1, node) -> ir.Expr:
    nd = x.type.ndim
    none0 = a0 is None or isinstance(a0, Py) and a0.obj is None
    none1 = a1 is None or isinstance(a1, Py) and a1.obj is None
    if nd < 2:
        raise lw.error(node, f"Cannot transpose a tile with fewer than 2 dimensions (a {nd}-d "
                             "tile)", cls=TileCodeTypeError)
    if none0 != none1:
        raise lw.error(node, "transpose axes must either both be specified or both be None",
                       cls=TileCodeTypeError)
    if none0 and none1:
        if nd > 2:
            raise lw.error(node, f"`axes` must be specified for tile with more than 2 dimensions "
                                 f"(a {nd}-d tile)", "name the two axes to swap: "
                                 "ct.transpose(x, 1, 2), or use ct.permute",
                           cls=TileCodeTypeError)
        i, j = 0, 1
    else:
        i = static_int(lw, a0, node, "axis0") % nd
        j = static_int(lw, a1, node, "axis1") % nd
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return permute(lw, x, tuple(perm), node)
