"""Every operation of a module against its entry in the registry (ir/ops.py): known name,
operand count, attributes, typing rule. The pass pipeline ends with it, so that a frontend or
pass bug is a clear compiler error naming the operation and its line, not wrong C++ or a crash
in the simulator."""

from __future__ import annotations

from ..errors import KernelCompileError
from . import nodes as ir
from .ops import check


def verify(module: ir.Module) -> None:
    """Raise KernelCompileError at the first operation that breaks its rule."""
    for e in ir.walk_module_exprs(module):
        if isinstance(e, (ir.Call, ir.TileOp)):
            bad = check(e)
            if bad is not None:
                name = e.op if isinstance(e, ir.TileOp) else e.name
                raise KernelCompileError(
                    f"internal error: the IR's {name} operation is ill-typed: {bad}", loc=e.loc,
                    hint="this is a threadtile bug; please report it with the kernel")
