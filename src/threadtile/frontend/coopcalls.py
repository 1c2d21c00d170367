"""Calls of ``threadtile.coop`` (lang/collectives.py) -> the ``coop.*`` operations of the IR
(ir/coop.py): arguments bound by name as the stubs document them, the block shape and items
per thread read at compile time, the user's operator compiled as a device function of two
values of the dtype."""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
from typing import TYPE_CHECKING

from ..ir import coop as ircoop
from ..ir import nodes as ir
from ..lang.collectives import KEYWORDS, SIGNATURES, Primitive
from ..lang.types import ArrayType, Scalar, bool_, int32, void
from . import funcs
from . import typing as ty
from .values import Py, Tup

if TYPE_CHECKING:
    from .lower import Lowerer

_NO = object()

_SIGS, _KEYWORDS = SIGNATURES, KEYWORDS


def lower(lw: Lowerer, name: str, node: ast.Call):
    spec = _SIGS.get(name)
    if spec is None:
        raise lw.error(node, f"{name}() is not supported")
    c = _Call(lw, name, node, *spec)
    return c.lower()


def lower_primitive(lw: Lowerer, prim: Primitive, node: ast.Call):
    """``block_reduce(x)`` of a primitive made on the host (cuda.coop's two-phase form): the
    call with the factory's parameters, its dtype and items per thread checked."""
    spec = _SIGS[prim.name]
    c = _Call(lw, prim.name, node, *spec)
    for k, v in prim.kwargs.items():
        c.args.setdefault(k, Py(v))
    call = c.lower()
    got = ircoop.dtype_of(call)
    if got != prim.dtype:
        raise c.error(f"was made for {prim.dtype} (coop.{c.short}({prim.dtype}, ...)); called "
                      f"with {got}")
    n = call.attrs.get("items", 0)
    if max(n, 1) != prim.items_per_thread:
        raise c.error(f"was made for items_per_thread={prim.items_per_thread}; called with "
                      + (f"arrays of {n}" if n else "one value"))
    return call


