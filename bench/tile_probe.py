"""A first look at tile-kernel speed on a GPU (prints; writes no results file): the tile
matmul of tests/kernels/tiles.py against torch (cuBLAS) and the row softmax against torch and
a device-to-device copy. The baseline for the performance work of issue 4; the proper
benchmarks (bench/*.py with JSON results) come with that work.

    PYTHONPATH=src python3 bench/tile_probe.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from kernels import tiles  # noqa: E402


def timed(fn, reps: int = 10) -> float:
    """Median milliseconds of ``fn`` after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def matmul(n: int, dtype, tm: int, tn: int, tk: int) -> None:
    a = torch.randn(n, n, device="cuda").to(dtype)
    b = torch.randn(n, n, device="cuda").to(dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    grid = (n // tm, n // tn)
    ours = timed(lambda: tiles.matmul[grid](a, b, c, tm, tn, tk))
    ref = timed(lambda: a @ b)
    tflops = 2 * n ** 3 / 1e9
    print(f"matmul {n}^3 {dtype} tiles {tm}x{tn}x{tk}: threadtile {tflops / ours:.1f} TFLOP/s, "
          f"torch {tflops / ref:.1f} TFLOP/s, ratio {ref / ours:.3f}")


def softmax(rows: int, n: int, dtype) -> None:
    x = torch.randn(rows, n, device="cuda").to(dtype)
    y = torch.empty_like(x)
    ours = timed(lambda: tiles.softmax_rows[rows](x, y, n))
    ref = timed(lambda: torch.softmax(x, dim=1))
    cp = timed(lambda: y.copy_(x))
    gb = 2 * x.numel() * x.element_size() / 1e6
    print(f"softmax {rows}x{n} {dtype}: threadtile {gb / ours:.0f} GB/s, torch {gb / ref:.0f} "
          f"GB/s, copy {gb / cp:.0f} GB/s")


if __name__ == "__main__":
    print(torch.cuda.get_device_name())
    for dt in (torch.float16, torch.bfloat16):
        matmul(4096, dt, 64, 64, 32)
        matmul(4096, dt, 128, 128, 32)
    matmul(4096, torch.float32, 64, 64, 32)
    softmax(4096, 4096, torch.float32)
    softmax(4096, 4096, torch.bfloat16)
