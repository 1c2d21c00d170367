"""The cost of a threadtile kernel as a torch custom operator: host microseconds per call.

One elementwise add of two torch CUDA tensors of N floats (small: the kernel takes a few
microseconds of device time, so the host's per-call cost is what shows), called back to back:

- ``threadtile launch``: ``kernel[grid, block](a, b, c)`` into a preallocated output (the bare
  steady-state launch);
- ``host function``: the operator's Python function called directly (``torch.empty_like`` +
  the launch): what the operator wraps;
- ``threadtile op (eager)``: the same function as ``threadtile.torch.custom_op`` (its plain
  eager calls skip torch's dispatcher: ``threadtile.torch.EagerOp``);
- ``threadtile op, out= (eager)``: an operator writing into its third argument
  (``mutates_args=("out",)``), whose host function is the bare launch: its time minus the
  launch's is what being an operator costs (``us_over``; target at most 2 us);
- ``threadtile op (compile ...)``: a function calling the operator under ``torch.compile``
  (``aot_eager``; ``inductor`` where triton is installed; ``inductor reduce-overhead``: the
  compiled graph replayed as a CUDA graph);
- ``torch.add``: torch's own operator of the same size, eager and compiled alike, and
  ``torch.add(out=)`` into a preallocated tensor;
- ``... x32 (compile ...)``: 32 chained calls in one compiled graph. A graph's call has a
  fixed cost of its own (guards, wrappers: ~30 us, torch.add's graph as much as ours), so a
  further call's cost, (x32 - x1) / 31, is what an operator costs inside a graph; its excess
  over the host function is the operator's own (``us_over``; target at most 2 us). Inductor's
  code calls the host function itself (``threadtile.torch`` registers the call with it), then
  checks the output's size and strides (``assert_size_stride``, inductor's check of every
  operator it does not generate); ``aot_eager``'s graph calls the operator through torch's
  dispatcher.

Each figure is the median over rounds of back-to-back calls, the methods' rounds interleaved
(``launch_overhead.per_launch_us``). GPU only; writes results/torch_ops.json.
"""

import importlib.util

from _common import write
from launch_overhead import per_launch_us

N = 4096
BLOCK = 256
CHAIN = 32  # calls in the chained graphs


def main() -> None:
    import torch
    from torch import Tensor

    import threadtile

    @threadtile.jit
    def add_kernel(x, y, out):
        i = threadtile.grid(1)
        if i < out.size:
            out[i] = x[i] + y[i]

    launch = add_kernel[threadtile.cdiv(N, BLOCK), BLOCK]

    # (no `from __future__ import annotations` here: torch reads these annotations, and a
    # string "Tensor" would be looked up in the module, where main's imports are not)
    def add_host(x: Tensor, y: Tensor) -> Tensor:
        out = torch.empty_like(x)
        launch(x, y, out)
        return out

    op = threadtile.torch.custom_op("threadtile_bench::add", add_host, mutates_args=(),
                                    shapes=lambda x, y: x)

    # the same kernel as an operator that writes into its argument: its host function is the
    # bare launch, so its eager call minus the launch is what being an operator costs
    def add_into(x: Tensor, y: Tensor, out: Tensor) -> None:
        launch(x, y, out)

    op_out = threadtile.torch.custom_op("threadtile_bench::add_into", add_into,
                                        mutates_args=("out",))

    a, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    c = torch.empty(N, device="cuda")
    d = torch.empty(N, device="cuda")
    fns = {"threadtile launch": lambda: launch(a, b, c),
           "host function": lambda: add_host(a, b),
           "threadtile op (eager)": lambda: op(a, b),
           "threadtile op, out= (eager)": lambda: op_out(a, b, d),
           "torch.add (eager)": lambda: torch.add(a, b),
           "torch.add, out= (eager)": lambda: torch.add(a, b, out=d)}

    def with_op(x, y):
        return op(x, y)

    def with_torch(x, y):
        return torch.add(x, y)

    def with_op32(x, y):  # 32 calls in one graph: a further call's cost, the graph's apart
        z = op(x, y)
        for _ in range(CHAIN - 1):
            z = op(z, y)
        return z

    def with_torch32(x, y):
        z = torch.add(x, y)
        for _ in range(CHAIN - 1):
            z = torch.add(z, y)
        return z

    compiles = [("aot_eager", {"backend": "aot_eager"})]
    if importlib.util.find_spec("triton") is not None:
        compiles += [("inductor", {}), ("inductor reduce-overhead", {"mode": "reduce-overhead"})]
    skipped = {}
    chains = [("threadtile op", with_op), ("torch.add", with_torch),
              ("threadtile op x32", with_op32), ("torch.add x32", with_torch32)]
    for label, kwargs in compiles:
        for name, f in chains:
            if "x32" in name and (label != "aot_eager" and name.startswith("torch") or
                                  "reduce-overhead" in label):
                continue  # (inductor fuses the adds into one kernel)
            key = f"{name} (compile {label})"
            try:
                torch._dynamo.reset()
                g = torch.compile(f, fullgraph=True, **kwargs)
                for _ in range(3):  # compiled (and, for reduce-overhead, recorded) here
                    r = g(a, b)
                torch.cuda.synchronize()
                assert torch.allclose(r, a + b * (CHAIN if "x32" in name else 1), atol=1e-4), key
            except Exception as e:  # noqa: BLE001  (a backend this host lacks: recorded)
                skipped[key] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                continue
            fns[key] = lambda g=g: g(a, b)

    for name in ("threadtile launch", "host function", "threadtile op (eager)",
                 "threadtile op, out= (eager)"):
        fns[name]()
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b) and torch.allclose(op(a, b), a + b)
    assert torch.allclose(d, a + b)
    results = per_launch_us(fns)
    for name, us in results.items():
        print(f"{name:44s} {us:7.2f} us")
    for key, why in skipped.items():
        print(f"{key:44s} skipped: {why}")
    base = results["threadtile launch"]
    ratios = {f"{name} / threadtile launch": us / base for name, us in results.items()
              if name != "threadtile launch"}
    ratios["threadtile op (eager) / torch.add (eager)"] = (
        results["threadtile op (eager)"] / results["torch.add (eager)"])
    over = {"threadtile op (eager) - threadtile launch":
            results["threadtile op (eager)"] - base,
            "threadtile op, out= (eager) - threadtile launch":
            results["threadtile op, out= (eager)"] - base,
            "threadtile op (eager) - host function":
            results["threadtile op (eager)"] - results["host function"]}
    for label in ("aot_eager", "inductor"):
        one, many = (results.get(f"threadtile op{x} (compile {label})") for x in ("", " x32"))
        if one and many:  # a further call in a compiled graph, over the host function
            over[f"threadtile op in a graph ({label}), a further call - host function"] = (
                (many - one) / (CHAIN - 1) - results["host function"])
    one, many = (results.get(f"torch.add{x} (compile aot_eager)") for x in ("", " x32"))
    if one and many:
        ratios["torch.add in a graph (aot_eager), a further call, us"] = (many - one) / (CHAIN - 1)
    for name, us in over.items():
        print(f"{name:60s} {us:6.2f} us  (target <= 2)")
    for name, r in ratios.items():
        print(f"{name:60s} {r:6.2f}")
    write("torch_ops", {"us_per_call": results, "ratios": ratios, "us_over": over,
                        "skipped": skipped,
                        "n": N, "block": BLOCK},
          notes="host time per call, median of interleaved rounds of back-to-back calls "
                "(launch_overhead.per_launch_us); elementwise add of two torch CUDA tensors of "
                f"{N} float32, torch's current stream")


if __name__ == "__main__":
    main()
