"""Functions lowered in their caller's body (inlined), as cuTile inlines every call:
nested ``def``s and ``lambda``s (closures), and the helpers that make or take them.

A nested ``def`` or a ``lambda`` is a compile-time value, a :class:`Closure`: its code, where
it was written, and the values of its default arguments (evaluated where it is defined, as
Python does). Calling one lowers a copy of its body in the caller's Lowerer, its own names
renamed apart (``_i3_t``), its free names left pointing at the enclosing function's variables:
a closure reads them when it is called (Python's late binding), and one returned from an
inlined function keeps reading that call's variables, which nothing assigns any more (cuTile's
frozen captures). A closure is passed to a helper as a compile-time object: the helper is then
inlined too, so the closure can still see its variables.

``return`` inside an inlined body: a body that returns only at its end yields that value; one
with other returns is lowered as a loop run once (``while True: ... break``), each
``return v`` an assignment to the result and a ``break`` (frontend/exits.py does the same for
a ``with`` block's exits).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import inspect
import re
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import KernelCompileError, TileCodeRecursionError, TileCodeTypeError
from ..ir import nodes as ir
from . import dicts, flow, returns, tiles
from .source import MISSING, SourceInfo, get_source, resolve_name
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


@dataclass(eq=False)
class Closure:
    """A nested ``def`` or ``lambda`` as a value: its (renamed) code, the source and function
    it was written in, and its default arguments' values."""

    node: ast.FunctionDef | ast.Lambda
    src: SourceInfo
    fn: types.FunctionType  # whose globals its free names that are not locals read
    fname: str
    defaults: dict = field(default_factory=dict)
    # its free names that are targets of the tuple comprehensions it was made in -> their
    # cells (comprehensions.py): it reads the value the target holds when it is called
    cells: dict = field(default_factory=dict)

    @property
    def origin(self) -> tuple:
        """Where it was written: closures made by one def or lambda share it."""
        return (self.src.filename, self.node.lineno, self.node.col_offset)

    @property
    def name(self) -> str:
        return "lambda" if isinstance(self.node, ast.Lambda) else self.node.name

    def __repr__(self) -> str:
        line = self.src.loc(self.node, self.fname).line
        what = "lambda" if isinstance(self.node, ast.Lambda) else f"function '{self.name}'"
        return f"<{what} @{self.src.filename.rsplit('/', 1)[-1]}:{line}>"

    __str__ = __repr__


@dataclass(eq=False)
class BoundMethod:
    """``obj.method`` of a dataclass value before the call: the function and ``self``."""

    func: types.FunctionType
    self_value: object

    def __repr__(self) -> str:
        return f"<bound method {self.func.__qualname__}>"


class Splice(ast.stmt):
    """Statements of another function (or of the caller, inside an inlined body), lowered with
    that function's source (for locations) and globals."""

    _fields = ("body",)

    def __init__(self, body: list[ast.stmt] | None = None, src: SourceInfo | None = None,
                 fn=None, fname: str = "", **kw):
        super().__init__(**kw)
        self.body = body or []
        self.src = src
        self.fn = fn
        self.fname = fname


# ---- scopes --------------------------------------------------------------------------------

