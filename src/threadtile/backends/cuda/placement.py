"""Facts about a function that the CUDA emitter needs: which integers are provably
non-negative (``//`` and ``%`` then use C's truncating forms), which sums and products provably
fit their type (the others wrap through ``tt::wadd``...: ``fits``), and where each local is
declared (inline at its first assignment, by its ``for`` loop, or at the top of the
function)."""

from __future__ import annotations

from ...ir import nodes as ir
from ...lang.types import Scalar, int64

__all__ = ["count_in_range", "is_nonneg", "nonneg_vars", "placement"]


def is_nonneg(e: ir.Expr, nonneg: set[str]) -> bool:
    """Whether ``e`` is provably >= 0, which lets // and % use C's faster truncating forms."""
    if isinstance(e, ir.Const):
        return isinstance(e.value, (int, float)) and e.value >= 0
    if isinstance(e, (ir.Special, ir.ArrayDim)):
        return True
    if isinstance(e, ir.Var):
        return e.name in nonneg
    if isinstance(e, ir.Cast):  # uint32 -> int32 keeps the width and may turn negative
        src = e.value.type
        return isinstance(src, Scalar) and is_nonneg(e.value, nonneg) and (
            src.bits < e.type.bits or (src.bits == e.type.bits and src.kind == e.type.kind))
    if isinstance(e, ir.BinOp) and e.op in ("+", "*", "//", "%", ">>", "&"):
        return is_nonneg(e.left, nonneg) and is_nonneg(e.right, nonneg)
    if isinstance(e, ir.Call) and e.name in ("min", "max"):
        return all(is_nonneg(a, nonneg) for a in e.args)
    if isinstance(e, ir.Select):
        return is_nonneg(e.if_true, nonneg) and is_nonneg(e.if_false, nonneg)
    return isinstance(e.type, Scalar) and e.type.kind in "ub"


def nonneg_vars(f: ir.Function) -> set[str]:
    """Integer variables every assignment of which is provably non-negative (a fixpoint)."""
    sources: dict[str, list[ir.Expr]] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign):
            sources.setdefault(s.name, []).append(s.value)
        elif isinstance(s, ir.For):
            if not (isinstance(s.step, ir.Const) and s.step.value > 0):
                sources.setdefault(s.var, []).append(ir.Const(int64, s.loc, -1))
            sources.setdefault(s.var, []).append(s.start)
    for p in f.params:
        sources.setdefault(p.name, []).append(ir.Const(int64, f.loc, -1))
    nonneg = {n for n, t in f.locals.items() if isinstance(t, Scalar) and t.is_int}
    changed = True
    while changed:
        changed = False
        for name in list(nonneg):
            if not all(is_nonneg(v, nonneg) for v in sources.get(name, [])):
                nonneg.discard(name)
                changed = True
    return nonneg


def placement(f: ir.Function) -> tuple[list[str], set[int], set[int]]:
    """Where each local is declared: inline at an assignment when that assignment comes first
    and every other use is inside the same block after it; by the ``for`` statement itself when
    every use is inside loops over it; else at the top of the function. Returns the names
    declared at the top, the assignments that declare, and the ``For`` statements that do."""
    first: dict[str, tuple] = {}  # name -> (block id, stmt, is direct assign)
    blocks_of: dict[str, set[int]] = {}
    parents: dict[int, int | None] = {}
    outside: set[str] = set()  # names used somewhere other than in a loop over them
    loops_of: dict[str, list] = {}

    def note(name: str, blk: int, stmt, direct: bool, bound: tuple) -> None:
        if name not in first:
            first[name] = (blk, stmt, direct)
        blocks_of.setdefault(name, set()).add(blk)
        if name not in bound:
            outside.add(name)

    def visit(body: list[ir.Stmt], parent: int | None, bound: tuple) -> None:
        blk = id(body)
        parents[blk] = parent
        for s in body:
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.Var):
                        note(x.name, blk, s, False, bound)
            if isinstance(s, ir.Assign):
                note(s.name, blk, s, True, bound)
            elif isinstance(s, ir.For):
                if s.var in bound:  # a loop over k inside a loop over k: k outlives the inner
                    outside.add(s.var)
                loops_of.setdefault(s.var, []).append(s)
                note(s.var, id(s.body), s, False, bound + (s.var,))
                visit(s.body, blk, bound + (s.var,))
            elif isinstance(s, ir.If):
                visit(s.then, blk, bound)
                visit(s.orelse, blk, bound)
            elif isinstance(s, ir.While):
                visit(s.body, blk, bound)

    visit(f.body, None, ())

    def inside(b: int, root: int) -> bool:
        while b is not None:
            if b == root:
                return True
            b = parents.get(b)
        return False

    top, inline, by_for = [], set(), set()
    params = {p.name for p in f.params}
    params |= {s.name for s in ir.walk_stmts(f.body) if isinstance(s, ir.ArrayDecl)}
    for name in f.locals:
        if name in params or name not in first:
            continue
        if name in loops_of and name not in outside:
            by_for.update(id(s) for s in loops_of[name])  # each loop has its own variable
            continue
        blk, stmt, direct = first[name]
        if direct and all(inside(b, blk) for b in blocks_of[name]):
            inline.add(id(stmt))
        else:
            top.append(name)
    return top, inline, by_for


