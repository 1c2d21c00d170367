"""``ct.reduce(x, axis, func, identity, *, keepdims=False)`` and
``ct.scan(x, axis, func, identity, *, reverse=False)``: reductions and inclusive scans with a
combining function written by the user (a nested ``def``, a ``lambda``, a module-level
function, ``operator.add``...), on one tile or on a tuple of tiles, with cuTile's rules.

They need no operation of their own: both are lowered at compile time into the tile
operations the backends already have (``extract``, ``reshape``, ``broadcast``, ``cat``), the
combining function inlined on whole subtiles at once. cuTile calls it on 0-d tiles; here its
operands are subtiles of the input, on which every elementwise operation gives what it gives
element by element.

* A reduction halves the axis ``log2(n)`` times: neighbours are combined,
  ``func(x[2i], x[2i+1])`` (the axis reshaped to ``(n/2, 2)``), so the order of the operands
  is kept (an associative ``func`` need not be commutative).
* A scan is Sklansky's: at step ``s = 1, 2, 4, ...`` the axis is cut into blocks of ``2s``
  elements, each already scanned within its two halves; the last element of the first half is
  combined into every element of the second, ``func(earlier, later)``. A reverse scan runs the
  same from the end (``func(later, earlier)``: the accumulated value comes first), as a scan
  of the flipped tile would.

The identity is checked (constant scalars, one per tile) but not needed: every tile axis is a
power of two. The combining function may not branch or loop at run time, touch memory, print
or reduce again (cuTile's errors, raised through :func:`restrict`).
"""

from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING

from ..errors import TileCodeSyntaxError, TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import TileType, bool_, int64
from .tiles import bind_args, is_pow2, is_tile, static_bool, tile_op, tile_promote
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer

_BODY = "reduce_body"  # the Lowerer's attribute naming the body being lowered, if any

# cuTile's operations with memory effects (a combining function may not call them)
MEMORY_CALLS = frozenset({"load", "store", "gather", "scatter", "printf", "print",
                          "load_advanced_indexing", "store_advanced_indexing"})
# the reductions and scans, which may not nest in a combining function
REDUCING_CALLS = frozenset({"reduce", "scan", "sum", "max", "min", "prod", "argmax", "argmin",
                            "cumsum", "cumprod"})


# ---- what a combining function may not do --------------------------------------------------

def body_kind(lw: Lowerer) -> str | None:
    """``"reduction"`` or ``"scan"`` while a combining function is being lowered, else None."""
    return lw.__dict__.get(_BODY)


def restrict(lw: Lowerer, node: ast.AST, what: str) -> None:
    """Raise cuTile's error when a combining function being lowered does ``what``: ``"branch"``
    (an ``if`` on a run-time condition), ``"loop"`` (a loop that is not unrolled), ``"memory"``
    (a load, store, atomic or print) or ``"nested"`` (a reduction or scan)."""
    kind = body_kind(lw)
    if kind is None:
        return
    if what == "branch":
        msg = (f"Branching inside {kind} body is not supported. Consider ct.where() as a "
               "workaround.")
    elif what == "loop":
        msg = f"Loops inside {kind} body are not supported"
    elif what == "memory":
        msg = f"Operations with memory effects are not supported inside {kind} body"
    else:
        msg = "Nested scan/reduction is not supported"
    raise lw.error(node, msg, cls=TileCodeSyntaxError)


def restrict_call(lw: Lowerer, fname: str, node: ast.AST) -> None:
    """:func:`restrict` for a call of ``threadtile.tile.<fname>``."""
    if body_kind(lw) is None:
        return
    if fname in MEMORY_CALLS or fname.startswith("atomic_"):
        restrict(lw, node, "memory")
    if fname in REDUCING_CALLS:
        restrict(lw, node, "nested")


def is_run_once(node: ast.While) -> bool:
    """``while True: ...; break``: how an inlined body with several returns is lowered (a block
    run once, not a loop)."""
    return isinstance(node.test, ast.Constant) and node.test.value is True and \
        bool(node.body) and isinstance(node.body[-1], ast.Break)


# ---- the arguments ---------------------------------------------------------------------------

def _type_error(lw: Lowerer, node, fname: str, param: str, what: str):
    return lw.error(node, f'Invalid argument "{param}" of {fname}(): {what}',
                    cls=TileCodeTypeError)


