"""Python AST -> typed IR, one ``visit_X`` per supported construct; anything else is refused.

Variable types come from a fixpoint: the body is lowered, the types assigned to each variable
are unified, and the body is lowered again until nothing changes (usually twice). That is what
lets ``acc = 0.0`` take the float32 type of a later ``acc += a[i] * b[i]``.
"""

from __future__ import annotations

import ast
import contextlib
import enum

import numpy as np

from ..errors import (
    KernelCompileError,
    TileCodeSyntaxError,
    TileCodeTypeError,
    TileCodeValueError,
)
from ..ir import nodes as ir
from ..lang.records import RecordType
from ..lang.thread import LaneReg
from ..lang.types import (
    ArrayType,
    Scalar,
    TileType,
    TupleType,
    Type,
    bool_,
    int32,
    int64,
    scalar_of,
    void,
)
from . import (
    arrays,
    calls,
    captured,
    complexes,
    dataclassvals,
    dicts,
    exits,
    flow,
    funcs,
    inline,
    loops,
    mathcalls,
    operators,
    raising,
    records,
    tile_print,
    tiles,
    tupleops,
    tuples,
    user_reduce,
    versions,
)
from . import typing as ty
from .deps import dotted
from .hints import HINTS, describe_node
from .source import MISSING, SourceInfo, get_source, resolve_name
from .values import DeclRequest, IndexSlice, Py, Tup, describe_value, pyname


