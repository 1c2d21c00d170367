"""Tile operations in the simulator: NumPy semantics, once per block of a batch.

A tile value is a NumPy array of shape ``(nb, *tile_shape)``: one tile per block of the batch
(the block axis leads). Scalars reaching a tile operation are per-lane values; the operation
takes each block's value and checks that every thread of the block passed the same one (a
tile operation is block-collective: its arguments are the block's, not a thread's).

Each operation first checks that every thread of a block reached it together (a tile
operation in a branch that only some threads take is a ``BarrierDivergenceError``, as a
``syncthreads()`` there would be), then runs for the blocks that reached it. Loads and stores
check bounds and, like thread-level accesses, feed the race and initialisation checks; element
``e`` (row-major) of a tile is attributed to thread ``e % T`` of its block, the thread that
touches it in the CUDA backend.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ... import errors
from ...ir import nodes as ir
from ...lang import minifloat
from ...lang.types import NARROW_FLOATS, Scalar, TileType, bfloat16, tfloat32
from . import checks, derived, memory, ops, tile_dtypes

_F32 = np.dtype(np.float32)


def tf32(v):
    """float32 values rounded to TensorFloat-32 (10 mantissa bits, to nearest, ties to even),
    as cuTile's astype and cuBLAS's TF32 round (measured on an H100: both agree with this
    to the last bit of the sum order; ties away from zero did not); kept as float32."""
    a = np.asarray(v, dtype=np.float32)
    bits = a.view(np.uint32)
    odd = (bits >> np.uint32(13)) & np.uint32(1)
    r = ((bits + np.uint32(0xFFF) + odd) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(a), r, a)


def _dtype(t: Scalar) -> np.dtype:
    return _F32 if t == bfloat16 or t.restricted else ops.value_dtype(t)


def _round(v, t: Scalar):
    """Values computed in a wider type, rounded to dtype ``t``."""
    if t == bfloat16:
        return ops.bf16(np.asarray(v, np.float32))
    if t == tfloat32:
        return tf32(v)
    if t.name in NARROW_FLOATS:
        return minifloat.round_to(v, t.name)
    return np.asarray(v).astype(_dtype(t), copy=False)


# ---------------------------------------------------------------------------------------------
# entry points called by the generated code
# ---------------------------------------------------------------------------------------------

def run_op(B, m, idx: int, *args):
    """Tile operation ``idx`` of the program, by the lanes of mask ``m``."""
    op, site, subs = B.state.prog.tile_ops[idx]
    blocks = _reached(B, m, site, op)
    return OPS[op.op](B, op, site, blocks, args, *subs)


def sub_ops(op) -> tuple:
    """The operations an operation stands for, each checked at its own line: an mma_loop's
    two loads and its mma (the codegen gives each a site)."""
    if op.op == "mma_loop":
        return op.attrs["a"], op.attrs["b"], op.attrs["mma"]
    return ()


def assign(B, m, v, old):
    """A masked assignment of a tile variable: blocks whose threads are not in ``m`` keep
    ``old`` (a tile operation is reached by all threads of a block or by none)."""
    if m is None or old is None:
        return v
    if m is False:
        return old
    bm = m.reshape(B.nb, B.T).any(axis=1)
    return np.where(bm.reshape((B.nb,) + (1,) * (v.ndim - 1)), v, old)


def _what(op) -> str:
    """The operation as the user wrote it, for messages."""
    a = op.attrs
    name = {"reduce": a.get("kind"), "scan": "cum" + a.get("kind", ""), "binop": a.get("op"),
            "math": a.get("fn"), "atomic": "atomic_" + a.get("op", "").rstrip("_"),
            "cast": "astype", "mma_loop": "mma"}.get(op.op, op.op)
    return f"ct.{name}()"


def _reached(B, m, site: int, op):
    """None when every block of the batch runs the operation, else a bool per block."""
    if m is None:
        return None
    cnt = np.broadcast_to(m, (B.L,)).reshape(B.nb, B.T).sum(axis=1)
    partial = (cnt > 0) & (cnt < B.T)
    if partial.any() and B.launch.barrier:
        b = int(np.argmax(partial))
        lanes = np.arange(b * B.T, (b + 1) * B.T)
        missing = lanes[~m[lanes]]
        exited = B.live is not None and not B.live[missing].any()
        reason = ("returned before it" if exited else "are on another path (a branch or a loop "
                  "trip count that differs between threads of the block)") + \
            ". Tile operations are block-collective: every thread of the block must execute " \
            "each of them together, as with syncthreads()"
        checks.raise_divergence(B.launch, site, int(B.gtid[lanes[0]] // B.T),
                                [int(B.gtid[x]) for x in missing], int(m[lanes].sum()),
                                _what(op), reason)
    active = cnt > 0
    return None if active.all() else active


def _per_block(B, v, blocks, site: int, op, what: str):
    """A scalar argument as one value per block (shape (nb,)), or unchanged when uniform."""
    if v.__class__ is not np.ndarray or v.ndim == 0:
        return v
    r = v.reshape(B.nb, B.T)
    first = r[:, 0]
    same = (r == first[:, None])
    if r.dtype.kind == "f":
        same |= np.isnan(r) & np.isnan(first)[:, None]
    bad = ~same.all(axis=1)
    if blocks is not None:
        bad &= blocks
    if bad.any() and B.launch.barrier:
        b = int(np.argmax(bad))
        lane = b * B.T + int(np.argmin(same[b]))
        block, thread = B.launch.thread_of(int(B.gtid[lane]))
        s = B.launch.sites[site]
        raise checks.make_error(
            errors.BarrierDivergenceError,
            f"{what} of {_what(op)} differs between the threads of block {block}: thread "
            f"{thread} passes {r[b].flat[lane - b * B.T].item()!r}, thread (0, 0, 0) "
            f"{first[b].item()!r}",
            s.loc, "Tile operations are block-collective: their arguments must be the same in "
            "every thread of the block.", block=block, thread=thread) from None
    return first


def _bc(v, nd: int):
    """A per-block value (nb,) shaped to broadcast against (nb, *shape) tiles."""
    if v.__class__ is np.ndarray and v.ndim == 1 and nd:
        return v.reshape((-1,) + (1,) * nd)
    return v


def _operands(B, op, args, blocks, site, nd: int) -> list:
    """Tiles as they are, scalars per block and shaped to broadcast against the tiles."""
    return [v if isinstance(e.type, TileType) else
            _bc(_per_block(B, v, blocks, site, op, "an operand"), nd)
            for e, v in zip(op.args, args)]


# ---------------------------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------------------------

def _full(B, op, site, blocks, args):
    t: TileType = op.type
    v = _per_block(B, args[0], blocks, site, op, "the fill value")
    out = np.empty((B.nb,) + t.shape, _dtype(t.dtype))
    out[...] = _bc(v, t.ndim)
    return out


def _arange(B, op, site, blocks, args):
    t: TileType = op.type
    start, step = (_bc(_per_block(B, a, blocks, site, op, "start/step"), 1) for a in args)
    dt = _dtype(t.dtype)
    r = np.arange(t.shape[0]).astype(dt)
    out = np.asarray(start + r * step).astype(dt)
    return _round(np.broadcast_to(out, (B.nb,) + t.shape), t.dtype)


_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
        "div_approx": np.true_divide,  # (the GPU's div.approx.f32: within 2 ulp of this)
        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
        "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
        "eq": np.equal, "ne": np.not_equal, "max": ops.pymax, "min": ops.pymin}


def _binop(B, op, site, blocks, args):
    t: TileType = op.type
    nd = t.ndim
    a, b = _operands(B, op, args, blocks, site, nd)
    name = op.attrs["op"]
    dt = a.dtype if isinstance(a, np.ndarray) else np.asarray(a).dtype
    if name == "floordiv":
        r = np.floor_divide(a, b) if dt.kind in "iu" else ops.floordiv_f(a, b)
    elif name == "mod":
        r = np.mod(a, b) if dt.kind in "iu" else ops.pymod_f(a, b)
    elif name == "pow":
        r = ops.ipow(a, b) if dt.kind in "iu" else np.power(a, b)
    elif name in ("shl", "shr"):
        r = (ops.shl if name == "shl" else ops.shr)(np.asarray(a, dt), np.asarray(b))
    else:
        r = _BIN[name](a, b)
    r = np.broadcast_to(r, (B.nb,) + t.shape)
    return _round(r, t.dtype)


def _unary(B, op, site, blocks, args):
    (x,) = args
    r = -x if op.attrs["op"] == "neg" else ~x
    return _round(r, op.type.dtype)


def _cast(B, op, site, blocks, args):
    (x,) = args
    t = op.type.dtype
    if t.kind == "b":
        return x != 0
    if "rounding" in op.attrs:
        return tile_dtypes.cast_rounded(B, op, site, blocks, args)
    if t.name in NARROW_FLOATS:  # from the value as it is (float64 rounded once)
        return minifloat.round_to(x, t.name)
    if t.kind in "iu" and np.asarray(x).dtype.kind == "f":  # as the GPU's cvt.rzi converts
        return ops.float_to_int(x, _dtype(t))
    return _round(x.astype(_dtype(t)) if t not in (bfloat16, tfloat32) else x.astype(
        np.float32), t)


def _math(B, op, site, blocks, args):
    (x,) = args
    fn = op.attrs["fn"]
    t = op.type.dtype
    if fn == "abs":
        return _round(np.abs(x), t)
    if fn == "isnan":
        return np.isnan(x)
    # float16/bfloat16 math computes in float32 and rounds once (as the CUDA backend does)
    xf = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    if fn == "exp_approx":  # the simulator's exponential is NumPy's, approximate or not
        fn = "exp"
    if fn == "exp2_ftz":  # float32: results below 2**-126 (subnormal) are zero
        r = np.exp2(xf)
        return np.where(r < np.float32(2.0 ** -126), np.float32(0), r)
    return _round(ops.MATH[fn](xf), t)


def _where(B, op, site, blocks, args):
    t: TileType = op.type
    c, x, y = _operands(B, op, args, blocks, site, t.ndim)
    r = np.where(c, x, y)
    return _round(np.broadcast_to(r, (B.nb,) + t.shape), t.dtype)


# ---------------------------------------------------------------------------------------------
# shapes, reductions, matrix multiply
# ---------------------------------------------------------------------------------------------

def _broadcast(B, op, site, blocks, args):
    (x,) = args
    shape = op.type.shape
    xs = x.shape[1:]
    x = x.reshape((B.nb,) + (1,) * (len(shape) - len(xs)) + xs)
    return np.broadcast_to(x, (B.nb,) + shape)


def _reshape(B, op, site, blocks, args):
    return args[0].reshape((B.nb,) + op.type.shape)


def _permute(B, op, site, blocks, args):
    return args[0].transpose((0,) + tuple(p + 1 for p in op.attrs["perm"]))


def _cells(B, op, site, blocks, idx, shape, sub) -> np.ndarray:
    """Each block's cell of the grid ``sub`` cuts a tile of ``shape`` into, (nb, ndim); a cell
    outside the grid is an OutOfBoundsError (the GPU code clamps it)."""
    cells = np.zeros((B.nb, len(shape)), np.int64)
    for d, i in enumerate(idx):
        cells[:, d] = np.broadcast_to(np.asarray(_per_block(B, i, blocks, site, op, "the index"),
                                                 np.int64), (B.nb,))
    grid = np.array([n // s for n, s in zip(shape, sub)], np.int64)
    bad = ((cells < 0) | (cells >= grid)).any(axis=1)
    if blocks is not None:
        bad &= blocks
    if bad.any() and B.launch.bounds:
        b = int(np.argmax(bad))
        block, _ = B.launch.thread_of(int(B.gtid[b * B.T]))
        raise checks.make_error(
            errors.OutOfBoundsError,
            f"{_what(op)}: subtile index {tuple(int(c) for c in cells[b])} in block {block} "
            f"is outside the grid {tuple(int(g) for g in grid)} of subtiles {sub} of a tile "
            f"{shape}", B.launch.sites[site].loc,
            "The index counts subtiles, not elements.", block=block)
    return cells


def _cell(c, sub) -> tuple:
    return tuple(slice(int(i) * s, (int(i) + 1) * s) for i, s in zip(c, sub))


def _rows(B, blocks):
    return range(B.nb) if blocks is None else np.flatnonzero(blocks)


def _extract(B, op, site, blocks, args):
    x, *idx = args
    sub = op.type.shape
    cells = _cells(B, op, site, blocks, idx, x.shape[1:], sub)
    out = np.zeros((B.nb,) + sub, x.dtype)
    for r in _rows(B, blocks):
        out[r] = x[r][_cell(cells[r], sub)]
    return out


def _insert(B, op, site, blocks, args):
    x, v, *idx = args
    sub = v.shape[1:]
    cells = _cells(B, op, site, blocks, idx, x.shape[1:], sub)
    out = np.array(x, copy=True)
    for r in _rows(B, blocks):
        out[r][_cell(cells[r], sub)] = v[r]
    return out


def _cat(B, op, site, blocks, args):
    x, y = args
    return np.concatenate((x, y), axis=op.attrs["axis"] + 1)


def _reduce(B, op, site, blocks, args):
    (x,) = args
    kind = op.attrs["kind"]
    axes = tuple(a + 1 for a in op.attrs["axes"])
    out_shape = (B.nb,) + op.type.shape
    nan = op.attrs.get("nan", False)  # propagate_nan=True: a NaN wins, else NaNs are ignored
    if kind in ("argmax", "argmin"):
        if len(axes) == 1:
            x = np.moveaxis(x, axes[0], -1)
        else:  # every axis: the index into the flattened tile
            x = x.reshape(B.nb, -1)
        f = np.argmax if kind == "argmax" else np.argmin
        if x.dtype.kind != "f" and "float" not in x.dtype.name:  # (bfloat16's kind is V)
            r = f(x, axis=-1)
        else:  # the first number equal to the best (NaNs ignored; all NaN: 0)
            isnan = np.isnan(x)
            clean = np.where(isnan, -np.inf if kind == "argmax" else np.inf, x)
            best = (np.max if kind == "argmax" else np.min)(clean, axis=-1, keepdims=True)
            r = np.where(isnan.all(axis=-1), 0, np.argmax((clean == best) & ~isnan, axis=-1))
            if nan:  # propagate_nan: the first NaN
                r = np.where(isnan.any(axis=-1), np.argmax(isnan, axis=-1), r)
        return r.astype(np.int32).reshape(out_shape)
    t = op.type.dtype
    wide = x.dtype.kind == "f" and x.dtype.itemsize < 4
    xs = x.astype(np.float32) if wide else x
    if kind == "sum":
        r = np.sum(xs, axis=axes, dtype=xs.dtype)
    elif kind == "prod":
        r = np.prod(xs, axis=axes, dtype=xs.dtype)
    elif kind == "max":  # NaNs are ignored (fmax) unless propagate_nan, as the CUDA backend
        f = np.fmax if xs.dtype.kind == "f" and not nan else np.maximum
        r = f.reduce(xs, axis=axes)
    else:
        f = np.fmin if xs.dtype.kind == "f" and not nan else np.minimum
        r = f.reduce(xs, axis=axes)
    return _round(np.asarray(r).reshape(out_shape), t)


def _scan(B, op, site, blocks, args):
    (x,) = args
    axis = op.attrs["axis"] + 1
    wide = x.dtype.kind == "f" and x.dtype.itemsize < 4
    xs = x.astype(np.float32) if wide else x
    if op.attrs["reverse"]:
        xs = np.flip(xs, axis)
    f = np.cumsum if op.attrs["kind"] == "sum" else np.cumprod
    r = f(xs, axis=axis, dtype=xs.dtype)
    if op.attrs["reverse"]:
        r = np.flip(r, axis)
    return _round(r, op.type.dtype)


def _mma(B, op, site, blocks, args):
    x, y, acc = args
    t = op.type.dtype
    if x.dtype.kind == "f" and x.dtype.itemsize <= 4:
        # tensor cores multiply float16/bfloat16/tfloat32 exactly and accumulate in float32
        r = np.matmul(x.astype(np.float32), y.astype(np.float32)) + acc.astype(np.float32)
    elif x.dtype.kind in "iu":
        r = np.matmul(x.astype(np.int32), y.astype(np.int32)) + acc
    else:
        r = np.matmul(x, y) + acc
    return _round(r, t)


def _mma_loop(B, op, site, blocks, args, site_a, site_b, site_mma):
    """The k loop an ``mma_loop`` stands for (ir/kloop.py), run as written: for each k of each
    block's range, the load of A's tile (i, k), of B's tile (k, j), the cast to tfloat32 if
    any, and the mma into the accumulator, each with its checks at its own line (a batched
    loop's 3-d loads at batch indices za, zb, their leading axis of 1 dropped)."""
    arr_a, arr_b, i, j, lo, hi, acc, *batch = args
    lo, hi = (np.broadcast_to(np.asarray(_per_block(B, v, blocks, site, op, what), np.int64),
                              (B.nb,)) for v, what in ((lo, "the start of the k loop"),
                                                       (hi, "the end of the k loop")))
    la, lb, mm, cast = op.attrs["a"], op.attrs["b"], op.attrs["mma"], op.attrs["cast"]
    live = np.ones(B.nb, bool) if blocks is None else blocks
    running = np.flatnonzero(live & (lo < hi))
    if not running.size:
        return acc
    for k in range(int(lo[running].min()), int(hi[running].max())):
        active = live & (lo <= k) & (k < hi)
        if not active.any():
            continue
        part = None if active.all() else active
        kk = np.int64(k)
        if batch:
            za, zb = batch
            a = _load(B, la, site_a, part, (arr_a, za, i, kk))
            b = _load(B, lb, site_b, part, (arr_b, zb, kk, j))
            a, b = a.reshape(a.shape[:1] + a.shape[2:]), b.reshape(b.shape[:1] + b.shape[2:])
        else:
            a = _load(B, la, site_a, part, (arr_a, i, kk))
            b = _load(B, lb, site_b, part, (arr_b, kk, j))
        if cast is not None:
            a, b = _round(a, cast), _round(b, cast)
        r = _mma(B, mm, site_mma, part, (a, b, acc))
        acc = r if part is None else np.where(active[:, None, None], r, acc)
    return acc


def _item(B, op, site, blocks, args):
    (x,) = args
    v = x.reshape(B.nb)
    if B.nb == 1:
        return v[0]
    return v[B.blk]


# ---------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------

def _view(B, A: memory.ArrayRef, blocks, site, op):
    """(origin, shape, strides) of array view ``A`` per block."""
    origin = _per_block(B, A.origin, blocks, site, op, "the array")
    shape = tuple(_per_block(B, s, blocks, site, op, "the array") for s in A.shape)
    strides = tuple(_per_block(B, s, blocks, site, op, "the array") for s in A.strides)
    return origin, shape, strides


def _element_index(B, A, idx, shape, order, blocks, site, op):
    """Per array axis, the element index of every tile element: arrays (nb, *shape)."""
    nd = len(shape)
    grid = np.indices(shape, dtype=np.int64)
    out = [None] * nd
    for d in range(nd):
        i = _bc(_per_block(B, idx[d], blocks, site, op, "the index"), nd)
        out[order[d]] = np.broadcast_to(np.asarray(i, np.int64) * shape[d] + grid[d],
                                        (B.nb,) + shape)
    return out


def _lanes_of(B, shape, nb_sel):
    """Lane (in the batch) of the thread that handles each tile element: (nb_sel..., *shape)."""
    e = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % B.T
    return e


def _access(B, op, site, blocks, arr, idx, shape, order, kind: str):
    """Offsets and in-bounds masks of a tile access, restricted to the participating blocks;
    raises OutOfBoundsError where the rules say so."""
    A: memory.ArrayRef = arr
    origin, ashape, strides = _view(B, A, blocks, site, op)
    gi = _element_index(B, A, idx, shape, order, blocks, site, op)
    nd = len(shape)
    inb = np.ones((B.nb,) + shape, bool)
    off = np.broadcast_to(_bc(np.asarray(origin, np.int64), nd), (B.nb,) + shape)
    for ax in range(len(gi)):
        n = _bc(np.asarray(ashape[ax], np.int64), nd)
        inb &= (gi[ax] >= 0) & (gi[ax] < n)
        off = off + gi[ax] * _bc(np.asarray(strides[ax], np.int64), nd)
    rows = np.arange(B.nb) if blocks is None else np.flatnonzero(blocks)
    L = B.launch
    bad = ~inb[rows]
    padding = op.attrs.get("padding")
    if kind == "store" or (kind == "load" and padding is None):
        # cuTile skips the elements of a store outside the array, and pads a load's with an
        # undetermined value; a tile entirely outside is undefined there, and here an error
        # -- but for an array of no elements (an empty slice: cuTile's own tests load and
        # store such tiles, reading padding and storing nothing)
        whole = bad.reshape(len(rows), -1).all(axis=1)
        if whole.any():  # (the extents looked at only for a tile wholly outside)
            for n in ashape:
                whole &= np.broadcast_to(np.asarray(n, np.int64), (B.nb,))[rows] != 0
        bad = bad & whole.reshape((-1,) + (1,) * nd)
    elif padding is not None or kind == "atomic":
        bad = np.zeros_like(bad)
    if L.bounds and bad.any():
        k = int(np.argmax(bad.reshape(-1)))
        b, e = divmod(k, int(np.prod(shape)))
        r = np.unravel_index(e, shape)
        block_row = rows[b]
        lane = block_row * B.T + e % B.T
        index = [int(g[(block_row,) + r]) for g in gi]
        dims = [int(np.broadcast_to(s, (B.nb,))[block_row]) for s in ashape]
        where = "the tile lies entirely outside the array"
        tidx = [int(np.broadcast_to(_per_block(B, i, blocks, site, op, "the index"),
                                    (B.nb,))[block_row]) for i in idx]
        checks.raise_oob(L, site, B.gtid[lane], index, dims,
                         what=f"outside the array: {where} (tile index {tuple(tidx)}, tile "
                              f"shape {shape})")
    return off, inb, rows, gi


def _shadow(B, op, site, mem, offs, lanes, gi_sel, write: bool, atomic: bool = False,
            new=None):
    """Race and initialisation checks of the in-bounds elements of a tile access."""
    L = B.launch
    tid, stamp = B.gtid[lanes], B.stamp[lanes]

    def index_at(k):
        return [int(g[k]) for g in gi_sel]

    if not write and L.uninit and mem.written is not None:
        w = mem.written[offs]
        if not w.all():
            k = int(np.argmin(w))
            checks.raise_uninit(L, site, tid[k], index_at(k), mem.describe(int(offs[k])))
    if L.race and mem.space in ("global", "shared"):
        sh = mem.get_shadow(L.shadow_dtype)
        if write:
            sh.write(L, mem, offs, tid, stamp, site, atomic, index_at, new)
        else:
            sh.read(L, mem, offs, tid, stamp, site, index_at)
    if write and mem.written is not None:
        mem.written[offs] = True


def _selected(B, rows, inb, off, gi, shape):
    sel = inb[rows]
    offs = off[rows][sel]
    e_lane = (rows.reshape((-1,) + (1,) * len(shape)) * B.T +
              _lanes_of(B, shape, len(rows)))[sel]
    gi_sel = [np.broadcast_to(g, inb.shape)[rows][sel] for g in gi]
    return sel, offs, e_lane, gi_sel


_PAD = {"zero": 0.0, "neg_zero": -0.0, "nan": np.nan, "pos_inf": np.inf, "neg_inf": -np.inf}


def _shared_sync(B, m, site, arr):
    if arr.mem.space == "shared":
        B.barrier(m, site)


def _load(B, op, site, blocks, args):
    arr, *idx = args
    t: TileType = op.type
    shape = t.shape
    _shared_sync(B, _mask(B, blocks), site, arr)
    off, inb, rows, gi = _access(B, op, site, blocks, arr, idx, shape, op.attrs["order"], "load")
    mem = arr.mem
    sel, offs, lanes, gi_sel = _selected(B, rows, inb, off, gi, shape)
    _shadow(B, op, site, mem, offs, lanes, gi_sel, write=False)
    # the default padding is cuTile's "undetermined": the GPU code reads 0 there, the
    # simulator NaN, so that a float result that depends on it shows
    pad = _PAD.get(op.attrs.get("padding"), np.nan)
    out = np.empty((B.nb,) + shape, _dtype(t.dtype))
    out[...] = pad if out.dtype.kind == "f" else 0
    vals = out[rows]
    vals[sel] = mem.to_value(mem.flat[offs])
    out[rows] = vals
    _shared_sync(B, _mask(B, blocks), site, arr)
    return out


def _load_operand(B, op, site, blocks, args):
    # the load as written, its tile reshaped to the operand's two axes (the buffer in shared
    # memory is the CUDA backend's business: ir/operands.py)
    t: TileType = op.type
    as_loaded = ir.TileOp(TileType(t.dtype, tuple(op.attrs["shape"])), op.loc, "load", op.args,
                          op.attrs)
    return _load(B, as_loaded, site, blocks, args).reshape((B.nb,) + t.shape)


def _store(B, op, site, blocks, args):
    arr, tile, *idx = args
    shape = op.attrs["shape"]
    m = _mask(B, blocks)
    _shared_sync(B, m, site, arr)
    off, inb, rows, gi = _access(B, op, site, blocks, arr, idx, shape, op.attrs["order"],
                                 "store")
    mem = arr.mem
    if mem.space == "const":
        raise errors.KernelRuntimeError("constant arrays are read-only")
    sel, offs, lanes, gi_sel = _selected(B, rows, inb, off, gi, shape)
    _shadow(B, op, site, mem, offs, lanes, gi_sel, write=True)
    mem.flat[offs] = mem.to_raw(np.asarray(tile)[rows][sel])
    _shared_sync(B, m, site, arr)


def _indexed(B, op, site, blocks, args):
    """gather/scatter: per element of the indices' shape, the array offset and whether it is
    accessed (the mask true, the index inside the array); with ``check_bounds=False`` an
    element the mask lets through outside the array is an OutOfBoundsError (undefined on the
    GPU), and so is a tile wholly outside for ``tile_view`` (load/store_advanced_indexing, as
    for load and store). Also the operands, scalars per block."""
    nidx = op.args[0].type.ndim
    shape = op.type.shape if op.op == "gather" else op.args[1].type.shape
    nd = len(shape)
    full = (B.nb,) + shape
    arr = args[0]
    A: memory.ArrayRef = arr
    origin, ashape, strides = _view(B, A, blocks, site, op)
    vals = _operands(B, op, args, blocks, site, nd)
    first = 1 if op.op == "gather" else 2
    gi = [np.broadcast_to(np.asarray(i, np.int64), full) for i in vals[first:first + nidx]]
    mask = np.broadcast_to(np.asarray(vals[first + nidx], bool), full)
    inb = np.ones(full, bool)
    off = np.broadcast_to(_bc(np.asarray(origin, np.int64), nd), full)
    for ax in range(nidx):
        inb = inb & (gi[ax] >= 0) & (gi[ax] < _bc(np.asarray(ashape[ax], np.int64), nd))
        off = off + gi[ax] * _bc(np.asarray(strides[ax], np.int64), nd)
    rows = np.arange(B.nb) if blocks is None else np.flatnonzero(blocks)
    L = B.launch
    bad = (mask & ~inb)[rows]
    what = "index out of bounds with check_bounds=False"
    if op.attrs.get("tile_view"):
        # load/store_advanced_indexing: a tile wholly outside the array is undefined
        bad = ~inb[rows] & (~inb[rows]).reshape(len(rows), -1).all(axis=1).reshape(
            (-1,) + (1,) * nd)
        what = "the tile lies entirely outside the array"
    elif op.attrs["check_bounds"]:
        bad = bad[:0]
    if L.bounds and bad.any():
        k = int(np.argmax(bad.reshape(-1)))
        size = int(np.prod(shape, dtype=np.int64))
        b, e = divmod(k, size)
        r = np.unravel_index(e, shape)
        row = rows[b]
        dims = [int(np.broadcast_to(s, (B.nb,))[row]) for s in ashape]
        checks.raise_oob(L, site, B.gtid[row * B.T + e % B.T],
                         [int(g[(row,) + r]) for g in gi], dims,
                         what=f"{what} (element {tuple(map(int, r))} of the indices; "
                              "undefined on the GPU" + ("" if op.attrs.get("tile_view") else
                                                        ": leave check_bounds on, or mask the "
                                                        "element") + ")")
    return off, mask & inb, rows, gi, shape, vals


def _gather(B, op, site, blocks, args):
    arr = args[0]
    t: TileType = op.type
    _shared_sync(B, _mask(B, blocks), site, arr)
    off, take, rows, gi, shape, vals = _indexed(B, op, site, blocks, args)
    mem = arr.mem
    sel, offs, lanes, gi_sel = _selected(B, rows, take, off, gi, shape)
    _shadow(B, op, site, mem, offs, lanes, gi_sel, write=False)
    out = np.empty((B.nb,) + shape, _dtype(t.dtype))
    out[...] = np.broadcast_to(vals[-1], out.shape)
    if op.attrs.get("tile_view") and out.dtype.kind == "f":
        out[...] = np.nan  # load_advanced_indexing's undetermined padding, as _load's
    got = out[rows]
    got[sel] = mem.to_value(mem.flat[offs])
    out[rows] = got
    _shared_sync(B, _mask(B, blocks), site, arr)
    return out


def _scatter(B, op, site, blocks, args):
    arr, tile = args[0], args[1]
    m = _mask(B, blocks)
    _shared_sync(B, m, site, arr)
    off, take, rows, gi, shape, _ = _indexed(B, op, site, blocks, args)
    mem = arr.mem
    if mem.space == "const":
        raise errors.KernelRuntimeError("constant arrays are read-only")
    sel, offs, lanes, gi_sel = _selected(B, rows, take, off, gi, shape)
    new = mem.to_raw(np.asarray(tile)[rows][sel])
    _shadow(B, op, site, mem, offs, lanes, gi_sel, write=True, new=new)
    mem.flat[offs] = new
    _shared_sync(B, m, site, arr)


def _mask(B, blocks):
    if blocks is None:
        return None
    return np.repeat(blocks, B.T)


def _atomic(B, op, site, blocks, args):
    arr, *rest = args
    t: TileType = op.type
    shape = t.shape
    nd = len(shape)
    kind = op.attrs["op"]
    nvals = 2 if kind == "cas" else 1
    idx = rest[:len(rest) - nvals]
    A: memory.ArrayRef = arr
    origin, ashape, strides = _view(B, A, blocks, site, op)
    full = (B.nb,) + shape
    vals_all = _operands(B, op, args, blocks, site, nd)[1:]
    gi = [np.broadcast_to(i, full).astype(np.int64) for i in vals_all[:len(idx)]]
    vs = [np.broadcast_to(v, full) for v in vals_all[len(idx):]]
    inb = np.ones(full, bool)
    off = np.broadcast_to(_bc(np.asarray(origin, np.int64), nd), full)
    for ax in range(len(gi)):
        inb &= (gi[ax] >= 0) & (gi[ax] < _bc(np.asarray(ashape[ax], np.int64), nd))
        off = off + gi[ax] * _bc(np.asarray(strides[ax], np.int64), nd)
    rows = np.arange(B.nb) if blocks is None else np.flatnonzero(blocks)
    if op.attrs.get("order") == "release":  # the block's accesses so far are published
        B.fence(None if blocks is None else np.repeat(blocks, B.T))
    sel, offs, lanes, gi_sel = _selected(B, rows, inb, off, gi, shape)
    mem = A.mem
    _shadow(B, op, site, mem, offs, lanes, gi_sel, write=True, atomic=True)
    v = [x[rows][sel] for x in vs]
    old = _serial_rmw(mem, kind, offs, v[0], v[1] if nvals == 2 else None)
    out = np.zeros(full, _dtype(t.dtype))
    if kind == "cas":
        out[...] = vs[0]
    o = out[rows]
    o[sel] = old
    out[rows] = o
    return out


def _serial_rmw(mem, kind: str, offs, v, extra):
    """Apply read-modify-writes one element after another (block, then element order), each
    seeing the value the earlier ones left; returns the old values."""
    n = len(offs)
    old = np.empty(n, ops.value_dtype(mem.elem))
    if not n:
        return old
    order = np.argsort(offs, kind="stable")
    so = offs[order]
    first = np.ones(n, bool)
    first[1:] = so[1:] != so[:-1]
    rank = np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))
    for r in range(int(rank.max()) + 1):
        s = order[rank == r]
        o = offs[s]
        cur = mem.to_value(mem.flat[o])
        old[s] = cur
        mem.flat[o] = mem.to_raw(memory.apply_rmw(kind, cur, v[s], None if extra is None else
                                               extra[s]))
    return old


