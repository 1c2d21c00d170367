"""Compile-time evaluation in kernels: cuTile's ``ct.static_eval``, ``ct.static_assert`` and
``ct.static_iter``.

The expression is evaluated by Python itself, while the kernel is compiled, in a namespace
where each name the expression reads is what it is bound to in the kernel:

- compile-time values (literals, ``Constant`` parameters, locals assigned once from a constant
  at the top of the function, dtypes, enums, globals, tuples of these) are the Python values;
- runtime values (tiles, scalars, arrays) are :class:`Symbolic` stand-ins: their ``shape``,
  ``dtype`` and ``ndim`` are known (a tile's shape is a tuple of ints, an array's a tuple of
  stand-ins), and arithmetic and comparisons on them build the kernel's IR as the same
  expression in the kernel would. Their truth value and ``int()`` have no value at compile
  time (a ``TileStaticEvalError``).

A tile function called during the evaluation is an error (``ones() cannot be called inside
static_eval()``), and so is any exception the expression raises, both as
``errors.StaticEvalFailed`` (a KernelCompileError that is also cuTile's
``TileStaticEvalError``). A false ``static_assert`` is ``errors.StaticAssertionFailed`` at its
line. ``static_iter(iterable)``, the iterable of a ``for``, is unrolled: the body is lowered
once per item (at most 1000), with the loop variables bound to each item as compile-time
values.

Side effects (``ct.static_eval(log.append(repr(t)))``) happen once per specialization: the
frontend lowers a function more than once while its variables' types settle, and a result
that holds no runtime value is remembered for the expression's place and inputs.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
from typing import TYPE_CHECKING

from ..errors import (
    KernelCompileError,
    StaticAssertionFailed,
    StaticEvalFailed,
    TileCodeSyntaxError,
    TileCodeTypeError,
)
from ..ir import nodes as ir
from ..lang import tile as lt
from ..lang.types import ArrayType, Scalar, TileType, Type, int64
from .inline import Closure
from .values import Py, ScalarMethod, Tup

if TYPE_CHECKING:
    from .lower import Lowerer

MAX_ITERATIONS = 1000  # static_iter's bound on the items it unrolls (cuTile's)


class _NoValue(Exception):
    """A Symbolic value asked for a concrete Python value (truth, int)."""


class Symbolic:
    """A runtime value of the kernel (a tile, a scalar, an array) inside a compile-time
    evaluation. Attributes and operators are the kernel's own, lowered to IR."""

    __slots__ = ("_lw", "_node", "value")

    def __init__(self, lw: Lowerer, node, value):
        self._lw = lw
        self._node = node
        self.value = value

    def __repr__(self) -> str:
        t = self.value.type
        if isinstance(t, ArrayType):
            dims = ", ".join("?" for _ in range(t.ndim))
            return f"<array[{t.dtype}, ({dims}{',' if t.ndim == 1 else ''})]>"
        if isinstance(t, TileType):
            return f"<tile[{t.dtype}, {tuple(t.shape)}]>"
        if isinstance(t, Scalar):
            return f"<tile[{t}, ()]>"
        return f"<{t}>"

    # the kernel's attribute and operators, lowered as the same expression would be
    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _apply(self._lw, self._node, lambda n: ast.Attribute(n[0], attr, ast.Load()),
                      [self])

    def __bool__(self):
        raise _NoValue("Symbolic tile has no concrete value and thus cannot be converted to a "
                       "bool")

    def __index__(self):
        raise _NoValue("Symbolic tile has no concrete value and thus cannot be converted to an "
                       "integer")

    __int__ = __index__

    def __float__(self):
        raise _NoValue("Symbolic tile has no concrete value and thus cannot be converted to a "
                       "float")

    def __iter__(self):
        raise TypeError(f"{self!r} is not iterable at compile time")

    __hash__ = object.__hash__


def _binop(op):
    def f(self, other):
        return _apply(self._lw, self._node, lambda n: ast.BinOp(n[0], op(), n[1]), [self, other])

    def r(self, other):
        return _apply(self._lw, self._node, lambda n: ast.BinOp(n[0], op(), n[1]), [other, self])
    return f, r