def _const_int(lw: Lowerer, v, node, fname: str) -> int:
    if isinstance(v, ir.Const) and v.type.is_int and v.type != bool_:
        return int(v.value)
    if isinstance(v, Py) and v.obj is None:
        raise _type_error(lw, node, fname, "axis",
                          "Expected an integer constant, but given value has type None")
    if isinstance(v, ir.Expr) and not is_tile(v) and v.type.is_int:
        raise _type_error(lw, node, fname, "axis",
                          "Expected an integer constant, but given value is not constant")
    raise _type_error(lw, node, fname, "axis", "Expected an integer constant, but given "
                                               f"value has type {describe_value(v)}")


def _scalar_const(v) -> bool:
    return isinstance(v, ir.Const) and isinstance(v.value, (bool, int, float))


def _identities(lw: Lowerer, v, n: int, tuple_mode: bool, node, fname: str) -> list:
    """The identity values: a constant scalar, or a tuple of ``n`` of them."""
    if not tuple_mode:
        if not _scalar_const(v):
            what = "non-constant type " if isinstance(v, ir.Expr) and not is_tile(v) else \
                "type "
            raise _type_error(lw, node, fname, "identity", "Expected a scalar constant, but "
                              f"given value has {what}{describe_value(v)}")
        return [v.value]
    if not isinstance(v, Tup):
        raise _type_error(lw, node, fname, "identity", "Expected a tuple, but given value "
                                                       f"has type {describe_value(v)}")
    for i, item in enumerate(v.items):
        if not _scalar_const(item):
            raise _type_error(lw, node, fname, "identity", "Expected a tuple of scalar "
                              f"constants, but item at position #{i} has type "
                              f"{describe_value(item)}")
    if len(v.items) != n:
        raise lw.error(node, f"Number of identity values ({len(v.items)}) must match the "
                             f"number of input tiles ({n})", cls=TileCodeTypeError)
    return [item.value for item in v.items]


def _callable(lw: Lowerer, f, node, fname: str) -> object:
    from .inline import BoundMethod, Closure

    if isinstance(f, Py) and (isinstance(f.obj, (Closure, BoundMethod)) or (
            callable(f.obj) and not isinstance(f.obj, type))):
        return f.obj
    raise _type_error(lw, node, fname, "func", "Expected a callable object, but given value "
                                               f"has type {describe_value(f)}")


def _inputs(lw: Lowerer, x, node, fname: str, what: str) -> tuple[list[ir.Expr], bool]:
    """The input tiles (broadcast to their common shape) and whether ``x`` is a tuple."""
    tuple_mode = isinstance(x, Tup)
    xs = list(x.items) if tuple_mode else [x]
    if not all(is_tile(t) for t in xs):
        raise _type_error(lw, node, fname, "x", "Expected a tile or a tuple of tiles, but "
                                                f"given value has type {describe_value(x)}")
    if not xs:
        raise lw.error(node, f"Need at least one input value to {what}", cls=TileCodeTypeError)
    shapes = [t.type.shape for t in xs]
    nd = max(len(s) for s in shapes)
    common = []
    for k in range(nd):
        dims = {s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0} - {1}
        if len(dims) > 1:
            raise lw.error(node, f"Input shapes {', '.join(map(str, shapes))} are not "
                                 "broadcastable to a common shape", cls=TileCodeTypeError)
        common.append(dims.pop() if dims else 1)
    shape = tuple(common)
    out = []
    for t in xs:
        if t.type.ndim < nd:
            t = _reshape(lw, t, (1,) * (nd - t.type.ndim) + t.type.shape, node)
        if t.type.shape != shape:
            t = tile_op(lw, node, TileType(t.type.dtype, shape), "broadcast", [t])
        out.append(t)
    return out, tuple_mode


def _axis(lw: Lowerer, v, ndim: int, node, fname: str) -> int:
    a = _const_int(lw, v, node, fname)
    if not -ndim <= a < ndim:
        raise lw.error(node, f"Axis {a} is out of range for rank {ndim}",
                       cls=TileCodeTypeError)
    return a % ndim


# ---- tile pieces -----------------------------------------------------------------------------

def _reshape(lw: Lowerer, t: ir.Expr, shape: tuple, node) -> ir.Expr:
    if t.type.shape == shape:
        return t
    return tile_op(lw, node, TileType(t.type.dtype, shape), "reshape", [t])


def _extract(lw: Lowerer, t: ir.Expr, axis: int, size: int, index: int, node) -> ir.Expr:
    """Cell ``index`` of ``t`` cut into pieces of ``size`` along ``axis``."""
    shape = list(t.type.shape)
    shape[axis] = size
    loc = lw.loc(node)
    idx = [ir.Const(int64, loc, index if d == axis else 0) for d in range(t.type.ndim)]
    return tile_op(lw, node, TileType(t.type.dtype, tuple(shape)), "extract", [t] + idx)


