"""Tile operations -> CUDA C++: one call of a ``tt::tile`` template (include/tile.h) per op.

The table here spells each ``ir.TileOp``; it also decides what ``tile.h`` cannot decide by
itself cheaply (whether a broadcast stays in registers, whether a reduction takes the fast
row path) and how much shared-memory scratch each operation needs. The module's largest need
becomes ``TT_SCRATCH_BYTES``: the scratch sits at the start of dynamic shared memory, and the
launch adds it to the bytes the user asked for (``jit._Launch``).
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from ...ir import nodes as ir
from ...lang.types import Scalar, TileType, bfloat16, float16, float32, tfloat32

TILE_HEADER = "tile.h"

_SHORT = {"bool": "b8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "bfloat16": "bf16", "float32": "f32", "tfloat32": "tf32", "float64": "f64"}

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "floordiv": "floordiv",
           "mod": "mod", "pow": "pow", "and": "bit_and", "or": "bit_or", "xor": "bit_xor",
           "shl": "shl", "shr": "shr", "max": "maximum", "min": "minimum", "lt": "lt",
           "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
_REDUCE = {"sum": "SUM", "prod": "PROD", "max": "MAX", "min": "MIN", "argmax": "ARGMAX",
           "argmin": "ARGMIN"}
_ATOMIC = {"add": "A_ADD", "max": "A_MAX", "min": "A_MIN", "and_": "A_AND", "or_": "A_OR",
           "xor": "A_XOR", "exch": "A_XCHG"}
_ORDER = {"weak": "RELAXED", "relaxed": "RELAXED", "acquire": "ACQUIRE", "release": "RELEASE",
          "acq_rel": "ACQ_REL"}
_SCOPE = {"none": "DEVICE", "block": "BLOCK", "cluster": "DEVICE", "device": "DEVICE",
          "sys": "SYSTEM"}


def alias(t: TileType) -> str:
    """The name generated code gives a tile type (``using tile_f32_64x32 = ...``)."""
    dims = "x".join(map(str, t.shape)) or "scalar"
    lay = "" if t.layout == "blocked" else "_" + t.layout
    return f"tile_{_SHORT[t.dtype.name]}_{dims}{lay}"


def spelled(t: TileType, threads: int) -> str:
    dims = "".join(f", {d}" for d in t.shape)
    kind = "MmaTile" if t.layout == "mma" else "Tile"
    return f"tt::tile::{kind}<{t.dtype.cname}, {threads}{dims}>"


def uses_tiles(module: ir.Module) -> bool:
    return any(True for _ in tile_ops(module))


def tile_ops(module: ir.Module):
    from .emit import _stmt_exprs, _walk_expr  # noqa: PLC0415  (emit imports this module)

    for f in module.kernel.all_functions():
        for s in ir.walk_stmts(f.body):
            for e in _stmt_exprs(s):
                for x in _walk_expr(e):
                    if isinstance(x, ir.TileOp):
                        yield x


def tile_types(module: ir.Module) -> list[TileType]:
    """Every tile type the module mentions, in first-use order (for the aliases)."""
    seen: dict[TileType, None] = {}
    for f in module.kernel.all_functions():
        for t in list(f.locals.values()) + [p.type for p in f.params] + [f.return_type]:
            if isinstance(t, TileType):
                seen.setdefault(t)
    for op in tile_ops(module):
        for x in [op] + op.args:
            if isinstance(x.type, TileType):
                seen.setdefault(x.type)
    return list(seen)


def scratch_sizes(module: ir.Module, loops: list[MmaLoop] = ()) -> tuple[int, int]:
    """(the scratch every target needs, the scratch sm_90a needs where a k loop's Hopper main
    loop takes more than the rest, else 0), in bytes, multiples of 16. Other targets thus do
    not ask for shared memory they will not use."""
    nt = module.threads
    # the staged loop's buffers (also the Hopper loop's way off sm_90a, where they fit: tile.h)
    staged = [b for ml in loops if (b := staged_bytes(ml)) <= STAGED_MAX_BYTES and
              (nt // 32) % (ml.mma.args[0].type.shape[0] // 16) == 0]
    size = max([scratch_bytes(module), *(-(-b // 16) * 16 for b in staged)])
    hopper = max((sm90_bytes(ml.a.type, ml.b.type, nt) for ml in loops), default=0)
    hopper = -(-hopper // 16) * 16
    return size, (hopper if hopper > size else 0)


def prelude(module: ir.Module, scratch: int, scratch_sm90a: int) -> list[str]:
    """The lines after threadtile.h: the scratch size, tile.h, the tile type aliases."""
    nt = module.threads
    if scratch_sm90a:
        out = [f"#define TT_SCRATCH_SM90A {scratch_sm90a}",
               "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)",
               "#define TT_SCRATCH_BYTES TT_SCRATCH_SM90A",
               "#else",
               f"#define TT_SCRATCH_BYTES {scratch}",
               "#endif"]
    else:
        out = [f"#define TT_SCRATCH_BYTES {scratch}"]
    if VEC != 4:
        out.append(f"#define TT_VEC {VEC}")
    out += [f'#include "{TILE_HEADER}"', ""]
    out += [f"using {alias(t)} = {spelled(t, nt)};" for t in tile_types(module)]
    return out


# ---------------------------------------------------------------------------------------------
# shared-memory scratch (the formulas mirror the static_asserts of tile.h)
# ---------------------------------------------------------------------------------------------

def _isz(t: Scalar) -> int:
    return 1 if t.kind == "b" else t.itemsize


def _acc_size(t: Scalar) -> int:
    return 4 if t.bits < 32 else t.itemsize


def scratch_bytes(module: ir.Module) -> int:
    nt = module.threads or 0
    need = max((op_scratch(op, nt) for op in tile_ops(module)), default=0)
    return -(-need // 16) * 16


def op_scratch(op: ir.TileOp, nt: int) -> int:
    k = op.op
    if k == "broadcast" and not register_broadcast(op.args[0].type.shape, op.type.shape, nt):
        src = op.args[0].type
        return src.size * _isz(src.dtype)
    if k == "reshape" and not register_reshape(op.args[0].type.shape, op.type.shape, nt):
        src = op.args[0].type
        return src.size * _isz(src.dtype)
    if k in ("permute", "scan"):
        x = op.args[0].type
        return x.size * _isz(x.dtype)
    if k == "reduce":
        x = op.args[0].type
        if rows_reduction(op, nt):
            return op.type.size * (nt // 32) * (_acc_size(x.dtype) + 4)
        return x.size * _isz(x.dtype)
    if k == "mma":
        return mma_bytes(op.args[0].type, op.args[1].type, op.type.layout == "mma")
    if k == "layout":
        return op.type.size * _isz(op.type.dtype)
    if k == "atomic" and op.type.size < nt:
        return op.type.size * _isz(op.type.dtype)
    return 0


def mma_bytes(a: TileType, b: TileType, fragments: bool = False) -> int:
    """A and B staged with padded rows, and the accumulator unless it stays in fragments."""
    (m, k), (_, n) = a.shape, b.shape
    t = a.dtype
    ks = 8 if t == tfloat32 else 16
    isz = _isz(t)
    if t in (float16, bfloat16, tfloat32) and m % 16 == 0 and n % 8 == 0 and k % ks == 0:
        # tile.h's mma_plan: A's rows of k + 16 bytes, B as it is, rows of n + 8
        return (m * (k + 16 // isz) + k * (n + 8)) * isz + (0 if fragments else m * n * 4)
    return (m * k + k * n) * isz


# tile.h's TT_VEC: the longest run of consecutive elements a thread holds (16 bytes of
# float32). THREADTILE_TILE_VEC overrides it for experiments (bench/rows_probe.py); the
# generated source then defines TT_VEC, so cached sources and cubins stay apart.
VEC = int(os.environ.get("THREADTILE_TILE_VEC", "4"))


def vec_width(shape: tuple, nt: int) -> int:
    """tile.h's vec_width: how many consecutive elements of a tile of ``shape`` each thread
    holds in a run (the largest power of two up to VEC for which the last axis is a multiple
    of V NT, else 1)."""
    d = shape[-1] if shape else 1
    v = VEC
    while v > 1 and d % (v * nt):
        v //= 2
    return v


def register_broadcast(src: tuple, dst: tuple, nt: int) -> bool:
    """Whether result element e is source element e % E_src (the source's axes, padded with
    ones on the left, are ones and then the result's trailing axes) in the same thread (one
    vector width, or a one-element source): then every thread already holds what it needs
    (tile.h, broadcast)."""
    padded = (1,) * (len(dst) - len(src)) + tuple(src)
    j = len(padded)
    while j > 0 and padded[j - 1] == dst[j - 1]:
        j -= 1
    if not all(d == 1 for d in padded[:j]):
        return False
    return math.prod(src) == 1 or vec_width(tuple(src), nt) == vec_width(tuple(dst), nt)


def register_reshape(src: tuple, dst: tuple, nt: int) -> bool:
    """Whether a reshape keeps every element in its register (tile.h, reshape)."""
    return math.prod(src) < nt or vec_width(tuple(src), nt) == vec_width(tuple(dst), nt)


def rows_reduction(op: ir.TileOp, nt: int) -> bool:
    """Whether a reduction takes tile.h's reduce_rows: trailing axes, each result combining a
    multiple of NT elements."""
    x: TileType = op.args[0].type
    axes = op.attrs["axes"]
    if not axes or tuple(axes) != tuple(range(x.ndim - len(axes), x.ndim)):
        return False
    per = x.size // max(op.type.size, 1)
    return per % nt == 0 and x.size % (op.type.size * nt) == 0


# ---------------------------------------------------------------------------------------------
# spelling
# ---------------------------------------------------------------------------------------------

def _dims(shape) -> str:
    return ", ".join(map(str, shape))


def _targs(*parts) -> str:
    items = [p for p in parts if p != ""]
    return f"<{', '.join(items)}>" if items else ""


def emit_op(em, x: ir.TileOp) -> str:
    """The C++ expression for tile operation ``x``; ``em`` is the FunctionEmitter."""
    from .emit import _literal  # noqa: PLC0415

    k = x.op
    args = [em.view(a) if k in ("load", "store", "atomic") and i == 0 else em.e(a)
            for i, a in enumerate(x.args)]
    t = x.type
    if k == "full":
        return f"tt::tile::full<{alias(t)}>({args[0]})"
    if k == "arange":
        return f"tt::tile::arange<{alias(t)}>({args[0]}, {args[1]})"
    if k == "binop":
        return f"tt::tile::{_BINARY[x.attrs['op']]}({args[0]}, {args[1]})"
    if k == "unary":
        return f"tt::tile::{x.attrs['op']}({args[0]})"
    if k == "cast":
        if x.args[0].type.dtype == bfloat16 and t.dtype == float32:
            em.sites += 1  # each conversion is its own (tile.h: astype)
            return f"tt::tile::astype<float, {em.sites}>({args[0]})"
        return f"tt::tile::astype<{t.dtype.cname}>({args[0]})"
    if k == "math":
        return f"tt::tile::{x.attrs['fn']}({args[0]})"
    if k == "where":
        return f"tt::tile::where({', '.join(args)})"
    if k == "broadcast":
        fn = "broadcast" if register_broadcast(x.args[0].type.shape, t.shape, em.threads) else \
            "broadcast_smem"
        return f"tt::tile::{fn}{_targs(_dims(t.shape))}({args[0]})"
    if k == "reshape":
        return f"tt::tile::reshape{_targs(_dims(t.shape))}({args[0]})"
    if k == "permute":
        return f"tt::tile::permute<{_dims(x.attrs['perm'])}>({args[0]})"
    if k == "reduce":
        kind = "tt::tile::" + _REDUCE[x.attrs["kind"]]
        if rows_reduction(x, em.threads):
            return f"tt::tile::reduce_rows{_targs(kind, _dims(t.shape))}({args[0]})"
        mask = sum(1 << a for a in x.attrs["axes"])
        return f"tt::tile::reduce{_targs(kind, bin(mask), _dims(t.shape))}({args[0]})"
    if k == "scan":
        kind = "tt::tile::" + _REDUCE[x.attrs["kind"]]
        rev = "true" if x.attrs["reverse"] else "false"
        return f"tt::tile::scan<{kind}, {x.attrs['axis']}, {rev}>({args[0]})"
    if k == "mma":
        return f"tt::tile::mma({', '.join(args)})"
    if k == "item":
        return f"tt::tile::item({args[0]})"
    if k in ("load", "store"):
        order = x.attrs["order"]
        ords = "" if order == tuple(range(len(order))) else _dims(order)
        shared = "_shared" if x.args[0].type.space == "shared" else ""
        if k == "load":
            pad = _PAD.get(x.attrs["padding"], 0.0)
            dt = t.dtype
            padv = _literal(pad if dt.is_float else 0, dt) if dt.kind != "b" else "false"
            idx = "".join(", " + a for a in args[1:])
            return f"tt::tile::load{shared}{_targs(alias(t), ords)}({args[0]}, {padv}{idx})"
        if x.args[1].type.layout == "mma":
            return f"tt::tile::store_fragments({', '.join(args)})"
        return f"tt::tile::store{shared}{_targs(ords)}({', '.join(args)})"
    if k == "atomic":
        op = x.attrs["op"]
        order = "tt::tile::" + _ORDER[x.attrs["order"]]
        scope = "tt::tile::" + _SCOPE[x.attrs["scope"]]
        nidx = x.args[0].type.ndim
        arr, idx, vals = args[0], args[1:1 + nidx], args[1 + nidx:]
        rest = ", ".join([arr] + vals + idx)
        if op == "cas":
            return f"tt::tile::atomic_cas<{alias(t)}, {order}, {scope}>({rest})"
        return (f"tt::tile::atomic<{alias(t)}, tt::tile::{_ATOMIC[op]}, {order}, {scope}>"
                f"({rest})")
    if k == "printf":
        return _printf(x, args)
    if k == "layout":
        return f"tt::tile::to_{'mma' if t.layout == 'mma' else 'blocked'}({args[0]})"
    raise NotImplementedError(f"no CUDA spelling for the tile operation {k}")


_PAD = {"zero": 0.0, "neg_zero": -0.0, "nan": float("nan"), "pos_inf": float("inf"),
        "neg_inf": float("-inf")}


def _printf(x: ir.TileOp, args: list[str]) -> str:
    """C's printf by the block's first thread; integers are passed as long long (%lld) and
    floats as double, whatever their kernel type."""
    import re  # noqa: PLC0415

    fmt = re.sub(r"(%[-+ #0-9.]*)(?:hh|h|ll|l|L|z|j|t)?([diouxXc])", r"\1ll\2", x.attrs["fmt"])
    fmt = re.sub(r"(%[-+ #0-9.]*)(?:L|l)?([fFeEgG])", r"\1\2", fmt)
    text = fmt.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    casts = [f"(long long)({a})" if kind == "i" else f"(double)({_float(a, e)})"
             for a, e, kind in zip(args, x.args, x.attrs["kinds"])]
    tail = "".join(", " + c for c in casts)
    return f'if (tt::tile::tid() == 0) printf("{text}"{tail})'


def _float(text: str, e: ir.Expr) -> str:
    if isinstance(e.type, Scalar) and e.type.bits == 16:
        return f"tt::tile::wide({text})"
    return text


# ---------------------------------------------------------------------------------------------
# the k loop of a matrix multiply, as one operation (tile.h mma_loop, tile_sm90.h)
# ---------------------------------------------------------------------------------------------

class MmaLoop(NamedTuple):
    """A recognised ``for k in range(lo, hi): acc = mma(load(A, (i, k)), load(B, (k, j)), acc)``
    of the kernel (float32 loads may be cast to tfloat32 first), with the C++ parameter indices
    of A and B and the names of the tensor-map parameters the launcher adds for them
    (``runtime/tensormaps.py``) where the loop has a Hopper main loop, else none."""

    loop: ir.For
    a: ir.TileOp
    b: ir.TileOp
    mma: ir.TileOp
    acc: str
    params: tuple[int, int]
    maps: tuple[str, ...]


def mma_loops(f: ir.Function, threads: int | None) -> list[MmaLoop]:
    """The k loops of ``f`` that the CUDA backend runs as one operation: a loop of step 1
    whose body is exactly two loads of 2-d global kernel parameters (float32 ones each cast to
    tfloat32), indexed by the loop variable where the multiply needs it and elsewhere by
    values the loop does not change, feeding an ``mma`` on tensor cores into an accumulator
    kept in fragments ("mma" layout); the loop variable and the tiles are not used outside
    the loop. Only the kernel itself qualifies (the tensor maps are kernel parameters).

    Where the shapes are those of tile_sm90.h's main loop (16-bit operands), the loop is
    ``tt::tile::mma_loop`` with two tensor maps; loops whose warps each hold blocks of one row
    strip of the accumulator (the warps a multiple of M / 16) are
    ``tt::tile::mma_loop_staged`` (tile.h: cp.async into three buffers where the arrays
    allow; else tfloat32 through registers, 16-bit as written); other loops stay as
    written."""
    if not f.is_kernel or not threads:
        return []
    cxx = [p.name for p in f.params if not p.is_constant]
    found = []
    for s in ir.walk_stmts(f.body):
        if not isinstance(s, ir.For) or not (isinstance(s.step, ir.Const) and s.step.value == 1):
            continue
        got = _match_mma_loop(s, cxx)
        if got is None:
            continue
        a, b, mma, acc = got
        ta, tb = mma.args[0].type, mma.args[1].type
        if not _tensor_core_shape(ta, tb):
            continue
        names = {s.var} | {x.name for x in s.body if x.name != acc}
        if _used_outside(f.body, s, names):
            continue
        params = (cxx.index(a.args[0].name), cxx.index(b.args[0].name))
        maps: tuple[str, ...] = ()
        if sm90_bytes(a.type, b.type, threads):
            n = 2 * sum(1 for ml in found if ml.maps)
            maps = (f"tt_tma{n}", f"tt_tma{n + 1}")
        elif (threads // 32) % (ta.shape[0] // 16) or \
                _staged_bytes(ta, tb) > STAGED_MAX_BYTES:
            # the staged loop is for loops whose warps each hold blocks of one row strip of
            # the accumulator (slower otherwise, docs/tiles.md), and whose buffers fit an
            # sm_80 block's shared memory
            continue
        found.append(MmaLoop(s, a, b, mma, acc, params, maps))
    return found


# tile.h's STAGED_MAX, the most scratch the staged k loop may take (an sm_80 block's dynamic
# shared memory), and STAGES, the buffers of its asynchronous copies
STAGED_MAX_BYTES = 163 * 1024
STAGES = 3


def _tensor_core_shape(a: TileType, b: TileType) -> bool:
    """Whether tile.h's mma_plan multiplies these operands on tensor cores."""
    (m, k), (_, n) = a.shape, b.shape
    ks = 8 if a.dtype == tfloat32 else 16
    return a.dtype in (float16, bfloat16, tfloat32) and m % 16 == 0 and n % 8 == 0 and \
        k % ks == 0