def _cmp(op):
    def f(self, other):
        return _apply(self._lw, self._node, lambda n: ast.Compare(n[0], [op()], [n[1]]),
                      [self, other])
    return f


for _name, _op in (("add", ast.Add), ("sub", ast.Sub), ("mul", ast.Mult), ("truediv", ast.Div),
                   ("floordiv", ast.FloorDiv), ("mod", ast.Mod), ("pow", ast.Pow),
                   ("lshift", ast.LShift), ("rshift", ast.RShift), ("and", ast.BitAnd),
                   ("or", ast.BitOr), ("xor", ast.BitXor), ("matmul", ast.MatMult)):
    _f, _r = _binop(_op)
    setattr(Symbolic, f"__{_name}__", _f)
    setattr(Symbolic, f"__r{_name}__", _r)
for _name, _op in (("lt", ast.Lt), ("le", ast.LtE), ("gt", ast.Gt), ("ge", ast.GtE),
                   ("eq", ast.Eq), ("ne", ast.NotEq)):
    setattr(Symbolic, f"__{_name}__", _cmp(_op))
Symbolic.__neg__ = lambda self: _apply(self._lw, self._node,
                                       lambda n: ast.UnaryOp(ast.USub(), n[0]), [self])
Symbolic.__invert__ = lambda self: _apply(self._lw, self._node,
                                          lambda n: ast.UnaryOp(ast.Invert(), n[0]), [self])


def _apply(lw: Lowerer, node, build, operands: list):
    """Lower the expression ``build`` makes of names bound to ``operands`` (Symbolic values or
    Python values), as the kernel would lower it; its value back as a Python value."""
    names = []
    for v in operands:
        tmp = lw.spec.fresh("static")
        lw.statics[tmp] = from_py(lw, v, node)
        names.append(ast.Name(tmp, ast.Load()))
    expr = build(names)
    for n in ast.walk(expr):
        ast.copy_location(n, node)
        n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
    with lt.static_scope(False):  # the kernel's own operators may call tile functions
        try:
            return to_py(lw, node, lw.expr(expr))
        finally:
            for n in names:
                del lw.statics[n.id]


def _call(lw: Lowerer, node, f, args: tuple, kwargs: dict):
    """An elementwise tile function called inside static_eval: lowered as the kernel's call."""
    keys = list(kwargs)
    n = len(args)
    return _apply(lw, node, lambda ns: ast.Call(ns[0], ns[1:1 + n], [
        ast.keyword(k, v) for k, v in zip(keys, ns[1 + n:])]), [f, *args, *kwargs.values()])


# ---- values across the boundary --------------------------------------------------------------

class _KernelCallable:
    """A function of the kernel (a nested ``def``, a method of a kernel value) inside the
    evaluation: it runs on the GPU, so calling it is cuTile's TileStaticEvalError; handed back
    to the kernel (``static_iter`` over lambdas) it is the kernel's function again."""

    def __init__(self, obj):
        self.obj = obj
        self.name = obj.name

    def __call__(self, *args, **kwargs):
        raise lt.StaticCall(self.name)


def to_py(lw: Lowerer, node, v):
    """A lowered value as the evaluation sees it."""
    if isinstance(v, ir.Const):
        return v.value
    if isinstance(v, Py):
        if isinstance(v.obj, (Closure, ScalarMethod)):  # kernel code, not Python's
            return _KernelCallable(v.obj)
        return v.obj
    if isinstance(v, Tup):
        items = [to_py(lw, node, x) for x in v.items]
        if v.cls is not None:  # a frozen dataclass: an instance of it (fields may be stand-ins)
            return v.cls(**dict(zip(v.names, items)))
        return tuple(items)
    if isinstance(v, ir.Var) and v.name in lw.const_locals:
        return lw.const_locals[v.name]
    if isinstance(v, ir.Expr):
        return Symbolic(lw, node, v)
    return v


