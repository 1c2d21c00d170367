"""Tile operations -> CUDA C++: one call of a ``tt::tile`` template (include/tile.h) per op.

``TILE_OPS`` spells each ``ir.TileOp`` by its name in the registry (ir/ops.py). This module
also decides what tile.h cannot decide by itself cheaply (whether a broadcast stays in
registers, whether a reduction takes the fast row path) and how much shared-memory scratch each
operation needs. The module's largest need becomes ``TT_SCRATCH_BYTES``: the scratch sits at
the start of dynamic shared memory, and the launch adds it to the bytes the user asked for
(``CudaSource.scratch``).
"""

from __future__ import annotations

import math
import re

from ...ir import nodes as ir
from ...ir import tiling
from ...ir.kloop import loaded, operands
from ...ir.operands import buffer_bytes, memory_rows
from ...lang.types import ArrayType, Scalar, TileType, bfloat16, float32
from .cxx import alias, literal, spelled

TILE_HEADER = "tile.h"
# the option of a build of Hopper k loops without their portable loop (tile/kloop.h), whose
# scratch is its own (scratch_sizes, prelude)
TMA_ONLY = "-DTT_TMA_ONLY"

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div",
           "div_approx": "div_approx", "floordiv": "floordiv",
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
_TO = {"mma": "to_mma", "mmarow": "to_mma_rows", "mmacol": "to_mma_cols",
       "blocked": "to_blocked"}
_PAD = {"zero": 0.0, "neg_zero": -0.0, "nan": float("nan"), "pos_inf": float("inf"),
        "neg_inf": float("-inf")}


def tile_ops(module: ir.Module):
    """Every tile operation of the module."""
    return (x for x in ir.walk_module_exprs(module) if isinstance(x, ir.TileOp))


def uses_tiles(module: ir.Module) -> bool:
    return any(True for _ in tile_ops(module))


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
        if op.op == "mma_loop":  # the template arguments of its loads
            for t in loaded(op):
                seen.setdefault(t)
    return list(seen)


# ---------------------------------------------------------------------------------------------
# the k loops' Hopper main loop: tensor maps, hidden kernel parameters
# ---------------------------------------------------------------------------------------------

def hopper_loops(module: ir.Module) -> list[ir.TileOp]:
    """The kernel's ``mma_loop``s that may take the sm_90a main loop, in parameter order of
    their tensor maps."""
    return [x for s in ir.walk_stmts(module.kernel.body) for e in ir.stmt_exprs(s)
            for x in ir.walk_expr(e) if isinstance(x, ir.TileOp) and x.op == "mma_loop" and
            x.attrs["hopper"]]


def tensormap_names(module: ir.Module) -> dict[int, tuple[str, str]]:
    """The C++ names of each Hopper loop's two tensor-map parameters, by ``id`` of the op."""
    return {id(op): (f"tt_tma{2 * k}", f"tt_tma{2 * k + 1}")
            for k, op in enumerate(hopper_loops(module))}


def tensormap_params(module: ir.Module) -> tuple:
    """The hidden tensor-map parameters, in order: per map the array's parameter index (among
    the kernel's C++ parameters) and the TMA box (innermost extent first) in elements; the
    Hopper loops' maps, then the TMA operand loads' (:func:`operand_maps`)."""
    cxx = [p.name for p in module.kernel.params if not p.is_constant]
    out = []
    for op in hopper_loops(module):
        a, b = loaded(op)
        box_a, box_b = tiling.sm90_boxes(a, b, module.threads)
        out.append((cxx.index(op.args[0].name), box_a))
        out.append((cxx.index(op.args[1].name), box_b))
    for op in operand_maps(module):
        out.append((cxx.index(op.args[0].name), operand_box(op)))
    return tuple(out)


def tensormap_rows(module: ir.Module) -> tuple:
    """Per tensor map (tensormap_params' order), the multiple of the rows of each batch that a
    batched loop's 3-d operand must be for the Hopper loop (A's: the tile's M, B's: its K;
    tile/kloop.h ``mma_loop_batched``), 0 for a 2-d loop's, and ``OPERAND`` for an operand
    load's (a map of the array at its own rank: runtime/tensormaps.py)."""
    out = []
    for op in hopper_loops(module):
        a, _ = loaded(op)
        out += [a.shape[0], a.shape[1]] if op.attrs.get("batch") else [0, 0]
    return tuple(out + [OPERAND] * len(operand_maps(module)))


