"""A block's tile memory operations in program order (ir/passes.py runs it last but one).

A tile kernel reads as a sequential program per block: a load sees the stores before it, a
store lands after the loads before it (cuTile orders them so: ``ct.store`` then ``ct.gather``
of the same elements reads the stored values; a window stored twice keeps the second store).
On the GPU each element of a tile operation belongs to one thread of the block, and two
operations may give one element to different threads (different shapes, a gather's indices, a
scatter of one element, overlapping windows of a tiled view): the second thread must wait for
the first. This pass puts a ``syncthreads()`` before every tile operation on global memory that
conflicts with one since the last barrier, on any path:

- the two touch arrays of one root (the same parameter, through any views of it: slices,
  tiled views, raw memory, reshapes; an array variable bound to several roots, or to what a
  call returned, is every root), and at least one writes (an atomic writes);
- and they do not give each element to the same thread: a plain ``load``/``store`` pair of
  one array variable (not a view), one tile type (shape, dtype, layout) and one order is
  exempt, since tiles of one shape partition the array and an element's thread follows from
  its place in the tile (``t = ct.load(x, i); ct.store(x, i, t + 1)`` needs no barrier); so
  are two writes of one element by a scatter or atomic of a 0-d tile (thread 0 does them;
  every thread reads a 0-d gather).

Around loops the operations of the end of an iteration meet those of the next one's start (a
fixpoint over the body). A call of a device function touches what the function touches (its
parameters replaced by the call's arguments), each element by any thread; the function's own
body gets its barriers as any function's. The barrier is one the simulator executes too, so its
race check sees the order the GPU has.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.types import ArrayType, TileType, void
from . import nodes as ir

_ANY = "*"
_MEMORY = ("load", "load_operand", "gather_operand", "store", "gather", "scatter",
           "scatter_fragments", "atomic", "mma_loop")
_VIEWS = (ir.Slice, ir.Reshape, ir.ViewAs, ir.RawMemory, ir.Field)


@dataclass(frozen=True)
class _Access:
    root: str
    write: bool
    mapping: tuple | None  # element -> thread, for the exempt plain load/store; None: unique

    def conflicts(self, other: _Access) -> bool:
        if self.root != other.root and _ANY not in (self.root, other.root):
            return False
        if not (self.write or other.write):
            return False
        return self.mapping is None or self.mapping != other.mapping


def order_memory(f: ir.Function, summaries: dict) -> bool:
    """Insert the barriers into ``f``; whether any went in. ``summaries`` memoizes what each
    function touches (shared between calls)."""
    if not _summary(f, summaries):
        return False
    o = _Orderer(_roots(f), summaries)
    o.block(f.body, frozenset(), [])
    return o.inserted


def _summary(f: ir.Function, memo: dict) -> frozenset:
    """(root, writes) of every global array ``f`` touches with tile operations, its callees'
    included, roots named as ``f`` names them (its parameters)."""
    hit = memo.get(id(f))
    if hit is None:
        memo[id(f)] = frozenset()  # (recursion is refused by the frontend)
        roots = _roots(f)
        out = set()
        for s in ir.walk_stmts(f.body):
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    out |= {(_root(a, roots)[0], w) for a, w in _memory_op(x) or ()}
                    if isinstance(x, ir.CallFunc):
                        out |= _in_caller(x, memo, roots)
        hit = memo[id(f)] = frozenset(out)
    return hit


def _in_caller(call: ir.CallFunc, memo: dict, roots: dict) -> set:
    """What a call touches, its callee's parameters replaced by the caller's arguments."""
    params = [p.name for p in call.func.params if not p.is_constant]
    args = dict(zip(params, call.args))
    out = set()
    for root, write in _summary(call.func, memo):
        name, _, rest = root.partition("[")
        arg = args.get(name)
        mine = _root(arg, roots)[0] if arg is not None else _ANY
        out.add((mine if mine == _ANY or not rest else f"{mine}[{rest}", write))
    return out


def _memory_op(x) -> list | None:
    """The global arrays a tile operation touches, as (array expression, writes), or None."""
    if not isinstance(x, ir.TileOp) or x.op not in _MEMORY:
        return None
    arrays = [(x.args[0], x.op in ("store", "scatter", "scatter_fragments", "atomic"))]
    if x.op == "mma_loop":
        arrays.append((x.args[1], False))
    out = [(a, w) for a, w in arrays if isinstance(a.type, ArrayType) and
           a.type.space == "global"]
    return out or None


def _roots(f: ir.Function) -> dict[str, tuple[str, bool]]:
    """Array variable -> (its root, whether it is a view), from the function's assignments;
    an array parameter is its own root."""
    roots: dict[str, tuple[str, bool]] = {}
    assigns = [s for s in ir.walk_stmts(f.body) if isinstance(s, ir.Assign) and
               isinstance(s.value.type, ArrayType)]
    for _ in range(len(assigns) + 1):  # chains of variables settle in as many rounds
        seen: dict[str, tuple[str, bool]] = {}
        for s in assigns:
            r = _root(s.value, roots)
            prev = seen.get(s.name)
            seen[s.name] = r if prev is None or prev == r else (_ANY, True)
        if seen == roots:
            break
        roots = seen
    return roots


def _root(e: ir.Expr, roots: dict) -> tuple[str, bool]:
    if isinstance(e, ir.Var):
        return roots.get(e.name, (e.name, False))
    if isinstance(e, _VIEWS):
        return _root(e.array, roots)[0], True
    if isinstance(e, ir.TupleItem):
        r, view = _root(e.value, roots)
        return (r if r == _ANY else f"{r}[{e.index}]"), view
    return _ANY, True


class _Loop:
    def __init__(self):
        self.back: set = set()  # pending at each continue
        self.out: set = set()  # pending at each break


class _Orderer:
    def __init__(self, roots: dict, summaries: dict):
        self.roots = roots
        self.summaries = summaries
        self.inserted = False

    def accesses(self, s: ir.Stmt) -> list[_Access]:
        """What statement ``s`` touches (a device function it calls: what that touches, each
        element by any thread)."""
        out = []
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.CallFunc):
                    out += [_Access(r, w, None)
                            for r, w in _in_caller(x, self.summaries, self.roots)]
                for arr, write in _memory_op(x) or ():
                    root, view = _root(arr, self.roots)
                    out.append(_Access(root, write, self.mapping(x, arr, view)))
        return out

    @staticmethod
    def mapping(x: ir.TileOp, arr: ir.Expr, view: bool) -> tuple | None:
        one = x.args[1].type if x.op == "scatter" else x.type if x.op == "atomic" else None
        if isinstance(one, TileType) and one.shape == ():
            return ("thread 0",)  # one element, written by the block's thread 0
        if view or not isinstance(arr, ir.Var) or x.op not in ("load", "store"):
            return None
        t = x.type if x.op == "load" else x.args[1].type
        return (arr.name, t, tuple(x.attrs.get("order", ())))

    def block(self, stmts: list, pending: frozenset, loops: list) -> frozenset:
        out: list = []
        for s in stmts:
            if isinstance(s, ir.If):
                a = self.block(s.then, pending, loops)
                b = self.block(s.orelse, pending, loops)
                pending = a | b
            elif isinstance(s, (ir.For, ir.While)):
                pending = self.loop(s, pending, loops)
            elif isinstance(s, (ir.Break, ir.Continue)):
                if loops:
                    (loops[-1].out if isinstance(s, ir.Break) else loops[-1].back).update(pending)
                pending = frozenset()
            elif _is_barrier(s):
                pending = frozenset()
            else:
                acc = self.accesses(s)
                if any(a.conflicts(p) for a in acc for p in pending):
                    out.append(_barrier(s.loc))
                    self.inserted = True
                    pending = frozenset()
                pending = pending | set(acc)
            out.append(s)
        stmts[:] = out
        return pending

    def loop(self, s, pending: frozenset, loops: list) -> frozenset:
        head = pending
        while True:
            ctx = _Loop()
            end = self.block(s.body, head, loops + [ctx])
            grown = head | end | ctx.back
            if grown == head:
                return head | ctx.out
            head = frozenset(grown)


def _is_barrier(s: ir.Stmt) -> bool:
    return isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) and \
        s.value.name == "syncthreads"


def _barrier(loc: ir.Loc) -> ir.ExprStmt:
    return ir.ExprStmt(loc, ir.Call(void, loc, "syncthreads", []))