def _cat(lw: Lowerer, a: ir.Expr, b: ir.Expr, axis: int, node) -> ir.Expr:
    shape = list(a.type.shape)
    shape[axis] += b.type.shape[axis]
    return tile_op(lw, node, TileType(a.type.dtype, tuple(shape)), "cat", [a, b], axis=axis)


def _bind(lw: Lowerer, v: ir.Expr, node) -> ir.Expr:
    """``v`` as a variable (the combining function may read an operand more than once)."""
    if isinstance(v, (ir.Var, ir.Const)):
        return v
    name = lw.spec.fresh("red")
    lw.local_names.add(name)
    lw.pre.extend(lw.assign_name(node, name, v))
    return lw.read_name(name, node)


# ---- calling the combining function ----------------------------------------------------------

def _invoke(lw: Lowerer, func, args: list, node: ast.Call):
    """The value of ``func(*args)``, inlined."""
    from . import funcs, inline

    if isinstance(func, inline.Closure):
        return inline.inline(lw, func.node, func.src, func.fn, func.fname, args, {}, node,
                             func.defaults, foreign=False)
    fn = funcs.python_function(func)
    if isinstance(fn, types.FunctionType) and not getattr(fn, "_threadtile_intrinsic", None):
        return inline.call_function(lw, fn, args, {}, node)
    # an operator (operator.add), an intrinsic (ct.maximum): a call of names bound to them
    pos = {k: getattr(node, k) for k in ("lineno", "col_offset", "end_lineno",
                                         "end_col_offset")}
    names = []
    for v in [Py(func)] + list(args):
        name = lw.spec.fresh("rarg")
        lw.statics[name] = v
        lw.defined.add(name)
        names.append(ast.Name(name, ast.Load(), **pos))
    call = ast.Call(names[0], names[1:], [], **pos)
    return lw.expr_value(call)


def _combine(lw: Lowerer, func, lhs: list[ir.Expr], rhs: list[ir.Expr], tuple_mode: bool,
             kind: str, node: ast.Call) -> list[ir.Expr]:
    """``func(*lhs, *rhs)`` checked as cuTile checks a combining function's results: a tile
    (a tuple of as many tiles as inputs), each of its input's dtype or implicitly castable to
    it, and of the operands' shape (or 0-d, broadcast)."""
    op = "Reduction" if kind == "reduction" else "Scan"
    args = [_bind(lw, v, node) for v in lhs + rhs]
    saved = lw.__dict__.get(_BODY)
    lw.__dict__[_BODY] = kind
    try:
        res = _invoke(lw, func, args, node)
    finally:
        lw.__dict__[_BODY] = saved
    n = len(lhs)
    if tuple_mode:
        if not isinstance(res, Tup):
            raise lw.error(node, f"{op} function returns a value of type "
                                 f"{describe_value(res)}, but a tuple was expected",
                           cls=TileCodeTypeError)
        if len(res.items) != n:
            raise lw.error(node, f"{op} function must return a tuple of {n} values to match "
                                 "the number of inputs, but a tuple of length "
                                 f"{len(res.items)} was found.", cls=TileCodeTypeError)
        results = list(res.items)
    else:
        results = [res]
    shape = lhs[0].type.shape
    out = []
    for i, (x, r) in enumerate(zip(lhs, results)):
        ctx = f" at position #{i}" if tuple_mode else ""
        if not is_tile(r):
            raise lw.error(node, f"{op} function returned a value of non-tile type "
                                 f"{describe_value(r)}{ctx}", cls=TileCodeTypeError)
        if r.type.shape not in (shape, ()):
            raise lw.error(node, f"{op} function returned a tile of non-scalar shape "
                                 f"{r.type.shape}{ctx}", cls=TileCodeTypeError)
        want = x.type.dtype
        if r.type.dtype != want:
            if tile_promote(r.type.dtype, want) != want:
                raise lw.error(node, f"{op} function returned a tile of unexpected dtype{ctx}: "
                                     f"cannot implicitly cast {r.type.dtype} to {want}",
                               cls=TileCodeTypeError)
            r = tile_op(lw, node, TileType(want, r.type.shape), "cast", [r])
        if r.type.shape != shape:
            r = tile_op(lw, node, TileType(want, shape), "broadcast",
                        [_reshape(lw, r, (1,) * len(shape), node)])
        out.append(r)
    return out