# tensormap_rows' mark of an operand load's map: runtime/tensormaps.py's OPERAND (the
# layers keep the backend from importing the runtime; tests/unit/test_tensormaps_flat.py)
OPERAND = -1
TMA_RANKS = (2, 3, 4, 5)  # arrays tile/operands.h's load_operand_tma copies


def operand_maps(module: ir.Module) -> list[ir.TileOp]:
    """The kernel's ``load_operand``s that TMA copies in an sm_90a build without the portable
    loops (tile/operands.h ``load_operand_tma``), in the order of their tensor maps and
    mbarriers: a buffer laid out for wgmma (layouts smemw, smemtw: 128-byte rows, the 128-byte
    swizzle) of 16-bit elements, 8 to 256 memory rows, read with zero padding from an array
    parameter of the kernel (2 to 5 axes) that the kernel never assigns."""
    k = module.kernel
    params = {p.name for p in k.params if not p.is_constant and isinstance(p.type, ArrayType)}
    params -= {s.name for s in ir.walk_stmts(k.body) if isinstance(s, ir.Assign)}
    out = []
    for s in ir.walk_stmts(k.body):
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.TileOp) and x.op == "load_operand" and \
                        _tma_copies(x, params):
                    out.append(x)
    return out


def _tma_copies(x: ir.TileOp, params: set) -> bool:
    t, arr = x.type, x.args[0]
    rows = memory_rows(t)
    return (t.layout.endswith("w") and isinstance(arr, ir.Var) and arr.name in params and
            arr.type.ndim in TMA_RANKS and t.dtype.itemsize == 2 and
            _PAD.get(x.attrs["padding"], 0.0) == 0.0 and rows % 8 == 0 and rows <= 256)


def operand_box(x: ir.TileOp) -> tuple[int, ...]:
    """The TMA box of an operand load's map, innermost axis first: one 128-byte chunk of the
    memory rows along the array's last axis, the buffer's rows along ``row_axis``, one
    element along the others (tile/operands.h copies a tile as its chunks, box by box)."""
    t = x.type
    nd, ra = x.args[0].type.ndim, x.attrs["row_axis"]
    box = [128 // t.dtype.itemsize if d == nd - 1 else memory_rows(t) if d == ra else 1
           for d in range(nd)]
    return tuple(reversed(box))


def operand_map_names(module: ir.Module) -> dict[int, tuple[str, int]]:
    """Per TMA operand load (by ``id`` of the op): its tensor map's C++ name, its mbarrier."""
    return {id(op): (f"tt_tmo{k}", k) for k, op in enumerate(operand_maps(module))}


# ---------------------------------------------------------------------------------------------
# shared-memory scratch (the formulas mirror the static_asserts of tile.h)
# ---------------------------------------------------------------------------------------------

def _isz(t: Scalar) -> int:
    return 1 if t.kind == "b" else t.itemsize


def _acc_size(t: Scalar) -> int:
    return 4 if t.bits < 32 else t.itemsize


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def scratch_sizes(module: ir.Module) -> tuple[int, int]:
    """(the scratch of every build but sm_90a's without the portable k loop, that build's
    scratch where its Hopper main loops make it differ, else 0), in bytes, multiples of 16.
    That build (TT_TMA_ONLY) needs the Hopper loops' stages and the other operations' scratch,
    not the portable loops' buffers; sm_90a's build with both loops needs the larger of the
    two (``CudaSource.scratch_for``). No build asks for shared memory it will not use: a
    64x128x128 float16 loop in 64-deep steps takes 97 KiB on TMA, two blocks a multiprocessor,
    where its portable loop's buffers take 153 KiB."""
    nt = module.threads or 0
    extra = operand_bytes(module)
    ops = list(tile_ops(module))
    size = _round16(max((op_scratch(op, nt) for op in ops), default=0)) + extra
    loops = hopper_loops(module)
    if not loops:
        return size, 0
    ids = {id(op) for op in loops}
    tma = _round16(max([op_scratch(op, nt) for op in ops if id(op) not in ids] +
                       [tiling.sm90_bytes(*loaded(op), nt) for op in loops])) + extra
    return size, (tma if tma != size else 0)


def operand_bytes(module: ir.Module) -> int:
    """The mma operands' buffers in shared memory, after the scratch (ir/operands.py), and
    the mbarriers of the TMA operand loads after them."""
    used = operand_buffers(module)
    # (the region's start rounded to 1024 bytes)
    bars = 2 if refill_wait(module) else 1  # (the copies' mbarriers and the refills')
    return used + 8 * bars * len(operand_maps(module)) + 1024 if used else 0