def _arg_names(a: ast.arguments) -> list[str]:
    names = [x.arg for x in a.posonlyargs + a.args]
    if a.vararg:
        names.append(a.vararg.arg)
    names += [x.arg for x in a.kwonlyargs]
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def scope_locals(f: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names local to ``f``: its parameters and every name its own body binds."""
    out = set(_arg_names(f.args))
    body = f.body if isinstance(f.body, list) else [f.body]
    for n in flow.walk_scope(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
    return out


def scope_stores(f: ast.FunctionDef | ast.Lambda) -> dict[str, int]:
    """How many times ``f``'s own body binds each name."""
    out: dict[str, int] = {}
    body = f.body if isinstance(f.body, list) else [f.body]
    for n in flow.walk_scope(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out[n.id] = out.get(n.id, 0) + 1
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[n.name] = out.get(n.name, 0) + 1
    return out


class _Renamer(ast.NodeTransformer):
    """Renames the names of one scope (and the free names of the functions nested in it)."""

    def __init__(self, mapping: dict[str, str]):
        self.m = mapping

    def visit_Name(self, n: ast.Name):
        n.id = self.m.get(n.id, n.id)
        return n

    def _inner(self, f) -> _Renamer:
        own = scope_locals(f)
        return _Renamer({k: v for k, v in self.m.items() if k not in own})

    def visit_FunctionDef(self, n: ast.FunctionDef):
        n.decorator_list = [self.visit(d) for d in n.decorator_list]
        n.args.defaults = [self.visit(d) for d in n.args.defaults]
        n.args.kw_defaults = [d if d is None else self.visit(d) for d in n.args.kw_defaults]
        n.name = self.m.get(n.name, n.name)
        inner = self._inner(n)
        n.body = [inner.visit(s) for s in n.body]
        return n

    def visit_Lambda(self, n: ast.Lambda):
        n.args.defaults = [self.visit(d) for d in n.args.defaults]
        n.args.kw_defaults = [d if d is None else self.visit(d) for d in n.args.kw_defaults]
        n.body = self._inner(n).visit(n.body)
        return n


# ---- defining closures ---------------------------------------------------------------------

def define(lw: Lowerer, node: ast.FunctionDef | ast.Lambda) -> Closure:
    """The closure a ``def`` or ``lambda`` statement makes: its defaults evaluated now."""
    if isinstance(node, ast.FunctionDef) and node.decorator_list:
        raise lw.unsupported(node.decorator_list[0], "a decorator on a nested function")
    a = node.args
    defaults = {}
    positional = a.posonlyargs + a.args
    for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
        defaults[p.arg] = _snapshot(lw, lw.expr(d), d)
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is not None:
            defaults[p.arg] = _snapshot(lw, lw.expr(d), d)
    return Closure(node, lw.src, lw.fn, lw.fname, defaults, _cells(lw, node))


def _cells(lw: Lowerer, node: ast.FunctionDef | ast.Lambda) -> dict:
    """The cells of the comprehensions being unrolled whose targets ``node`` reads (the
    innermost comprehension binding a name wins, as in Python)."""
    scopes = lw.__dict__.get("comprehension_cells")
    if not scopes:
        return {}
    body = node.body if isinstance(node.body, list) else [node.body]
    free = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)} - \
        scope_locals(node)
    out: dict = {}
    for names, cell in reversed(scopes):
        for g in free & names:
            out.setdefault(g, cell)
    return out


def _snapshot(lw: Lowerer, v, node):
    """A default value as it is now: a runtime value is copied into a new variable."""
    if isinstance(v, ir.Expr) and not isinstance(v, ir.Const):
        name = lw.spec.fresh("dflt")
        lw.local_names.add(name)
        lw.pre.extend(lw.assign_name(node, name, v))
        return lw.read_name(name, node)
    return v


def lower_def(lw: Lowerer, node: ast.FunctionDef) -> list:
    """``def f(...)`` inside a kernel or helper: ``f`` names the closure."""
    lw.defined.add(node.name)
    return tiles.assign_static(lw, node, node.name, Py(define(lw, node)))


def _static(v) -> bool:
    if isinstance(v, ir.Const):
        return True
    if isinstance(v, Py):
        return not isinstance(v.obj, dicts.KwDict) or all(map(_static, v.obj.items.values()))
    if isinstance(v, Tup):
        return all(map(_static, v.items))
    return False


def has_closure(v) -> bool:
    if isinstance(v, Py):
        return isinstance(v.obj, Closure)
    if isinstance(v, Tup):
        return any(has_closure(x) for x in v.items)
    return False


_INLINED_SYNTAX = (ast.FunctionDef, ast.Lambda, ast.With, ast.Yield)


def wants_inline(fn, args: list, kwargs: dict) -> bool:
    """Whether a call of the Python function ``fn`` is inlined rather than compiled as a device
    function: it is given a closure, or defines functions or enters context managers (whose
    values cannot cross a device function's boundary)."""
    if any(has_closure(v) for v in list(args) + list(kwargs.values())):
        return True
    vals = list(args) + list(kwargs.values())
    if vals and all(_static(v) for v in vals):
        return True  # evaluated at compile time, as cuTile does: `res = leaf(3, 4, 5)` is 345
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return True  # f(*args, **kwargs): bound as a tuple and a dict at compile time
    try:
        tree = get_source(fn).tree
    except KernelCompileError:
        return False
    return any(isinstance(n, _INLINED_SYNTAX) for s in tree.body for n in ast.walk(s))


# ---- calling -------------------------------------------------------------------------------

