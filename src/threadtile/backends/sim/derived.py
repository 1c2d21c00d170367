"""The simulator's side of the operations the compiler derives from gathers and scatters
(ir/operands.py): each runs as the gather or scatter it stands for, with the same checks at
the same line. (tiles.py's table names them and passes its own gather, scatter and per-block
helper in: ``functools.partial``.)"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...lang.types import TileType, bool_, int64


def _first_column(B, op, site, blocks, col0, n: int, per_block):
    """The columns col0 + c of each block, shaped (blocks, 1, n)."""
    c = np.asarray(per_block(B, col0, blocks, site, op, "the first column"), np.int64)
    if c.ndim == 1:
        c = c.reshape(-1, 1, 1)
    return c + np.arange(n, dtype=np.int64)


def gather_operand(B, op, site, blocks, args, *, gather, per_block):
    # the gather it stands for (ir/operands.py): rows[r] and col0 + c at element (r, c)
    arr, rows, col0, pad = args
    t: TileType = op.type
    m, n = t.shape
    r = np.asarray(rows).reshape(B.nb, m, 1).astype(np.int64)
    c = _first_column(B, op, site, blocks, col0, n, per_block)
    full = (B.nb, m, n)
    idx = TileType(int64, (m, n))
    as_gather = ir.TileOp(TileType(t.dtype, t.shape), op.loc, "gather",
                          [op.args[0], ir.Var(idx, op.loc, "_rows"),
                           ir.Var(idx, op.loc, "_cols"), ir.Const(bool_, op.loc, True),
                           op.args[3]],
                          {"check_bounds": op.attrs["check_bounds"]})
    return gather(B, as_gather, site, blocks, [arr, np.broadcast_to(r, full),
                                               np.broadcast_to(c, full), True, pad])


def scatter_fragments(B, op, site, blocks, args, *, scatter, per_block):
    # the scatter it stands for (ir/operands.py): element (r, c) to rows[r], col0 + c
    arr, tile, rows, col0 = args
    m, n = op.args[1].type.shape
    r = np.asarray(rows).reshape(B.nb, m, 1).astype(np.int64)
    c = _first_column(B, op, site, blocks, col0, n, per_block)
    full = (B.nb, m, n)
    idx = TileType(int64, (m, n))
    value = TileType(op.args[1].type.dtype, (m, n))
    as_scatter = ir.TileOp(op.type, op.loc, "scatter",
                           [op.args[0], ir.Var(value, op.loc, "_value"),
                            ir.Var(idx, op.loc, "_rows"), ir.Var(idx, op.loc, "_cols"),
                            ir.Const(bool_, op.loc, True)],
                           {"check_bounds": op.attrs["check_bounds"]})
    return scatter(B, as_scatter, site, blocks, [arr, tile, np.broadcast_to(r, full),
                                                 np.broadcast_to(c, full), True])