def _match_mma_loop(s: ir.For, cxx: list[str]):
    body = s.body
    if len(body) not in (3, 5) or not all(isinstance(x, ir.Assign) and
                                          isinstance(x.value, ir.TileOp) for x in body):
        return None
    loads = {x.name: x.value for x in body[:-1] if x.value.op == "load"}
    # float32 loads cast to tfloat32: the operand is the cast, the load its only source
    casts = {x.name: x.value for x in body[:-1] if x.value.op == "cast"}
    last = body[-1]
    m = last.value
    if len(loads) != 2 or len(casts) != len(body) - 3 or m.op != "mma" or \
            not isinstance(m.type, TileType) or m.type.layout != "mma":
        return None
    va, vb, vacc = m.args
    if not all(isinstance(v, ir.Var) for v in (va, vb, vacc)) or vacc.name != last.name or \
            va.name == vb.name:
        return None
    srcs = []
    for v in (va, vb):
        if v.name in casts:
            c = casts[v.name]
            x = c.args[0]
            if not (isinstance(x, ir.Var) and x.name in loads and c.type.dtype == tfloat32 and
                    loads[x.name].type.dtype == float32):
                return None
            srcs.append(x.name)
        elif v.name in loads and not casts:
            srcs.append(v.name)
        else:
            return None
    if srcs[0] == srcs[1]:
        return None
    la, lb = loads[srcs[0]], loads[srcs[1]]
    for ld in (la, lb):
        arr = ld.args[0]
        at = arr.type
        if not (isinstance(arr, ir.Var) and arr.name in cxx and at.space == "global" and
                at.ndim == 2 and ld.attrs.get("order") == (0, 1) and
                ld.attrs.get("padding") in (None, "zero")):
            return None
    if la.type.dtype not in (float16, bfloat16, float32) or lb.type.dtype != la.type.dtype:
        return None
    k = s.var
    ka, kb = la.args[2], lb.args[1]
    if not (isinstance(ka, ir.Var) and ka.name == k and isinstance(kb, ir.Var) and kb.name == k):
        return None
    changing = {k} | {x.name for x in body}
    for e in (la.args[1], lb.args[2]):
        if any(isinstance(x, ir.Var) and x.name in changing or isinstance(x, ir.TileOp)
               for x in _walk(e)):
            return None
    return la, lb, m, last.name