def call_args(lw: Lowerer, node: ast.Call) -> tuple[list, dict]:
    args: list = []
    for a in node.args:
        if isinstance(a, ast.Starred):  # f(*t) with t a tuple
            v = lw.expr(a.value)
            if not isinstance(v, Tup):
                raise lw.error(a, f"Expected a tuple after *, got {describe_value(v)}",
                               "only a tuple unpacks into arguments", cls=TileCodeTypeError)
            args += v.items
        else:
            args.append(lw.expr(a))
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            v = lw.expr(kw.value)
            if not dicts.is_dict(v):
                raise lw.error(kw.value, "only a dict can be unpacked into keyword arguments "
                                         "with **")
            kwargs.update(v.obj.items)
            continue
        kwargs[kw.arg] = lw.expr(kw.value)
    return args, kwargs


def call_method(lw: Lowerer, m: BoundMethod, node: ast.Call):
    args, kwargs = call_args(lw, node)
    return call_function(lw, m.func, [m.self_value] + args, kwargs, node)


def call_closure(lw: Lowerer, c: Closure, node: ast.Call):
    args, kwargs = call_args(lw, node)
    return inline(lw, c.node, c.src, c.fn, c.fname, args, kwargs, node, c.defaults,
                  foreign=False, cells=c.cells)


def call_function(lw: Lowerer, fn: types.FunctionType, args: list, kwargs: dict,
                  node: ast.Call):
    """``fn(...)``, a Python function, inlined."""
    src = get_source(fn)
    defaults = _py_defaults(lw, fn, node)
    return inline(lw, src.tree, src, fn, fn.__name__, args, kwargs, node, defaults,
                  foreign=True)


def bind(lw: Lowerer, f: ast.FunctionDef | ast.Lambda, name: str, args: list, kwargs: dict,
         defaults: dict, node) -> list[tuple[str, object]]:
    """(parameter, value) for the parameters of ``f``, bound as Python binds a call."""
    a = f.args
    positional = [x.arg for x in a.posonlyargs + a.args]
    out = dict(zip(positional, args))
    extra = list(args[len(positional):])
    if extra and a.vararg is None:
        raise lw.error(node, f"{name}() takes {len(positional)} positional arguments, got "
                             f"{len(args)}", cls=_type_error())
    kw_extra = {}
    posonly = {x.arg for x in a.posonlyargs}
    kwonly = [x.arg for x in a.kwonlyargs]
    for k, v in kwargs.items():
        if k in out:
            raise lw.error(node, f"{name}() got two values for '{k}'",
                           cls=_type_error())
        if (k in positional and k not in posonly) or k in kwonly:
            out[k] = v
        elif a.kwarg is not None:
            kw_extra[k] = v
        else:
            raise lw.error(node, f"{name}() has no parameter '{k}'",
                           cls=_type_error())
    for p in positional + kwonly:
        if p not in out:
            if p not in defaults:
                raise lw.error(node, f"{name}() is missing its argument '{p}'",
                               cls=_type_error())
            out[p] = defaults[p]
    res = [(p, out[p]) for p in positional]
    if a.vararg is not None:
        res.append((a.vararg.arg, Tup(extra)))
    res += [(p, out[p]) for p in kwonly]
    if a.kwarg is not None:
        res.append((a.kwarg.arg, Py(dicts.KwDict(kw_extra))))
    return res


def _type_error():
    from ..errors import TileCodeTypeError
    return TileCodeTypeError


_STACK_LIMIT = 32
TILE_RECURSION_LIMIT = 1000  # nested inlined calls in a tile kernel (cuTile's limit)


def note_caller(lw: Lowerer, node: ast.Call, e: KernelCompileError) -> None:
    """An error raised in the code of a function the kernel calls (inlined, or lowered as a
    device function): the call ``node`` becomes a frame of its traceback, as cuTile shows
    the chain of calls from the kernel to the line."""
    loc = lw.loc(node)
    if e.loc is not None and (e.loc.filename, e.loc.line) != (loc.filename, loc.line):
        e.add_caller(loc, lw.src.source_line(loc.line))


def inline(lw: Lowerer, f: ast.FunctionDef | ast.Lambda, src: SourceInfo, fn, fname: str,
           args: list, kwargs: dict, node: ast.Call, defaults: dict, foreign: bool,
           cells: dict | None = None):
    """The value of calling ``f`` (a function's tree) with ``args``: its body lowered into the
    statements before the caller's current one."""
    name = "lambda" if isinstance(f, ast.Lambda) else f.name
    if lw._lazy and not isinstance(f, ast.Lambda):  # (the caller's line: outside the scope)
        raise lw.error(node, f"a call of {name}() inside `and`/`or`, a conditional "
                             "expression or a loop condition",
                       "assign its result to a variable first")
    try:
        with _scope(lw, f, name, src, fn, fname, args, kwargs, node, defaults, foreign,
                    cells) as (tree, prefix, pre):
            if not isinstance(tree, ast.Lambda):
                return _lower_body(lw, tree.body, pre, prefix, node)
            if not (lw._lazy and pre):
                lw.pre.extend(pre)
                return lw.expr_value(tree.body)
    except KernelCompileError as e:
        note_caller(lw, node, e)
        raise
    raise lw.error(node, "a lambda given a computed value inside `and`/`or`, a "
                         "conditional expression or a loop condition",
                   "assign the value to a variable first")


