"""threadtile.compute against CUB (through CuPy), torch and a device copy's bandwidth.

For N = 2^26, 2^27, 2^28 items (``--sizes`` to change), each timed with CUDA events
(``_common.cuda_time_ms``, median of 30) on torch CUDA tensors:

- ``reduce``: float32 sum: ``tc.reduce_into`` vs ``cupy.sum`` (CUB's DeviceReduce with
  ``CUPY_ACCELERATORS=cub``) vs ``torch.sum``;
- ``inclusive_scan``: float32 sum: ``tc.inclusive_scan`` vs ``cupy.cumsum`` (CUB's DeviceScan)
  vs ``torch.cumsum``;
- ``radix_sort_u32``, ``radix_sort_f32``: keys only: ``tc.radix_sort`` vs ``cupy.sort`` (CUB's
  radix sort through thrust) vs ``torch.sort`` (values and indices: torch has no keys-only
  sort; int32 keys stand in for uint32);
- ``radix_sort_pairs``: uint32 keys with uint32 values vs ``torch.sort`` (keys and int64
  indices; CuPy has no key-value sort);
- ``histogram``: 256 even bins of float32 samples: ``tc.histogram_even`` vs
  ``cupy.histogram`` (CUB's DeviceHistogram::HistogramRange: the bins by their edges) vs
  ``torch.histc``;
- ``copy``: ``dst.copy_(src)`` of N float32: the bandwidth the memory-bound ones are held to
  (bytes read + written / time).

Then a new operator's cold compile (a Python function never compiled before: threadtile's
frontend, NVRTC on CUB's headers, the module load) and a warm call's host time.

Targets (issue 15): >= 90% of CUB's speed, faster than torch, memory-bound ones >= 85% of a
copy; cold compile <= 2 s, warm call <= 20 ms. GPU only; writes results/algorithms.json.

    python bench/algorithms.py [--sizes 26,27,28] [--reps 30]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("CUPY_ACCELERATORS", "cub")  # before CuPy is imported

from _common import cuda_time_ms, write  # noqa: E402


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def _row(name, n, nbytes, times: dict, copy_gbs: float) -> dict:
    """One result: each method's ms and GB/s, threadtile's ratios to CUB, torch and the copy."""
    row = {"n": n, "bytes": nbytes}
    for k, ms in times.items():
        if ms is None:
            continue
        row[f"{k}_ms"] = round(ms, 4)
        row[f"{k}_gbs"] = round(nbytes / ms / 1e6, 1)
    tt = times.get("threadtile")
    if tt:
        if times.get("cub"):
            row["vs_cub"] = round(times["cub"] / tt, 3)  # > 1: threadtile faster
        if times.get("torch"):
            row["vs_torch"] = round(times["torch"] / tt, 3)
        row["of_copy"] = round(nbytes / tt / 1e6 / copy_gbs, 3)
    print(f"{name:18s} n=2^{n.bit_length() - 1}  " + "  ".join(
        f"{k} {v:.3f} ms" for k, v in times.items() if v) + "  " + "  ".join(
        f"{k}={row[k]}" for k in ("vs_cub", "vs_torch", "of_copy") if k in row), flush=True)
    return row


def _sort_ms(t, work, src) -> float:
    """CuPy's in-place sort (thrust, which sorts these keys with CUB's radix sort) of a fresh
    copy of ``src`` each run, less the copy's own time."""
    both = t(lambda: work.__setitem__(Ellipsis, src) or work.sort())
    return both - t(lambda: work.__setitem__(Ellipsis, src))