class _Call:
    def __init__(self, lw: Lowerer, name: str, node: ast.Call, params: tuple, required: int):
        self.lw, self.name, self.node = lw, name, node
        self.short = name[5:]  # block.sum
        self.loc = lw.loc(node)
        self.args: dict[str, object] = {}
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise lw.error(node, f"coop.{self.short}() takes its arguments one by one")
        if len(node.args) > len(params):
            raise lw.error(node, f"coop.{self.short}() takes at most {len(params)} positional "
                                 f"arguments ({', '.join(params)}), got {len(node.args)}")
        for p, a in zip(params, node.args):
            self.args[p] = lw.expr(a)
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in params and kw.arg not in _KEYWORDS:
                raise lw.error(node, f"coop.{self.short}() got an unexpected keyword argument "
                                     f"{kw.arg!r}")
            if kw.arg in self.args:
                raise lw.error(node, f"coop.{self.short}() got two values for {kw.arg!r}")
            self.args[kw.arg] = lw.expr(kw.value)

    def error(self, msg: str, hint: str | None = None):
        return self.lw.error(self.node, f"coop.{self.short}(): {msg}", hint)

    # -- compile-time arguments --------------------------------------------------------------

    def const_int(self, key: str, default=_NO) -> int:
        v = self.args.get(key, _NO)
        if v is _NO:
            if default is _NO:
                raise self.error(f"needs {key}=", "a compile-time integer: a literal, a "
                                 "global constant or a Constant[int] parameter")
            return default
        v = self._const(v)
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.error(f"{key} must be a compile-time integer",
                             "a literal, a global constant or a Constant[int] parameter")
        return v

    def _const(self, v):
        if isinstance(v, Py):
            return v.obj
        if isinstance(v, ir.Var) and v.name in self.lw.literal_locals:
            return self.lw.literal_locals[v.name]
        if isinstance(v, ir.Const):
            return v.value
        if isinstance(v, Tup):
            return tuple(self._const(x) for x in v.items)
        return None

    def block(self) -> tuple[int, int, int]:
        v = self.args.get("threads_per_block", _NO)
        if v is _NO:
            raise self.error("needs threads_per_block=, the block's shape (CUB compiles its "
                             "block primitives for one)", "pass the block you launch with, "
                             "as a global constant: threads_per_block=TPB")
        shape = self._const(v)
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if not (isinstance(shape, tuple) and 1 <= len(shape) <= 3 and all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape)):
            raise self.error("threads_per_block must be a compile-time int or a tuple of 1 to "
                             "3 ints")
        shape = tuple(shape) + (1,) * (3 - len(shape))
        n = shape[0] * shape[1] * shape[2]
        if n > 1024:
            raise self.error(f"threads_per_block={shape} is {n} threads; a block has at most "
                             "1024")
        return shape

    def warp(self) -> int:
        w = self.const_int("threads_in_warp", 32)
        if w not in (1, 2, 4, 8, 16, 32):
            raise self.error(f"threads_in_warp must be a power of two up to 32, got {w}")
        return w

    # -- runtime arguments -------------------------------------------------------------------

    def value(self, key: str) -> ir.Expr:
        v = self.lw.scalar(self.args[key], self.node)
        if ty.is_weak(v):
            v = ty.convert(v, v.type)
        self.dtype_ok(v.type)
        return v

    def dtype_ok(self, t) -> Scalar:
        if t not in ircoop.DTYPES:
            raise self.error(f"works on numbers of {', '.join(d.name for d in ircoop.DTYPES)};"
                             f" got {t}")
        return t

    def items(self, key: str) -> tuple[ir.Expr, int]:
        """A local array of items per thread: its length, from its declaration."""
        a = self.args.get(key, _NO)
        decl = None
        if isinstance(a, ir.Var) and isinstance(a.type, ArrayType):
            decl = self.lw.arrays.get(a.name)
        if decl is None or decl.type.space != "local" or len(decl.shape) != 1:
            raise self.error(f"{key} must be a 1-d cuda.local.array declared in this function",
                             "items per thread live in registers: "
                             "items = cuda.local.array(n, dtype)")
        self.dtype_ok(decl.type.dtype)
        return a, int(decl.shape[0])

    def is_array(self, key: str) -> bool:
        a = self.args.get(key, _NO)
        return isinstance(a, ir.Expr) and isinstance(a.type, ArrayType)

    def op(self, key: str, t: Scalar, compare: bool = False):
        """``sum``/``min``/``max``, or the user's function compiled for ``(t, t)``."""
        v = self.args.get(key, _NO)
        obj = v.obj if isinstance(v, Py) else None
        if not compare:
            if obj is builtins.min:
                return "min"
            if obj is builtins.max:
                return "max"
            if obj is operator.add:
                return "sum"
        fn = funcs.python_function(obj) if obj is not None else None
        what = "a comparator" if compare else "an operator"
        if fn is None:
            raise self.error(f"{key} must be {what}: a Python function of two values" + (
                "" if compare else ", min or max"), "define it at module level (or with "
                "@cuda.jit(device=True)) and pass the function itself")
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < 2:
            raise self.error(f"{fn.__name__}() must take two values")
        lw = self.lw
        bound = [(p.name, ir.Var(t, self.loc, f"_coop_{p.name}")) for p in params[:2]]
        func, _ = lw.spec.device_function(lw, obj, fn, bound, self.node)
        rt = func.return_type
        want = "a bool" if compare else f"a {t}"
        if not isinstance(rt, Scalar) or (compare and rt not in (bool_,) and not rt.is_int) \
                or (not compare and rt != t and not (rt.is_int and t.is_int or
                                                     rt.is_float and t.is_float)):
            raise self.error(f"{fn.__name__}({t}, {t}) returns {rt}; {what} here returns "
                             f"{want}")
        lw.callees.append(func)
        return func

    # -- the operations ----------------------------------------------------------------------

    def lower(self):
        call = self._lower()
        call.attrs["called"] = self.short  # what errors name: block.sum, not block.reduce
        return call

    def _lower(self):
        kind, verb = self.short.split(".")
        if verb in ("sum", "reduce"):
            return self.reduce(kind, verb)
        if verb.endswith(("_sum", "_scan")):
            return self.scan(kind, verb)
        if verb.startswith("radix_sort"):
            return self.radix_sort(verb)
        if verb.startswith("merge_sort"):
            return self.merge_sort(kind, verb)
        if verb in ("load", "store"):
            return self.load_store(verb)
        return self.exchange()

    def _group(self, kind: str) -> dict:
        return {"block": self.block()} if kind == "block" else {"warp": self.warp()}

    def reduce(self, kind: str, verb: str) -> ir.Expr:
        attrs = self._group(kind)
        if self.is_array("value"):
            if kind == "warp":
                raise self.error("takes one value per lane")
            arr, n = self.items("value")
            args, t = [arr], arr.type.dtype
        else:
            v = self.value("value")
            args, t, n = [v], v.type, 0
        attrs["items"] = n
        attrs["op"] = "sum" if verb == "sum" else self.op("op", t)
        return ir.Call(t, self.loc, f"coop.{kind}.reduce", args, attrs)

    def scan(self, kind: str, verb: str) -> ir.Expr:
        attrs = self._group(kind)
        inclusive = verb.startswith("inclusive")
        if self.is_array("value"):
            if kind == "warp":
                raise self.error("takes one value per lane")
            arr, n = self.items("value")
            if "out" not in self.args:
                raise self.error("of arrays writes into an output array: "
                                 f"coop.{self.short}(items, out{', op' * verb.endswith('scan')}"
                                 ")")
            out, n2 = self.items("out")
            if n2 != n or out.type.dtype != arr.type.dtype:
                raise self.error(f"items and out must be arrays of one dtype and length; got "
                                 f"{n} {arr.type.dtype} and {n2} {out.type.dtype}")
            args, t, rtype = [arr, out], arr.type.dtype, void
        else:
            if kind == "block" and "out" in self.args:
                # scalar form: the second positional was the operator (cuda.coop's order)
                self.args = self._shift_scalar_form()
            v = self.value("value")
            args, t, n, rtype = [v], v.type, 0, v.type
        attrs["items"] = n
        attrs["op"] = "sum" if verb.endswith("_sum") else self.op("op", t)
        attrs["inclusive"] = inclusive
        if verb == "exclusive_scan":
            if "initial" not in self.args:
                raise self.error("needs the initial value (what thread 0 gets)")
            init = self.lw.scalar(self.args["initial"], self.node)
            args.append(ty.convert(init, t))
        return ir.Call(rtype, self.loc, f"coop.{kind}.scan", args, attrs)

    def _shift_scalar_form(self) -> dict:
        """``inclusive_scan(v, op)`` / ``exclusive_scan(v, op, initial)``: the positional
        slots of the array form (value, out, op, initial) hold (value, op, initial)."""
        a = dict(self.args)
        order = [k for k in ("out", "op", "initial") if k in a]
        vals = [a.pop(k) for k in order]
        names = ["op", "initial"]
        if len(vals) > len(names):
            raise self.error("of a number takes (value, op[, initial])")
        for k, v in zip(names, vals):
            a[k] = v
        return a

    def radix_sort(self, verb: str) -> ir.Expr:
        attrs = {"block": self.block()}
        keys, n = self.items("keys")
        args = [keys]
        pairs = "pairs" in verb
        if pairs:
            vals, n2 = self.items("values")
            if n2 != n:
                raise self.error(f"keys and values must have one length; got {n} and {n2}")
            args.append(vals)
        bits = keys.type.dtype.bits
        begin = self.const_int("begin_bit", 0)
        end = self.const_int("end_bit", bits)
        if not 0 <= begin < end <= bits:
            raise self.error(f"needs 0 <= begin_bit < end_bit <= {bits}; got {begin}, {end}")
        args += [ir.Const(int32, self.loc, begin), ir.Const(int32, self.loc, end)]
        attrs.update(items=n, descending=verb.endswith("descending"), values=pairs)
        return ir.Call(void, self.loc, "coop.block.radix_sort", args, attrs)

    def merge_sort(self, kind: str, verb: str) -> ir.Expr:
        attrs = {"block": self.block()}
        x, y, z = attrs["block"]
        if kind == "block" and (x * y * z) & (x * y * z - 1):
            raise self.error(f"CUB's block merge sort takes a power-of-two number of threads, "
                             f"not {x * y * z}", "use radix_sort_keys for numbers, or a block "
                             "of 32, 64, 128... threads")
        if kind == "warp":
            attrs["warp"] = self.warp()
        keys, n = self.items("keys")
        args = [keys]
        if verb.endswith("pairs"):
            vals, n2 = self.items("values")
            if n2 != n:
                raise self.error(f"keys and values must have one length; got {n} and {n2}")
            args.append(vals)
        attrs["items"] = n
        attrs["op"] = self.op("compare", keys.type.dtype, compare=True)
        if kind == "warp":
            w = attrs["warp"]
            x, y, z = attrs["block"]
            if (x * y * z) % w:
                raise self.error(f"a block of {x * y * z} threads is not made of logical "
                                 f"warps of {w}")
        return ir.Call(void, self.loc, f"coop.{kind}.merge_sort", args, attrs)

    def load_store(self, verb: str) -> ir.Expr:
        attrs = {"block": self.block()}
        gkey = "src" if verb == "load" else "dst"
        g = self.args.get(gkey, _NO)
        if not (isinstance(g, ir.Expr) and isinstance(g.type, ArrayType) and g.type.ndim == 1
                and g.type.space in ("global", "shared")):
            raise self.error(f"{gkey} must be a 1-d global or shared array",
                             "pass a slice of the block's part: a[base:]")
        if verb == "store" and g.type.readonly:
            raise self.error(f"{gkey} is read-only")
        items, n = self.items("items")
        if items.type.dtype != g.type.dtype:
            raise self.error(f"{gkey} holds {g.type.dtype} and items {items.type.dtype}",
                             "convert in a loop over the items")
        alg = self.args.get("algorithm", Py("direct"))
        alg = alg.obj if isinstance(alg, Py) else None
        if alg not in ircoop.LOAD_ALGORITHMS:
            raise self.error(f"algorithm must be one of {', '.join(ircoop.LOAD_ALGORITHMS)}")
        args = [g, items]
        valid = "num_valid_items" in self.args
        if valid:
            args.append(ty.convert(self.lw.scalar(self.args["num_valid_items"], self.node),
                                   int32))
        oob = verb == "load" and "oob_default" in self.args
        if oob:
            if not valid:
                raise self.error("oob_default needs num_valid_items")
            args.append(ty.convert(self.lw.scalar(self.args["oob_default"], self.node),
                                   items.type.dtype))
        elif "oob_default" in self.args:
            raise self.error("store has no oob_default")
        attrs.update(items=n, algorithm=alg, valid=valid, oob=oob)
        return ir.Call(void, self.loc, f"coop.block.{verb}", args, attrs)

    def exchange(self) -> ir.Expr:
        attrs = {"block": self.block()}
        items, n = self.items("items")
        out, n2 = self.items("out")
        if n2 != n or out.type.dtype != items.type.dtype:
            raise self.error("items and out must be arrays of one dtype and length")
        kind = self.args.get("kind")
        kind = kind.obj if isinstance(kind, Py) else None
        if kind not in ircoop.EXCHANGES:
            raise self.error(f"kind must be one of {', '.join(ircoop.EXCHANGES)}")
        attrs.update(items=n, kind=kind)
        return ir.Call(void, self.loc, "coop.block.exchange", [items, out], attrs)