class Lowerer(ast.NodeVisitor):
    """Lowers one function for one set of argument types."""

    def __init__(self, spec, fn, src: SourceInfo, params: list[ir.Param], is_kernel: bool,
                 var_types: dict[str, tuple[Type, bool]]):
        self.spec = spec  # the Specializer: device-function cache, unique names
        self.fn = fn
        self.src = src
        self.fname = fn.__name__
        self.params = params
        self.is_kernel = is_kernel
        self.var_types = var_types  # name -> (type, weak) from the previous round
        self.observed: dict[str, tuple[Type, bool]] = {}
        # tuple-valued variables -> the variables of their items, and a namedtuple's fields
        self.tuples: dict[str, tuple[list[str], tuple]] = {}
        self.tuple_classes: dict[str, type] = {}  # tuples that are frozen dataclasses
        self.arrays: dict[str, ir.ArrayDecl] = {}
        self.return_types: list[tuple[Type, bool]] = []
        self.callees: list[ir.Function] = []
        self.uses_dynamic_shared = False
        self.loop_depth = 0
        self.depth = 0  # nesting of statement blocks (1: the function's own body)
        # tile variables (versions.py): name -> what it holds here, (name, type) -> variable
        self.tile_names: dict[str, versions.Binding | versions.Clash] = {}
        self.tile_vars: dict[tuple[str, TileType], str] = {}
        self.loops: list[versions.Frame] = []  # the loops being lowered, innermost last
        # names bound to compile-time objects (aliases); static_iter's loop variables (a
        # constant or tuple of them per unrolled iteration: frontend/static.py)
        self.statics: dict[str, object] = {}
        # locals holding a compile-time constant here (`ndim = x.ndim`, `a = 1` on every path
        # to this point: versions.py): their values, which tile shapes, ct.static_eval and
        # static_assert read
        self.single_stores = flow.single_stores(src.tree)
        self.const_locals: dict[str, object] = {}
        self.int_constants: set[str] = set()  # tile kernels' names bound to a Python int
        self.branch_stores = flow.branch_stores(src.tree)  # ... in a loop or a branch
        self.local_names = flow.assigned_names(src.tree)
        self.literal_locals = flow.literal_locals(src.tree)
        # statements that must run before the one being lowered (a call returning a tuple,
        # bound to a temporary so that it runs once); `lazy` contexts may not have any
        self.pre: list[ir.Stmt] = []
        self._lazy = 0
        self._left = False  # an `if CONSTANT:` left its block: the rest is not lowered
        # the names every path to the current statement has assigned (flow.py)
        self.defined: set[str] = {p.name for p in params}
        self.maybe_defined: set[str] = set()  # assigned on some path that reached an if's end
        self.carried_unset: set[str] = set()  # a tile loop's body assigns them later (flow.py)
        # a tile too large for the registers: the error, raised after the body's own errors
        self.too_big: KernelCompileError | None = None
        self.consts = {p.name: p.constant for p in params if p.is_constant}
        self.runtime_params = {p.name: p.type for p in params if not p.is_constant}
        # array parameters' annotated static extents and strides: {name: {(attr, axis): v}}
        # (of parameters the function never rebinds)
        stored = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)}
        self.static_dims = {p.name: {(a, k): v for a, k, v in p.static_dims}
                            for p in params if p.static_dims and p.name not in stored}
        # cuTile kernels' array parameters annotated ct.IndexedWithInt64 (int64 shapes)
        self.wide_arrays = {p.name for p in params if p.wide_index}
        self.array_static: dict[str, dict] = {}  # locals bound once to such an array
        for p in params:
            if not p.is_constant:
                self.var_types.setdefault(p.name, (p.type, p.weak))
        versions.seed_params(self, params)

    # -- errors --------------------------------------------------------------------------------

    def error(self, node: ast.AST, msg: str, hint: str | None = None,
              cls: type = KernelCompileError) -> KernelCompileError:
        """The compile error at ``node`` (``cls``: a KernelCompileError subclass, one of
        cuTile's classes too where cuTile names the error: errors.StaticAssertionFailed...)."""
        loc = self.src.loc(node, self.fname)
        return cls(msg, loc=loc, source_line=self.src.source_line(loc.line), hint=hint)

    def error_at(self, loc: ir.Loc, msg: str, hint: str | None = None) -> KernelCompileError:
        return KernelCompileError(msg, loc=loc, source_line=self.src.source_line(loc.line),
                                  hint=hint)

    def unsupported(self, node: ast.AST, what: str, hint: str | None = None):
        """The error for a construct kernels do not have: ``what`` names it."""
        return self.error(node, f"{what} is not supported in kernels", hint)

    def loc(self, node: ast.AST) -> ir.Loc:
        return self.src.loc(node, self.fname)

    def generic_visit(self, node: ast.AST):
        what = type(node).__name__
        raise self.unsupported(node, describe_node(node), HINTS.get(what))

    # -- statements ----------------------------------------------------------------------------

    def lower_body(self, stmts: list[ast.stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        self.depth += 1
        for s in stmts:
            saved, self.pre, self._left = self.pre, [], False
            r = self.visit(s)
            pre, self.pre = self.pre, saved
            out.extend(pre)
            if r is not None:
                out.extend(r if isinstance(r, list) else [r])
            if self._left:  # never reached (a helper's `if n < 2: return t` ends its recursion)
                self._left = False
                break
        self.depth -= 1
        return out

    @contextlib.contextmanager
    def lazy(self):
        """Lowering an expression that runs only in some threads or repeatedly (the right of
        `and`/`or`, a branch of `x if c else y`, a loop condition): nothing may be hoisted."""
        self._lazy += 1
        try:
            yield
        finally:
            self._lazy -= 1

    def hoist(self, e: ir.Expr, prefix: str) -> ir.Var:
        """``e`` bound to a new variable by a statement before the current one."""
        if self._lazy:
            raise self.error_at(e.loc, "a call returning a tuple inside `and`/`or`, a "
                                       "conditional expression or a loop condition",
                                "assign its result to variables first: a, b = f(x)")
        name = self.spec.fresh(prefix)
        self.observe(name, e.type, False, None)
        self.defined.add(name)
        self.pre.append(ir.Assign(e.loc, name, e))
        return ir.Var(e.type, e.loc, name)

    def visit_Pass(self, node):
        return None

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        v = self.expr_value(node.value)
        if isinstance(v, list):  # print() lowered to statements
            return v
        if isinstance(v, ir.Expr):
            return ir.ExprStmt(self.loc(node), v)
        return None

    def visit_Assign(self, node: ast.Assign):
        value = self.expr_value(node.value)
        out: list[ir.Stmt] = []
        if len(node.targets) > 1 and isinstance(value, ir.Expr) and not isinstance(
                value, (ir.Const, ir.Var)):
            tmp = self.spec.fresh("tmp")
            out += self.assign_name(node, tmp, value)
            value = self.read_var(tmp, node)
        for t in node.targets:
            out += self.assign(t, value, node)
        return out

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return None
        t = self.resolve_static(node.annotation)
        value = self.expr_value(node.value)
        st = scalar_of(t.obj) if isinstance(t, Py) else None
        if st is not None and isinstance(value, ir.Expr) and isinstance(value.type, Scalar):
            value = ty.convert(value, st)
        return self.assign(node.target, value, node)

    def visit_AugAssign(self, node: ast.AugAssign):
        op = operators.BINOPS.get(type(node.op))
        if op is None:
            raise self.unsupported(node, f"augmented operator {type(node.op).__name__}")
        if isinstance(node.target, ast.Name):
            cur = self.expr(ast.Name(node.target.id, ast.Load(), **_pos(node.target)))
            return self.assign(node.target, self.binop(op, cur, self.expr(node.value), node),
                               node)
        if isinstance(node.target, ast.Subscript):
            arr, idx = self.subscript_parts(node.target)
            cur = self.index(arr, idx, node.target)
            return self.store(arr, idx, self.binop(op, cur, self.expr(node.value), node),
                              node.target)
        raise self.unsupported(node.target, "this augmented assignment target")

    def assign(self, target: ast.expr, value, node) -> list[ir.Stmt]:
        if isinstance(target, ast.Name):
            return self.assign_name(node, target.id, value)
        if isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), node)
            out = []
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.unsupported(target, "starred assignment")
            # evaluate every right-hand side before assigning (a, b = b, a) when a later value
            # reads a name that an earlier target rebinds
            targets = {e.id for e in target.elts if isinstance(e, ast.Name)}
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} if \
                isinstance(node, (ast.Assign, ast.AnnAssign)) else targets
            temps = []
            for it in items:
                if isinstance(it, ir.Expr) and not isinstance(it, ir.Const) and len(items) > 1 \
                        and targets & reads:
                    tmp = self.spec.fresh("t")
                    out += self.assign_name(node, tmp, it)
                    it = self.read_var(tmp, node)
                temps.append(it)
            for t, it in zip(target.elts, temps):
                out += self.assign(t, it, node)
            return out
        if isinstance(target, ast.Subscript):  # errors point at the element
            return arrays.assign_subscript(self, target, value)
        if isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if records.is_record_array(base):  # r.x = v
                return self.store(records.field_view(self, base, target.attr, target), [], value,
                                  target)
            raise self.unsupported(target, "assigning to an attribute",
                             "kernels can only assign to local variables and array elements")
        raise self.unsupported(target, "this assignment target")

    def assign_name(self, node, name: str, value) -> list[ir.Stmt]:
        loc = self.loc(node)
        if name in self.consts:
            raise self.error(node, f"'{name}' is a compile-time constant and cannot be assigned")
        if name in self.statics and not isinstance(self.statics[name], Py):
            del self.statics[name]  # a static_iter loop variable assigned in the loop's body
        if tuples.is_tuple(value):
            value = tuples.explode(self, value)
        self.defined.add(name)
        self.const_locals.pop(name, None)
        if isinstance(value, DeclRequest):
            at = ArrayType(value.dtype, len(value.shape), "C", value.space,
                           readonly=value.space == "const")
            dynamic = value.space == "shared" and value.shape in ((0,), ())
            if dynamic:
                self.uses_dynamic_shared = True
            decl = ir.ArrayDecl(loc, name, at, value.shape, dynamic, value.init)
            prev = self.arrays.get(name)
            if prev is not None and prev.type != at:
                raise self.error(node, f"'{name}' is declared twice as arrays of different types")
            self.arrays[name] = decl
            self.observe(name, at, False, node)
            return [decl]
        if isinstance(value, Tup):
            prev = self.tuples.get(name)
            # (straight-line code of the function's own body may re-bind a tuple to another
            # length: `t = t + (x,)` in a static_iter loop; a branch or a loop may not)
            if prev is not None and len(prev[0]) != len(value.items) and (
                    self.depth > 1 or self.loop_depth):
                raise self.error(node, f"'{name}' holds a tuple of {len(prev[0])} elsewhere but "
                                       f"is assigned one of {len(value.items)} here",
                                 "use a different variable for each")
            self._not_bound_as(name, "a tuple", node, self.statics, self.observed)
            parts = []
            out: list[ir.Stmt] = []
            items = value.items
            if prev is not None and len(items) > 1:
                # `t = t[1], t[0] + t[1]`: every item is evaluated before any part is assigned
                items = []
                for it in value.items:
                    if isinstance(it, ir.Expr) and not isinstance(it, ir.Const):
                        tmp = self.spec.fresh("t")
                        out += self.assign_name(node, tmp, it)
                        it = self.read_name(tmp, node)
                    items.append(it)
            for k, it in enumerate(items):
                pn = f"{name}_{k}"
                parts.append(pn)
                if name in self.single_stores:
                    self.single_stores.add(pn)
                out += self.assign_name(node, pn, it)
            self.tuples[name] = (parts, tuple(value.names))
            if value.cls is not None:
                self.tuple_classes[name] = value.cls
            else:
                self.tuple_classes.pop(name, None)
            return out
        if isinstance(value, IndexSlice):
            raise self.error(node, "ct.Slice(...) cannot be bound to a name",
                             "write it in the indices of load_advanced_indexing or "
                             "store_advanced_indexing")
        if isinstance(value, tile_print.FStr):
            return tile_print.assign(self, node, name, value)
        if isinstance(value, Py):  # a module, function, dtype...: a compile-time name (alias)
            self._not_bound_as(name, pyname(value.obj), node, self.tuples)
            if isinstance(value.obj, inline.Closure):
                return inline.assign_closure(self, node, name, value)
            return tiles.assign_static(self, node, name, value)
        self._not_bound_as(name, f"{ty.describe(value.type)}", node, self.statics, self.tuples)
        if isinstance(value.type, TileType):
            return tiles.assign(self, node, name, value)
        if name in self.arrays:
            raise self.error(node, f"'{name}' names a shared/local array and cannot be rebound")
        if isinstance(value.type, ArrayType) or isinstance(value.type, Scalar):
            if isinstance(value, ir.Const):
                self.const_locals[name] = value.value
            if isinstance(value.type, ArrayType) and self.depth == 1 and \
                    name in self.single_stores and (d := arrays.static_of(self, value)):
                self.array_static[name] = d  # `a = arrays[0]` of an annotated list
            weak = ty.is_weak(value)
            if weak and isinstance(value, ir.Const) and value.type.kind == "i" and \
                    name in self.branch_stores and getattr(self.spec, "tile_kernel", False):
                # cuTile: a Python int held by a name has the first of int32, int64, uint64
                # that holds it, once the name is a runtime value: assigned in a loop or a
                # branch, and not the same constant on every path here (read_var)
                value = ir.Const(ty.materialized_int(value.value), value.loc, value.value,
                                 weak=True)
                self.int_constants.add(name)
            self.observe(name, value.type, weak, node)
            versions.bind_value(self, name, value.type, node)
            vt = self.var_types.get(name, (value.type, weak))[0]
            if isinstance(vt, Scalar) and isinstance(value.type, Scalar):
                value = ty.convert(value, vt)
            elif vt != value.type:
                raise self.error(node, f"'{name}' holds {ty.describe(vt)} elsewhere but is "
                                       f"assigned {ty.describe(value.type)} here")
            return [ir.Assign(loc, name, value)]
        raise self.error(node, f"cannot assign a value of type {value.type} to '{name}'")

    def _not_bound_as(self, name: str, what: str, node, *others: dict) -> None:
        """A name has one kind of value for the whole function: a compile-time object, a
        tuple, or a runtime value."""
        for d in others:
            if name in d:
                prev = d[name]
                was = pyname(prev.obj) if isinstance(prev, Py) else "a tuple" if isinstance(
                    prev, (tuple, Tup)) else describe_value(prev) if isinstance(
                    prev, ir.Expr) else ty.describe(prev[0])
                raise self.error(node, f"'{name}' is {was} elsewhere but is assigned {what} "
                                       "here", "use a different variable for each")

    def observe(self, name: str, t: Type, weak: bool, node) -> None:
        param = self.runtime_params.get(name)
        if param is not None:
            # a parameter is a C++ parameter of its argument's type: a value that fits is
            # converted, one that would change the type (and so truncate) is refused
            if isinstance(param, Scalar) and isinstance(t, Scalar) and \
                    ty.unify(param, self.var_types[name][1], t, weak)[0] == param:
                return
            if param == t:
                return
            raise self.error(node, f"parameter '{name}' is {ty.describe(param)} (from its "
                                   f"argument) but is assigned {ty.describe(t)} here",
                             "assign the value to a new variable")
        prev = self.observed.get(name)
        if prev is None:
            self.observed[name] = (t, weak)
            return
        pt, pw = prev
        if isinstance(pt, Scalar) and isinstance(t, Scalar):
            self.observed[name] = ty.unify(pt, pw, t, weak)
        elif pt != t:
            raise self.error(node, f"'{name}' is assigned both {ty.describe(pt)} and "
                                   f"{ty.describe(t)}: its type depends on path taken",
                             "use a different variable for each", cls=TileCodeTypeError)

    def store(self, arr: ir.Expr, idx, value, node) -> list[ir.Stmt]:
        at = arr.type
        indices = self.indices(arr, idx, node)
        if isinstance(arr, ir.Field) and (arr.text or not indices and at.ndim) and \
                not at.readonly:
            return records.copy_into(self, arr, value, node)  # r['arr'] = src
        if len(indices) != at.ndim:
            raise self.error(node, f"assigning to {len(indices)} of {at.ndim} axes of an array",
                             "index every axis (slice assignment is not supported)")
        if at.readonly:
            raise self.error(node, "this array is read-only" + (
                " (constant memory)" if at.space == "const" else " (a NumPy array whose "
                "flags.writeable is False)"), "write into a writable array")
        if isinstance(at.dtype, RecordType):
            return records.store(self, arr, indices, value, node)
        value = self.scalar(value, node)
        return [ir.Store(self.loc(node), arr, indices, ty.convert(value, at.dtype))]

    def visit_If(self, node: ast.If):
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, ir.Const):  # `if CONSTANT:` keeps only the taken branch
            taken = node.body if cond.value else node.orelse
            out = self.lower_body(taken)
            self._left = flow.terminates(taken)
            return out
        user_reduce.restrict(self, node, "branch")  # not in a reduce/scan function
        before = set(self.defined)
        tiles_before = dict(self.tile_names)
        consts_before = dict(self.const_locals)
        then = self.lower_body(node.body)
        after_then = None if flow.terminates(node.body) else self.defined
        tiles_then = None if after_then is None else self.tile_names
        consts_then = self.const_locals
        self.defined = set(before)
        self.tile_names = dict(tiles_before)
        self.const_locals = dict(consts_before)
        orelse = self.lower_body(node.orelse)
        after_else = None if flow.terminates(node.orelse) else self.defined
        tiles_else = None if after_else is None else self.tile_names
        versions.branches(self, tiles_before, [tiles_then, tiles_else])
        live = [c for c, a in ((consts_then, after_then), (self.const_locals, after_else))
                if a is not None]
        self.const_locals = versions.same_constants(live) if live else consts_before
        # after the if: what both branches that fall through assigned
        if after_then is None and after_else is None:
            self.defined = before | self.defined
        else:
            if after_then is not None and after_else is not None:
                self.maybe_defined |= after_then ^ after_else
            self.defined = after_else if after_then is None else after_then if \
                after_else is None else after_then & after_else
        return ir.If(self.loc(node), cond, then, orelse)

    def visit_For(self, node: ast.For):
        return loops.lower_for(self, node)

    def visit_While(self, node: ast.While):
        if node.orelse:
            raise self.unsupported(node, "while ... else", "use a flag variable")
        if not user_reduce.is_run_once(node):  # (an inlined body's several returns)
            user_reduce.restrict(self, node, "loop")
        with versions.loop(self, node, not flow.terminates(node.body)) as frame:
            with self.lazy():  # evaluated again before every iteration
                cond = self.truth(self.expr(node.test), node.test)
            frame.endless = isinstance(cond, ir.Const) and bool(cond.value)
            self.loop_depth += 1
            with flow.loop_body(self, flow.assigned_in(node.body)):  # as for loops
                body = self.lower_body(node.body)
            self.loop_depth -= 1
        return ir.While(self.loc(node), cond, body)

    def visit_Break(self, node):
        versions.leave(self, "break")
        return ir.Break(self.loc(node))

    def visit_Continue(self, node):
        versions.leave(self, "continue")
        return ir.Continue(self.loc(node))

    def visit_FunctionDef(self, node: ast.FunctionDef):
        return inline.lower_def(self, node)

    def visit_Lambda(self, node: ast.Lambda):
        return Py(inline.define(self, node))

    def visit_With(self, node: ast.With):
        return exits.lower_with(self, node)

    def visit_Splice(self, node):
        return exits.lower_splice(self, node)

    def visit_AsBind(self, node):
        return exits.lower_as_bind(self, node)

    def visit_Raise(self, node: ast.Raise):
        return raising.lower_raise(self, node)

    def visit_Assert(self, node: ast.Assert):
        return raising.lower_assert(self, node)

    def visit_Return(self, node: ast.Return):
        if node.value is None or (isinstance(node.value, ast.Constant)
                                  and node.value.value is None):
            return ir.Return(self.loc(node))
        if self.is_kernel:
            raise self.error(node, "a kernel cannot return a value",
                             "write results into an output array; only device functions "
                             "(@jit(device=True)) return values")
        v = self.expr(node.value)
        if tiles.is_tile(v):
            self.return_types.append((v.type, False))
            return ir.Return(self.loc(node), v)
        if isinstance(v, Py):  # a method, a function, a dtype: the caller inlines the body
            raise self.error(node, f"a device function returns {describe_value(v)}",
                             cls=funcs.ReturnsObject)
        if isinstance(v, Tup):  # `return a, b`: one tuple value
            v = tuples.make(self, v, node.value)
        elif not (isinstance(v, ir.Expr) and isinstance(v.type, ArrayType)):
            v = self.scalar(v, node.value)
        self.return_types.append((v.type, ty.is_weak(v)))
        return ir.Return(self.loc(node), v)

    # -- expressions ---------------------------------------------------------------------------

    def expr_value(self, node: ast.expr):
        """Lower an expression to an ir.Expr, a Tup, a Py or a DeclRequest."""
        return self.visit(node)

    def expr(self, node: ast.expr):
        v = self.visit(node)
        if isinstance(v, DeclRequest):
            raise self.error(node, "shared/local/const arrays must be assigned to a name",
                             "write `arr = shared.array(shape, dtype)`")
        if isinstance(v, list):
            raise self.error(node, "print() has no value")
        return v

    def scalar(self, v, node) -> ir.Expr:
        if isinstance(v, Py):
            obj = v.obj
            if isinstance(obj, enum.Enum) and type(obj.value) in (int, bool, float):
                obj = obj.value  # an Enum member as a runtime value is its value (numba's)
            v = self.py_to_value(obj, node)
        if isinstance(v, ir.Expr) and isinstance(v.type, TileType):
            return tiles.item(self, v, node)
        if not isinstance(v, ir.Expr) or not isinstance(v.type, Scalar) or v.type == void:
            raise self.error(node, f"expected a number here, got {describe_value(v)}")
        return v

    def truth(self, v, node) -> ir.Expr:
        v = self.scalar(v, node)
        if v.type == bool_:
            return v
        if isinstance(v, ir.Const):
            return ir.Const(bool_, v.loc, bool(v.value))
        return ir.Compare(bool_, v.loc, "!=", v, ir.Const(v.type, v.loc, 0))

    def visit_Constant(self, node: ast.Constant):
        v = node.value
        if isinstance(v, (bool, int, float)):
            return ty.literal(v, self.loc(node))
        if isinstance(v, complex):
            return complexes.literal(v, self.loc(node))
        if isinstance(v, (str, bytes)):  # bytes: a constant for a record's bytes field
            return Py(v)
        if v is None:
            return Py(None)
        raise self.unsupported(node, f"a {type(v).__name__} literal")

    def visit_Name(self, node: ast.Name):
        name = node.id
        if name in self.local_names and name not in self.defined and name not in self.statics:
            if name in self.carried_unset:
                raise flow.carried_unset(self, node, name)
            raise flow.unbound(self, node, name, name in self.maybe_defined)
        return self.read_name(name, node)

    def read_name(self, name: str, node):
        """The value ``name`` is bound to: a compile-time object, a tuple, a variable, or a
        global read at compile time."""
        if name in self.statics:
            return self.statics[name]
        name = versions.resolve(self, name, node)
        if name in self.consts:
            return self.py_to_value(self.consts[name], node)
        if name in self.tuples:
            parts, names = self.tuples[name]
            return Tup([self.read_name(p, node) for p in parts], names,
                       self.tuple_classes.get(name))
        if name in self.local_names or name in self.var_types or name in self.observed:
            return self.read_var(name, node)
        obj = resolve_name(self.fn, name)
        if obj is MISSING:
            raise self.error(node, f"Undefined variable {name} used: name '{name}' is not "
                                   "defined",
                             cls=TileCodeSyntaxError)
        self.spec.record(name, obj)
        return self.py_to_value(obj, node, wrap=True)

    def read_var(self, name: str, node):
        t = self.var_types.get(name) or self.observed.get(name)
        if t is None:
            if self.spec.final:
                raise self.error(node, f"Undefined variable {name} used: local variable "
                                       f"'{name}' is used before it is assigned",
                                 cls=TileCodeSyntaxError)
            return ty.mark_weak(ir.Const(int64, self.loc(node), 0, weak=True))
        v = ir.Var(t[0], self.loc(node), name)
        if isinstance(t[0], TupleType):  # a tuple parameter: a Tup of its items
            return tuples.with_constants(self, tuples.explode(self, v, t[1]),
                                         self.static_dims.get(name, {}), node)
        if t[1] and isinstance(t[0], Scalar) and t[0].is_int and \
                name in self.int_constants and name not in self.const_locals:
            # cuTile: a name that holds a Python int on some paths only (another value on
            # another, or changed in a loop) is a runtime value of its concrete type
            return v
        return ty.mark_weak(v, t[1])

    def py_to_value(self, obj, node, wrap: bool = False):
        """A Python value frozen into the kernel (numba's rule for globals and closures)."""
        if isinstance(obj, (bool, int, float)) and not isinstance(obj, np.generic):
            return ir.Const(ty.literal_type(obj), self.loc(node), obj, weak=True)
        if isinstance(obj, np.generic) and (st := scalar_of(obj.dtype)) is not None:
            return ir.Const(st, self.loc(node), obj.item())
        if isinstance(obj, tuple):
            return Tup([self.py_to_value(o, node, wrap=True) for o in obj],
                       tuple(getattr(obj, "_fields", ())))
        if getattr(self.spec, "tile_kernel", False):
            captured.refuse_in_tile_kernel(self, obj, node)
        if isinstance(obj, np.ndarray):
            return self.spec.const_array(self, obj, node)
        cai = captured.interface(obj)
        if cai is not None:
            return captured.captured_array(self, obj, cai, node)
        if isinstance(obj, LaneReg):
            return ir.Special(int32, self.loc(node), obj._name)
        return Py(obj)

    def resolve_static(self, node: ast.expr) -> Py:
        v = self.visit(node)
        return v if isinstance(v, Py) else Py(v)

    def is_builtin(self, node: ast.expr, obj) -> bool:
        if isinstance(node, ast.Name) and node.id not in self.local_names:
            return resolve_name(self.fn, node.id) is obj
        return False

    def visit_Attribute(self, node: ast.Attribute):
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, Py):
            special = calls.special_attr(self, base.obj, attr, node)
            if special is not None:
                return special
            try:
                obj = getattr(base.obj, attr)
            except AttributeError:
                raise self.error(node, f"{pyname(base.obj)} has no attribute '{attr}'") from None
            path = dotted(node)
            if path is not None:
                self.spec.record(path, obj)
            return self.py_to_value(obj, node, wrap=True)
        if isinstance(base, ir.Expr) and isinstance(base.type, ArrayType):
            return arrays.array_attr(self, base, attr, node)
        if isinstance(base, ir.Expr) and isinstance(base.type, TileType):
            return tiles.tile_attr(self, base, attr, node)
        if isinstance(base, ir.Expr) and isinstance(base.type, Scalar) and (
                v := calls.scalar_attr(self, base, attr, node)) is not None:
            return v
        if isinstance(base, Tup) and attr in base.names:  # a namedtuple's field
            return base.items[base.names.index(attr)]
        if isinstance(base, Tup) and base.cls is not None:  # a dataclass's class attribute
            return dataclassvals.class_attr(self, base, attr, node)
        raise self.unsupported(node, f"attribute '{attr}' of {describe_value(base)}")

    def visit_Dict(self, node: ast.Dict):
        return dicts.literal(self, node)

    def visit_Tuple(self, node: ast.Tuple):
        return tupleops.display(self, node.elts)

    def unpack(self, value, n: int, node) -> list:
        if isinstance(value, Tup):
            if len(value.items) != n:
                raise self.error(node, f"Too {'few' if len(value.items) < n else 'many'} "
                                       f"values to unpack (expected {n}, got "
                                       f"{len(value.items)})", cls=TileCodeValueError)
            return value.items
        raise self.error(node, f"cannot unpack {describe_value(value)}")

    def visit_Subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        if isinstance(base, Tup):
            sl = node.slice
            if isinstance(sl, ast.Slice):
                bounds = [None if b is None else self.expr(b) for b in (sl.lower, sl.upper,
                                                                        sl.step)]
                if any(b is not None and not isinstance(b, ir.Const) for b in bounds):
                    raise self.error(node, "tuples can only be sliced by constants")
                return tuples.index(self, base, slice(*[None if b is None else b.value
                                                        for b in bounds]), node)
            return tuples.index(self, base, self.expr(sl), node)
        if isinstance(base, Py):
            sub = calls.subscript_static(self, base.obj, node)
            if sub is not None:
                return sub
            raise self.unsupported(node, f"indexing {pyname(base.obj)}")
        if isinstance(base, ir.Expr) and isinstance(base.type, TileType):
            return tiles.subscript(self, base, node)
        arr, idx = self.subscript_parts(node, base)
        return self.index(arr, idx, node)

    def visit_JoinedStr(self, node: ast.JoinedStr):
        return tile_print.joined_str(self, node)

    def visit_BinOp(self, node: ast.BinOp):
        return operators.lower_binop_node(self, node)

    def binop(self, op: str, a, b, node) -> ir.Expr:
        return operators.binop(self, op, a, b, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        return operators.unary(self, node)

    def visit_BoolOp(self, node: ast.BoolOp):
        return operators.boolop(self, node)

    def visit_Compare(self, node: ast.Compare):
        return operators.compare_chain(self, node)

    def compare(self, op, a, b, node) -> ir.Expr:
        return operators.compare(self, op, a, b, node)

    def visit_IfExp(self, node: ast.IfExp):
        return operators.ifexp(self, node)

    def visit_Call(self, node: ast.Call):
        return calls.lower_call(self, node)

    def subscript_parts(self, node: ast.Subscript, base=None):
        return arrays.subscript_parts(self, node, base)

    def indices(self, arr: ir.Expr, idx: list, node) -> list[ir.Expr]:
        return arrays.indices(self, arr, idx, node)

    def index(self, arr: ir.Expr, idx: list, node):
        return arrays.index(self, arr, idx, node)

    def scalar_math(self, name: str, flavour: str, node: ast.Call) -> ir.Expr:
        """``name(x)`` of the math function ``name`` on numbers (a tile function given a number
        lowers as the scalar one)."""
        return mathcalls.math_call(self, name, flavour, node)


# ---------------------------------------------------------------------------------------------

def lower_function(spec, fn, params: list[ir.Param], is_kernel: bool, cname: str) -> ir.Function:
    """Lower ``fn`` for ``params`` (types and constant values), iterating variable types to a
    fixpoint. ``spec`` is the Specializer that owns naming and device-function reuse."""
    src = get_source(fn)
    var_types: dict[str, tuple[Type, bool]] = {}
    for round_ in range(8):
        spec.final = round_ > 0
        spec.reset_names()
        lw = Lowerer(spec, fn, src, params, is_kernel, dict(var_types))
        try:
            body = lw.lower_body(src.tree.body)
        except inline.Relower:
            continue
        if lw.too_big is not None:
            raise lw.too_big
        observed = {k: v for k, v in lw.observed.items()}
        merged = dict(var_types)
        merged.update(observed)
        if merged == var_types and round_ > 0:
            break
        var_types = merged
    else:
        raise KernelCompileError(f"could not settle the types of the variables of {fn.__name__}")
    locals_ = {}
    for k, (t, _weak) in var_types.items():
        if any(p.name == k for p in params):
            continue
        locals_[k] = t
    ret, ret_weak = funcs.return_type(lw, fn, src)
    func = ir.Function(cname, fn.__name__, params, body, ret, locals_, src.loc(src.tree,
                       fn.__name__), is_kernel, lw.callees, lw.uses_dynamic_shared,
                       src.filename, fn, ret_weak)
    if ret is not void:
        _fix_returns(func)
    return func


def _fix_returns(func: ir.Function) -> None:
    for s in ir.walk_stmts(func.body):
        if isinstance(s, ir.Return) and s.value is not None:
            s.value = tuples.convert(s.value, func.return_type)


def _pos(node: ast.AST) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