# the prelude's line that makes a refill wait in thread 0 alone (refill_wait); blockfit.py
# drops a line so marked where the build without it fits more blocks (blockfit.OPTIONAL)
REFILL_WAIT = "#define TT_REFILL_WAIT 1  // blockfit: optional"


def refill_wait(module: ir.Module) -> bool:
    """Whether the kernel's TMA operand copies (operand_maps) into a buffer that a product
    read before wait for that read in the copying thread alone (tile/operands.h
    ``TT_REFILL_WAIT``: every thread arrives on the site's second mbarrier and goes on)
    rather than in a block barrier: in blocks of two warpgroups or more, where the barrier
    holds the warpgroups in step twice an iteration and they cannot overlap one's softmax
    with the other's products. cuTile's FMHA
    sample, H200, same call, TFLOP/s: D128 128x128 tiles 455 -> 543 (causal 402 -> 463),
    GQA 439 -> 524 (349 -> 413), D128 128x64 515 -> 523 (431 -> 451), D64 128x128 446 ->
    467. In one warpgroup the warpgroup's own products keep its warps together anyway, and
    the copying warp's wait makes its product late: D64 128x64 (4 warps) 386 -> 338, 64x64
    411 -> 341 (session 34). The second mbarriers cost registers: where the build for more
    blocks then spills, blockfit.py builds it with the block barrier (D64 128x128 causal at
    two blocks: 288 bytes of spill stores with the wait, 204 without; 361 TFLOP/s at two
    blocks against 317 at one)."""
    return (module.threads or 0) >= 256


def operand_buffers(module: ir.Module) -> int:
    """The bytes of the mma operands' buffers (where the TMA loads' mbarriers start)."""
    return max((op.attrs["offset"] + buffer_bytes(op.type) for op in tile_ops(module)
                if op.op in ("load_operand", "gather_operand")), default=0)


