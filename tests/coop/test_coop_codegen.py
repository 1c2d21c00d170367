"""The C++ side of threadtile.coop without a GPU: ir/coop.py's bounds of CUB's storage hold
for a matrix of dtypes, block sizes and items per thread (static_asserts NVRTC checks), and
the kernels of the two-phase form compile for sm_80 and sm_90 (tests/kernels/coop.py's are in
tests/codegen/test_compile_all.py)."""

import numpy as np
import pytest
from conftest import compile_cubin
from test_coop_two_phase import kernel as two_phase

from threadtile.ir import coop as ircoop
from threadtile.ir import nodes as ir
from threadtile.lang.types import ArrayType, float32, float64, int8, int32, int64, uint16, void
from threadtile.runtime import nvrtc

LOC = ir.Loc("bounds.py", 1, 0, 1, "bounds")
DTYPES = (int8, uint16, int32, int64, float32, float64)
BLOCKS = (32, 33, 96, 100, 160, 512, 1000, 1024)
ITEMS = (1, 3, 8, 16)


def _call(name, t, tpb, items=0, **attrs):
    arr = ir.Var(ArrayType(t, 1, "C", "local"), LOC, "a")
    args = [arr, arr] if name in ("coop.block.scan", "coop.block.exchange") and items else \
        [arr] if items else [ir.Var(t, LOC, "v")]
    if name in ("coop.block.load", "coop.block.store"):
        args = [ir.Var(ArrayType(t, 1, "C"), LOC, "g"), arr]
    return ir.Call(t if not items else void, LOC, name, args,
                   {"block": (tpb, 1, 1), "items": items, **attrs})


def _asserts() -> list[str]:
    out = []
    for t in DTYPES:
        c = t.cname
        for n in BLOCKS:
            b = ircoop.scratch_bytes(_call("coop.block.reduce", t, n, op="sum"))
            out.append(f"static_assert(sizeof(cub::BlockReduce<{c}, {n}>::TempStorage) + "
                       f"sizeof({c}) <= {b}, \"reduce {c} {n}\");")
            b = ircoop.scratch_bytes(_call("coop.block.scan", t, n, op="sum", inclusive=True))
            out.append(f"static_assert(sizeof(cub::BlockScan<{c}, {n}>::TempStorage) <= {b}, "
                       f"\"scan {c} {n}\");")
            for i in ITEMS:
                if n * i > 8192:
                    continue
                b = ircoop.scratch_bytes(_call("coop.block.radix_sort", t, n, i,
                                               descending=False, values=False))
                out.append(f"static_assert(sizeof(cub::BlockRadixSort<{c}, {n}, {i}>::"
                           f"TempStorage) <= {b}, \"radix {c} {n} {i}\");")
                b = ircoop.scratch_bytes(_call("coop.block.exchange", t, n, i,
                                               kind="striped_to_blocked"))
                out.append(f"static_assert(sizeof(cub::BlockExchange<{c}, {n}, {i}>::"
                           f"TempStorage) <= {b}, \"exchange {c} {n} {i}\");")
                pairs = _call("coop.block.radix_sort", t, n, i, descending=False, values=True)
                pairs.args.append(ir.Var(ArrayType(float64, 1, "C", "local"), LOC, "v"))
                b = ircoop.scratch_bytes(pairs)
                out.append(f"static_assert(sizeof(cub::BlockRadixSort<{c}, {n}, {i}, double>::"
                           f"TempStorage) <= {b}, \"pairs {c} {n} {i}\");")
                if n & (n - 1):
                    continue  # CUB's merge sort takes blocks of a power of two
                for w in (32, 8):
                    ws = _call("coop.warp.merge_sort", t, n, i, warp=w, op="x")
                    out.append(f"static_assert(sizeof(cub::WarpMergeSort<{c}, {i}, {w}>::"
                               f"TempStorage) * {n // w} <= {ircoop.scratch_bytes(ws)}, "
                               f"\"warp merge {c} {n} {i} {w}\");")
                b = ircoop.scratch_bytes(_call("coop.block.merge_sort", t, n, i, op="x"))
                out.append(f"static_assert(sizeof(cub::BlockMergeSort<{c}, {n}, {i}>::"
                           f"TempStorage) <= {b}, \"merge {c} {n} {i}\");")
    return out


def test_storage_bounds_hold():
    src = "\n".join(['#include "threadtile.h"', '#include "coop/scan.h"',
                     '#include "coop/sort.h"', '#include "coop/memory.h"', *_asserts()])
    nvrtc.compile_ptx(src, "sm_90")  # a failed assert names the configuration


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_two_phase_compiles(arch):
    a = np.zeros(128, np.int32)
    cubin = compile_cubin(two_phase, a, np.zeros((3, 128), np.int32), a.view(np.uint32),
                          a.view(np.uint32), np.zeros(512), np.zeros(1), arch=arch)
    assert cubin[:4] == b"\x7fELF"


def test_block_primitives_bound_the_launch():
    """A kernel calling block-wide primitives runs with their block only: it is compiled with
    ``__launch_bounds__`` of that many threads, so its registers fit a block of 1024 (82 per
    thread without the bound left room for 640 threads on the H200)."""
    from kernels import coop as kc

    x = np.zeros(1024 * 3, np.uint64)
    out = np.zeros((5, 1024 * 3), np.uint64)
    for tpb in (96, 1024):
        src = kc.affine_scans.cuda_source(x, out, tpb=tpb, n=3)
        assert f"__launch_bounds__({tpb}) affine_scans(" in src
