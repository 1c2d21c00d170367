"""The differential fuzzer against a real GPU (issue 17): generated thread-level kernels
(tools/fuzz/gen.py) run on the GPU and in the simulator's lockstep mode, compared.

    python bench/fuzz_gpu.py                 # 10,000 programs from seed 0
    python bench/fuzz_gpu.py --count 500 --start 20000 --python-mode
    python bench/fuzz_gpu.py --jobs 14      # first pass in 14 processes

Each mismatch (or a target's error: an NVRTC failure, a launch error) is minimized by delta
debugging (tools/fuzz/minimize.py) and written as a regression test under
``--out-dir`` (default tests/fuzz_regressions/, ``xfail`` with the mismatch as its reason).
Integers compare bit for bit, floats within ``run.GPU_ULPS`` ulps (NVRTC contracts ``a*b+c``
into FMAs; CUDA's math functions differ from NumPy's in the last bits: tools/fuzz/run.py).
``--python-mode`` also runs the simulator's python mode on each program. Results:
bench/results/fuzz_gpu.json. GPU only.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import _common

sys.path.insert(0, str(_common.ROOT))
from tools.fuzz.gen import generate  # noqa: E402
from tools.fuzz.minimize import REGRESSIONS, minimize, same_failure, write_regression  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402


def _scan(seeds: list[int], targets: tuple[str, ...]) -> tuple[list[dict], list[int]]:
    """The failures among ``seeds`` (seed, signature, detail), and the seeds whose only
    differences were FMA contraction's (explained)."""
    failed, contracted = [], []
    for seed in seeds:
        res = differential(generate(seed), targets=targets)
        if res.contracted and res.ok:
            contracted.append(seed)
        if not res.ok:
            failed.append({"seed": seed, "signature": res.signature(),
                           "detail": (res.mismatches or list(res.errors.values()))[:3]})
    return failed, contracted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--python-mode", action="store_true", help="also compare python mode")
    ap.add_argument("--max-minimize", type=int, default=20, help="mismatches to minimize")
    ap.add_argument("--out-dir", type=Path, default=REGRESSIONS)
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes (each with its own CUDA context) for the first pass")
    args = ap.parse_args()

    from threadtile.runtime.driver import gpu_available  # noqa: PLC0415

    if not gpu_available():
        sys.exit("fuzz_gpu.py needs a GPU")
    targets = ("gpu", "lockstep") + (("python",) if args.python_mode else ())
    t0 = time.perf_counter()
    seeds = range(args.start, args.start + args.count)
    jobs = max(1, args.jobs)
    chunks = [list(seeds[i::jobs]) for i in range(jobs)]
    if jobs > 1:
        ctx = multiprocessing.get_context("spawn")  # a CUDA context per worker
        with ctx.Pool(jobs) as pool:
            found = pool.starmap(_scan, [(c, targets) for c in chunks])
    else:
        found = [_scan(chunks[0], targets)]
    failures = sorted((f for part, _ in found for f in part), key=lambda f: f["seed"])
    contracted = sorted(s for _, part in found for s in part)
    print(f"{args.count} programs, {len(failures)} failing, {len(contracted)} differing only "
          f"by FMA contraction ({time.perf_counter() - t0:.0f} s)", flush=True)
    signatures: dict[str, int] = {}
    written = []
    for f in failures:
        sig = f["signature"]
        signatures[sig] = signatures.get(sig, 0) + 1
        if signatures[sig] <= 3:
            print(f"seed {f['seed']}: {sig}: {f['detail'][0]}", flush=True)
        # one minimized regression per kind of failure, up to --max-minimize
        if signatures[sig] > 1 or len(written) >= args.max_minimize:
            continue
        prog = generate(f["seed"])
        small = minimize(prog, same_failure(prog, targets))
        reason = f"{sig}: {f['detail'][0]}"[:200]
        path = write_regression(small, reason, directory=args.out_dir, targets=targets)
        written.append({"seed": f["seed"], "size": small.size(), "from_size": prog.size(),
                        "file": str(path.relative_to(_common.ROOT))
                        if path.is_relative_to(_common.ROOT) else str(path)})
        print(f"  minimized {prog.size()} -> {small.size()} nodes: {path}", flush=True)
    elapsed = time.perf_counter() - t0
    results = {"programs": args.count, "first_seed": args.start, "targets": list(targets),
               "jobs": args.jobs, "failing": len(failures),
               "fma_contraction_only": len(contracted),
               "fma_contraction_seeds": contracted[:200], "by_signature": signatures,
               "minimized": written,
               "failures": failures[:200], "seconds": round(elapsed, 1)}
    path = _common.write("fuzz_gpu", results, notes=(
        "tools/fuzz thread-level generator; GPU vs simulator (lockstep, and python mode with "
        "--python-mode). Integers bit for bit, floats within tools/fuzz/run.py's GPU_ULPS. "
        "One minimized regression test per failure signature."))
    print(f"{args.count} programs, {len(failures)} failing, {elapsed:.0f} s; wrote {path}")


if __name__ == "__main__":
    main()
