"""A block radix sort inside a user kernel (threadtile.coop, CUB's BlockRadixSort) against the
same segmented sort written by hand with shared memory, and torch.sort on the segments.

Each block sorts one segment of 2048 float32 keys (256 threads x 8 keys), for 4096 and 16384
segments:

- ``coop radix (transpose)``: ``coop.block.load`` (coalesced, exchanged to blocked),
  ``coop.block.radix_sort_keys``, ``coop.block.store`` (exchanged back to striped);
- ``coop radix (direct)``: the same with direct (blocked, uncoalesced) loads and stores;
- ``hand bitonic (shared)``: a bitonic sort in shared memory, as a user writes one with
  ``cuda.shared.array`` and ``syncthreads()``;
- ``torch.sort``: ``x.view(segments, 2048).sort(dim=1)``.

Device times are CUDA-event medians (``_common.cuda_time_ms``); every result is checked
against torch.sort before it is timed. GPU only; writes results/coop.json. ``--sim`` runs a
few segments in the simulator instead (a check of the kernels on a CPU; nothing written).
"""

from __future__ import annotations

import sys

import numpy as np
from _common import cuda_time_ms, write

import threadtile as cuda
from threadtile import coop, float32

SEG = 2048
TPB = 256
ITEMS = SEG // TPB


@cuda.jit
def coop_sort(keys, out):
    base = cuda.blockIdx.x * SEG
    items = cuda.local.array(ITEMS, float32)
    coop.block.load(keys[base:], items, threads_per_block=TPB, algorithm="transpose")
    coop.block.radix_sort_keys(items, threads_per_block=TPB)
    coop.block.store(out[base:], items, threads_per_block=TPB, algorithm="transpose")


@cuda.jit
def coop_sort_direct(keys, out):
    base = cuda.blockIdx.x * SEG
    items = cuda.local.array(ITEMS, float32)
    coop.block.load(keys[base:], items, threads_per_block=TPB)
    coop.block.radix_sort_keys(items, threads_per_block=TPB)
    coop.block.store(out[base:], items, threads_per_block=TPB)


@cuda.jit
def bitonic_sort(keys, out):
    sh = cuda.shared.array(SEG, float32)
    base = cuda.blockIdx.x * SEG
    t = cuda.threadIdx.x
    for k in range(ITEMS):
        sh[t + k * TPB] = keys[base + t + k * TPB]
    cuda.syncthreads()
    size = 2
    while size <= SEG:
        stride = size // 2
        while stride > 0:
            for k in range(SEG // 2 // TPB):  # each thread: its share of the 1024 pairs
                p = t + k * TPB
                i = 2 * p - (p & (stride - 1))  # the pair's lower element
                j = i + stride
                a = sh[i]
                b = sh[j]
                if (a > b) == ((i & size) == 0):
                    sh[i] = b
                    sh[j] = a
            cuda.syncthreads()
            stride //= 2
        size *= 2
    for k in range(ITEMS):
        out[base + t + k * TPB] = sh[t + k * TPB]


KERNELS = {"coop radix (transpose)": coop_sort, "coop radix (direct)": coop_sort_direct,
           "hand bitonic (shared)": bitonic_sort}


def simulated(segments: int = 3) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(segments * SEG).astype(np.float32)
    want = np.sort(x.reshape(segments, SEG), axis=1).reshape(-1)
    for name, k in KERNELS.items():
        out = np.zeros_like(x)
        with cuda.simulate():
            k[segments, TPB](x, out)
        np.testing.assert_array_equal(out, want)
        print(f"{name}: sorted {segments} segments in the simulator")


def main() -> None:
    import torch

    results = {}
    for segments in (4096, 16384):
        x = torch.randn(segments * SEG, device="cuda")
        want = x.view(segments, SEG).sort(dim=1).values.reshape(-1)
        out = torch.empty_like(x)
        row = {}
        for name, k in KERNELS.items():
            launch = k[segments, TPB]
            launch(x, out)
            torch.cuda.synchronize()
            if not torch.equal(out, want):
                raise AssertionError(f"{name} did not sort the segments")
            row[name] = cuda_time_ms(lambda launch=launch, x=x, out=out: launch(x, out))
        segs = x.view(segments, SEG)
        row["torch.sort"] = cuda_time_ms(lambda segs=segs: segs.sort(dim=1))
        keys = segments * SEG
        results[f"{segments} x {SEG}"] = {
            name: {"ms": ms, "Gkeys/s": keys / ms / 1e6,
                   "vs hand bitonic": row["hand bitonic (shared)"] / ms,
                   "vs torch.sort": row["torch.sort"] / ms}
            for name, ms in row.items()}
        print(f"{segments} segments of {SEG} float32 keys:")
        for name, ms in row.items():
            print(f"  {name:24s} {ms:8.3f} ms  {keys / ms / 1e6:7.2f} Gkeys/s  "
                  f"x{row['hand bitonic (shared)'] / ms:5.2f} vs bitonic  "
                  f"x{row['torch.sort'] / ms:5.2f} vs torch.sort")
    write("coop", results, notes=f"one block of {TPB} threads x {ITEMS} keys per segment; "
          "CUDA-event medians of the device work; 'vs' columns: the other's time over this "
          "one's (above 1: this one is faster)")


if __name__ == "__main__":
    if "--sim" in sys.argv:
        simulated()
    else:
        main()