def _walk(e: ir.Expr):
    from .emit import _walk_expr  # noqa: PLC0415

    return _walk_expr(e)


def _used_outside(body: list[ir.Stmt], loop: ir.For, names: set[str]) -> bool:
    from .emit import _stmt_exprs  # noqa: PLC0415

    for s in body:
        if s is loop:
            continue
        if isinstance(s, (ir.Assign, ir.For)) and (getattr(s, "name", None) in names or
                                                   getattr(s, "var", None) in names):
            return True
        for e in _stmt_exprs(s):
            if any(isinstance(x, ir.Var) and x.name in names for x in _walk(e)):
                return True
        for sub in ("then", "orelse", "body"):
            if _used_outside(getattr(s, sub, []) or [], loop, names):
                return True
    return False


def sm90_bytes(a: TileType, b: TileType, threads: int) -> int:
    """Shared memory of tile_sm90.h's main loop (its Plan::bytes), 0 where it does not apply."""
    (m, k), (_, n) = a.shape, b.shape
    isz = a.dtype.itemsize
    stage = (m * k + k * n) * isz
    stages = min(4, 200 * 1024 // stage)
    ok = (a.dtype in (float16, bfloat16) and k * isz == 128 and threads % 128 == 0 and
          m == 16 * (threads // 32) and n % 64 == 0 and n <= 256 and stages >= 2)
    return 1024 + stages * stage + 16 * stages if ok else 0


def emit_mma_loop(em, ml: MmaLoop) -> str:
    """The C++ statement running loop ``ml``."""
    from .emit import _literal  # noqa: PLC0415

    s, a, b = ml.loop, ml.a, ml.b
    pad = _literal(0.0, a.type.dtype)
    args = [em.view(a.args[0]), em.view(b.args[0]), pad, em.e(a.args[1]), em.e(b.args[2]),
            em.e(s.start), em.e(s.stop), em.n(ml.acc), *ml.maps]
    if ml.maps:
        fn = f"mma_loop<{alias(a.type)}, {alias(b.type)}>"
    else:
        fn = f"mma_loop_staged<{ml.mma.args[0].type.dtype.cname}, {alias(a.type)}, " \
             f"{alias(b.type)}>"
    return f"{em.n(ml.acc)} = tt::tile::{fn}({', '.join(args)});"


def staged_bytes(ml: MmaLoop) -> int:
    """Scratch of tile.h's mma_loop_staged."""
    return _staged_bytes(ml.mma.args[0].type, ml.mma.args[1].type)


def _staged_bytes(a: TileType, b: TileType) -> int:
    """STAGES buffers of staged operands (mma_loop_async's; the register path needs two)."""
    return STAGES * mma_bytes(a, b, fragments=True)


def tensormaps(loops: list[MmaLoop]) -> tuple:
    """The hidden tensor-map parameters the k loops take, in parameter order: per map the
    array's parameter index and the box (innermost extent first) in elements."""
    out = []
    for ml in loops:
        if not ml.maps:
            continue
        (m, k), (_, n) = ml.a.type.shape, ml.b.type.shape
        out.append((ml.params[0], (k, m)))
        out.append((ml.params[1], (min(n, 64), k)))
    return tuple(out)