def _check_only(lw: Lowerer, func, xs: list[ir.Expr], tuple_mode: bool, kind: str,
                node: ast.Call) -> None:
    """An axis of one element needs no call of ``func``; it is still lowered once (its result
    unused), so that what cuTile refuses in it is refused here too."""
    pre = len(lw.pre)
    _combine(lw, func, xs, xs, tuple_mode, kind, node)
    del lw.pre[pre:]  # (pure: its statements are dropped)


# ---- the calls -------------------------------------------------------------------------------

def _prepare(lw: Lowerer, node: ast.Call, name: str, flag: str, what: str):
    """The arguments of ``ct.reduce``/``ct.scan`` (``flag``: keepdims or reverse) checked:
    (the tiles, whether a tuple, their shape, the axis, the function, the flag's value)."""
    restrict(lw, node, "nested")
    v = bind_args(lw, node, name, ["x", "axis", "func", "identity", flag],
                  {flag: ir.Const(bool_, lw.loc(node), False)})
    xs, tuple_mode = _inputs(lw, v["x"], node, name, name)
    shape = xs[0].type.shape
    axis = _axis(lw, v["axis"], len(shape), node, name)
    func = _callable(lw, v["func"], node, name)
    _identities(lw, v["identity"], len(xs), tuple_mode, node, name)
    on = static_bool(lw, v[flag], node, flag)
    n = shape[axis]
    if not is_pow2(n):
        raise lw.error(node, f"{name}(): the axis has {n} elements, not a power of two")
    if n == 1:
        _check_only(lw, func, xs, tuple_mode, what, node)
    return xs, tuple_mode, shape, axis, func, on


def lower_reduce(lw: Lowerer, node: ast.Call):
    """``ct.reduce(x, axis, func, identity, *, keepdims=False)``: a tile, or a tuple of tiles
    for a tuple ``x``."""
    xs, tuple_mode, shape, axis, func, keep = _prepare(lw, node, "reduce", "keepdims",
                                                       "reduction")
    n = shape[axis]
    while n > 1:
        # neighbours combined: axis -> (n/2, 2), func(item 0, item 1) of every pair
        n //= 2
        pairs = [_reshape(lw, t, shape[:axis] + (n, 2) + shape[axis + 1:], node) for t in xs]
        lhs = [_extract(lw, t, axis + 1, 1, 0, node) for t in pairs]
        rhs = [_extract(lw, t, axis + 1, 1, 1, node) for t in pairs]
        xs = _combine(lw, func, lhs, rhs, tuple_mode, "reduction", node)
        xs = [_reshape(lw, t, shape[:axis] + (n,) + shape[axis + 1:], node) for t in xs]
    out_shape = shape[:axis] + ((1,) if keep else ()) + shape[axis + 1:]
    res = [_reshape(lw, t, out_shape, node) for t in xs]
    return Tup(res) if tuple_mode else res[0]


def lower_scan(lw: Lowerer, node: ast.Call):
    """``ct.scan(x, axis, func, identity, *, reverse=False)``: the inclusive scan, a tile, or a
    tuple of tiles for a tuple ``x``."""
    xs, tuple_mode, shape, axis, func, rev = _prepare(lw, node, "scan", "reverse", "scan")
    n = shape[axis]
    s = 1
    while s < n:
        # axis -> (blocks, 2, s): half 0 and half 1 of every block of 2s elements
        split = shape[:axis] + (n // (2 * s), 2, s) + shape[axis + 1:]
        parts = [_reshape(lw, t, split, node) for t in xs]
        first = [_extract(lw, t, axis + 1, 1, 0, node) for t in parts]
        second = [_extract(lw, t, axis + 1, 1, 1, node) for t in parts]
        done, todo = (second, first) if rev else (first, second)
        # the element of the scanned half next to the other half: its last (first if reverse)
        edge = [_extract(lw, t, axis + 2, 1, 0 if rev else s - 1, node) for t in done]
        edge = [tile_op(lw, node, t.type.__class__(t.type.dtype, d.type.shape), "broadcast",
                        [t]) if t.type.shape != d.type.shape else t
                for t, d in zip(edge, todo)]
        todo = _combine(lw, func, edge, todo, tuple_mode, "scan", node)
        pairs = zip(todo, done) if rev else zip(done, todo)
        xs = [_reshape(lw, _cat(lw, a, b, axis + 1, node), shape, node) for a, b in pairs]
        s *= 2
    return Tup(xs) if tuple_mode else xs[0]
