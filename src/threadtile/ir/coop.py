"""The block- and warp-wide primitives of ``threadtile.coop`` (cuda.coop's names, CUB's
algorithms) as facts, written once for the frontend, both backends and the resource check.

Each primitive is an ``ir.Call`` named ``coop.block.*`` or ``coop.warp.*`` whose ``attrs``
hold its compile-time parameters:

- ``block``: the block shape ``(x, y, z)`` CUB's class is specialized for (its
  ``BLOCK_DIM_X/Y/Z`` template arguments; cuda.coop's ``threads_per_block``). A launch with
  another block is refused before it runs (``required_block``);
- ``items``: items per thread, 0 for a scalar operand (else the length of the local arrays);
- ``op``: ``"sum"``, ``"min"``, ``"max"`` or an ``ir.Function`` (the user's operator, a
  device function of two operands of the dtype);
- the primitive's own: ``inclusive``, ``descending``, ``algorithm``, ``warp`` (threads in a
  logical warp), ``valid`` / ``oob`` (whether those operands are present).

CUB keeps each primitive's ``TempStorage`` in shared memory. Its size is CUB's business, so
``scratch_bytes`` is an upper bound measured against CUB's (the generated C++
``static_assert``s that CUB's size fits it: a CUB whose storage grew fails to compile, never
overruns silently). One CUB class (same dtype, block and items) has one storage however many
calls use it (``backends/cuda/include/coop/`` declares it in an accessor templated on the
class, which starts with a barrier), so the kernel's total counts each class once
(``instantiation``).
"""

from __future__ import annotations

import linecache

from ..errors import KernelCompileError
from ..lang.types import (
    Scalar,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from . import nodes as ir

BLOCK_OPS = ("coop.block.reduce", "coop.block.scan", "coop.block.radix_sort",
             "coop.block.load", "coop.block.store", "coop.block.exchange",
             "coop.block.merge_sort")
WARP_OPS = ("coop.warp.reduce", "coop.warp.scan", "coop.warp.merge_sort")
NAMES = BLOCK_OPS + WARP_OPS

# the dtypes the primitives take (CUB's arithmetic and radix traits; no half types yet)
DTYPES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64)

LOAD_ALGORITHMS = ("direct", "striped", "vectorize", "transpose")
EXCHANGES = ("striped_to_blocked", "blocked_to_striped")
BUILTIN_OPS = ("sum", "min", "max")


def is_coop(e: ir.Expr) -> bool:
    return isinstance(e, ir.Call) and e.name.startswith("coop.")


def dtype_of(call: ir.Call) -> Scalar:
    """The element type a primitive works on: its value's, or its arrays' (the first array
    operand past a load's or store's global array)."""
    k = 1 if call.name in ("coop.block.load", "coop.block.store") else 0
    t = call.args[k].type
    return t.dtype if hasattr(t, "dtype") else t


def threads(call: ir.Call) -> int:
    x, y, z = call.attrs["block"]
    return x * y * z