def bench_size(n: int, reps: int, cp) -> dict:
    import numpy as np
    import torch

    import threadtile.compute as tc

    t = lambda fn: cuda_time_ms(fn, reps=reps)  # noqa: E731
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.rand(n, device="cuda", generator=g)
    out = torch.empty_like(x)
    res = {}

    copy_ms = t(lambda: out.copy_(x))
    copy_gbs = 8 * n / copy_ms / 1e6
    res["copy"] = {"n": n, "ms": round(copy_ms, 4), "gbs": round(copy_gbs, 1)}
    print(f"copy               n=2^{n.bit_length() - 1}  {copy_ms:.3f} ms  {copy_gbs:.0f} GB/s")
    xc = cp.asarray(x) if cp else None

    one = torch.empty(1, device="cuda")
    zero = np.zeros(1, np.float32)
    res["reduce"] = _row("reduce", n, 4 * n, {
        "threadtile": t(lambda: tc.reduce_into(x, one, tc.OpKind.PLUS, n, zero)),
        "cub": t(lambda: xc.sum()) if cp else None,
        "torch": t(lambda: torch.sum(x))}, copy_gbs)

    res["inclusive_scan"] = _row("inclusive_scan", n, 8 * n, {
        "threadtile": t(lambda: tc.inclusive_scan(x, out, tc.OpKind.PLUS, None, n)),
        "cub": t(lambda: cp.cumsum(xc)) if cp else None,
        "torch": t(lambda: torch.cumsum(x, 0, out=out))}, copy_gbs)

    ku = torch.randint(0, 2**31 - 1, (n,), device="cuda", generator=g, dtype=torch.int32)
    ku32 = cp.asarray(ku).view(cp.uint32) if cp else None
    ko = torch.empty_like(ku)
    kuc = ku32.copy() if cp else None
    from threadtile.runtime.devicearray import as_cuda_array
    ku_t = as_cuda_array(ku32) if cp else ku  # uint32 keys for threadtile
    ko_t = as_cuda_array(cp.empty_like(ku32)) if cp else ko
    res["radix_sort_u32"] = _row("radix_sort_u32", n, 8 * n, {
        "threadtile": t(lambda: tc.radix_sort(ku_t, ko_t, None, None, tc.SortOrder.ASCENDING)),
        "cub": _sort_ms(t, kuc, ku32) if cp else None,
        "torch": t(lambda: torch.sort(ku))}, copy_gbs)

    kf = torch.randn(n, device="cuda", generator=g)
    kfo = torch.empty_like(kf)
    kfc = cp.asarray(kf).copy() if cp else None
    kfsrc = cp.asarray(kf) if cp else None
    res["radix_sort_f32"] = _row("radix_sort_f32", n, 8 * n, {
        "threadtile": t(lambda: tc.radix_sort(kf, kfo, None, None, tc.SortOrder.ASCENDING)),
        "cub": _sort_ms(t, kfc, kfsrc) if cp else None,
        "torch": t(lambda: torch.sort(kf))}, copy_gbs)

    if cp:
        vals = as_cuda_array(cp.arange(n, dtype=cp.uint32))
        vo = as_cuda_array(cp.empty(n, dtype=cp.uint32))
    else:
        vals = torch.arange(n, device="cuda", dtype=torch.int32)
        vo = torch.empty_like(vals)
    # CuPy has no key-value sort of its own (argsort + a gather is not CUB's SortPairs): the
    # pairs are held to torch.sort, which returns keys and int64 indices
    res["radix_sort_pairs"] = _row("radix_sort_pairs", n, 16 * n, {
        "threadtile": t(lambda: tc.radix_sort(ku_t, ko_t, vals, vo, tc.SortOrder.ASCENDING)),
        "torch": t(lambda: torch.sort(ku))}, copy_gbs)

    hist = torch.empty(256, device="cuda", dtype=torch.int32)
    res["histogram"] = _row("histogram", n, 4 * n, {
        "threadtile": t(lambda: tc.histogram_even(x, hist, 257, 0.0, 1.0, n)),
        "cub": t(lambda: cp.histogram(xc, bins=256, range=(0.0, 1.0))) if cp else None,
        "torch": t(lambda: torch.histc(x, bins=256, min=0.0, max=1.0))}, copy_gbs)
    return res


def compile_times() -> dict:
    """A new operator's first call (frontend + NVRTC + load, the disk cache missing it), and a
    warm call's host time (launches and synchronization, n = 2^20)."""
    import numpy as np
    import torch

    import threadtile.compute as tc

    salt = time.time_ns() % 1_000_003  # a constant no earlier run compiled: a cache miss
    ns: dict = {}
    exec(f"def op(a, b):\n    return a + b * {salt}.0 * 0.0\n", ns)  # noqa: S102
    x = torch.rand(1 << 20, device="cuda")
    out = torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tc.reduce_into(x, out, ns["op"], x.numel(), np.float32(0))
    torch.cuda.synchronize()
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(20):
        t0 = time.perf_counter()
        tc.reduce_into(x, out, ns["op"], x.numel(), np.float32(0))
        torch.cuda.synchronize()
        warm.append(time.perf_counter() - t0)
    warm.sort()
    r = {"cold_compile_s": round(cold, 3), "warm_call_ms": round(1e3 * warm[len(warm) // 2], 3),
         "ok_cold": cold <= 2.0, "ok_warm": warm[len(warm) // 2] <= 0.02}
    print(f"cold compile of a new operator: {cold:.2f} s; warm call {r['warm_call_ms']} ms")
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="26,27,28", help="log2 of the item counts")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    cp = _cupy()
    if cp is None:
        print("CuPy is not installed: no CUB column")
    results = {"compile": compile_times(), "sizes": {}}
    for e in (int(s) for s in args.sizes.split(",")):
        results["sizes"][f"2^{e}"] = bench_size(1 << e, args.reps, cp)
    write("algorithms", results, notes="threadtile.compute vs CUB (CuPy), torch and a copy; "
          "vs_* > 1: threadtile faster; of_copy: the fraction of a copy's bandwidth")


if __name__ == "__main__":
    main()
