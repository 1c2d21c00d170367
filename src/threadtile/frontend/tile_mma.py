"""``mma`` and ``matmul`` of tiles that are not both 2-d: a 1-d operand is a row (x) or a
column (y) vector, a 3-d one a batch of matrices (broadcast against a 2-d operand). Each batch
entry is one 2-d mma (tiles.mma) of the entries extracted from the operands, inserted into the
accumulator: cuTile's semantics, not yet a batched tensor-core loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import TileType, float16, float32, int16, int32, int64, tfloat32
from .tiles import cast, full_like, is_tile, promote, reshape, tile_op
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer


def _const(lw: Lowerer, node, v: int) -> ir.Expr:
    return ir.Const(int64, lw.loc(node), v)


def _entry(lw: Lowerer, x: ir.Expr, b: int, node) -> ir.Expr:
    """Batch entry ``b`` of 3-d tile ``x`` as a 2-d tile (a 2-d ``x`` as it is)."""
    if x.type.ndim == 2:
        return x
    _, r, c = x.type.shape
    e = tile_op(lw, node, TileType(x.type.dtype, (1, r, c)), "extract",
                [x, _const(lw, node, b), _const(lw, node, 0), _const(lw, node, 0)])
    return reshape(lw, e, Tup([_const(lw, node, r), _const(lw, node, c)]), node)


def mma_batched(lw: Lowerer, x: ir.Expr, y: ir.Expr, acc: ir.Expr, node) -> ir.Expr:
    """``acc + x @ y`` for 3-d ``acc`` and 2-d or 3-d ``x`` and ``y``, entry by entry."""
    nb = acc.type.shape[0]
    for v, what in ((x, "x"), (y, "y")):
        if v.type.ndim == 3 and v.type.shape[0] not in (1, nb):
            raise lw.error(node, f"mma(): the batch of {what}, {v.type.shape[0]}, does not "
                                 f"match the accumulator's {nb}", cls=TileCodeTypeError)
    out = acc
    m, n = acc.type.shape[1:]
    for b in range(nb):
        xb = _entry(lw, x, b if x.type.ndim == 3 and x.type.shape[0] > 1 else 0, node)
        yb = _entry(lw, y, b if y.type.ndim == 3 and y.type.shape[0] > 1 else 0, node)
        r = mma(lw, xb, yb, _entry(lw, acc, b, node), node)
        r3 = reshape(lw, r, Tup([_const(lw, node, 1), _const(lw, node, m),
                                 _const(lw, node, n)]), node)
        out = tile_op(lw, node, out.type, "insert", [out, r3, _const(lw, node, b),
                                                     _const(lw, node, 0), _const(lw, node, 0)])
    return out


def as_matrices(lw: Lowerer, x: ir.Expr, y: ir.Expr, node) -> tuple:
    """(x, y, the result's shape) for matmul: 1-d operands made 2-d (a row, a column), the
    result's shape without the axes they add; at most 3-d operands."""
    for v in (x, y):
        if v.type.ndim > 3 or v.type.ndim == 0:
            raise lw.error(node, f"matmul of a {v.type.ndim}-d tile is not supported",
                           "operands are 1-d, 2-d or 3-d (a batch of matrices)",
                           cls=TileCodeTypeError)
    xs, ys = x.type.shape, y.type.shape
    if x.type.ndim == 1:
        x = reshape(lw, x, Tup([_const(lw, node, 1), _const(lw, node, xs[0])]), node)
    if y.type.ndim == 1:
        y = reshape(lw, y, Tup([_const(lw, node, ys[0]), _const(lw, node, 1)]), node)
    batch = max(x.type.shape[0] if x.type.ndim == 3 else 1,
                y.type.shape[0] if y.type.ndim == 3 else 1)
    nd3 = x.type.ndim == 3 or y.type.ndim == 3
    m, n = x.type.shape[-2], y.type.shape[-1]
    full = ((batch,) if nd3 else ()) + (m, n)
    out = ((batch,) if nd3 else ()) + (() if len(xs) == 1 else (m,)) + \
        (() if len(ys) == 1 else (n,))
    return x, y, full, out


_MMA_ACC = {"float16": ("float16", "float32"), "bfloat16": ("float32",),
            "tfloat32": ("float32",), "float32": ("float32",), "float64": ("float64",),
            "int8": ("int32",), "uint8": ("int32",), "float8_e4m3fn": ("float16", "float32"),
            "float8_e5m2": ("float16", "float32")}
# matmul's implicit promotions (other mixes are errors, as in cuTile)
_MATMUL_PROMOTES = frozenset({"float16", "bfloat16", "float32", "float64"})


def mma(lw: Lowerer, x, y, acc, node) -> ir.Expr:
    for v, what in ((x, "x"), (y, "y"), (acc, "acc")):
        if not is_tile(v):
            raise lw.error(node, f"mma(): {what} must be a tile")
    if acc.type.ndim == 3 and x.type.ndim in (2, 3) and y.type.ndim in (2, 3):
        return mma_batched(lw, x, y, acc, node)
    for v in (x, y, acc):
        if v.type.ndim != 2:
            raise lw.error(node, f"mma() of a {v.type.ndim}-d tile: operands are 2-d "
                                 "matrices, or 3-d batches of them with a 3-d accumulator",
                           cls=TileCodeTypeError)
    (m, k), (k2, n) = x.type.shape, y.type.shape
    if k != k2 or acc.type.shape != (m, n):
        raise lw.error(node, f"mma(): shapes {x.type.shape} @ {y.type.shape} + "
                             f"{acc.type.shape} do not match", cls=TileCodeTypeError)
    mixed = {x.type.dtype.name, y.type.dtype.name} == {"int8", "uint8"}
    if x.type.dtype != y.type.dtype and not mixed:
        raise lw.error(node, f"mma(): x and y must have the same dtype, got {x.type.dtype} "
                             f"and {y.type.dtype}",
                       "convert one with .astype(); mma does not promote",
                       cls=TileCodeTypeError)
    ok = _MMA_ACC.get(x.type.dtype.name, ())
    if not ok:
        raise lw.error(node, f"mma(): Unsupported input dtype {x.type.dtype}",
                       f"mma takes {', '.join(_MMA_ACC)}", cls=TileCodeTypeError)
    if acc.type.dtype.name not in ok:
        raise lw.error(node, f"mma(): Unsupported acc dtype {acc.type.dtype} for "
                             f"{x.type.dtype} inputs",
                       f"supported accumulators for {x.type.dtype}: {', '.join(ok)}",
                       cls=TileCodeTypeError)
    if mixed:  # int8 @ uint8 (cuTile takes the mix): both are int16s exactly
        x, y = cast(lw, x, int16, node), cast(lw, y, int16, node)
    elif x.type.dtype.name.startswith("float8"):
        # every 8-bit float is a float16 exactly: the float16 mma (exact products, summed
        # in the accumulator's type) is the 8-bit one
        x, y = cast(lw, x, float16, node), cast(lw, y, float16, node)
    return tile_op(lw, node, acc.type, "mma", [x, y, acc])


def matmul(lw: Lowerer, x, y, node) -> ir.Expr:
    if not (is_tile(x) and is_tile(y)):
        raise lw.error(node, "@ multiplies two tiles")
    x, y, shape, out_shape = as_matrices(lw, x, y, node)
    xt, yt = x.type.dtype, y.type.dtype
    if xt != yt and not (xt.name in _MATMUL_PROMOTES and yt.name in _MATMUL_PROMOTES and
                         {xt.name, yt.name} != {"float16", "bfloat16"}):
        raise lw.error(node, f"matmul: Implicit promotion of {xt} and {yt} is not supported",
                       "convert one operand with .astype()", cls=TileCodeTypeError)
    t = xt if xt == yt else promote(xt, yt)
    x, y = cast(lw, x, t, node), cast(lw, y, t, node)
    acc_t = {"float16": float32, "bfloat16": float32, "tfloat32": float32, "int8": int32,
             "uint8": int32, "float8_e4m3fn": float32, "float8_e5m2": float32}.get(t.name, t)
    if t.name not in _MMA_ACC:
        raise lw.error(node, f"matmul: Unsupported input dtype {t}",
                       f"matmul takes {', '.join(_MMA_ACC)}", cls=TileCodeTypeError)
    acc = full_like(lw, shape, 0, acc_t, node)
    r = mma(lw, x, y, acc, node)
    out_t = float32 if t == tfloat32 else t
    r = cast(lw, r, out_t, node)
    if out_shape != shape:
        r = reshape(lw, r, Tup([ir.Const(int64, lw.loc(node), d) for d in out_shape]), node)
    return r