# Signed integers wrap (NumPy, numba); C++ leaves their overflow undefined, so the emitter spells
# an operation it cannot bound with these helpers of threadtile.h
WRAPPING = {"+": "tt::wadd", "-": "tt::wsub", "*": "tt::wmul", "<<": "tt::wshl"}
# bits of magnitude of the special registers: a block has at most 1024 threads, a grid 2^31 - 1
# blocks along x
SPECIAL_BITS = {"threadIdx": 11, "blockDim": 11, "blockIdx": 31, "gridDim": 31, "laneid": 6,
                 "warpsize": 6}


def bits_of(e: ir.Expr) -> int | None:
    """A bound on the bits of ``e``'s magnitude, where the IR shows one (None: unknown)."""
    if isinstance(e, ir.Const):
        return abs(int(e.value)).bit_length() if isinstance(e.value, (int, bool)) else None
    if isinstance(e, ir.Special):
        return SPECIAL_BITS.get(e.reg.split(".")[0])
    if isinstance(e, ir.ArrayDim):
        return 48  # extents and strides of arrays that fit in memory
    if isinstance(e, (ir.Cast, ir.Load, ir.Var)) and isinstance(e.type, Scalar) and \
            e.type.kind in "ub":
        return e.type.bits if e.type.kind == "u" else 1
    if isinstance(e, ir.Cast) and isinstance(e.value.type, Scalar) and e.value.type.is_int:
        inner = bits_of(e.value)
        return min(inner, e.value.type.bits) if inner is not None else (
            e.value.type.bits if e.value.type.bits < e.type.bits else None)
    if isinstance(e, (ir.Load, ir.Var)) and isinstance(e.type, Scalar) and e.type.is_int and \
            e.type.bits < 32:
        return e.type.bits
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*"):
        a, b = bits_of(e.left), bits_of(e.right)
        if a is None or b is None:
            return None
        return a + b if e.op == "*" else max(a, b) + 1
    if isinstance(e, ir.BinOp) and e.op == "%" and e.type.is_int:  # |a % b| < |b|
        return bits_of(e.right)
    if isinstance(e, ir.BinOp) and e.op == "&" and e.type.is_int:
        small = [bits_of(x) for x in (e.left, e.right) if isinstance(x, ir.Const) and x.value >= 0]
        return min(small) if small else None
    return None


def count_in_range(n: ir.Expr, t: Scalar, nonneg: set[str]) -> bool:
    """Whether a shift count ``n`` provably lies in [0, width) for a result of type ``t``
    (C++ leaves other counts undefined; Python shifts every bit out): a constant, or a value
    the IR bounds (``n & 31``, an unsigned 8-bit value for a 64-bit shift...)."""
    if isinstance(n, ir.Const):
        return isinstance(n.value, (int, bool)) and 0 <= int(n.value) < t.bits
    if isinstance(n, ir.Cast) and isinstance(n.value.type, Scalar) and n.value.type.is_int:
        inner = bits_of(n.value)  # a cast that keeps the (bounded) value: look inside
        if inner is not None and inner < n.type.bits:
            n = n.value
    masked = isinstance(n, ir.BinOp) and n.op == "&" and any(
        isinstance(x, ir.Const) and isinstance(x.value, int) and x.value >= 0
        for x in (n.left, n.right))
    bits = bits_of(n)
    return bits is not None and (masked or is_nonneg(n, nonneg)) and (1 << bits) <= t.bits


def fits(e: ir.Expr, bits: int) -> bool:
    """Whether ``e`` (a sum, difference or product) provably fits in ``bits`` bits."""
    if isinstance(e, ir.BinOp) and e.op == "<<":
        a, n = bits_of(e.left), e.right
        return a is not None and isinstance(n, ir.Const) and a + int(n.value) <= bits
    b = bits_of(e)
    return b is not None and b <= bits
