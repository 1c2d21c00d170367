"""The simulator's side of the operations the compiler derives from gathers and scatters
(ir/operands.py): each runs as the gather or scatter it stands for, with the same checks at
the same line. (tiles.py's table names them; the helpers are tiles.py's, imported when run.)"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...lang.types import TileType, bool_, int64


def gather_operand(B, op, site, blocks, args):
    from .tiles import _bc, _gather, _per_block

    # the gather it stands for (ir/operands.py): rows[r] and col0 + c at element (r, c)
    arr, rows, col0, pad = args
    t: TileType = op.type
    m, n = t.shape
    r = np.asarray(rows).reshape(B.nb, m, 1).astype(np.int64)
    c = _bc(_per_block(B, col0, blocks, site, op, "the first column"), 2)
    c = np.asarray(c, np.int64) + np.arange(n, dtype=np.int64)
    full = (B.nb, m, n)
    idx = TileType(int64, (m, n))
    gather = ir.TileOp(TileType(t.dtype, t.shape), op.loc, "gather",
                       [op.args[0], ir.Var(idx, op.loc, "_rows"), ir.Var(idx, op.loc, "_cols"),
                        ir.Const(bool_, op.loc, True), op.args[3]],
                       {"check_bounds": op.attrs["check_bounds"]})
    return _gather(B, gather, site, blocks, [arr, np.broadcast_to(r, full),
                                             np.broadcast_to(c, full), True, pad])


def scatter_fragments(B, op, site, blocks, args):
    from .tiles import _bc, _per_block, _scatter

    # the scatter it stands for (ir/operands.py): element (r, c) to rows[r], col0 + c
    arr, tile, rows, col0 = args
    m, n = op.args[1].type.shape
    r = np.asarray(rows).reshape(B.nb, m, 1).astype(np.int64)
    c = _bc(_per_block(B, col0, blocks, site, op, "the first column"), 2)
    c = np.asarray(c, np.int64) + np.arange(n, dtype=np.int64)
    full = (B.nb, m, n)
    idx = TileType(int64, (m, n))
    value = TileType(op.args[1].type.dtype, (m, n))
    scatter = ir.TileOp(op.type, op.loc, "scatter",
                        [op.args[0], ir.Var(value, op.loc, "_value"),
                         ir.Var(idx, op.loc, "_rows"), ir.Var(idx, op.loc, "_cols"),
                         ir.Const(bool_, op.loc, True)],
                        {"check_bounds": op.attrs["check_bounds"]})
    return _scatter(B, scatter, site, blocks, [arr, tile, np.broadcast_to(r, full),
                                               np.broadcast_to(c, full), True])