def permute_scratch(x: TileType, perm) -> int:
    """Bytes of tile.h's permute: x in the scratch, its rows padded by 4 bytes (one element of
    8 bytes) where the last axis moves (shapes.h)."""
    isz = _isz(x.dtype)
    last = x.shape[-1] if x.shape else 1
    moves = bool(x.shape) and tuple(perm)[-1] != len(x.shape) - 1
    pad = (1 if isz >= 4 else 4 // isz) if moves else 0
    return x.size // last * (last + pad) * isz


def by_memory_rows(op: ir.TileOp) -> bool:
    """Whether tile/memory.h reads a load through the scratch in memory's order (its
    ``by_memory_rows``): the order puts the array's last axis on a tile axis of 8 or more
    other than the tile's last."""
    order = op.attrs.get("order")
    shape = tuple(op.attrs.get("shape") or ())
    if op.op != "load" or not order or len(order) != len(shape) or \
            op.args[0].type.ndim != len(shape):
        return False
    ia = list(order).index(len(shape) - 1)
    return ia != len(shape) - 1 and shape[ia] >= 8


def op_scratch(op: ir.TileOp, nt: int) -> int:
    k = op.op
    if by_memory_rows(op):
        return (op.type.size + op.type.size // 32) * _isz(op.type.dtype)
    if k in ("broadcast", "reduce") and op.type.layout != "blocked":
        return 0  # in registers (tile/fragments.h)
    if k == "broadcast" and not register_broadcast(op.args[0].type.shape, op.type.shape, nt):
        src = op.args[0].type
        return src.size * _isz(src.dtype)
    if k == "reshape" and not register_reshape(op.args[0].type.shape, op.type.shape, nt):
        src = op.args[0].type
        return src.size * _isz(src.dtype)
    if k == "permute":
        return permute_scratch(op.args[0].type, op.attrs["perm"])
    if k == "bytes":  # float4_e2m1fn staged one element to a byte
        x = op.args[0].type
        return max(x.size * _isz(x.dtype), op.type.size * _isz(op.type.dtype))
    if k == "extract" and op.type.layout == "mma":  # registers chosen (ir/fraglayout.py)
        return 0
    if k in ("scan", "extract"):
        x = op.args[0].type
        return x.size * _isz(x.dtype)
    if k == "insert":
        v = op.args[1].type
        return v.size * _isz(v.dtype)
    if k == "cat":
        return sum(a.type.size for a in op.args) * _isz(op.type.dtype)
    if k == "reduce":
        x = op.args[0].type
        if cols_reduction(op, nt):
            return 0  # in registers
        if rows_reduction(op, nt):
            return op.type.size * (nt // 32) * (_acc_size(x.dtype) + 4)
        if split_reduction(op, nt):
            return _round16(x.size * _isz(x.dtype)) + op.type.size * _acc_size(x.dtype)
        return x.size * _isz(x.dtype)
    if k == "mma" and op.args[1].type.layout != "blocked":  # B in its own buffer
        a = op.args[0].type
        if op.type.layout == "blocked":  # A padded to whole 16-row strips, then C's rows
            mp = tiling.padded_m(a.shape[0])  # (float32; tile/operands.h)
            return (mp * (a.shape[1] + 8) * _isz(a.dtype)
                    + a.shape[0] * tiling.c_pitch(op.type.shape[1]) * 4)
        # (A staged: its rows padded with zeros to 16 where there are fewer, tile/operands.h)
        return 0 if a.layout != "blocked" else \
            tiling.padded_m(a.shape[0]) * (a.shape[1] + 8) * _isz(a.dtype)
    if k == "mma":
        return tiling.mma_bytes(op.args[0].type, op.args[1].type, op.type.layout == "mma")
    if k == "mma_loop":
        # the staged loop's buffers where cp.async may run, else one buffer (one mma's)
        a, b = operands(op)
        staged = tiling.staged_bytes(a, b, tiling.staged_stages(a, b, nt))
        return max(staged, tiling.mma_bytes(a, b, fragments=True))
    if k == "layout":
        return op.type.size * _isz(op.type.dtype)
    if k == "gather_operand":  # the row indices, int64 (tile/operands.h)
        return op.type.shape[0] * 8
    if k == "scatter_fragments":  # the row indices, int64 (tile/mma.h)
        return op.args[1].type.shape[0] * 8
    if k == "printf":
        return sum(_round16(a.type.size * _isz(a.type.dtype)) for a in op.args
                   if isinstance(a.type, TileType))
    if k == "atomic" and op.type.size < nt:
        return op.type.size * _isz(op.type.dtype)
    return 0


def prelude(module: ir.Module, scratch: int, scratch_sm90a: int) -> list[str]:
    """The lines after threadtile.h: the scratch size, tile.h, the tile type aliases."""
    nt = module.threads
    if scratch_sm90a:  # (the build without the portable k loop, and the one with it)
        out = [f"#define TT_SCRATCH_SM90A {scratch_sm90a}",
               "#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(TT_TMA_ONLY)",
               "#define TT_SCRATCH_BYTES TT_SCRATCH_SM90A",
               "#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)",
               f"#define TT_SCRATCH_BYTES {max(scratch, scratch_sm90a)}",
               "#else",
               f"#define TT_SCRATCH_BYTES {scratch}",
               "#endif"]
    else:
        out = [f"#define TT_SCRATCH_BYTES {scratch}"]
    if operand_bytes(module):
        out.append(f"#define TT_OPERAND_BYTES {operand_bytes(module)}")
    if operand_maps(module):  # (tile/operands.h load_operand_tma)
        out += [f"#define TT_TMA_SITES {len(operand_maps(module))}",
                f"#define TT_TMA_BARS {operand_buffers(module)}",
                f"#define TT_TMA_THREADS {nt}"]
        if refill_wait(module):
            out.append(REFILL_WAIT)
    if hopper_loops(module):  # the threads of the kernel's code: a build with a producer warp
        out.append(f"#define TT_BLOCK_THREADS {nt}")  # has one warp more (kloop_sm90.h)
    out += [f'#include "{TILE_HEADER}"', ""]
    out += [f"using {alias(t)} = {spelled(t, nt)};" for t in tile_types(module)]
    return out


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
    return math.prod(src) == 1 or \
        tiling.vec_width(tuple(src), nt) == tiling.vec_width(tuple(dst), nt)


def register_reshape(src: tuple, dst: tuple, nt: int) -> bool:
    """Whether a reshape keeps every element in its register (tile.h, reshape)."""
    return math.prod(src) < nt or \
        tiling.vec_width(tuple(src), nt) == tiling.vec_width(tuple(dst), nt)


def _trailing_axes(op: ir.TileOp) -> bool:
    """Whether a reduction reduces the trailing axes of its tile (some, in order)."""
    axes, nd = op.attrs["axes"], op.args[0].type.ndim
    return bool(axes) and tuple(axes) == tuple(range(nd - len(axes), nd))


def split_reduction(op: ir.TileOp, nt: int) -> int:
    """The lanes per result of tile.h's reduce_split, or 0 where it does not apply: the
    trailing axes into fewer results than threads (two lanes each at least), not an arg kind,
    not bool; groups of a power of two lanes, at most a warp, no wider than a result's run."""
    x: TileType = op.args[0].type
    if not _trailing_axes(op) or op.attrs["kind"] in ("argmax", "argmin") or \
            x.dtype.kind == "b":
        return 0
    results = max(op.type.size, 1)
    g = min(32, nt // results, x.size // results)
    if g < 2:
        return 0
    return 1 << (g.bit_length() - 1)


def cols_reduction(op: ir.TileOp, nt: int) -> bool:
    """Whether a reduction takes tile.h's reduce_cols (in registers): the leading axes of a
    blocked tile, each result's inputs in the thread that holds it (tiling.in_thread_columns)."""
    x: TileType = op.args[0].type
    if x.layout != "blocked" or op.type.layout != "blocked":
        return False
    return tiling.in_thread_columns(x.shape, tuple(op.attrs["axes"]), nt)


def rows_reduction(op: ir.TileOp, nt: int) -> bool:
    """Whether a reduction takes tile.h's reduce_rows: trailing axes, each result combining a
    multiple of NT elements."""
    x: TileType = op.args[0].type
    if not _trailing_axes(op):
        return False
    per = x.size // max(op.type.size, 1)
    return per % nt == 0 and x.size % (op.type.size * nt) == 0


# ---------------------------------------------------------------------------------------------
# spelling: TILE_OPS[op](em, x, args) -> the C++ expression, ``em`` the FunctionEmitter and
# ``args`` the operands as C++ (arrays as views)
# ---------------------------------------------------------------------------------------------

def spell(em, x: ir.TileOp) -> str:
    """The C++ expression for tile operation ``x``."""
    args = [em.view(a) if isinstance(a.type, ArrayType) else em.e(a) for a in x.args]
    return TILE_OPS[x.op](em, x, args)


def _dims(shape) -> str:
    return ", ".join(map(str, shape))


def _targs(*parts) -> str:
    items = [p for p in parts if p != ""]
    return f"<{', '.join(items)}>" if items else ""


_MODES = {"rz": "tt::tile::RZ", "rm": "tt::tile::RM", "rp": "tt::tile::RP", "ra": "tt::tile::RA"}


def _cast(em, x, args):
    if "rounding" in x.attrs:  # tile/narrow.h
        return f"tt::tile::astype_r<{x.type.dtype.cname}, {_MODES[x.attrs['rounding']]}>" \
               f"({args[0]})"
    if x.args[0].type.dtype == bfloat16 and x.type.dtype == float32:
        em.sites += 1  # each conversion is its own (tile.h: astype)
        return f"tt::tile::astype<float, {em.sites}>({args[0]})"
    return f"tt::tile::astype<{x.type.dtype.cname}>({args[0]})"


def _broadcast(em, x, args):
    if x.type.layout != "blocked":  # over the columns of fragment tiles (tile/fragments.h)
        return f"tt::tile::broadcast_frag<{alias(x.type)}>({args[0]})"
    fn = "broadcast" if register_broadcast(x.args[0].type.shape, x.type.shape, em.threads) \
        else "broadcast_smem"
    return f"tt::tile::{fn}{_targs(_dims(x.type.shape))}({args[0]})"


def _reduce(em, x, args):
    nan = "_NAN" if x.attrs.get("nan") and x.attrs["kind"] in ("max", "min", "argmax", "argmin") \
        else ""
    kind = "tt::tile::" + _REDUCE[x.attrs["kind"]] + nan
    if x.type.layout == "mmarow":  # the rows of a fragment tile (tile/fragments.h)
        return f"tt::tile::reduce_mma_rows<{kind}>({args[0]})"
    if cols_reduction(x, em.threads):
        return f"tt::tile::reduce_cols{_targs(kind, _dims(x.type.shape))}({args[0]})"
    if rows_reduction(x, em.threads):
        return f"tt::tile::reduce_rows{_targs(kind, _dims(x.type.shape))}({args[0]})"
    g = split_reduction(x, em.threads)
    if g:
        return f"tt::tile::reduce_split{_targs(kind, str(g), _dims(x.type.shape))}({args[0]})"
    mask = sum(1 << a for a in x.attrs["axes"])
    return f"tt::tile::reduce{_targs(kind, bin(mask), _dims(x.type.shape))}({args[0]})"


def _scan(em, x, args):
    kind = "tt::tile::" + _REDUCE[x.attrs["kind"]]
    rev = "true" if x.attrs["reverse"] else "false"
    return f"tt::tile::scan<{kind}, {x.attrs['axis']}, {rev}>({args[0]})"


def _order(x) -> tuple[str, str]:
    order = x.attrs["order"]
    ords = "" if order == tuple(range(len(order))) else _dims(order)
    return ords, "_shared" if x.args[0].type.space == "shared" else ""


def _rows_axis(t: TileType) -> list[str]:
    """The axis a tile in fragments has its rows along, as the fragment load's and store's
    template argument where it is not the next to last (ones between it and the last:
    ir/tiling.py matrix_axes), else none."""
    ax = tiling.matrix_axes(t.shape)[0]
    return [] if ax == t.ndim - 2 else [str(ax)]


def _load(em, x, args):
    ords, shared = _order(x)
    dt = x.type.dtype
    pad = _PAD.get(x.attrs["padding"], 0.0)
    padv = literal(pad if dt.is_float else 0, dt) if dt.kind != "b" else "false"
    idx = "".join(", " + a for a in args[1:])
    if x.type.layout == "mma":  # straight into fragments (ir/fraglayout.py _loaded_for)
        return (f"tt::tile::load_fragments{_targs(alias(x.type), *_rows_axis(x.type))}("
                f"{args[0]}, {padv}{idx})")
    return f"tt::tile::load{shared}{_targs(alias(x.type), ords)}({args[0]}, {padv}{idx})"


def operand_pad(x: ir.TileOp) -> str:
    """The C++ value a ``load_operand`` writes past the array's edges."""
    dt = x.type.dtype
    pad = _PAD.get(x.attrs["padding"], 0.0)
    return literal(pad if dt.is_float else 0, dt)


def _load_operand(em, x, args):
    # the tile indices in the array's axis order (tile axis k is array axis order[k])
    order = x.attrs.get("order") or range(len(args) - 1)
    arr_idx = [""] * (len(args) - 1)
    for k, a in zip(order, args[1:]):
        arr_idx[k] = a
    idx = "".join(", " + a for a in arr_idx)
    sync = "false" if id(x) in em.after_copy else "true"  # (FunctionEmitter.block)
    tma = em.operand_maps.get(id(x))
    if tma:  # TMA in an sm_90a build without the portable loops (else as below)
        return (f"tt::tile::load_operand_tma<{alias(x.type)}, {x.attrs['offset']}, "
                f"{x.attrs['row_axis']}, {tma[1]}, {sync}>({tma[0]}, {args[0]}, "
                f"{operand_pad(x)}{idx})")
    return (f"tt::tile::load_operand<{alias(x.type)}, {x.attrs['offset']}, "
            f"{x.attrs['row_axis']}, {sync}>({args[0]}, {operand_pad(x)}{idx})")


def _gather_operand(em, x, args):
    check = "true" if x.attrs["check_bounds"] else "false"
    arr, rows, col0, pad = args
    return (f"tt::tile::gather_operand<{alias(x.type)}, {x.attrs['offset']}, {check}>"
            f"({arr}, {pad}, {rows}, (int64_t)({col0}))")


def _scatter_fragments(em, x, args):
    check = "true" if x.attrs["check_bounds"] else "false"
    arr, tile, rows, col0 = args
    return f"tt::tile::scatter_fragments<{check}>({arr}, {tile}, {rows}, (int64_t)({col0}))"


def _mma(em, x, args):
    if x.args[1].type.layout != "blocked":  # B in shared memory (tile/operands.h)
        return f"tt::tile::mma<{_tc(x)}, {x.attrs.get('wait', 0)}>({', '.join(args)})"
    return f"tt::tile::mma<{_tc(x)}>({', '.join(args)})"


def _store(em, x, args):
    if x.args[1].type.layout == "mma":
        # (a store inside a loop takes tile/mma.h's interior path, its tested one out of line)
        axis = _rows_axis(x.args[1].type)
        targs = _targs(*(axis or ["-1"]), "true") if em.loops else _targs(*axis)
        return f"tt::tile::store_fragments{targs}({', '.join(args)})"
    ords, shared = _order(x)
    return f"tt::tile::store{shared}{_targs(ords)}({', '.join(args)})"


def _atomic(em, x, args):
    op = x.attrs["op"]
    order = "tt::tile::" + _ORDER[x.attrs["order"]]
    scope = "tt::tile::" + _SCOPE[x.attrs["scope"]]
    nidx = x.args[0].type.ndim
    arr, idx, vals = args[0], args[1:1 + nidx], args[1 + nidx:]
    rest = ", ".join([arr] + vals + idx)
    if op == "cas":
        return f"tt::tile::atomic_cas<{alias(x.type)}, {order}, {scope}>({rest})"
    return f"tt::tile::atomic<{alias(x.type)}, tt::tile::{_ATOMIC[op]}, {order}, {scope}>({rest})"


def _gather(em, x, args):
    """``gather<Tile, CheckBounds>(array, mask, pad, index...)`` (tile.h, gather.h)."""
    check = "true" if x.attrs["check_bounds"] else "false"
    shared = "_shared" if x.args[0].type.space == "shared" else ""
    arr, idx, mask, pad = args[0], args[1:-2], args[-2], args[-1]
    rest = ", ".join([arr, mask, pad] + idx)
    return f"tt::tile::gather{shared}<{alias(x.type)}, {check}>({rest})"


def _scatter(em, x, args):
    """``scatter<CheckBounds>(array, tile, mask, index...)`` (tile.h, gather.h)."""
    check = "true" if x.attrs["check_bounds"] else "false"
    shared = "_shared" if x.args[0].type.space == "shared" else ""
    arr, val, idx, mask = args[0], args[1], args[2:-1], args[-1]
    rest = ", ".join([arr, val, mask] + idx)
    return f"tt::tile::scatter{shared}<{check}>({rest})"


_CONV = re.compile(r"%(?:%|([-+ #0-9.]*)(?:hh|h|ll|l|L|z|j|t)?([diouxXfFeEgG]))")
_PRINTF_ARGS = 32  # CUDA's printf takes at most 32 arguments after the format


def _printf(em, x, args):
    """C's printf by the block's first thread; integers are passed as (unsigned) long long and
    floats as double, whatever their kernel type. A tile argument is staged in the scratch
    (every thread) and printed as a nested list of its elements; a line of more than 32
    numbers takes several printf calls."""
    stage, off, values = [], 0, []
    for k, (a, e) in enumerate(zip(args, x.args)):
        if isinstance(e.type, TileType):
            stage.append(f"auto tt_pr{k} = tt::tile::print_stage({a}, {off});")
            off += _round16(e.type.size * _isz(e.type.dtype))
            values.append((e.type.dtype, e.type.shape, f"tt_pr{k}"))
        else:
            values.append((e.type, None, a))
    calls: list[tuple[str, list[str]]] = [("", [])]

    def text(s: str) -> None:
        calls[-1] = (calls[-1][0] + s.replace("%", "%%"), calls[-1][1])

    def number(conv: str, c: str) -> None:
        if len(calls[-1][1]) == _PRINTF_ARGS:
            calls.append(("", []))
        calls[-1] = (calls[-1][0] + conv, calls[-1][1] + [c])

    it = iter(values)
    pos = 0
    fmt = x.attrs["fmt"]
    for m in _CONV.finditer(fmt):
        text(fmt[pos:m.start()])
        pos = m.end()
        if m.group(2) is None:
            text("%")
            continue
        dt, shape, a = next(it)
        kind = m.group(2)
        if kind in "diouxX":
            u = not dt.is_signed
            conv = f"%{m.group(1)}ll{'u' if u and kind in 'di' else kind}"
            cast = "(unsigned long long)" if u else "(long long)"
        else:
            conv, cast = f"%{m.group(1)}{kind}", "(double)"
        if dt.is_float and dt.bits == 16:
            cast += "tt::tile::wide"
        if shape is None:
            number(conv, f"{cast}({a})")
            continue
        for j, piece in enumerate(_nested_text(list(shape))):
            if piece:
                text(piece)
            if j < math.prod(shape):
                number(conv, f"{cast}({a}[{j}])")
    text(fmt[pos:])
    body = " ".join(f'printf("{_c_string(f)}"{"".join(", " + c for c in cs)});'
                    for f, cs in calls)
    if not stage:
        return f"if (tt::tile::tid() == 0) {{ {body} }}"
    return ("{ " + " ".join(stage) +
            f" if (tt::tile::tid() == 0) {{ {body} }} tt::tile::block_sync(); }}")


def _nested_text(dims: list[int]) -> list[str]:
    """The text before each element of a row-major tile printed as nested lists, and after
    the last: ``[[``, ``, ``, ``], [``, ``, ``, ``]]`` for (2, 2)."""
    if not dims:
        return ["", ""]
    out = ["["]
    for j in range(dims[0]):
        inner = _nested_text(dims[1:])
        out[-1] += (", " if j else "") + inner[0]
        out += inner[1:]
    out[-1] += "]"
    return out


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _tc(x: ir.TileOp) -> str:
    """Whether tensor cores take an mma's operands: the compiler's decision, passed to tile.h."""
    return "true" if tiling.tensor_core(x.args[0].type, x.args[1].type) else "false"


def _mma_loop(em, x, args):
    """``tt::tile::mma_loop`` (the Hopper main loop where the target and the arrays allow,
    tile.h otherwise) with the op's two tensor maps (``mma_loop_batched`` for a batched loop),
    or ``mma_loop_staged`` (a batched loop's on its batch's 2-d views, ``batch_view``)."""
    arr_a, arr_b, i, j, lo, hi, acc, *batch = args
    ta, tb = operands(x)
    la, lb = loaded(x)
    pad = literal(0.0, la.dtype)
    staged = tiling.staged_stages(ta, tb, em.threads)
    loads = f"{alias(la)}, {alias(lb)}, {staged}"
    if x.attrs["hopper"]:
        if x.attrs.get("zero") and la.dtype == float32:  # the tfloat32 loop's Zero
            loads += ", true"
        fn = f"mma_loop_batched<{loads}>" if batch else f"mma_loop<{loads}>"
        call = [arr_a, arr_b, pad, *batch, i, j, lo, hi, acc, *em.tensormaps[id(x)]]
    else:
        if batch:
            arr_a = f"tt::tile::batch_view({arr_a}, {batch[0]})"
            arr_b = f"tt::tile::batch_view({arr_b}, {batch[1]})"
        fn = f"mma_loop_staged<{ta.dtype.cname}, {loads}>"
        call = [arr_a, arr_b, pad, i, j, lo, hi, acc]
    return f"tt::tile::{fn}({', '.join(call)})"


TILE_OPS = {
    "full": lambda em, x, args: f"tt::tile::full<{alias(x.type)}>({args[0]})",
    "arange": lambda em, x, args: f"tt::tile::arange<{alias(x.type)}>({args[0]}, {args[1]})",
    "binop": lambda em, x, args:
        f"tt::tile::{_BINARY[x.attrs['op']]}({args[0]}, {args[1]})",
    "unary": lambda em, x, args: f"tt::tile::{x.attrs['op']}({args[0]})",
    "cast": _cast,
    "bytes": lambda em, x, args: f"tt::tile::bytes_as<{alias(x.type)}>({args[0]})",
    "from_scalars": lambda em, x, args:
        f"tt::tile::from_scalars<{alias(x.type)}>({', '.join(args)})",
    "math": lambda em, x, args: f"tt::tile::{x.attrs['fn']}({args[0]})",
    "where": lambda em, x, args: f"tt::tile::where({', '.join(args)})",
    "broadcast": _broadcast,
    "reshape": lambda em, x, args: f"tt::tile::reshape{_targs(_dims(x.type.shape))}({args[0]})",
    "permute": lambda em, x, args: f"tt::tile::permute<{_dims(x.attrs['perm'])}>({args[0]})",
    "extract": lambda em, x, args:
        f"tt::tile::extract_frag<{alias(x.type)}, {x.args[2].value}>({args[0]})"
        if x.type.layout == "mma" else f"tt::tile::extract<{alias(x.type)}>({', '.join(args)})",
    "insert": lambda em, x, args: f"tt::tile::insert({', '.join(args)})",
    "cat": lambda em, x, args:
        f"tt::tile::cat<{alias(x.type)}, {x.attrs['axis']}>({args[0]}, {args[1]})",
    "reduce": _reduce,
    "scan": _scan,
    "mma": _mma,
    "load_operand": _load_operand,
    "gather_operand": _gather_operand,
    "mma_loop": _mma_loop,
    "item": lambda em, x, args: f"tt::tile::item({args[0]})",
    "load": _load,
    "store": _store,
    "atomic": _atomic,
    "gather": _gather,
    "scatter": _scatter,
    "scatter_fragments": _scatter_fragments,
    "printf": _printf,
    "layout": lambda em, x, args: f"tt::tile::{_TO[x.type.layout]}({args[0]})",
}