_CONV = re.compile(r"%(?:%|([-+ #0-9.]*)(?:hh|h|ll|l|L|z|j|t)?([diouxXfFeEgG]))")


def _printf(B, op, site, blocks, args):
    """C's printf by each block's first thread; a tile argument prints as a nested list of
    its elements, each by the argument's conversion (frontend/tile_print.py)."""
    fmt = op.attrs["fmt"]
    vals = []
    for a, e in zip(args, op.args):
        if isinstance(e.type, TileType):
            vals.append(np.broadcast_to(a, (B.nb,) + e.type.shape))
        else:
            vals.append(np.broadcast_to(_per_block(B, a, blocks, site, op, "a printf argument"),
                                        (B.nb,)))
    rows = np.arange(B.nb) if blocks is None else np.flatnonzero(blocks)
    st = B.state
    for b in rows:
        it = iter(vals)

        def conv(m, b=b, it=it):
            if m.group(2) is None:
                return "%"
            spec = "%" + m.group(1) + m.group(2).replace("u", "d")
            one = (lambda x: spec % int(x)) if m.group(2) in "diouxX" else (
                lambda x: spec % float(x))
            return _nested(next(it)[b], one)
        st.prints.append((int(B.gtid[b * B.T]), st.seq, _CONV.sub(conv, fmt)))
        st.seq += 1