def from_py(lw: Lowerer, v, node, what: str = "static_eval()"):
    """A Python value the evaluation produced, as a lowered value."""
    if isinstance(v, Symbolic):
        return v.value
    if isinstance(v, _KernelCallable):
        return Py(v.obj)
    if isinstance(v, tuple):
        return Tup([from_py(lw, x, node, what) for x in v], tuple(getattr(v, "_fields", ())))
    if hasattr(type(v), "__dataclass_fields__") and not isinstance(v, (type, Type)) and \
            not type(v).__module__.startswith("threadtile."):  # (a closure is no dataclass)
        params = getattr(type(v), "__dataclass_params__", None)
        if not getattr(params, "frozen", False):
            raise lw.error(node, "Only frozen dataclasses are supported",
                           cls=TileCodeTypeError)
        names = tuple(f.name for f in dataclasses.fields(v))
        return Tup([from_py(lw, getattr(v, n), node, what) for n in names], names, type(v))
    if isinstance(v, (list, dict, set)):
        raise lw.error(node, f"Cannot create constant from value of type {type(v).__name__}.",
                       cls=StaticEvalFailed)
    return lw.py_to_value(v, node, wrap=True)


def _holds_symbolic(v) -> bool:
    if isinstance(v, Symbolic):
        return True
    if isinstance(v, tuple):
        return any(_holds_symbolic(x) for x in v)
    return False


def _bound_inside(expr: ast.AST) -> set[str]:
    """Names the expression binds itself: comprehension targets and lambda parameters."""
    out: set[str] = set()
    for n in ast.walk(expr):
        if isinstance(n, ast.comprehension):
            out |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
        elif isinstance(n, ast.Lambda):
            a = n.args
            out |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return out


def _key_of(v):
    if isinstance(v, Symbolic):
        return ("sym", repr(v.value.type))
    if isinstance(v, tuple):
        return ("tuple",) + tuple(_key_of(x) for x in v)
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return ("id", id(v))


def evaluate(lw: Lowerer, expr: ast.expr, node, what: str = "static_eval()",
             items: bool = False):
    """The Python value of ``expr``, evaluated at compile time (see the module's docstring);
    with ``items``, the list of the items it iterates over (static_iter)."""
    for n in ast.walk(expr):
        if isinstance(n, ast.NamedExpr):
            raise lw.error(n, f"{what} expression attempted to modify a local variable "
                              f"'{n.target.id}'", cls=TileCodeSyntaxError)
        if isinstance(n, ast.Call) and _static_kind(lw, n.func) is not None:
            kind = _static_kind(lw, n.func)
            raise lw.error(n, f"{kind}() cannot be used inside {what}.", cls=StaticEvalFailed)
    inner = _bound_inside(expr)
    names: dict[str, object] = {}
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in inner \
                and n.id not in names:
            names[n.id] = to_py(lw, n, lw.expr(n))
    key = (lw.loc(expr).filename, expr.lineno, expr.col_offset, what, items,
           tuple((k, _key_of(v)) for k, v in sorted(names.items())))
    cache = lw.spec.static_results
    if key in cache:
        return cache[key]
    code = compile(ast.fix_missing_locations(ast.Expression(_strip(expr))), lw.src.loc(
        node, lw.fname).filename, "eval")
    scope = dict(names)
    scope["__builtins__"] = builtins
    try:
        with lt.static_scope(True, lambda f, a, k: _call(lw, node, f, a, k)):
            value = eval(code, scope)  # noqa: S307  (the kernel's own source, at compile time)
            if items:
                value = _items(lw, node, value)
    except KernelCompileError:
        raise
    except lt.StaticCall as e:
        raise lw.error(node, f"{e.name}() cannot be called inside {what}",
                       "tile operations run on the GPU; compute from shapes, dtypes and "
                       "constants", cls=StaticEvalFailed) from None
    except _NoValue as e:
        raise lw.error(node, str(e), cls=StaticEvalFailed) from None
    except Exception as e:  # noqa: BLE001  (whatever the user's expression raised)
        raise lw.error(node, f"Exception was raised inside {what} ({type(e).__name__}: {e})",
                       cls=StaticEvalFailed) from None
    if not (_holds_symbolic(value) or items and any(_holds_symbolic(x) for x in value)):
        cache[key] = value
    return value