def _exchange_bytes(n_items: int, size: int) -> int:
    # CUB pads one element per 32 when the items per thread make bank conflicts
    return (n_items + n_items // 32 + 1) * size + 16


def scratch_bytes(call: ir.Call) -> int:
    """An upper bound of the shared memory one instantiation of ``call`` takes: CUB's
    ``TempStorage`` and the helper's own (a reduction's broadcast slot)."""
    name = call.name
    s = dtype_of(call).itemsize
    if name.startswith("coop.warp."):
        if name == "coop.warp.merge_sort":
            w, i = call.attrs["warp"], call.attrs["items"]
            return (threads(call) // w) * ((w * i + 1) * s + 8) + 16
        return 16  # shuffles: CUB's storage is an empty struct
    n = threads(call)
    warps = -(-n // 32)
    items = max(call.attrs.get("items", 0), 1)
    if name == "coop.block.reduce":
        return warps * s + 48 + 16
    # (a block of whole warps scans with warp scans; one with a partial warp rakes, in more
    # storage: the bounds below were measured against CUB for 32 to 1024 threads,
    # tests/coop/test_coop_codegen.py)
    whole = n % 32 == 0
    if name == "coop.block.scan":
        units = warps * 33 + 48 if whole else max(warps * 33 + 48, 3 * n // 2 + 48)
        return units * s + 64
    if name == "coop.block.radix_sort":
        vs = call.args[1].type.dtype.itemsize if call.attrs["values"] else 0
        # the digit counters of 4-bit digits and their scan
        rank = 36 * n + 8 * warps + 64 if whole else 41 * n + 8 * warps + 256
        return max(rank, _exchange_bytes(n * items, s), _exchange_bytes(n * items, vs))
    if name == "coop.block.merge_sort":
        vs = call.args[1].type.dtype.itemsize if len(call.args) > 1 else 0
        return (n * items + 1) * max(s, vs) + 16
    if name in ("coop.block.load", "coop.block.store"):
        return _exchange_bytes(n * items, s) if call.attrs["algorithm"] == "transpose" else 0
    if name == "coop.block.exchange":
        return _exchange_bytes(n * items, s)
    raise KeyError(name)


def instantiation(call: ir.Call) -> tuple:
    """The storage ``call`` uses: one per CUB class (dtype, block, items, values' dtype),
    whatever the operator or the form of the call (include/coop/ declares it in an accessor
    templated on the class)."""
    name = call.name.rsplit(".", 1)[1]
    a = call.attrs
    t = dtype_of(call).name
    if call.name.startswith("coop.warp."):
        return ("warp", name, t, a["warp"], a.get("items", 0), a.get("block"))
    if name in ("reduce", "scan"):
        return (name, t, a["block"])
    if name in ("radix_sort", "merge_sort"):
        vals = call.args[1].type.dtype.name if (a.get("values") if name == "radix_sort"
                                                else len(call.args) > 1) else None
        return (name, t, vals, a["block"], a["items"])
    return ("exchange", t, a["block"], a["items"])  # load/store (transposed) and exchange


def called(call: ir.Call) -> str:
    """The primitive as the kernel named it: ``coop.block.sum()``."""
    return f"coop.{call.attrs.get('called', call.name[5:])}()"


def calls(module: ir.Module) -> list[ir.Call]:
    return [e for e in ir.walk_module_exprs(module) if is_coop(e)]


def scratch_of(cs) -> list[tuple[ir.Call, int]]:
    """(a call, bytes) for each storage the calls ``cs`` use: the first call needing the
    most (a direct load needs none of the exchange storage a transposed one shares)."""
    seen: dict[tuple, tuple[ir.Call, int]] = {}
    for c in cs:
        key, n = instantiation(c), scratch_bytes(c)
        if key not in seen or n > seen[key][1]:
            seen[key] = (c, n)
    return [v for v in seen.values() if v[1]]


def module_scratch(module: ir.Module) -> list[tuple[ir.Call, int]]:
    """(a call, bytes) for each storage of the primitives of ``module``."""
    return scratch_of(calls(module))


def required_block(module: ir.Module) -> tuple[int, int, int] | None:
    """The block shape the kernel's block-wide primitives are specialized for (None: it has
    none); two that disagree are a compile error at the second."""
    want: ir.Call | None = None
    for c in calls(module):
        if "block" not in c.attrs:
            continue
        if want is None:
            want = c
        elif c.attrs["block"] != want.attrs["block"]:
            raise KernelCompileError(
                f"{called(c)} is specialized for blocks of {c.attrs['block']} threads, and "
                f"the {called(want)} at line {want.loc.line} for {want.attrs['block']}: a "
                "kernel runs with one block shape", loc=c.loc,
                source_line=linecache.getline(c.loc.filename, c.loc.line) or None,
                hint="pass the same threads_per_block to every primitive (a global constant)")
    return None if want is None else tuple(want.attrs["block"])


def block_mismatch(kernel_name: str, want: tuple, block: tuple) -> str | None:
    """The message refusing a launch of ``block`` for a kernel whose primitives are
    specialized for ``want`` (None when they agree)."""
    if tuple(int(b) for b in block) == tuple(want):
        return None
    spelled = want[0] if want[1:] == (1, 1) else want
    return (f"{kernel_name} calls threadtile.coop primitives specialized for "
            f"threads_per_block={spelled}; launched with block {tuple(int(b) for b in block)}"
            " (CUB's block primitives are compiled for one block shape)")
