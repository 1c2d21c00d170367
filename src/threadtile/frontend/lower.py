"""Python AST -> typed IR, one ``visit_X`` per supported construct; anything else is refused.

Variable types come from a fixpoint: the body is lowered, the types assigned to each variable
are unified, and the body is lowered again until nothing changes (usually twice). That is what
lets ``acc = 0.0`` take the float32 type of a later ``acc += a[i] * b[i]``.
"""

from __future__ import annotations

import ast

import numpy as np

from ..errors import KernelCompileError
from ..ir import nodes as ir
from ..lang.thread import LaneReg
from ..lang.types import ArrayType, Scalar, TileType, Type, bool_, int32, int64, scalar_of, void
from . import calls, tiles
from . import typing as ty
from .deps import dotted
from .hints import HINTS, describe_node
from .source import MISSING, SourceInfo, get_source, resolve_name
from .values import DeclRequest, Py, Tup, describe_value, pyname

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
           ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "//": lambda a, b: a // b, "%": lambda a, b: a % b, "&": lambda a, b: a & b,
         "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
         ">>": lambda a, b: a >> b, "/": lambda a, b: a / b, "**": lambda a, b: a ** b}
_CMPFOLD = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


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
        self.tuples: dict[str, list[str]] = {}  # tuple-valued variables -> their parts
        self.arrays: dict[str, ir.ArrayDecl] = {}
        self.return_types: list[tuple[Type, bool]] = []
        self.callees: list[ir.Function] = []
        self.uses_dynamic_shared = False
        self.loop_depth = 0
        self.depth = 0  # nesting of statement blocks (1: the function's own body)
        self.tile_names: dict[str, str] = {}  # tile variable -> its current version
        self.statics: dict[str, Py] = {}  # names bound to dtypes and enum members
        self.local_names = _assigned_names(src.tree)
        self.consts = {p.name: p.constant for p in params if p.is_constant}
        self.runtime_params = {p.name: p.type for p in params if not p.is_constant}
        for p in params:
            if not p.is_constant:
                self.var_types.setdefault(p.name, (p.type, p.weak))

    # -- errors --------------------------------------------------------------------------------

    def error(self, node: ast.AST, msg: str, hint: str | None = None) -> KernelCompileError:
        loc = self.src.loc(node, self.fname)
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
            r = self.visit(s)
            if r is None:
                continue
            out.extend(r if isinstance(r, list) else [r])
        self.depth -= 1
        return out

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
        op = _BINOPS.get(type(node.op))
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
        if isinstance(target, ast.Subscript):
            arr, idx = self.subscript_parts(target)
            return self.store(arr, idx, value, target)  # errors point at the element
        if isinstance(target, ast.Attribute):
            raise self.unsupported(target, "assigning to an attribute",
                             "kernels can only assign to local variables and array elements")
        raise self.unsupported(target, "this assignment target")

    def assign_name(self, node, name: str, value) -> list[ir.Stmt]:
        loc = self.loc(node)
        if name in self.consts:
            raise self.error(node, f"'{name}' is a compile-time constant and cannot be assigned")
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
            parts = []
            out: list[ir.Stmt] = []
            for k, it in enumerate(value.items):
                pn = f"{name}_{k}"
                parts.append(pn)
                out += self.assign_name(node, pn, it)
            self.tuples[name] = parts
            return out
        if isinstance(value, Py):  # a dtype or enum member: a compile-time name (cuTile's)
            return tiles.assign_static(self, node, name, value)
        if isinstance(value.type, TileType):
            return tiles.assign(self, node, name, value)
        if name in self.arrays:
            raise self.error(node, f"'{name}' names a shared/local array and cannot be rebound")
        if isinstance(value.type, ArrayType) or isinstance(value.type, Scalar):
            weak = ty.is_weak(value)
            self.observe(name, value.type, weak, node)
            vt = self.var_types.get(name, (value.type, weak))[0]
            if isinstance(vt, Scalar) and isinstance(value.type, Scalar):
                value = ty.convert(value, vt)
            elif vt != value.type:
                raise self.error(node, f"'{name}' holds {ty.describe(vt)} elsewhere but is "
                                       f"assigned {ty.describe(value.type)} here")
            return [ir.Assign(loc, name, value)]
        raise self.error(node, f"cannot assign a value of type {value.type} to '{name}'")

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
                                   f"{ty.describe(t)}", "use a different variable for each")

    def store(self, arr: ir.Expr, idx, value, node) -> list[ir.Stmt]:
        at = arr.type
        indices = self.indices(arr, idx, node)
        if len(indices) != at.ndim:
            raise self.error(node, f"assigning to {len(indices)} of {at.ndim} axes of an array",
                             "index every axis (slice assignment is not supported)")
        if at.readonly:
            raise self.error(node, "constant arrays are read-only")
        value = self.scalar(value, node)
        return [ir.Store(self.loc(node), arr, indices, ty.convert(value, at.dtype))]

    def visit_If(self, node: ast.If):
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, ir.Const):  # `if CONSTANT:` keeps only the taken branch
            return self.lower_body(node.body if cond.value else node.orelse)
        return ir.If(self.loc(node), cond, self.lower_body(node.body),
                     self.lower_body(node.orelse))

    def visit_For(self, node: ast.For):
        if node.orelse:
            raise self.unsupported(node, "for ... else", "use a flag variable")
        it = node.iter
        if not (isinstance(it, ast.Call) and self.is_builtin(it.func, range)):
            raise self.error(it, "only `for ... in range(...)` loops are supported in kernels",
                             "loop over indices: for i in range(len(a))")
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node.target, "a for-loop target other than a single name")
        args = [self.scalar(self.expr(a), a) for a in it.args]
        if not 1 <= len(args) <= 3 or it.keywords:
            raise self.error(it, "range() takes 1 to 3 positional arguments")
        for a, an in zip(args, it.args):
            if not a.type.is_int and a.type != bool_:
                raise self.error(an, f"range() arguments must be integers, got {a.type}")
        zero = ir.Const(int64, self.loc(it), 0, weak=True)
        one = ir.Const(int64, self.loc(it), 1, weak=True)
        start, stop, step = ([zero, args[0], one] if len(args) == 1 else
                             [args[0], args[1], one] if len(args) == 2 else args)
        if isinstance(step, ir.Const) and step.value == 0:
            raise self.error(it, "range() step must not be zero")
        t, w = start.type, ty.is_weak(start)
        for a in (stop, step):
            t, w = ty.unify(t, w, a.type, ty.is_weak(a))
        if w or t.kind == "u" and any(isinstance(a, ir.Const) and a.value < 0 for a in args):
            t = int64  # range(n, 0, -1) with n unsigned counts down in a signed variable
        name = node.target.id
        self.observe(name, t, False, node)
        vt = self.var_types.get(name, (t, False))[0]
        self.loop_depth += 1
        body = self.lower_body(node.body)
        self.loop_depth -= 1
        return ir.For(self.loc(node), name, ty.convert(start, vt), ty.convert(stop, vt),
                      ty.convert(step, vt), body)

    def visit_While(self, node: ast.While):
        if node.orelse:
            raise self.unsupported(node, "while ... else", "use a flag variable")
        cond = self.truth(self.expr(node.test), node.test)
        self.loop_depth += 1
        body = self.lower_body(node.body)
        self.loop_depth -= 1
        return ir.While(self.loc(node), cond, body)

    def visit_Break(self, node):
        return ir.Break(self.loc(node))

    def visit_Continue(self, node):
        return ir.Continue(self.loc(node))

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
            v = self.py_to_value(v.obj, node)
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
            return ir.Const(ty.literal_type(v), self.loc(node), v, weak=True)
        if isinstance(v, str):
            return Py(v)
        if v is None:
            return Py(None)
        raise self.unsupported(node, f"a {type(v).__name__} literal")

    def visit_Name(self, node: ast.Name):
        name = node.id
        if name in self.statics:
            return self.statics[name]
        name = self.tile_names.get(name, name)
        if name in self.consts:
            return self.py_to_value(self.consts[name], node)
        if name in self.tuples:
            return Tup([self.read_var(p, node) for p in self.tuples[name]])
        if name in self.local_names or name in self.var_types:
            return self.read_var(name, node)
        obj = resolve_name(self.fn, name)
        if obj is MISSING:
            raise self.error(node, f"name '{name}' is not defined")
        self.spec.record(name, obj)
        return self.py_to_value(obj, node, wrap=True)

    def read_var(self, name: str, node) -> ir.Expr:
        t = self.var_types.get(name) or self.observed.get(name)
        if t is None:
            if self.spec.final:
                raise self.error(node, f"local variable '{name}' is used before it is assigned")
            return ty.mark_weak(ir.Const(int64, self.loc(node), 0, weak=True))
        return ty.mark_weak(ir.Var(t[0], self.loc(node), name), t[1])

    def py_to_value(self, obj, node, wrap: bool = False):
        """A Python value frozen into the kernel (numba's rule for globals and closures)."""
        if isinstance(obj, (bool, int, float)) and not isinstance(obj, np.generic):
            return ir.Const(ty.literal_type(obj), self.loc(node), obj, weak=True)
        if isinstance(obj, np.generic) and (st := scalar_of(obj.dtype)) is not None:
            return ir.Const(st, self.loc(node), obj.item())
        if isinstance(obj, tuple):
            return Tup([self.py_to_value(o, node, wrap=True) for o in obj])
        if isinstance(obj, np.ndarray):
            return self.spec.const_array(self, obj, node)
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
            return self.array_attr(base, attr, node)
        if isinstance(base, ir.Expr) and isinstance(base.type, TileType):
            return tiles.tile_attr(self, base, attr, node)
        if isinstance(base, ir.Expr) and isinstance(base.type, Scalar):
            if attr in ("real",):
                return base
            if attr == "imag":
                return ir.Const(base.type, self.loc(node), 0)
        raise self.unsupported(node, f"attribute '{attr}' of {describe_value(base)}")

    def array_attr(self, arr: ir.Expr, attr: str, node):
        at: ArrayType = arr.type
        loc = self.loc(node)
        if attr == "shape":
            return Tup([ir.ArrayDim(int64, loc, arr, "shape", k) for k in range(at.ndim)])
        if attr == "ndim":
            return ir.Const(int64, loc, at.ndim, weak=True)
        if attr == "size":
            size: ir.Expr = ir.ArrayDim(int64, loc, arr, "shape", 0)
            for k in range(1, at.ndim):
                size = ir.BinOp(int64, loc, "*", size, ir.ArrayDim(int64, loc, arr, "shape", k))
            return size
        if attr == "dtype":
            return Py(at.dtype)
        raise self.unsupported(node, f"array attribute '{attr}'",
                         "arrays in kernels have .shape, .size, .ndim and .dtype")

    def visit_Tuple(self, node: ast.Tuple):
        return Tup([self.expr(e) for e in node.elts])

    def unpack(self, value, n: int, node) -> list:
        if isinstance(value, Tup):
            if len(value.items) != n:
                raise self.error(node, f"cannot unpack {len(value.items)} values into {n}")
            return value.items
        raise self.error(node, f"cannot unpack {describe_value(value)}")

    def visit_Subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        if isinstance(base, Tup):
            k = self.expr(node.slice)
            if not isinstance(k, ir.Const) or not isinstance(k.value, int):
                raise self.error(node.slice, "tuples can only be indexed by constant integers")
            try:
                return base.items[k.value]
            except IndexError:
                raise self.error(node, f"tuple index {k.value} out of range") from None
        if isinstance(base, Py):
            sub = calls.subscript_static(self, base.obj, node)
            if sub is not None:
                return sub
            raise self.unsupported(node, f"indexing {pyname(base.obj)}")
        if isinstance(base, ir.Expr) and isinstance(base.type, TileType):
            return tiles.subscript(self, base, node)
        arr, idx = self.subscript_parts(node, base)
        return self.index(arr, idx, node)

    def subscript_parts(self, node: ast.Subscript, base=None):
        arr = base if base is not None else self.expr(node.value)
        if not (isinstance(arr, ir.Expr) and isinstance(arr.type, ArrayType)):
            raise self.unsupported(node.value, f"indexing {describe_value(arr)}")
        sl = node.slice
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        idx = []
        for p in parts:
            if isinstance(p, ast.Slice):
                idx.append(p)
            else:
                v = self.expr(p)
                idx.extend(v.items if isinstance(v, Tup) else [v])
        return arr, idx

    def indices(self, arr: ir.Expr, idx: list, node) -> list[ir.Expr]:
        out = []
        for i in idx:
            if isinstance(i, ast.Slice):
                raise self.unsupported(node, "slices in an assignment target")
            v = self.scalar(i, node)
            if not (v.type.is_int or v.type == bool_):
                raise self.error(node, f"array index must be an integer, got {v.type}",
                                 "convert with int(...)")
            if isinstance(v, ir.Const) and v.value < 0 and arr.type.space != "global":
                raise self.error(node, f"negative index {v.value}",
                                 "indices are not wrapped on a GPU; write n - 1")
            out.append(ty.convert(v, int64))
        return out

    def index(self, arr: ir.Expr, idx: list, node):
        at: ArrayType = arr.type
        if len(idx) > at.ndim:
            raise self.error(node, f"too many indices for a {at.ndim}-d array")
        if all(not isinstance(i, ast.Slice) for i in idx) and len(idx) == at.ndim:
            return ir.Load(at.dtype, self.loc(node), arr, self.indices(arr, idx, node))
        return self.slice_view(arr, idx, node)

    def slice_view(self, arr: ir.Expr, idx: list, node):
        at: ArrayType = arr.type
        loc = self.loc(node)
        parts: list = []
        contiguous = at.layout == "C"
        kept = 0
        for axis in range(at.ndim):
            i = idx[axis] if axis < len(idx) else ast.Slice()
            if not isinstance(i, ast.Slice):
                parts.append(self.indices(arr, [i], node)[0])
                continue
            kept += 1
            step = self.slice_bound(i.step, 1, node)
            if not (isinstance(step, ir.Const) and step.value > 0):
                raise self.error(i, "slice steps must be positive constants")
            if step.value != 1 or (kept > 1 or axis < at.ndim - 1) and (
                    i.lower is not None or i.upper is not None):
                contiguous = contiguous and step.value == 1 and axis == at.ndim - 1 and kept == 1
            start = self.slice_bound(i.lower, 0, node)
            stop = self.slice_bound(i.upper, None, node) if i.upper is not None else \
                ir.ArrayDim(int64, loc, arr, "shape", axis)
            parts.append((start, stop, step))
        nd = sum(1 for p in parts if isinstance(p, tuple))
        if nd == 0:
            raise self.error(node, "indexing every axis with slices removed gives a scalar")
        # a view stays C-contiguous when only leading axes are indexed and the rest are whole,
        # or when a 1-d contiguous array is cut with step 1 (sh[:n])
        leading_ints = all(not isinstance(p, tuple) for p in parts[:len(parts) - nd])
        whole = all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and
                    i.step is None for i in idx if isinstance(i, ast.Slice))
        c = at.layout == "C" and leading_ints and (whole or (nd == 1 and parts[-1][2].value == 1))
        return ir.Slice(ArrayType(at.dtype, nd, "C" if c else "A", at.space, at.readonly), loc,
                        arr, parts)

    def slice_bound(self, node, default, where):
        if node is None:
            return ir.Const(int64, self.loc(where), default, weak=True)
        v = self.scalar(self.expr(node), node)
        if not v.type.is_int:
            raise self.error(node, "slice bounds must be integers")
        return ty.convert(v, int64)

    def visit_BinOp(self, node: ast.BinOp):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.unsupported(node, f"operator {type(node.op).__name__}")
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: str, a, b, node) -> ir.Expr:
        if tiles.is_tile(a) or tiles.is_tile(b):
            return tiles.binop(self, op, a, b, node)
        if op == "@":
            raise self.error(node, "the @ operator multiplies tiles (threadtile.tile), not "
                                   "numbers")
        a, b = self.scalar(a, node), self.scalar(b, node)
        loc = self.loc(node)
        aw, bw = ty.is_weak(a), ty.is_weak(b)
        if op in ("<<", ">>", "&", "|", "^"):
            for v in (a, b):
                if v.type.is_float:
                    raise self.error(node, f"operator {op} needs integers, got {v.type}")
        if op == "**" and a.type.is_int and isinstance(b, ir.Const) and b.type.is_int \
                and b.value < 0:
            raise self.error(node, "integers to negative integer powers are not allowed",
                             "make the base a float: 2.0 ** -1")
        if op == "**" and b.type.is_int and isinstance(b, ir.Const) and not a.type.is_int:
            t = a.type if not aw else ty.literal_type(a.value)
            res = ir.BinOp(t, loc, "**", a, b)
        else:
            t, w = ty.arith_type(op, a.type, aw, b.type, bw)
            if op in ("<<", ">>"):
                t, _w = (a.type if a.type != bool_ else int64), aw
            res = ir.BinOp(t, loc, op, ty.convert(a, t) if op not in ("<<", ">>") else a,
                           ty.convert(b, t) if op not in ("<<", ">>") else b)
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            try:
                v = _FOLD[op](a.value, b.value)
            except (ZeroDivisionError, OverflowError, ValueError):
                raise self.error(node, f"constant expression divides by zero or overflows: "
                                       f"{a.value} {op} {b.value}") from None
            return ir.Const(res.type, loc, ty.py_value(v, res.type), weak=aw and bw)
        return ty.mark_weak(res, aw and bw)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        v = self.expr(node.operand)
        if tiles.is_tile(v):
            op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}[type(node.op)]
            return tiles.unary(self, op, v, node)
        v = self.scalar(v, node.operand)
        loc = self.loc(node)
        if isinstance(node.op, ast.Not):
            c = self.truth(v, node)
            if isinstance(c, ir.Const):
                return ir.Const(bool_, loc, not c.value)
            return ir.UnaryOp(bool_, loc, "not", c)
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        if op == "~" and v.type.is_float:
            raise self.error(node, "operator ~ needs an integer")
        t = int64 if v.type == bool_ and op != "~" else v.type
        if isinstance(v, ir.Const):
            val = {"-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~x}[op](v.value)
            return ir.Const(t, loc, ty.py_value(val, t), weak=ty.is_weak(v))
        return ty.mark_weak(ir.UnaryOp(t, loc, op, ty.convert(v, t)), ty.is_weak(v))

    def visit_BoolOp(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        vals = [self.truth(self.expr(v), v) for v in node.values]
        res = vals[0]
        for v in vals[1:]:
            if isinstance(res, ir.Const):
                res = v if (res.value if op == "and" else not res.value) else res
                continue
            res = ir.Logical(bool_, self.loc(node), op, res, v)
        return res

    def visit_Compare(self, node: ast.Compare):
        left = self.expr(node.left)
        res = None
        for opn, comp in zip(node.ops, node.comparators):
            op = _CMPOPS.get(type(opn))
            if op is None:
                raise self.unsupported(node, f"comparison {type(opn).__name__}",
                                 "`is`/`in` are not supported in kernels; use == and !=")
            right = self.expr(comp)
            c = self.compare(op, left, right, node)
            res = c if res is None else (
                ir.Logical(bool_, self.loc(node), "and", res, c) if not isinstance(res, ir.Const)
                else (c if res.value else res))
            left = right
        return res

    def compare(self, op, a, b, node) -> ir.Expr:
        if tiles.is_tile(a) or tiles.is_tile(b):
            return tiles.compare(self, op, a, b, node)
        if isinstance(a, Py) and isinstance(b, Py) and op in ("==", "!="):
            return tiles.static_compare(self, op, a, b, node)  # `x.dtype == ct.float32`
        a, b = self.scalar(a, node), self.scalar(b, node)
        t, _ = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            return ir.Const(bool_, self.loc(node), bool(_CMPFOLD[op](a.value, b.value)))
        return ir.Compare(bool_, self.loc(node), op, ty.convert(a, t), ty.convert(b, t))

    def visit_IfExp(self, node: ast.IfExp):
        cond = self.truth(self.expr(node.test), node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if isinstance(cond, ir.Const) and any(isinstance(v, Py) and tiles.static_value(v.obj)
                                              for v in (a, b)):
            return a if cond.value else b  # `ct.tfloat32 if x.dtype == ct.float32 else ...`
        tiles.no_tiles(self, (a, b), node, "a conditional expression")
        a, b = self.scalar(a, node.body), self.scalar(b, node.orelse)
        if isinstance(cond, ir.Const):
            return a if cond.value else b
        t, w = ty.unify(a.type, ty.is_weak(a), b.type, ty.is_weak(b))
        return ty.mark_weak(ir.Select(t, self.loc(node), cond, ty.convert(a, t),
                                      ty.convert(b, t)), w)

    def visit_Call(self, node: ast.Call):
        return calls.lower_call(self, node)

    def scalar_math(self, name: str, flavour: str, node: ast.Call) -> ir.Expr:
        """``name(x)`` of the math function ``name`` on numbers (a tile function given a number
        lowers as the scalar one)."""
        return calls.math_call(self, name, flavour, node)


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
        body = lw.lower_body(src.tree.body)
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
    ret: Type = void
    ret_weak = False
    if lw.return_types:
        t, w = lw.return_types[0]
        for t2, w2 in lw.return_types[1:]:
            t, w = ty.unify(t, w, t2, w2)
        ret, ret_weak = t, w
    func = ir.Function(cname, fn.__name__, params, body, ret, locals_, src.loc(src.tree,
                       fn.__name__), is_kernel, lw.callees, lw.uses_dynamic_shared,
                       src.filename, fn, ret_weak)
    if ret is not void:
        _fix_returns(func)
    return func


def _fix_returns(func: ir.Function) -> None:
    for s in ir.walk_stmts(func.body):
        if isinstance(s, ir.Return) and s.value is not None:
            s.value = ty.convert(s.value, func.return_type)


def _assigned_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in tree.args.args}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


def _pos(node: ast.AST) -> dict:
    return {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}


