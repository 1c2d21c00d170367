"""Register layouts for the tiles around matrix multiplies (ir/passes.py runs it).

A tile variable is spread over the block's threads in one of three layouts (``TileType.layout``;
tile.h has the C++ of each):

- ``blocked``: runs of consecutive elements per thread, what loads, stores and most operations
  use (tile/layout.h);
- ``mma``: the tensor cores' accumulator fragments (tile/mma.h ``MmaTile``), what ``mma``
  produces;
- ``mmarow``: the rows of an ``mma`` tile, a tile of shape (M, 1) held by the lanes that hold
  those rows (tile/fragments.h ``MmaRows``);
- ``mmacol``: its columns, a tile of shape (1, N) held by the lanes that hold those columns
  (``MmaCols``).

Without this pass an ``mma``'s result would go back to the blocked layout through shared memory
after every multiply. With it, the code that follows a multiply stays in registers where it
can: elementwise operations on ``mma`` tiles, reductions along their rows (``ct.max(s, axis=-1,
keepdims=True)``, into ``mmarow``), broadcasts of those rows back over the columns, casts, and
the next ``mma`` taking such a tile as its A operand straight from registers. That is the whole
of attention's online softmax between its two multiplies, as users write it.

The choice, per variable (a variable keeps one layout everywhere, loops included):

1. candidates: 2-d tiles whose 16x8 blocks the warps share evenly take ``mma``; (M, 1) tiles
   whose M gives each warp whole row strips take ``mmarow``;
2. optimistically all candidates, then a variable is dropped while one of its assignments cannot
   produce its layout (:func:`_produces`);
3. only variables fed, through such assignments, by an ``mma`` keep their layout (a kernel
   without tensor-core multiplies is left as it was);
4. a loop-invariant A operand of 16-bit ``mma``s in fragments (attention's Q) takes ``mma`` too,
   converted once where it is assigned; so do tiles loaded, and rows broadcast, only to be
   combined elementwise with fragment tiles (``_loaded_for``, ``_broadcast_for``);
5. so does the work that builds a mask or weights of a fragment tile from its rows and columns
   (a causal mask: query positions (M, 1) against key positions (1, N)): the (M, 1) and
   (1, N) tiles take ``mmarow`` and ``mmacol`` (converted where assigned, M or N values
   through the scratch, where they are not computed in those layouts), their broadcasts and
   the elementwise work after them ``mma``, all in registers (``_index_tiles``).

Every other read of a variable in a fragment layout converts it (a ``layout`` op: through
shared memory), except stores that write fragments as they are (tile.h ``store_fragments``).
"""

from __future__ import annotations

from ..lang.types import TileType
from . import nodes as ir
from . import tiling

MMA, ROWS, COLS, BLOCKED = "mma", "mmarow", "mmacol", "blocked"
_ELEMENTWISE = ("binop", "unary", "cast", "math", "where")
_ROW_KINDS = ("sum", "prod", "max", "min")


def assign_layouts(f: ir.Function, threads: int) -> bool:
    """Choose the layout of every tile variable of ``f`` (module docstring) and insert the
    conversions; returns whether any variable left the blocked layout."""
    nw = threads // 32
    assigns: dict[str, list[ir.Assign]] = {}
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign) and isinstance(s.value.type, TileType):
            assigns.setdefault(s.name, []).append(s)
    params = {p.name for p in f.params}
    lay: dict[str, str] = {}
    for name in assigns:
        t = f.locals.get(name)
        if name in params or not isinstance(t, TileType) or t.dtype.kind == "c":
            continue
        want = _candidate(t, nw)
        if want:
            lay[name] = want
    changed = True
    while changed:
        changed = False
        for name in list(lay):
            if not all(_produces(s.value, lay[name], lay, threads) for s in assigns[name]):
                del lay[name]
                changed = True
    lay = {n: lay[n] for n in _grounded(lay, assigns, threads)}
    uses, depth = _uses(f)
    lay.update(_register_a_operands(f, lay, assigns, uses, depth, threads))
    lay.update(_filled_for(f, lay, assigns, uses))
    lay.update(_loaded_for(f, lay, assigns, uses, nw))
    lay.update(_broadcast_for(f, lay, assigns, uses, nw))
    lay.update(_index_tiles(f, lay, assigns, uses, nw))
    if not lay:
        return False
    for name, layout in lay.items():
        t = f.locals[name]
        f.locals[name] = TileType(t.dtype, t.shape, layout)
    _rewrite(f, lay, threads)
    return True


