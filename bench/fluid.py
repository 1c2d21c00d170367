"""The 2D fluid of examples/fluid on the GPU: steps per second against the same scheme in torch
tensor operations, and the pressure solve's bandwidth against a device copy.

For each grid size (default 2048² and 4096², float32):

- ``steps/s``: a step (curl, confinement and buoyancy, advection of velocity and dye,
  divergence, ``--iters`` pressure iterations, projection) run ``--steps`` times back to back,
  wall clock from the first launch to the synchronize after the last: threadtile's kernels
  (``fluid.solver.Fluid`` on torch tensors) with 1, 2, 4, 8 Jacobi iterations per ``relax``
  launch (temporal blocking), and red-black SOR (2 iterations a launch), beside
  ``fluid.torch_scheme.TorchFluid``: the same scheme in torch operations (``grid_sample`` for
  advection, ``conv2d`` for each Jacobi iteration), eager and (``--compile``, where triton
  is installed) under ``torch.compile``. Target: threadtile Jacobi ≥ 3× torch eager.
- ``relax bandwidth``: the plain one-pass stencil (``jacobi``: global loads), the same pass
  by column strips (``jacobi_strip``: each value of ``p`` read once into registers) and one
  ``relax`` launch of ``passes`` Jacobi passes, each timed alone with CUDA events
  (``_common.cuda_time_ms``); the global traffic is one read of ``p`` and ``b`` and one
  write of ``p``, 12 bytes a cell, whatever the passes; GB/s against ``torch.clone`` of a
  tensor of the grid's float32 (8 bytes a cell: one read, one write). Target ≥ 70%. The
  "effective" figure counts 12 bytes a cell per pass: what unblocked Jacobi would move.
  Timed back to back, a 2048² clone's 32 MB stays in the 50 MB L2 cache (above the HBM
  bandwidth) while the stencil's 48 MB does not; ``cold`` times the clone and the one-pass
  stencils again with the L2 cache emptied before each run (a 256 MiB write, as Triton's
  ``do_bench`` does), where both read and write HBM.
- ``agreement``: 3 steps of both from the same smooth random state, largest difference over
  each field's largest value (float32 both; they differ by rounding only). The torch peer runs
  in float32 throughout: cuDNN's convolutions may use TF32 (10-bit mantissas) by default
  (``torch.backends.cudnn.allow_tf32``), which a 1024² or 2048² CPU run rounding the Jacobi
  convolution's input to TF32 puts at 1.7-1.9e-3 of the largest ``u`` after 3 steps, against
  1e-5 to 2.6e-4 for a start perturbed by one ulp (the scheme's own sensitivity, up to 4096²).
  ``agreement_tf32`` and ``torch jacobi (eager, TF32 allowed)`` are the peer with torch's
  default.

    python bench/fluid.py                    # 2048 and 4096
    python bench/fluid.py --sizes 1024 --steps 20
    python bench/fluid.py --compile          # torch.compile's peer too

GPU only; writes results/fluid.json.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import statistics
import time

import numpy as np
from _common import cuda_time_ms, cuda_times_ms, write

JACOBI_PER_LAUNCH = (1, 2, 4, 8)


def steps_per_s(step, steps: int, warmup: int = 3) -> float:
    import torch

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return steps / (time.perf_counter() - t0)


def smooth_state(rng, shape) -> dict:
    out = {}
    for k in ("u", "v", "d", "p"):
        a = rng.standard_normal(shape)
        for _ in range(3):
            a = sum(np.roll(np.roll(a, dy, 0), dx, 1) for dy in (-1, 0, 1)
                    for dx in (-1, 0, 1)) / 9.0
        out[k] = (0.5 * a / np.abs(a).max()).astype(np.float32)
    out["d"] = np.abs(out["d"])
    return out


@contextlib.contextmanager
def cudnn_tf32(allowed: bool):
    """cuDNN's TF32 convolutions allowed or not inside the block (torch's default: allowed)."""
    import torch

    before = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = before


def agreement(n: int, prm, tf32: bool = False, cudnn: bool = True,
              exact: bool = False) -> dict:
    """Largest difference per field, over the field's largest value, after 3 steps from one
    smooth random state: threadtile against the torch peer (cuDNN's TF32 allowed or not,
    cuDNN on or off: off, torch convolves by its own direct sums); with ``exact`` also each
    of them against the NumPy reference in float64 (``threadtile_vs_float64``,
    ``torch_vs_float64``): which side the difference comes from."""
    import torch
    from fluid import reference as ref
    from fluid.solver import Fluid
    from fluid.torch_scheme import TorchFluid

    state = smooth_state(np.random.default_rng(), (n, n))
    a, b = Fluid(n, prm, backend="torch"), TorchFluid(n, prm)
    a.set_fields(**state)
    b.set_fields(**state)
    was = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = cudnn
    try:
        with cudnn_tf32(tf32):
            for _ in range(3):
                a.step()
                b.step()
    finally:
        torch.backends.cudnn.enabled = was

    def diff(x, y):
        return float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-6))

    keys = ("u", "v", "d", "p")
    out = {k: diff(a.field(k), b.field(k)) for k in keys}
    if exact:
        want = {k: np.asarray(v, np.float64) for k, v in state.items()}
        for _ in range(3):
            want = ref.step(want, prm)
        out = {"threadtile_vs_torch": out,
               "threadtile_vs_float64": {k: diff(a.field(k), want[k]) for k in keys},
               "torch_vs_float64": {k: diff(b.field(k), want[k]) for k in keys}}
    return out


def relax_bandwidth(n: int) -> dict:
    import torch
    from fluid import kernels as K

    p = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    out = torch.empty_like(p)
    cells = n * n
    clone_ms = cuda_time_ms(lambda: p.clone())
    clone_gbs = 8 * cells / clone_ms / 1e6
    res = {"clone_ms": clone_ms, "clone_GBps": clone_gbs, "passes": {}}
    one = np.float32(1.0)
    for passes in JACOBI_PER_LAUNCH:
        launch = K.relax[K.relax_grid((n, n), passes), K.BLOCK, 0, K.relax_smem(False)]
        ms = cuda_time_ms(lambda launch=launch, passes=passes: launch(p, b, out, one, passes, 0))
        gbs = 12 * cells / ms / 1e6
        res["passes"][passes] = {"ms": ms, "GBps": gbs, "vs_clone": gbs / clone_gbs,
                                 "effective_GBps": passes * gbs,
                                 "ms_per_iteration": ms / passes}
    # the plain stencil a user would write first (global loads, no shared-memory tile)
    plain = K.jacobi[K.jacobi_grid((n, n)), K.BLOCK]
    ms = cuda_time_ms(lambda: plain(p, b, out, one))
    gbs = 12 * cells / ms / 1e6
    res["plain_jacobi"] = {"ms": ms, "GBps": gbs, "vs_clone": gbs / clone_gbs}
    # the same pass, each thread a column strip of STRIP cells (p read once into registers)
    strip = K.jacobi_strip[K.jacobi_strip_grid((n, n)), K.STRIP_BLOCK]
    want = out.clone()
    out.fill_(float("nan"))
    strip(p, b, out, one)
    ms = cuda_time_ms(lambda: strip(p, b, out, one))
    gbs = 12 * cells / ms / 1e6
    res["strip_jacobi"] = {"ms": ms, "GBps": gbs, "vs_clone": gbs / clone_gbs,
                           "same_as_plain": bool(torch.equal(out, want))}
    # torch's Jacobi iteration (conv2d, sub, mul), for scale
    from fluid.params import Params
    from fluid.torch_scheme import TorchFluid

    tf = TorchFluid(n, Params(iters=1), device="cuda")
    with cudnn_tf32(False):
        ms = cuda_time_ms(lambda: tf.solve(p, b, 1))
    res["torch_jacobi_iteration_ms"] = ms
    # the same copy and one-pass stencils with the L2 cache emptied before each run
    junk = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def cold(fn) -> float:
        return statistics.median(cuda_times_ms(fn, before=junk.zero_))

    cold_clone = 8 * cells / cold(lambda: p.clone()) / 1e6
    res["cold"] = {"clone_GBps": cold_clone}
    for name, fn in (("plain_jacobi", lambda: plain(p, b, out, one)),
                     ("strip_jacobi", lambda: strip(p, b, out, one))):
        gbs = 12 * cells / cold(fn) / 1e6
        res["cold"][name] = {"GBps": gbs, "vs_clone": gbs / cold_clone}
    return res


def main() -> None:
    import torch
    from fluid.params import Params
    from fluid.solver import Fluid
    from fluid.torch_scheme import TorchFluid

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--iters", type=int, default=40, help="pressure iterations a step")
    ap.add_argument("--exact", action="store_true",
                    help="also run the NumPy float64 reference (3 steps; minutes at 4096^2)")
    ap.add_argument("--compile", action="store_true",
                    help="also time the torch scheme under torch.compile (needs triton; "
                         "compiling the unrolled pressure loop takes a while)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench/fluid.py needs a CUDA GPU and torch")

    results, skipped = {}, {}
    compile_ok = args.compile and importlib.util.find_spec("triton") is not None
    for n in args.sizes:
        r = {"steps_per_s": {}, "iters": args.iters}
        rates = r["steps_per_s"]
        for k in JACOBI_PER_LAUNCH:
            f = Fluid(n, Params(iters=args.iters, per_launch=k), backend="torch")
            rates[f"threadtile jacobi, {k}/launch"] = steps_per_s(f.step, args.steps)
        f = Fluid(n, Params(solver="sor", iters=args.iters // 2, per_launch=2), backend="torch")
        rates[f"threadtile sor ({args.iters // 2} iterations), 2/launch"] = steps_per_s(
            f.step, args.steps)
        tf = TorchFluid(n, Params(iters=args.iters))
        with cudnn_tf32(False):
            rates["torch jacobi (eager)"] = steps_per_s(tf.step, args.steps)
        with cudnn_tf32(True):
            rates["torch jacobi (eager, TF32 allowed)"] = steps_per_s(tf.step, args.steps)
        if compile_ok:
            try:
                torch._dynamo.reset()
                tc = TorchFluid(n, Params(iters=args.iters))
                tc.step = torch.compile(tc.step)
                with cudnn_tf32(False):
                    rates["torch jacobi (torch.compile)"] = steps_per_s(tc.step, args.steps)
            except Exception as e:  # noqa: BLE001  (recorded: a backend this host lacks)
                skipped[f"torch.compile {n}"] = f"{type(e).__name__}: {str(e)[:200]}"
        best_k = max(JACOBI_PER_LAUNCH, key=lambda k: rates[f"threadtile jacobi, {k}/launch"])
        best = rates[f"threadtile jacobi, {best_k}/launch"]
        r["best_per_launch"] = best_k
        r["speedup_vs_torch_eager"] = best / rates["torch jacobi (eager)"]
        if "torch jacobi (torch.compile)" in rates:
            r["speedup_vs_torch_compile"] = best / rates["torch jacobi (torch.compile)"]
        r["relax"] = relax_bandwidth(n)
        r["relax_best_vs_clone"] = max([v["vs_clone"] for v in r["relax"]["passes"].values()]
                                       + [r["relax"][k]["vs_clone"]
                                          for k in ("plain_jacobi", "strip_jacobi")])
        r["agreement"] = agreement(n, Params(iters=args.iters, per_launch=4))
        r["agreement_tf32"] = agreement(n, Params(iters=args.iters, per_launch=4), tf32=True)
        r["agreement_no_cudnn"] = agreement(n, Params(iters=args.iters, per_launch=4),
                                            cudnn=False, exact=args.exact)
        results[str(n)] = r
        print(f"\n{n}x{n}, {args.iters} pressure iterations a step")
        for name, v in rates.items():
            print(f"  {name:44s} {v:9.1f} steps/s")
        print(f"  threadtile ({best_k}/launch) / torch eager: {r['speedup_vs_torch_eager']:.2f}x"
              "  (target >= 3)")
        rel = r["relax"]
        print(f"  torch.clone: {rel['clone_GBps']:.0f} GB/s; torch Jacobi iteration "
              f"{rel['torch_jacobi_iteration_ms'] * 1e3:.1f} us")
        pj = rel["plain_jacobi"]
        print(f"  plain jacobi (global loads): {pj['ms'] * 1e3:8.1f} us  {pj['GBps']:6.0f} GB/s "
              f"({pj['vs_clone']:.0%} of clone)")
        sj = rel["strip_jacobi"]
        print(f"  jacobi_strip (column strips):  {sj['ms'] * 1e3:8.1f} us  {sj['GBps']:6.0f} GB/s "
              f"({sj['vs_clone']:.0%} of clone; same as plain: {sj['same_as_plain']})")
        c = rel["cold"]
        print(f"  L2 emptied before each run: torch.clone {c['clone_GBps']:.0f} GB/s; plain "
              f"{c['plain_jacobi']['GBps']:.0f} ({c['plain_jacobi']['vs_clone']:.0%}), strip "
              f"{c['strip_jacobi']['GBps']:.0f} ({c['strip_jacobi']['vs_clone']:.0%})")
        for passes, v in rel["passes"].items():
            print(f"  relax {passes} passes: {v['ms'] * 1e3:8.1f} us  {v['GBps']:6.0f} GB/s "
                  f"({v['vs_clone']:.0%} of clone; effective {v['effective_GBps']:.0f} GB/s, "
                  f"{v['ms_per_iteration'] * 1e3:.1f} us/iteration)")
        worst = max(r["agreement"].values())
        r["agreement_ok"] = worst < 1e-3  # float32 rounding after 3 steps is ~1e-5
        print(f"  agreement with torch after 3 steps: worst field {worst:.1e} of its largest "
              f"value ({'ok' if r['agreement_ok'] else 'MISMATCH: not the same scheme'}); with "
              f"cuDNN's TF32 allowed {max(r['agreement_tf32'].values()):.1e}")
        nc = r["agreement_no_cudnn"]
        if "torch_vs_float64" in nc:
            print("  cuDNN off: threadtile vs torch {:.1e}; against NumPy float64: threadtile "
                  "{:.1e}, torch {:.1e}".format(*(max(nc[k].values()) for k in (
                      "threadtile_vs_torch", "threadtile_vs_float64", "torch_vs_float64"))))
        else:
            print(f"  cuDNN off: threadtile vs torch {max(nc.values()):.1e}")
    for key, why in skipped.items():
        print(f"{key}: skipped: {why}")
    write("fluid", {"sizes": results, "skipped": skipped, "steps": args.steps},
          notes="steps/s: wall clock over back-to-back steps after 3 warm-up steps, "
                "synchronized at both ends; relax: CUDA-event medians of one launch, global "
                "traffic 12 bytes/cell/launch; torch.clone 8 bytes/cell")


if __name__ == "__main__":
    main()
