"""Probe (print-only, GPU): threadtile.compute's onesweep and scan policies against others,
in interleaved rounds (median of 3), at 2^26 and 2^28 items: uint32 and float32 keys against
CuPy's CUB sort, the float32 sum scan against a copy. What docs/algorithms.md's "Tuning" table
came from (H200, session 18).

    python bench/compute_tuning_probe.py
"""

from __future__ import annotations

import statistics

import cupy as cp
import torch
from _common import cuda_time_ms

import threadtile.compute as tc
from threadtile.compute import cxx, device
from threadtile.runtime.devicearray import as_cuda_array

SORTS = [(384, 20), (384, 19), (512, 20), (512, 22), (256, 20)]  # (threads, items); CUB: 384 x 20
SCANS = [(128, 24), (128, 32), (128, 40), (256, 32), (64, 48)]
_ITEMS, _THREADS, _KEYS4 = cxx.onesweep_items, cxx.ONESWEEP_THREADS, cxx.ONESWEEP_KEYS4
_SCAN = dict(cxx.SCAN_TUNED)
UP = tc.SortOrder.ASCENDING


def set_sort(threads: int, items: int) -> None:
    """Every onesweep at ``threads`` x ``items``."""
    cxx.ONESWEEP_THREADS, cxx.ONESWEEP_KEYS4 = threads, (threads, items)
    cxx.onesweep_items = lambda *_a: items
    device._PROGRAMS.clear()


def restore_sort() -> None:
    cxx.onesweep_items, cxx.ONESWEEP_THREADS, cxx.ONESWEEP_KEYS4 = _ITEMS, _THREADS, _KEYS4
    device._PROGRAMS.clear()


def set_scan(threads: int, items: int) -> None:
    cxx.SCAN_TUNED[4] = (threads, items) + _SCAN[4][2:]
    device._PROGRAMS.clear()


def main() -> None:
    for e in (26, 28):
        n = 1 << e
        g = torch.Generator(device="cuda").manual_seed(e)
        ku = torch.randint(0, 2**31 - 1, (n,), device="cuda", generator=g, dtype=torch.int32)
        ku32 = cp.asarray(ku).view(cp.uint32)
        kin, kout = as_cuda_array(ku32), as_cuda_array(cp.empty_like(ku32))
        kf = torch.randn(n, device="cuda", generator=g)
        kfo = torch.empty_like(kf)
        work = ku32.copy()
        x = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        copy = cuda_time_ms(lambda: out.copy_(x))  # noqa: B023
        cub, su, sf, sc = [], {c: [] for c in SORTS}, {c: [] for c in SORTS}, {c: [] for c in SCANS}
        for _ in range(3):
            both = cuda_time_ms(lambda: work.__setitem__(Ellipsis, ku32) or work.sort())  # noqa: B023
            cub.append(both - cuda_time_ms(lambda: work.__setitem__(Ellipsis, ku32)))  # noqa: B023
            for c in SORTS:
                set_sort(*c)
                su[c].append(cuda_time_ms(lambda: tc.radix_sort(kin, kout, None, None, UP)))  # noqa: B023
                sf[c].append(cuda_time_ms(lambda: tc.radix_sort(kf, kfo, None, None, UP)))  # noqa: B023
            restore_sort()
            for c in SCANS:
                set_scan(*c)
                sc[c].append(cuda_time_ms(
                    lambda: tc.inclusive_scan(x, out, tc.OpKind.PLUS, None, n)))  # noqa: B023
            set_scan(*_SCAN[4][:2])
        cm = statistics.median(cub)
        print(f"2^{e}: CUB uint32 sort {cm:.3f} ms; copy {copy:.3f} ms", flush=True)
        for c in SORTS:
            m = statistics.median(su[c])
            print(f"  onesweep {c}: uint32 {m:.3f} ms ({cm / m:.3f} of CUB), "
                  f"float32 {statistics.median(sf[c]):.3f} ms", flush=True)
        for c in SCANS:
            m = statistics.median(sc[c])
            print(f"  scan {c}: {m:.3f} ms ({copy / m:.3f} of a copy)", flush=True)


if __name__ == "__main__":
    main()