def _candidate(t: TileType, nw: int) -> str | None:
    if tiling.matrix(t.shape) is None or (t.ndim > 2 and t.shape[-1] == 1):
        return None
    m, n = tiling.matrix(t.shape)
    if n == 1:
        return ROWS if tiling.whole_strips(m, nw) else None
    if tiling.few_rows_ok(m, 32 * nw) and n % tiling.MMA_N == 0 and \
            (tiling.frag_rows(m) // tiling.MMA_M) * (n // tiling.MMA_N) % nw == 0:
        return MMA
    return None


def _tile_vars(e: ir.TileOp) -> list[ir.Var]:
    return [a for a in e.args if isinstance(a, ir.Var) and isinstance(a.type, TileType)]


def _produces(v: ir.Expr, want: str, lay: dict, threads: int) -> bool:
    """Whether an assignment's value can give a tile in layout ``want`` (converting blocked
    operands where needed), the variables' layouts being ``lay``."""
    nw = threads // 32
    if isinstance(v, ir.Var):  # (a conversion of more than two axes has no C++: in layout)
        return v.type.ndim == 2 or lay.get(v.name) == want
    if not isinstance(v, ir.TileOp):
        return False
    if v.op == "full":
        return True
    if v.op == "load":
        return want == MMA and _fragment_load(v)
    if v.op == "reshape":  # leading axes of one added or dropped: the same fragments
        x = v.args[0]
        return want == MMA and isinstance(x, ir.Var) and lay.get(x.name) == MMA and \
            tiling.matrix(x.type.shape) == tiling.matrix(v.type.shape) is not None
    if v.op == "mma":
        return want == MMA and tiling.fragments_ok(*(a.type for a in v.args), threads)
    if v.op in _ELEMENTWISE:
        return any(lay.get(a.name) == want for a in _tile_vars(v)) and (
            v.type.ndim == 2 or all(lay.get(a.name) == want for a in _tile_vars(v)))
    if v.op == "broadcast":
        x = v.args[0].type
        if not isinstance(x, TileType):
            return False
        if x.size == 1:
            return True
        return want == MMA and x.shape in ((v.type.shape[0], 1), (1, v.type.shape[1])) and \
            tiling.whole_strips(v.type.shape[0], nw)
    if v.op == "extract":
        return want == MMA and frag_extract(v, lay, nw)
    if v.op == "reduce":
        x = v.args[0]
        return want == ROWS and isinstance(x, ir.Var) and lay.get(x.name) == MMA and \
            v.attrs["kind"] in _ROW_KINDS and tuple(v.attrs["axes"]) == (1,) and \
            tiling.whole_strips(x.type.shape[0], nw)
    return False


def frag_extract(v: ir.TileOp, lay: dict, nw: int) -> bool:
    """Whether ``extract(x, 0, j)`` of a fragment tile ``x`` is a choice of its registers: a
    block of whole columns whose 16x8 blocks before it are whole rounds of the warps (the
    gate and up halves of a SwiGLU accumulator)."""
    x = v.args[0]
    if not (isinstance(x, ir.Var) and lay.get(x.name) == MMA and x.type.ndim == 2 and
            v.type.ndim == 2 and all(isinstance(i, ir.Const) for i in v.args[1:])):
        return False
    (m, n), (rm, rn) = x.type.shape, v.type.shape
    if rm != m or v.args[1].value != 0 or n % rn or not 0 <= v.args[2].value < n // rn:
        return False
    before = (v.args[2].value * rn // tiling.MMA_N) * (tiling.frag_rows(m) // tiling.MMA_M)
    return rn % tiling.MMA_N == 0 and before % nw == 0


def _grounded(lay: dict, assigns: dict, threads: int) -> set[str]:
    """The variables of ``lay`` that an ``mma`` feeds through assignments in their layouts."""
    out = {n for n in lay if any(isinstance(s.value, ir.TileOp) and s.value.op == "mma"
                                 for s in assigns[n])}
    changed = True
    while changed:
        changed = False
        for n in lay:
            if n in out:
                continue
            for s in assigns[n]:
                v = s.value
                srcs = [v] if isinstance(v, ir.Var) else _tile_vars(v) \
                    if isinstance(v, ir.TileOp) else []
                if any(x.name in out for x in srcs):
                    out.add(n)
                    changed = True
                    break
    return out


def _a_in_registers(m: ir.TileOp, threads: int) -> bool:
    """Whether an ``mma`` in fragments may take its A operand from an ``mma`` tile (16-bit
    operands, whole row strips per warp, k a multiple of 16: tile/fragments.h)."""
    a = m.args[0].type
    return a.dtype.bits == 16 and a.shape[1] % 16 == 0 and \
        tiling.whole_strips(a.shape[0], threads // 32) and tiling.fragments_ok(
            *(x.type for x in m.args), threads)


def _uses(f: ir.Function) -> tuple[dict, dict]:
    """Every read of a tile variable, by name: (statement, its top expression, the ``Var``,
    the loops around it, outermost first); and each statement's loops, by ``id``."""
    uses: dict[str, list] = {}
    depth: dict[int, tuple] = {}

    def visit(stmts: list, loops: tuple) -> None:
        for s in stmts:
            depth[id(s)] = loops
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.Var) and isinstance(x.type, TileType):
                        uses.setdefault(x.name, []).append((s, e, x, loops))
            if isinstance(s, (ir.For, ir.While)):
                visit(s.body, loops + (id(s),))
            elif isinstance(s, ir.If):
                visit(s.then, loops)
                visit(s.orelse, loops)

    visit(f.body, ())
    return uses, depth


def _filled_for(f: ir.Function, lay: dict, assigns: dict, uses: dict) -> dict:
    """Variables assigned only ``full`` tiles (``ct.zeros(...)`` passed as an accumulator, a
    constant operand) take the layout of the one fragment layout their reads want."""
    out = {}
    for name, ss in assigns.items():
        t = f.locals.get(name)
        if name in lay or not isinstance(t, TileType) or not all(
                isinstance(s.value, ir.TileOp) and s.value.op == "full" for s in ss):
            continue
        wanted = set()
        for s, e, x, _ in uses.get(name, []):
            target = lay.get(s.name) if isinstance(s, ir.Assign) else None
            if target == MMA and isinstance(e, ir.TileOp) and e.op == "mma" and e.args[2] is x:
                wanted.add(MMA)
            elif target is not None and isinstance(e, ir.TileOp) and e.op in _ELEMENTWISE:
                wanted.add(target)
            else:
                wanted.add(BLOCKED)
        if len(wanted) == 1 and BLOCKED not in wanted:
            out[name] = wanted.pop()
    return out


def _fragment_access(op: ir.TileOp, tile: TileType, nidx: int) -> bool:
    """Whether a load or store of ``tile`` by ``op`` (its array first, then ``nidx`` tile
    indices) can move fragments as they are (tile.h load_fragments, store_fragments): a
    global array of the tile's rank, axes in order, the axes before the last two ones."""
    arr = op.args[0].type
    nd = arr.ndim
    return (arr.space == "global" and nd == tile.ndim and nidx == nd and
            tiling.matrix(tile.shape) is not None and
            tuple(op.attrs.get("order", range(nd))) == tuple(range(nd)))


def _fragment_load(op: ir.TileOp) -> bool:
    """Whether a load can give an ``mma`` tile as it is (tile.h load_fragments)."""
    return _fragment_access(op, op.type, len(op.args) - 1)


def _loaded_for(f: ir.Function, lay: dict, assigns: dict, uses: dict, nw: int) -> dict:
    """Tiles loaded only to be combined elementwise with fragment tiles (a residual added to
    an accumulator before the store), and the elementwise work on the way (a cast, a scale):
    in the ``mma`` layout, loaded straight into it (tile.h load_fragments) rather than loaded
    blocked and converted through shared memory, which for a 128x256 float32 tile is 128 KiB
    of scratch and more warps."""
    def source_ok(name: str, cand: set) -> bool:
        ss = assigns.get(name, [])
        if len(ss) != 1 or not isinstance(ss[0].value, ir.TileOp):
            return False
        v = ss[0].value
        if v.op == "load":
            return _fragment_load(v)
        return v.op in _ELEMENTWISE and all(
            a.name in cand or lay.get(a.name) == MMA for a in _tile_vars(v))

    cand = set()
    for name in assigns:
        t = f.locals.get(name)
        if name not in lay and isinstance(t, TileType) and tiling.matrix(t.shape) and \
                _candidate(t, nw) == MMA and t.dtype.kind != "c":
            cand.add(name)
    changed = True
    while changed:
        changed = False
        for name in list(cand):
            ok = source_ok(name, cand) and _beside_fragments(uses.get(name, []), lay, cand)
            if not ok:
                cand.discard(name)
                changed = True
    # left: those whose every read, through the elementwise chain, meets a fragment tile
    return {n: MMA for n in cand}


def _broadcast_for(f: ir.Function, lay: dict, assigns: dict, uses: dict, nw: int) -> dict:
    """Rows broadcast over the columns only to be combined elementwise with fragment tiles (an
    accumulator scaled by per-row weights: a mixture of experts' routing weights, a
    quantized product's row scales): in the ``mma`` layout, the (M, 1) source converted to
    ``mmarow`` (M values through the scratch) and broadcast in registers, rather than the
    (M, N) broadcast built blocked and converted through shared memory."""
    out = {}
    for name, ss in assigns.items():
        t = f.locals.get(name)
        if name in lay or len(ss) != 1 or not isinstance(t, TileType) or t.ndim != 2 or \
                _candidate(t, nw) != MMA or t.dtype.kind == "c":
            continue
        v = ss[0].value
        if not (isinstance(v, ir.TileOp) and v.op == "broadcast" and
                isinstance(v.args[0], ir.Var) and v.args[0].type.shape == (t.shape[0], 1) and
                tiling.whole_strips(t.shape[0], nw)):
            continue
        if _beside_fragments(uses.get(name, []), lay):
            out[name] = MMA
    return out


def _vector_layout(t: TileType) -> str:
    """The fragment layout of a row or column vector broadcast over a fragment tile."""
    return ROWS if t.shape[1] == 1 else COLS


def _index_tiles(f: ir.Function, lay: dict, assigns: dict, uses: dict, nw: int) -> dict:
    """(M, 1) and (1, N) tiles read only to be broadcast over fragment tiles (or combined
    elementwise on the way), and the fragment-shaped tiles those broadcasts feed whose every
    read, through elementwise work, meets a fragment tile: ``mmarow``, ``mmacol`` and ``mma``
    (module docstring, 5). A causal mask ``(j * TN + cols <= rows) & (j * TN + cols < n)``
    over scores in fragments is then one compare and select a register."""
    def kind(t: TileType) -> str | None:
        if tiling.matrix(t.shape) is None or t.ndim != 2 or t.dtype.kind == "c":
            return None
        m, n = t.shape
        if n == 1 and m > 1:
            return ROWS if tiling.whole_strips(m, nw) else None
        if m == 1 and n > 1:
            return COLS if n % tiling.MMA_N == 0 else None
        return MMA if _candidate(t, nw) == MMA else None

    cand = {}
    for name in assigns:
        t = f.locals.get(name)
        if name not in lay and isinstance(t, TileType) and kind(t):
            cand[name] = kind(t)

    def layout(name: str) -> str | None:
        return lay.get(name) or cand.get(name)

    def read_ok(name: str, s, e, x) -> bool:
        if not (isinstance(s, ir.Assign) and isinstance(e, ir.TileOp) and e is s.value):
            return False
        to = layout(s.name)
        if e.op in _ELEMENTWISE:
            return to == cand[name]
        if e.op == "broadcast" and cand[name] in (ROWS, COLS) and to == MMA:
            m, n = e.type.shape
            return x.type.shape in ((m, 1), (1, n)) and tiling.whole_strips(m, nw)
        return False

    def source_ok(name: str) -> bool:
        want = cand[name]
        for s in assigns[name]:
            v = s.value
            if not isinstance(v, ir.TileOp):
                return False
            if v.op == "full":
                continue
            if v.op in _ELEMENTWISE and all(layout(a.name) == want for a in _tile_vars(v)):
                continue
            if want == MMA and v.op == "broadcast" and isinstance(v.args[0], ir.Var) and \
                    layout(v.args[0].name) in (ROWS, COLS):
                continue
            if want != MMA:  # computed blocked, converted where assigned (a few values)
                continue
            return False
        return True

    changed = True
    while changed:
        changed = False
        for name in list(cand):
            reads = uses.get(name, [])
            if not (reads and all(read_ok(name, s, e, x) for s, e, x, _ in reads) and
                    source_ok(name)):
                del cand[name]
                changed = True
    # only the work that ends in a fragment tile: a vector whose broadcast is dropped goes too
    return cand


def _beside_fragments(reads: list, lay: dict, cand: set = frozenset()) -> bool:
    """Whether a variable is read, and every read of it is an elementwise operation whose
    result is a fragment tile (or one of ``cand``, becoming one)."""
    return bool(reads) and all(
        isinstance(s, ir.Assign) and (lay.get(s.name) == MMA or s.name in cand) and
        isinstance(e, ir.TileOp) and e.op in _ELEMENTWISE and e is s.value
        for s, e, _x, _ in reads)


def _loaded(name: str, assigns: dict) -> bool:
    """Whether ``name`` is assigned once, a load of a global array or its reshape."""
    ss = assigns.get(name, [])
    if len(ss) != 1 or not isinstance(ss[0].value, ir.TileOp):
        return False
    v = ss[0].value
    if v.op == "reshape" and isinstance(v.args[0], ir.Var):
        src = assigns.get(v.args[0].name, [])
        v = src[0].value if len(src) == 1 else None
    return isinstance(v, ir.TileOp) and v.op == "load" and v.args[0].type.space == "global"


def _register_a_operands(f: ir.Function, lay: dict, assigns: dict, uses: dict, depth: dict,
                         threads: int) -> dict:
    """Blocked variables read only as the A operand of ``mma``s in fragments that may take it
    from registers, each assigned outside every loop that reads it: they take the ``mma``
    layout, converted where assigned (once, not once per iteration)."""
    out = {}
    for name, us in uses.items():
        t = f.locals.get(name)
        if name in lay or name not in assigns or not isinstance(t, TileType) or \
                _candidate(t, threads // 32) != MMA or _loaded(name, assigns):
            continue  # (a loaded A operand goes to shared memory instead: ir/operands.py)
        ok = bool(us)
        for s, e, x, loops in us:
            m = e if isinstance(e, ir.TileOp) else None
            if not (isinstance(s, ir.Assign) and m is not None and m.op == "mma" and
                    m.args[0] is x and lay.get(s.name) == MMA and m.args[1] is not x and
                    _a_in_registers(m, threads)):
                ok = False
                break
            if any(depth[id(a)][:len(loops)] == loops for a in assigns[name]):
                ok = False  # assigned in a loop that reads it: converting there gains nothing
                break
        if ok:
            out[name] = MMA
    return out


# ---- the rewrite ---------------------------------------------------------------------------

def _convert(e: ir.Expr, want: str) -> ir.Expr:
    t = e.type
    if not isinstance(t, TileType) or t.layout == want:
        return e
    if t.ndim > 2 and MMA in (t.layout, want):  # the conversions are of 2-d tiles: reshape
        two = tiling.matrix(t.shape)
        flat = ir.TileOp(TileType(t.dtype, two, t.layout), e.loc, "reshape", [e], {})
        done = _convert(flat, want)
        return ir.TileOp(TileType(t.dtype, t.shape, want), e.loc, "reshape", [done], {})
    if t.layout != BLOCKED and want != BLOCKED:  # (no direct path between fragment layouts)
        e = ir.TileOp(TileType(t.dtype, t.shape), e.loc, "layout", [e], {})
    return ir.TileOp(TileType(t.dtype, t.shape, want), e.loc, "layout", [e], {})


def _fragment_store(op: ir.TileOp) -> bool:
    """Whether a store can write an ``mma`` tile as it is (tile.h store_fragments)."""
    tile = op.args[1]
    return isinstance(tile, ir.Var) and tile.type.layout == MMA and \
        _fragment_access(op, tile.type, len(op.args) - 2)


def _rewrite(f: ir.Function, lay: dict, threads: int) -> None:
    def typed(e: ir.Expr) -> None:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Var) and x.name in lay and isinstance(x.type, TileType):
                x.type = f.locals[x.name]

    def blocked(e: ir.Expr) -> ir.Expr:
        """``e`` with every tile variable read in the blocked layout (the general case)."""
        if isinstance(e, ir.Var):
            return _convert(e, BLOCKED)
        if isinstance(e, ir.TileOp) and e.op == "store" and _fragment_store(e):
            e.args[2:] = [blocked(x) for x in e.args[2:]]
            return e
        if isinstance(e, ir.TileOp) and e.op == "mma" and e.type.layout == MMA:
            a = e.args[0]
            keep_a = isinstance(a, ir.Var) and a.type.layout == MMA and \
                _a_in_registers(e, threads)
            e.args[0] = a if keep_a else blocked(a)
            e.args[1] = blocked(e.args[1])
            e.args[2] = _convert(blocked_inner(e.args[2]), MMA)
            return e
        for k, v in vars(e).items():
            if k in ("type", "loc", "func", "attrs"):
                continue
            if isinstance(v, ir.Expr):
                setattr(e, k, blocked(v))
            elif isinstance(v, list):
                v[:] = [blocked(x) if isinstance(x, ir.Expr) else
                        tuple(blocked(y) for y in x) if isinstance(x, tuple) else x for x in v]
        return e

    def blocked_inner(e: ir.Expr) -> ir.Expr:
        return e if isinstance(e, ir.Var) else blocked(e)

    def produce(s: ir.Assign) -> None:
        want = lay[s.name]
        v = s.value
        t = TileType(v.type.dtype, v.type.shape, want)
        if not _produces(v, want, lay, threads):  # computed blocked, converted once here
            s.value = _convert(blocked(v), want)
            return
        if isinstance(v, ir.Var):
            s.value = _convert(v, want)
            return
        v.type = t
        if v.op == "mma":
            blocked(v)
        elif v.op in _ELEMENTWISE:
            v.args[:] = [_convert(a, want) if isinstance(a, ir.Var) and
                         isinstance(a.type, TileType) else blocked(a) for a in v.args]
        elif v.op == "broadcast":
            x = v.args[0]
            v.args[0] = _convert(x, BLOCKED if x.type.size == 1 else _vector_layout(x.type)) \
                if isinstance(x, ir.Var) else blocked(x)
        elif v.op in ("reduce", "full", "reshape", "extract", "load"):
            pass

    for s in ir.walk_stmts(f.body):
        for e in ir.stmt_exprs(s):
            typed(e)
    for s in ir.walk_stmts(f.body):
        if isinstance(s, ir.Assign) and s.name in lay:
            produce(s)
            continue
        for k, v in vars(s).items():
            if k in ("body", "then", "orelse", "loc", "type", "init"):
                continue
            if isinstance(v, ir.Expr):
                setattr(s, k, blocked(v) if not isinstance(v, ir.Var) else _convert(v, BLOCKED))
            elif isinstance(v, list):
                v[:] = [blocked(x) if isinstance(x, ir.Expr) else x for x in v]
