"""The simulator's side of the operations the compiler derives from gathers and scatters
(ir/operands.py): each runs as the gather or scatter it stands for, with the same checks at
the same line. (tiles.py's table names them and passes its own gather, scatter and per-block
helper in: ``functools.partial``.)"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...lang.types import TileType, bool_, int64


def _indices(B, op, site, blocks, rows, col0, m: int, n: int, per_block):
    """The index tiles the operation stands for, (blocks, m, n) each: rows[r] and col0 + c at
    element (r, c), and their type."""
    r = np.asarray(rows).reshape(B.nb, m, 1).astype(np.int64)
    c = np.asarray(per_block(B, col0, blocks, site, op, "the first column"), np.int64)
    if c.ndim == 1:
        c = c.reshape(-1, 1, 1)
    c = c + np.arange(n, dtype=np.int64)
    full = (B.nb, m, n)
    return np.broadcast_to(r, full), np.broadcast_to(c, full), TileType(int64, (m, n))


def gather_operand(B, op, site, blocks, args, *, gather, per_block):
    # the gather it stands for (ir/operands.py): rows[r] and col0 + c at element (r, c)
    arr, rows, col0, pad = args
    t: TileType = op.type
    r, c, idx = _indices(B, op, site, blocks, rows, col0, *t.shape, per_block)
    as_gather = ir.TileOp(TileType(t.dtype, t.shape), op.loc, "gather",
                          [op.args[0], ir.Var(idx, op.loc, "_rows"),
                           ir.Var(idx, op.loc, "_cols"), ir.Const(bool_, op.loc, True),
                           op.args[3]],
                          {"check_bounds": op.attrs["check_bounds"]})
    return gather(B, as_gather, site, blocks, [arr, r, c, True, pad])


def scatter_fragments(B, op, site, blocks, args, *, scatter, per_block):
    # the scatter it stands for (ir/operands.py): element (r, c) to rows[r], col0 + c
    arr, tile, rows, col0 = args
    r, c, idx = _indices(B, op, site, blocks, rows, col0, *op.args[1].type.shape, per_block)
    value = TileType(op.args[1].type.dtype, idx.shape)
    as_scatter = ir.TileOp(op.type, op.loc, "scatter",
                           [op.args[0], ir.Var(value, op.loc, "_value"),
                            ir.Var(idx, op.loc, "_rows"), ir.Var(idx, op.loc, "_cols"),
                            ir.Const(bool_, op.loc, True)],
                           {"check_bounds": op.attrs["check_bounds"]})
    return scatter(B, as_scatter, site, blocks, [arr, tile, r, c, True])