def _nested(x, one) -> str:
    if x.ndim == 0:
        return one(x)
    return "[" + ", ".join(_nested(y, one) for y in x) + "]"


def _from_scalars(B, op, site, blocks, args):
    """astile: the tile of the scalars ``args`` (row-major), the same in every block."""
    t = op.type
    vals = [_per_block(B, a, blocks, site, op, "an element") for a in args]
    out = np.empty((B.nb, len(vals)), _dtype(t.dtype))
    for k, v in enumerate(vals):
        out[:, k] = v
    return _round(out, t.dtype).reshape((B.nb,) + t.shape)


def _layout(B, op, site, blocks, args):
    return args[0]  # layouts are the CUDA backend's business (ir/passes.py)


OPS = {  # by the registry's names (ir/ops.py TILE_OPS)
    "layout": _layout, "load_operand": _load_operand, "full": _full, "arange": _arange,
    "binop": _binop, "unary": _unary, "from_scalars": _from_scalars, "bytes": tile_dtypes.bytes_op,
    "cast": _cast, "math": _math, "where": _where, "broadcast": _broadcast, "reshape": _reshape,
    "permute": _permute, "extract": _extract, "insert": _insert, "cat": _cat,
    "reduce": _reduce, "scan": _scan, "mma": _mma, "mma_loop": _mma_loop,
    "item": _item, "load": _load, "store": _store, "atomic": _atomic, "printf": _printf,
    "gather": _gather, "scatter": _scatter,
    # what ir/operands.py derives from a gather or a scatter, run as the one it stands for
    "gather_operand": functools.partial(derived.gather_operand, gather=_gather,
                                        per_block=_per_block),
    "scatter_fragments": functools.partial(derived.scatter_fragments, scatter=_scatter,
                                           per_block=_per_block),
}
