"""Probe (print-only, GPU): the host time of threadtile.compute calls on torch tensors (100 in
a row, then the same queued), their event times behind a short and a long spin, and a cProfile
of reduce_into: what showed a call's 150 us of host work (session 18, H200).
"""

from __future__ import annotations

import cProfile
import pstats
import time

import _common
import numpy as np
import torch

import threadtile.compute as tc


def main() -> None:
    n = 1 << 26
    x = torch.rand(n, device="cuda")
    one, out = torch.empty(1, device="cuda"), torch.empty_like(x)
    z = np.zeros(1, np.float32)
    hist = torch.empty(256, device="cuda", dtype=torch.int32)
    calls = {
        "reduce": lambda: tc.reduce_into(x, one, tc.OpKind.PLUS, n, z),
        "scan": lambda: tc.inclusive_scan(x, out, tc.OpKind.PLUS, None, n),
        "histogram": lambda: tc.histogram_even(x, hist, 257, 0.0, 1.0, n),
        "torch.sum": lambda: torch.sum(x),
    }
    for name, fn in calls.items():
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(100):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        _common.SPIN_CYCLES = 200_000
        short = _common.cuda_time_ms(fn)
        _common.SPIN_CYCLES = 2_000_000
        long = _common.cuda_time_ms(fn)
        print(f"{name:10s} host {1e6 * (t1 - t0) / 100:7.1f} us a call (queued: "
              f"{1e6 * (t2 - t0) / 100:7.1f}); events {short:.4f} ms (short spin), "
              f"{long:.4f} ms (long spin)", flush=True)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(200):
        calls["reduce"]()
    pr.disable()
    torch.cuda.synchronize()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