def _items(lw: Lowerer, node, iterable) -> list:
    try:
        it = iter(iterable)
    except TypeError as e:
        raise lw.error(node, f"Invalid static_iter() iterable: {e}",
                       cls=TileCodeTypeError) from None
    out = []
    for x in it:
        if len(out) == MAX_ITERATIONS:
            raise lw.error(node, f"Maximum number of iterations ({MAX_ITERATIONS}) has been "
                                 "reached while unpacking the static_iter() iterable",
                           cls=StaticEvalFailed)
        out.append(x)
    return out


def _strip(expr: ast.expr) -> ast.expr:
    """A copy of ``expr`` with its positions, to compile on its own."""
    return ast.parse(ast.unparse(expr), mode="eval").body


def _static_kind(lw: Lowerer, func: ast.expr) -> str | None:
    """``"static_eval"``/``"static_assert"``/``"static_iter"`` where ``func`` names one."""
    try:
        v = lw.expr(func)
    except KernelCompileError:
        return None
    obj = v.obj if isinstance(v, Py) else None
    name = getattr(obj, "_threadtile_intrinsic", "")
    if name in ("tile.static_eval", "tile.static_assert", "tile.static_iter"):
        return name[5:]
    return None


def _direct(lw: Lowerer, node: ast.Call, kind: str) -> None:
    """cuTile's rule: ``static_eval`` and friends are called by their own name
    (``ct.static_eval(...)``), not through a local alias."""
    f = node.func
    if isinstance(f, ast.Name) and (f.id in lw.local_names or f.id in lw.statics):
        raise lw.error(node, f"{kind}() must be used directly by name", cls=TileCodeSyntaxError)


# ---- the three calls --------------------------------------------------------------------------

def lower_call(lw: Lowerer, kind: str, node: ast.Call):
    _direct(lw, node, kind)
    if kind == "static_iter":
        raise lw.error(node, "static_iter() is only allowed as iterable in a `for` loop",
                       cls=TileCodeSyntaxError)
    if kind == "static_eval":
        if len(node.args) != 1 or node.keywords:
            raise lw.error(node, "static_eval() expects a single expression",
                           cls=TileCodeSyntaxError)
        return from_py(lw, evaluate(lw, node.args[0], node), node)
    # static_assert(cond, msg=None, /)
    if not 1 <= len(node.args) <= 2 or node.keywords:
        raise lw.error(node, "static_assert(cond, msg=None, /) expects one or two positional "
                             "arguments", cls=TileCodeSyntaxError)
    cond = evaluate(lw, node.args[0], node, "static_assert()")
    if _holds_symbolic(cond):
        raise lw.error(node.args[0], "static_assert() condition must be a compile-time "
                                     f"constant, got {cond!r}",
                       "its value is known only when the kernel runs: use assert for a "
                       "check at run time", cls=TileCodeTypeError)
    if not isinstance(cond, bool) and type(cond).__name__ != "bool_":
        raise lw.error(node.args[0], "static_assert() condition must be a boolean, got "
                                     f"{type(cond).__name__}", cls=TileCodeTypeError)
    if not cond:
        msg = "Static assertion failed"
        if len(node.args) == 2:
            text = evaluate(lw, node.args[1], node, "static_assert()")
            text = text if isinstance(text, str) else repr(text)
            if text:
                msg += f": {text}"
        raise lw.error(node, msg, "a ct.static_assert() condition is false for this "
                                  "specialization", cls=StaticAssertionFailed)
    return Py(None)


def is_static_iter(lw: Lowerer, it: ast.expr) -> bool:
    return isinstance(it, ast.Call) and _static_kind(lw, it.func) == "static_iter"


