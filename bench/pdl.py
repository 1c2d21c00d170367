"""Programmatic dependent launch (``ct.launch(..., programmatic_dependent_launch=True)``) against
launches in stream order, on the GPU (Hopper; each figure a CUDA-event median,
``_common.cuda_time_ms``):

- ``pair``: cuTile's own demonstration (its test_pdl.py): a producer and a consumer, each a
  loop of ``STEPS`` additions on one tile per block; the consumer's loop does not read the
  producer's result, its ``grid_dependency_control_wait()`` comes after it. With PDL the two
  loops overlap;
- ``chain``: sixteen dependent elementwise kernels over 2^20 floats, each starting with
  ``grid_dependency_control_wait()`` (it reads what the one before wrote) and letting the next
  start at once (``grid_dependency_control_launch_dependents()``): what PDL hides there is each
  launch's ramp-up, no work overlaps.

Results are checked against the expected values; the host's time a launch is given too (a
PDL launch takes ``cuLaunchKernelEx`` through cuda-bindings, the steady-state launch in order
the C launcher). Writes results/pdl.json.
"""

from __future__ import annotations

import time

from _common import cuda_time_ms, write

import threadtile.tile as ct

ConstInt = ct.Constant[int]
STEPS = 200_000
CHAIN, N, TILE = 16, 1 << 20, 1024


@ct.kernel
def producer(a, out, steps: ConstInt):
    ct.grid_dependency_control_launch_dependents()
    t = ct.load(a, index=(ct.bid(0),), shape=(32,))
    for _ in range(steps):
        t += 1
    ct.store(out, index=(ct.bid(0),), tile=t)


@ct.kernel
def consumer(b, produced, out, steps: ConstInt):
    t = ct.load(b, index=(ct.bid(0),), shape=(32,))
    for _ in range(steps):
        t += 1
    ct.grid_dependency_control_wait()
    p = ct.load(produced, index=(ct.bid(0),), shape=(32,))
    ct.store(out, index=(ct.bid(0),), tile=p + t)


@ct.kernel
def add_one(x, y, tile: ConstInt):
    ct.grid_dependency_control_wait()  # x is the previous kernel's output
    ct.grid_dependency_control_launch_dependents()
    t = ct.load(x, index=(ct.bid(0),), shape=(tile,))
    ct.store(y, index=(ct.bid(0),), tile=t + 1)


def main() -> None:
    import torch

    s = torch.cuda.current_stream()
    a = torch.arange(128, dtype=torch.float32, device="cuda")
    b = a.flip(0).contiguous()
    produced, out = torch.zeros_like(a), torch.zeros_like(a)
    bufs = [torch.zeros(N, device="cuda") for _ in range(2)]
    x0 = torch.rand(N, device="cuda")

    def pair(pdl):
        ct.launch(s, (4,), producer, (a, produced, STEPS))
        ct.launch(s, (4,), consumer, (b, produced, out, STEPS),
                  programmatic_dependent_launch=pdl)

    def chain(pdl):
        src = x0
        for i in range(CHAIN):
            dst = bufs[i % 2]
            ct.launch(s, (N // TILE,), add_one, (src, dst, TILE),
                      programmatic_dependent_launch=pdl)
            src = dst

    results = {}
    for name, fn, check in (
            ("pair", pair, lambda: torch.equal(out, a + b + 2 * STEPS)),
            ("chain", chain, lambda: torch.allclose(bufs[(CHAIN - 1) % 2], x0 + CHAIN))):
        row = {}
        for pdl in (False, True):
            out.zero_()
            fn(pdl)
            torch.cuda.synchronize()
            row["pdl_ok" if pdl else "in_order_ok"] = bool(check())
            ms = cuda_time_ms(lambda fn=fn, pdl=pdl: fn(pdl))
            row["pdl_ms" if pdl else "in_order_ms"] = round(ms, 4)
            t0 = time.perf_counter()  # the host's time a launch (the device left to run)
            for _ in range(20):
                fn(pdl)
            host = (time.perf_counter() - t0) / 20 / (CHAIN if name == "chain" else 2) * 1e6
            torch.cuda.synchronize()
            row["pdl_host_us" if pdl else "in_order_host_us"] = round(host, 2)
        row["speedup"] = round(row["in_order_ms"] / row["pdl_ms"], 3)
        results[name] = row
        print(f"{name:6s} in order {row['in_order_ms']:.4f} ms, PDL {row['pdl_ms']:.4f} ms "
              f"({row['speedup']}x), correct {row['in_order_ok']} / {row['pdl_ok']}; host "
              f"{row['in_order_host_us']} / {row['pdl_host_us']} us a launch", flush=True)
    write("pdl", {**results, "steps": STEPS, "chain": CHAIN, "n": N},
          notes="programmatic dependent launch against launches in stream order; CUDA-event "
                "medians of the whole pair / chain")


if __name__ == "__main__":
    main()