def inline_generator(lw: Lowerer, f: ast.FunctionDef, src: SourceInfo, fn, args: list,
                     kwargs: dict, node: ast.Call, place) -> list[ir.Stmt]:
    """The statements of the generator ``f`` called with ``args``, its one ``yield`` statement
    (marked ``_tt_yield``) replaced by ``place(yielded expression)``."""
    defaults = _py_defaults(lw, fn, node)
    with _scope(lw, f, f.name, src, fn, fn.__name__, args, kwargs, node, defaults, True) as (
            tree, _prefix, pre):
        tree.body = _replace_yield(tree.body, place)
        return pre + lw.lower_body(tree.body)


def _replace_yield(stmts: list[ast.stmt], place) -> list[ast.stmt]:
    """Also drops the statements no path reaches (after a break, continue, return or raise),
    such as a dead ``yield``."""
    out = []
    for s in stmts:
        if getattr(s, "_tt_yield", False):
            s = place(s.value.value)
        else:
            for f in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, f, None), list):
                    setattr(s, f, _replace_yield(getattr(s, f), place))
        out.append(s)
        if isinstance(s, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
            break
    return out


def _py_defaults(lw: Lowerer, fn, node) -> dict:
    defaults = {}
    for p in inspect.signature(fn).parameters.values():
        if p.default is not p.empty:
            defaults[p.name] = lw.py_to_value(p.default, node, wrap=True)
    return defaults


@contextlib.contextmanager
def _scope(lw: Lowerer, f, name: str, src: SourceInfo, fn, fname: str, args: list,
           kwargs: dict, node, defaults: dict, foreign: bool, cells: dict | None = None):
    """A renamed copy of ``f`` with its parameters bound (the statements binding them), while
    the Lowerer reads ``f``'s source and globals (``cells``: Closure.cells)."""
    stack = lw.__dict__.setdefault("inline_stack", [])
    if getattr(lw.spec, "tile_kernel", False):
        # cuTile inlines a helper calling itself as long as compile-time values end it
        # (`if N > 0:` of a Constant), up to a nesting depth: then TileRecursionError
        if len(stack) >= TILE_RECURSION_LIMIT:
            raise lw.error(node, f"maximum recursion depth ({TILE_RECURSION_LIMIT}) reached "
                                 f"while inlining {name}()", "its recursion must end at "
                                 "compile time (a condition on Constants)",
                           cls=TileCodeRecursionError)
    elif foreign and id(f) in stack or len(stack) > _STACK_LIMIT:
        raise lw.error(node, f"{name}() calls itself; recursion is not supported in kernels",
                       "rewrite it as a loop")
    bound = bind(lw, f, name, args, kwargs, defaults, node)
    prefix = lw.spec.fresh("i")
    own = scope_locals(f)
    stores = scope_stores(f)
    mapping = {n: f"{prefix}_{n}" for n in own}
    if foreign:  # its globals must not be read as the caller's variables of the same names
        taken = lw.local_names | set(lw.statics) | set(lw.tuples) | set(lw.consts)
        body_nodes = f.body if isinstance(f.body, list) else [f.body]
        free = {n.id for n in flow.walk_scope(body_nodes) if isinstance(n, ast.Name)} - own
        for g in free & taken:
            obj = resolve_name(fn, g)
            if obj is MISSING or getattr(builtins, g, MISSING) is obj:
                continue
            alias = f"{prefix}_{g}"
            mapping[g] = alias
            lw.statics[alias] = lw.py_to_value(obj, node, wrap=True)
    for g, cell in (cells or {}).items():  # a comprehension's target, as it is now
        if g not in own:
            mapping[g] = alias = f"{prefix}_{g}"
            lw.statics[alias] = cell[g]
    tree = copy.deepcopy(f)
    ren = _Renamer(mapping)
    if isinstance(tree, ast.Lambda):
        tree.body = ren.visit(tree.body)
    else:
        tree.body = [ren.visit(s) for s in tree.body]
    params = set(_arg_names(f.args))
    for n in own:
        lw.local_names.add(mapping[n])
        if stores.get(n, 0) + (n in params) == 1:
            lw.single_stores.add(mapping[n])
    saved = (lw.src, lw.fn, lw.fname, lw.depth)
    stack.append(id(f))
    lw.src, lw.fn, lw.fname = src, fn, fname
    if lw.depth <= 1:  # called from straight-line code: its own body is straight-line too
        lw.depth = 0
    try:
        pre: list[ir.Stmt] = []
        for p, v in bound:
            pre += _bind_param(lw, mapping[p], v, stores.get(p, 0) == 0, node)
        yield tree, prefix, pre
    finally:
        lw.src, lw.fn, lw.fname, lw.depth = saved
        stack.pop()


def _bind_param(lw: Lowerer, name: str, v, never_stored: bool, node) -> list[ir.Stmt]:
    """A parameter bound to its argument: an alias of a compile-time value or a variable (of
    a parameter the body never assigns), else a new variable."""
    lw.defined.add(name)
    if never_stored and (isinstance(v, (Py, ir.Const, ir.Var)) or (
            isinstance(v, Tup) and all(isinstance(x, (Py, ir.Const, ir.Var, Tup))
                                       for x in v.items))):
        lw.statics[name] = v
        return []
    if isinstance(v, Py):
        return tiles.assign_static(lw, node, name, v)
    return lw.assign_name(node, name, v)


def _lower_body(lw: Lowerer, body: list[ast.stmt], pre: list, prefix: str, node):
    rets = [n for n in flow.walk_scope(body) if isinstance(n, ast.Return)]
    last = body[-1] if body else None
    if not rets:
        lw.pre.extend(pre + lw.lower_body(body))
        return Py(None)
    if len(rets) == 1 and rets[0] is last:
        lw.pre.extend(pre + lw.lower_body(body[:-1]))
        if last.value is None:
            return Py(None)
        return lw.expr_value(last.value)
    stmts, result = returns.lower_returning(lw, body, prefix, node)
    lw.pre.extend(pre + stmts)
    return result


def describe(v) -> str | None:
    if isinstance(v, Py) and isinstance(v.obj, Closure):
        return repr(v.obj)
    return None




# ---- one variable bound to closures made by different calls --------------------------------

def assign_closure(lw: Lowerer, node, name: str, value: Py) -> list[ir.Stmt]:
    """``c = make_closure(30)`` in one branch and ``c = make_closure(40)`` in the other: the
    same function made twice, with other captured values. As in cuTile, ``c`` is then one
    closure whose captured values (and defaults) are variables, assigned where ``c`` is. The
    first lowering round finds the names that need it; later rounds assign them so."""
    merged = lw.spec.__dict__.setdefault("closure_vars", set())
    c = value.obj
    if name in merged:
        stmts, c = _freeze(lw, node, name, c)
        lw.defined.add(name)
        lw.statics[name] = Py(c)
        return stmts
    prev = lw.statics.get(name)
    if isinstance(prev, Py) and isinstance(prev.obj, Closure) and prev.obj is not c and \
            prev.obj.origin == c.origin:
        merged.add(name)
        raise Relower()
    return tiles.assign_static(lw, node, name, value)


class Relower(Exception):
    """Lower the function again: a name was found to need a merged closure."""


def _freeze(lw: Lowerer, node, name: str, c: Closure) -> tuple[list[ir.Stmt], Closure]:
    own = scope_locals(c.node)
    body = c.node.body if isinstance(c.node.body, list) else [c.node.body]
    free = sorted({n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)} - own)
    stmts: list[ir.Stmt] = []
    mapping = {}
    for fv in free:
        v = lw.statics.get(fv)
        if isinstance(v, Py) or not (fv in lw.local_names or fv in lw.statics):
            continue  # a compile-time object or a global: the same for every closure
        new = f"{name}__{re.sub(r'^_[a-z]+[0-9]+_', '', fv)}"
        lw.local_names.add(new)
        stmts += lw.assign_name(node, new, lw.read_name(fv, node))
        mapping[fv] = new
    defaults = {}
    for p, v in c.defaults.items():
        if isinstance(v, ir.Expr):
            new = f"{name}__default_{p}"
            lw.local_names.add(new)
            stmts += lw.assign_name(node, new, v)
            v = lw.read_name(new, node)
        defaults[p] = v
    tree = copy.deepcopy(c.node)
    ren = _Renamer(mapping)
    if isinstance(tree, ast.Lambda):
        tree.body = ren.visit(tree.body)
    else:
        tree.body = [ren.visit(s) for s in tree.body]
    return stmts, Closure(tree, c.src, c.fn, c.fname, defaults)
