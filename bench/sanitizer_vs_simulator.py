"""The bug corpus (tests/corpus) under threadtile's simulator and under compute-sanitizer.

    python bench/sanitizer_vs_simulator.py      # writes results/sanitizer_vs_simulator.json
    python bench/sanitizer_vs_simulator.py --tools racecheck,synccheck --jobs 8 --cases race-

For every buggy kernel of the corpus:

- **threadtile**: the kernel runs under ``threadtile.simulate()`` (every check on) in this
  process; the result is the error class it raised, the Python line it named (the right line is
  the case's ``# BUG`` marker), the block and thread;
- **compute-sanitizer**, when a GPU and ``compute-sanitizer`` are present
  (``$COMPUTE_SANITIZER``, else ``/usr/local/cuda/bin/compute-sanitizer``, else ``PATH``): the
  kernel runs on the GPU in a child process (bench/_sanitizer_child.py) under each of the four
  tools, ``memcheck``, ``racecheck``, ``initcheck`` and ``synccheck``, one process per kernel and
  tool (``--jobs`` at a time). A tool caught the bug when it printed an error record for the
  kernel (a racecheck hazard reported only as a warning counts separately); the Python lines it
  names come from the kernel's line info (threadtile compiles with ``lineinfo``, and the CUDA
  source's ``#line`` directives point at the Python file).

Then the false-alarm pass: every correct twin and every clean kernel (tests/corpus/clean.py:
the examples, the benchmarks' thread kernels, cuTile-style tile kernels of the tests) under both;
a simulator error or RaceWarning is a false alarm of threadtile, an error record of a tool one of
compute-sanitizer. Without a GPU the sanitizer columns say "skipped" and only the simulator
runs. The table is per bug class: cases, caught by threadtile at the right line, caught by each
tool, and the cases only one of the two caught.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

ROOT = _common.ROOT
sys.path.insert(1, str(ROOT / "tests"))
import corpus  # noqa: E402

from threadtile.backends.sim import simulate  # noqa: E402
from threadtile.errors import KernelRuntimeError, RaceWarning  # noqa: E402

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
CHILD = ROOT / "bench" / "_sanitizer_child.py"


def rel(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return path


# ---- threadtile's simulator --------------------------------------------------------------------

def simulate_case(case, fixed: bool = False) -> dict:
    """The simulator's verdict on one kernel: its error (class, line, block, thread) or none,
    and any RaceWarning; for a buggy kernel, whether it is the expected class at the marked
    line."""
    path, line, pair = case.marks() if case.error is not None else (None, None, None)
    out: dict = {"error": None, "warnings": []}
    t0 = time.perf_counter()
    with simulate(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RaceWarning)
        try:
            case.launch(fixed=fixed)
        except KernelRuntimeError as e:
            out.update(error=type(e).__name__, line=e.line, file=rel(e.loc.filename),
                       block=e.block, thread=e.thread,
                       other_line=getattr(getattr(e, "other", None), "line", None),
                       message=str(e).splitlines()[0])
        except Exception as e:  # noqa: BLE001  (recorded: a crash is a finding too)
            out.update(error=type(e).__name__, message=str(e).splitlines()[0] if str(e) else "")
    out["seconds"] = round(time.perf_counter() - t0, 3)
    out["warnings"] = [str(w.message).splitlines()[0] for w in caught
                       if issubclass(w.category, RaceWarning)]
    if case.error is not None and not fixed:
        out["expected"] = case.error.__name__
        out["marked_line"] = line
        out["caught"] = out["error"] == case.error.__name__
        out["right_line"] = out["caught"] and (out.get("file"), out.get("line")) == (rel(path),
                                                                                  line)
        if case.where is not None and out["caught"]:
            out["right_thread"] = (out["block"], out["thread"]) == case.where
    return out


# ---- compute-sanitizer ----------------------------------------------------------------------

def find_sanitizer() -> str | None:
    for p in (os.environ.get("COMPUTE_SANITIZER"), "/usr/local/cuda/bin/compute-sanitizer",
              shutil.which("compute-sanitizer")):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return p
    return None


def gpu_present() -> bool:
    try:
        from threadtile.runtime.driver import gpu_available  # noqa: PLC0415
        return bool(gpu_available())
    except Exception:  # noqa: BLE001
        return False


_SUMMARY = ("ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "COMPUTE-SANITIZER",
            "Target application returned", "No ")
_PYLINE = re.compile(r"([^\s:()]+\.py):(\d+)")


def parse_report(text: str) -> dict:
    """A compute-sanitizer log, as: the top-level records (``========= <record>``; indented
    lines are their details), split into device errors, racecheck warnings and host API errors
    (``Program hit ... on CUDA API call``), the ERROR SUMMARY count, and the Python file:line
    pairs the details name."""
    errors, warns, api, lines = [], [], [], []
    summary = None
    for raw in text.splitlines():
        if not raw.startswith("========= "):
            continue
        body = raw[len("========= "):]
        lines += [f"{rel(f)}:{n}" for f, n in _PYLINE.findall(body)]
        if body.startswith(" ") or not body.strip():
            continue
        rec = body.strip()
        m = re.match(r"ERROR SUMMARY: (\d+) error", rec)
        if m:
            summary = int(m.group(1))
        if rec.startswith(_SUMMARY):
            continue
        if rec.startswith("Program hit") or "on CUDA API call" in rec:
            api.append(rec)
        elif rec.startswith("Warning"):
            warns.append(rec)
        else:
            errors.append(rec)
    return {"caught": bool(errors), "errors": len(errors), "warnings": len(warns),
            "api_errors": len(api), "error_summary": summary, "records": (errors + warns)[:3],
            "py_lines": list(dict.fromkeys(lines))[:8]}


def sanitize(san: str, tool: str, name: str, variant: str, timeout: float) -> dict:
    cmd = [san, "--tool", tool, "--print-limit", "20", sys.executable, str(CHILD), name, variant]
    env = {k: v for k, v in os.environ.items() if k != "THREADTILE_SIMULATE"}
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        # a kernel that hangs (a shuffle waiting for lanes that exited, a barrier for threads
        # that never come) is no report of the tool's
        return {"caught": False, "timeout": True, "seconds": timeout, "py_lines": []}
    out = parse_report(p.stdout + "\n" + p.stderr)
    child = [x for x in p.stdout.splitlines() if x.startswith("threadtile-corpus:")]
    tail = (p.stderr.strip().splitlines() or [""])[-1]
    out.update(child=child[-1][len("threadtile-corpus: "):] if child else
               f"no result (exit {p.returncode}): {tail}",
               seconds=round(time.perf_counter() - t0, 2))
    return out


def sanitize_all(san: str, jobs: list[tuple], tools, timeout: float, njobs: int) -> dict:
    """{(name, variant): {tool: report}} for every job ``(name, variant)``."""
    work = [(name, variant, tool) for name, variant in jobs for tool in tools]
    res: dict = {}
    done = 0
    with ThreadPoolExecutor(njobs) as pool:
        futs = {pool.submit(sanitize, san, tool, name, variant, timeout): (name, variant, tool)
                for name, variant, tool in work}
        for f, (name, variant, tool) in futs.items():
            res.setdefault((name, variant), {})[tool] = f.result()
            done += 1
            if done % 50 == 0:
                print(f"  compute-sanitizer: {done}/{len(work)} runs", flush=True)
    return res


# ---- the table -------------------------------------------------------------------------------

def summarize(cases: list[dict], tools) -> dict:
    rows = {}
    for cls in corpus.CLASSES:
        mine = [c for c in cases if c["class"] == cls]
        if not mine:
            continue
        row = {"cases": len(mine),
               "threadtile_caught": sum(c["simulator"]["caught"] for c in mine),
               "threadtile_right_line": sum(c["simulator"]["right_line"] for c in mine)}
        san = [c["sanitizer"] for c in mine]
        if all(s is not None for s in san):
            row["sanitizer_by_tool"] = {t: sum(s[t]["caught"] for s in san) for t in tools}
            row["sanitizer_any"] = sum(any(s[t]["caught"] for t in tools) for s in san)
            row["sanitizer_right_line"] = sum(c["sanitizer_right_line"] for c in mine)
            row["only_threadtile"] = [c["name"] for c in mine if c["simulator"]["right_line"]
                                      and not c["sanitizer_any"]]
            row["only_sanitizer"] = [c["name"] for c in mine if c["sanitizer_any"]
                                     and not c["simulator"]["right_line"]]
        rows[cls] = row
    return rows


def print_table(rows: dict, tools, skipped: str | None) -> None:
    head = f"{'bug class':24} {'cases':>5}  {'threadtile (line)':>17}  "
    if skipped:
        print(head + "compute-sanitizer")
    else:
        print(head + "  ".join(f"{t:>9}" for t in tools) + f"  {'any':>4} {'line':>5}"
              f"  only threadtile / only sanitizer")
    for cls, r in rows.items():
        tt = f"{r['threadtile_caught']} ({r['threadtile_right_line']})"
        line = f"{cls:24} {r['cases']:>5}  {tt:>17}  "
        if skipped:
            print(line + "skipped")
            continue
        by = r["sanitizer_by_tool"]
        print(line + "  ".join(f"{by[t]:>9}" for t in tools) + f"  {r['sanitizer_any']:>4}"
              f" {r['sanitizer_right_line']:>5}  {len(r['only_threadtile'])} / "
              f"{len(r['only_sanitizer'])}")
    total = sum(r["cases"] for r in rows.values())
    caught = sum(r["threadtile_right_line"] for r in rows.values())
    print(f"{'all':24} {total:>5}  {caught:>17}")
    if skipped:
        print(f"compute-sanitizer: skipped ({skipped})")


def false_alarms(kind: str, entries: list[dict], tools, skipped) -> dict:
    sim = [e["name"] for e in entries if e["simulator"]["error"] or e["simulator"]["warnings"]]
    out = {"kernels": len(entries), "threadtile": sim}
    msg = f"false alarms on {len(entries)} {kind}: threadtile {len(sim)}"
    if not skipped:
        out["sanitizer"] = {t: [e["name"] for e in entries if e["sanitizer"][t]["caught"]]
                            for t in tools}
        msg += ", " + ", ".join(f"{t} {len(v)}" for t, v in out["sanitizer"].items())
    print(msg)
    for name in sim:
        print(f"  threadtile on {name}")
    for t, names in out.get("sanitizer", {}).items():
        for name in names:
            print(f"  {t} on {name}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", default=",".join(TOOLS), help="compute-sanitizer tools to run")
    ap.add_argument("--cases", default="", help="only cases whose name contains this")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="sanitizer processes at a time")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per sanitizer run")
    ap.add_argument("--no-sanitizer", action="store_true", help="the simulator column only")
    ap.add_argument("--no-twins", action="store_true",
                    help="skip the false-alarm pass under compute-sanitizer")
    args = ap.parse_args()
    tools = tuple(t for t in args.tools.split(",") if t)
    bad = set(tools) - set(TOOLS)
    if bad:
        ap.error(f"unknown tools {sorted(bad)}; compute-sanitizer's are {', '.join(TOOLS)}")

    bugs = [c for c in corpus.all_cases() if args.cases in c.name]
    twins = [c for c in bugs if c.fixed is not None]
    clean = [c for c in corpus.clean_cases() if args.cases in c.name]

    san = None if args.no_sanitizer else find_sanitizer()
    skipped = ("--no-sanitizer" if args.no_sanitizer else "no GPU" if not gpu_present() else
               "compute-sanitizer not found" if san is None else None)

    print(f"simulator: {len(bugs)} buggy kernels, {len(twins)} twins, {len(clean)} clean")
    t0 = time.perf_counter()
    sim_bug = {c.name: simulate_case(c) for c in bugs}
    sim_fix = {c.name: simulate_case(c, fixed=True) for c in twins}
    sim_clean = {c.name: simulate_case(c) for c in clean}
    sim_seconds = time.perf_counter() - t0

    reports: dict = {}
    if not skipped:
        jobs = [(c.name, "bug") for c in bugs]
        if not args.no_twins:
            jobs += [(c.name, "fixed") for c in twins] + [(c.name, "clean") for c in clean]
        print(f"compute-sanitizer ({san}): {len(jobs)} kernels x {len(tools)} tools, "
              f"{args.jobs} at a time")
        reports = sanitize_all(san, jobs, tools, args.timeout, args.jobs)

    cases = []
    for c in bugs:
        path, line, pair = c.marks()
        marked = {f"{rel(path)}:{n}" for n in (line, pair) if n}
        entry = {"name": c.name, "class": c.bug_class, "note": c.note,
                 "bug_line": f"{rel(path)}:{line}", "simulator": sim_bug[c.name],
                 "simulator_miss_reason": c.xfail, "sanitizer": reports.get((c.name, "bug"))}
        if entry["sanitizer"] is not None:
            s = entry["sanitizer"]
            entry["sanitizer_any"] = [t for t in tools if s[t]["caught"]]
            entry["sanitizer_right_line"] = any(
                s[t]["caught"] and marked & set(s[t]["py_lines"]) for t in tools)
        cases.append(entry)
    fixed = [{"name": c.name, "simulator": sim_fix[c.name],
              "sanitizer": reports.get((c.name, "fixed"))} for c in twins]
    cleaned = [{"name": c.name, "simulator": sim_clean[c.name],
                "sanitizer": reports.get((c.name, "clean"))} for c in clean]

    rows = summarize(cases, tools)
    print()
    print_table(rows, tools, skipped)
    # a run whose child raised and whose tool reported nothing may never have launched the
    # kernel (a compile error, a refused launch): listed, not silently counted as a miss
    quiet = sorted({(e["name"], t) for e in cases + fixed + cleaned for t, r in
                    (e["sanitizer"] or {}).items()
                    if r.get("timeout") or (not r["caught"] and not r["child"].startswith(
                        "launched"))})
    for name, tool in quiet:
        print(f"  {tool} on {name}: no report, and the child did not return normally")
    misses = [c for c in cases if not c["simulator"]["right_line"]]
    for c in misses:
        why = c["simulator_miss_reason"] or c["simulator"].get("message") or "no error"
        print(f"threadtile misses {c['name']} ({c['class']}): {why}")
    print()
    twin_skip = skipped or ("--no-twins" if args.no_twins else None)
    fa = {"twins": false_alarms("correct twins", fixed, tools, twin_skip),
          "clean": false_alarms("clean kernels", cleaned, tools, twin_skip)}
    print(f"simulator: {sim_seconds:.1f} s for {len(bugs) + len(twins) + len(clean)} launches")

    results = {"tools": list(tools), "sanitizer": san, "sanitizer_skipped": skipped,
               "classes": corpus.CLASSES, "table": rows, "false_alarms": fa,
               "threadtile_misses": [c["name"] for c in misses],
               "sanitizer_runs_not_completed": [list(q) for q in quiet],
               "simulator_seconds": round(sim_seconds, 2),
               "cases": cases, "twins": fixed, "clean": cleaned,
               "class_counts": dict(Counter(c.bug_class for c in bugs))}
    notes = ("bug corpus (tests/corpus) under threadtile.simulate() and, on a GPU, under "
             "compute-sanitizer's memcheck, racecheck, initcheck and synccheck"
             + (f"; sanitizer skipped: {skipped}" if skipped else ""))
    if args.cases:
        notes += f"; cases filtered by {args.cases!r}"
    path = _common.write("sanitizer_vs_simulator", results, notes)
    print(f"wrote {rel(str(path))}")


if __name__ == "__main__":
    main()