def lower_for(lw: Lowerer, node: ast.For) -> list[ir.Stmt]:
    """``for target in ct.static_iter(iterable):`` unrolled at compile time."""
    call: ast.Call = node.iter
    _direct(lw, call, "static_iter")
    if len(call.args) != 1 or call.keywords:
        raise lw.error(call, "static_iter() takes one iterable", cls=TileCodeSyntaxError)
    if node.orelse:
        raise lw.unsupported(node, "for ... else", "use a flag variable")
    for n in own_statements(node.body):
        if isinstance(n, ast.Continue):
            raise lw.error(n, "Continue in a for loop with static_iter() is not supported",
                           cls=TileCodeSyntaxError)
        if isinstance(n, ast.Break):
            raise lw.error(n, "Break in a for loop with static_iter() is not supported",
                           cls=TileCodeSyntaxError)
        if isinstance(n, ast.Return):
            raise lw.error(n, "Returning from a for loop is not supported",
                           cls=TileCodeSyntaxError)
    items = evaluate(lw, call.args[0], call, "static_iter() iterable", items=True)
    values = []
    for k, x in enumerate(items):
        if isinstance(x, (list, dict, set)) or (
                isinstance(x, tuple) and any(isinstance(y, (list, dict, set)) for y in x)):
            bad = x if not isinstance(x, tuple) else next(
                y for y in x if isinstance(y, (list, dict, set)))
            raise lw.error(call, f"Invalid item #{k} of static_iter() iterable: Cannot create "
                                 f"constant from value of type {type(bad).__name__}.",
                           cls=StaticEvalFailed)
        values.append(from_py(lw, x, call))
    out: list[ir.Stmt] = []
    lw.defined |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    for v in values:
        out += _bind(lw, node.target, v, node)
        lw.depth -= 1  # the body is lowered as straight-line code at the loop's own level
        try:
            out += lw.lower_body(node.body)
        finally:
            lw.depth += 1
    return out


def unroll_range(lw: Lowerer, node: ast.For, values: range) -> list[ir.Stmt]:
    """``for i in range(len(arrays)):`` whose body indexes a tuple (a list of arrays passed to
    the kernel) with ``i``: unrolled, ``i`` a compile-time int in each copy of the body, as
    ``static_iter`` does (loops.py decides: constant bounds, a tuple of arrays or tuples, no
    ``break``/``continue``)."""
    if len(values) > MAX_ITERATIONS:
        raise lw.error(node.iter, f"a loop that indexes a tuple with its variable is unrolled, "
                                  f"and {len(values)} iterations are too many")
    out: list[ir.Stmt] = []
    lw.defined.add(node.target.id)
    for v in values:
        lw.statics[node.target.id] = ir.Const(int64, lw.loc(node.target), v, weak=True)
        lw.depth -= 1
        try:
            out += lw.lower_body(node.body)
        finally:
            lw.depth += 1
    return out


def own_statements(body: list[ast.stmt]):
    """The statements of ``body`` that a break/continue/return there would leave the loop from
    (not those of nested loops and functions, except returns)."""
    for s in body:
        yield s
        if isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
            for n in ast.walk(s):
                if isinstance(n, ast.Return):
                    yield n
            continue
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(s, field, None)
            if isinstance(sub, list):
                yield from own_statements([x for x in sub if isinstance(x, ast.stmt)])


def _bind(lw: Lowerer, target: ast.expr, v, node) -> list[ir.Stmt]:
    """Bind a static_iter item: a compile-time value (a constant, a dtype, a tuple of them)
    becomes a compile-time name; a runtime value is assigned as by ``=``."""
    if isinstance(target, (ast.Tuple, ast.List)):
        if not isinstance(v, Tup) or len(v.items) != len(target.elts):
            raise lw.error(target, "cannot unpack this static_iter() item into "
                                   f"{len(target.elts)} names", cls=StaticEvalFailed)
        out: list[ir.Stmt] = []
        for t, x in zip(target.elts, v.items):
            out += _bind(lw, t, x, node)
        return out
    if not isinstance(target, ast.Name):
        raise lw.error(target, "a static_iter() loop binds names or tuples of names",
                       cls=TileCodeSyntaxError)
    out = []
    if not _compile_time(v):
        # a runtime item is held in a temporary the loop's name stands for (the name may
        # shadow a parameter, as in Python; the item keeps the value it had before the loop)
        tmp = lw.spec.fresh(f"{target.id}_it")
        lw.local_names.add(tmp)
        out = lw.assign_name(node, tmp, v)
        v = lw.read_name(tmp, node)
    lw.statics[target.id] = v
    return out


def _compile_time(v) -> bool:
    if isinstance(v, (ir.Const, Py)):
        return True
    if isinstance(v, Tup):
        return all(_compile_time(x) for x in v.items)
    return False
