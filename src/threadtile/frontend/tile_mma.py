"""``mma`` and ``matmul`` of tiles that are not both 2-d: a 1-d operand is a row (x) or a
column (y) vector, a 3-d one a batch of matrices (broadcast against a 2-d operand). Each batch
entry is one 2-d mma (tiles.mma) of the entries extracted from the operands, inserted into the
accumulator: cuTile's semantics, not yet a batched tensor-core loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import TileType, int64
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer


def _const(lw: Lowerer, node, v: int) -> ir.Expr:
    return ir.Const(int64, lw.loc(node), v)


def _entry(lw: Lowerer, x: ir.Expr, b: int, node) -> ir.Expr:
    """Batch entry ``b`` of 3-d tile ``x`` as a 2-d tile (a 2-d ``x`` as it is)."""
    from .tiles import reshape, tile_op  # noqa: PLC0415  (tiles imports this module)
    if x.type.ndim == 2:
        return x
    _, r, c = x.type.shape
    e = tile_op(lw, node, TileType(x.type.dtype, (1, r, c)), "extract",
                [x, _const(lw, node, b), _const(lw, node, 0), _const(lw, node, 0)])
    return reshape(lw, e, Tup([_const(lw, node, r), _const(lw, node, c)]), node)


def mma_batched(lw: Lowerer, x: ir.Expr, y: ir.Expr, acc: ir.Expr, node) -> ir.Expr:
    """``acc + x @ y`` for 3-d ``acc`` and 2-d or 3-d ``x`` and ``y``, entry by entry."""
    from .tiles import mma, reshape, tile_op  # noqa: PLC0415
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
    from .tiles import reshape  # noqa: PLC0415
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
