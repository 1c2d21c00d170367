"""The differential fuzzer against a real GPU (issue 17): generated thread-level kernels
(tools/fuzz/gen.py) and tile kernels (tools/fuzz/tile_gen.py) run on the GPU and in the
simulator's lockstep mode, compared (tile kernels also with their float64 reference).

    python bench/fuzz_gpu.py                 # 10,000 thread programs from seed 0
    python bench/fuzz_gpu.py --count 500 --start 20000 --python-mode
    python bench/fuzz_gpu.py --jobs 14      # first pass in 14 processes
    python bench/fuzz_gpu.py --kinds thread,tile --jobs 14   # 10,000 of each
    python bench/fuzz_gpu.py --tile --count 2000 --jobs 14   # tile programs only
    python bench/fuzz_gpu.py --tile --jobs 15 --max-seconds 540 --max-minimize 3
                                             # as many as 5.4 minutes scan, then minimize

Each mismatch (or a target's error: an NVRTC failure, a launch error) is minimized by delta
debugging (tools/fuzz/minimize.py) and written as a regression test under
``--out-dir`` (default tests/fuzz_regressions/, ``xfail`` with the mismatch as its reason).
Thread programs: integers compare bit for bit, floats within ``run.GPU_ULPS`` ulps (NVRTC
contracts ``a*b+c`` into FMAs; CUDA's math functions differ from NumPy's in the last bits:
tools/fuzz/run.py); ``--python-mode`` also runs the simulator's python mode on each. Tile
programs: the GPU and the simulator each against the reference and against each other, within
the reference's running error bounds (tools/fuzz/tile_run.py; regression tests
``test_tile_seed*``). Results: bench/results/fuzz_gpu.json (thread), fuzz_gpu_tile.json
(tile). GPU only.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from pathlib import Path

import _common

sys.path.insert(0, str(_common.ROOT))
from tools.fuzz import minimize as mz  # noqa: E402
from tools.fuzz.gen import generate  # noqa: E402
from tools.fuzz.tile_gen import generate as generate_tile  # noqa: E402

GENERATORS = {"thread": generate, "tile": generate_tile}


def _scan(kind: str, seeds: list[int], targets: tuple[str, ...], deadline: float = math.inf
          ) -> tuple[list[dict], list[int], int]:
    """A worker: the failures among ``seeds`` (seed, signature, detail), the seeds whose only
    differences were FMA contraction's (explained), and how many seeds ran before
    ``deadline`` (``time.time()``) passed."""
    failed, contracted = [], []
    for n, seed in enumerate(seeds):
        if time.time() > deadline:
            return failed, contracted, n
        try:
            res = mz.run_targets(GENERATORS[kind](seed), targets)
        except Exception as e:  # noqa: BLE001  (a crash of the harness is a finding too)
            failed.append({"seed": seed, "signature": f"crash {type(e).__name__}",
                           "detail": [str(e)[:300]]})
            continue
        if res.ok and getattr(res, "contracted", None):
            contracted.append(seed)
        if not res.ok:
            failed.append({"seed": seed, "signature": res.signature(),
                           "detail": (res.mismatches or list(res.errors.values()))[:3]})
    return failed, contracted, len(seeds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--python-mode", action="store_true", help="also compare python mode")
    ap.add_argument("--max-minimize", type=int, default=20, help="mismatches to minimize")
    ap.add_argument("--out-dir", type=Path, default=mz.REGRESSIONS)
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes (each with its own CUDA context) for the first pass")
    ap.add_argument("--kinds", default="thread",
                    help="comma-separated program kinds: thread, tile (--count of each)")
    ap.add_argument("--tile", action="store_true", help="the same as --kinds tile")
    ap.add_argument("--max-seconds", type=float, default=math.inf,
                    help="time budget per kind: the scan stops at 60%% of it (the seeds run "
                         "are recorded), failures are minimized only within it")
    args = ap.parse_args()
    kinds = ["tile"] if args.tile else [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in GENERATORS:
            sys.exit(f"--kinds: unknown kind {k!r} (thread, tile)")

    from threadtile.runtime.driver import gpu_available  # noqa: PLC0415

    if not gpu_available():
        sys.exit("fuzz_gpu.py needs a GPU")
    for kind in kinds:
        run_kind(kind, args)


def run_kind(kind: str, args) -> None:
    """Scan ``args.count`` programs of ``kind``, minimize the failures, write the results."""
    gen = GENERATORS[kind]
    if kind == "tile":
        targets = ("gpu", "lockstep", "ref")
    else:
        targets = ("gpu", "lockstep") + (("python",) if args.python_mode else ())
    t0 = time.perf_counter()
    start = time.time()
    scan_deadline, end = start + 0.6 * args.max_seconds, start + args.max_seconds
    seeds = range(args.start, args.start + args.count)
    jobs = max(1, args.jobs)
    chunks = [list(seeds[i::jobs]) for i in range(jobs)]
    if jobs > 1:
        ctx = multiprocessing.get_context("spawn")  # a CUDA context per worker
        with ctx.Pool(jobs) as pool:
            found = pool.starmap(_scan, [(kind, c, targets, scan_deadline) for c in chunks])
    else:
        found = [_scan(kind, chunks[0], targets, scan_deadline)]
    failures = sorted((f for part, _, _ in found for f in part), key=lambda f: f["seed"])
    contracted = sorted(s for _, part, _ in found for s in part)
    scanned = sum(n for _, _, n in found)
    print(f"{scanned} {kind} programs, {len(failures)} failing, {len(contracted)} differing "
          f"only by FMA contraction ({time.perf_counter() - t0:.0f} s)", flush=True)
    signatures: dict[str, int] = {}
    written = []
    for f in failures:
        sig = f["signature"]
        signatures[sig] = signatures.get(sig, 0) + 1
        if signatures[sig] <= 3:
            print(f"{kind} seed {f['seed']}: {sig}: {f['detail'][0]}", flush=True)
        # one minimized regression per kind of failure, up to --max-minimize
        if signatures[sig] > 1 or len(written) >= args.max_minimize or time.time() > end \
                or sig.startswith("crash"):
            continue
        prog = gen(f["seed"])
        small = mz.minimize(prog, mz.same_failure(prog, targets))
        reason = f"{sig}: {f['detail'][0]}"[:200]
        path = mz.write_regression(small, reason, directory=args.out_dir, targets=targets)
        written.append({"seed": f["seed"], "size": small.size(), "from_size": prog.size(),
                        "file": str(path.relative_to(_common.ROOT))
                        if path.is_relative_to(_common.ROOT) else str(path)})
        print(f"  minimized {prog.size()} -> {small.size()} nodes: {path}", flush=True)
    elapsed = time.perf_counter() - t0
    results = {"kind": kind, "programs": scanned, "requested": args.count,
               "first_seed": args.start,
               "targets": list(targets), "jobs": args.jobs, "failing": len(failures),
               "fma_contraction_only": len(contracted),
               "fma_contraction_seeds": contracted[:200],
               "by_signature": signatures, "minimized": written,
               "failures": failures[:200], "seconds": round(elapsed, 1)}
    notes = ("tools/fuzz thread-level generator; GPU vs simulator (lockstep, and python mode "
             "with --python-mode). Integers bit for bit, floats within tools/fuzz/run.py's "
             "GPU_ULPS. One minimized regression test per failure signature.")
    if kind == "tile":
        notes = ("tools/fuzz/tile_gen.py tile kernels; GPU vs simulator vs float64 reference, "
                 "within the reference's running error bounds (tools/fuzz/tile_run.py). One "
                 "minimized regression test per failure signature.")
    path = _common.write("fuzz_gpu" if kind == "thread" else "fuzz_gpu_tile", results,
                         notes=notes)
    print(f"{scanned} {kind} programs, {len(failures)} failing, {elapsed:.0f} s; "
          f"wrote {path}")

if __name__ == "__main__":
    main()
