"""cuTile's own sample programs on the GPU: threadtile (the import swapped) beside cuTile itself.

Given a checkout of NVIDIA's cutile-python (``--src``, or ``CUTILE_SRC``; nothing of it is
copied into this repository), each file of its ``samples/`` (and ``samples/quickstart/``)
runs its own ``__main__`` with ``--correctness-check``, in a child process per sample and
system:

- ``threadtile``: a temporary copy of the samples with ``import cuda.tile as ct`` swapped for
  ``import threadtile.tile as ct`` (tests/compat/cutile_suite.py, ``swap_imports``);
- ``cutile``: the files as they are, where ``cuda.tile`` imports (on the GPU machine:
  ``../shared/tools/cutile-on-device.sh``).

A sample passes when its own checks pass (its process exits 0). Every kernel launch the
sample makes through ``ct.launch`` is recorded; after the sample, the first launch of each
kernel is launched again and timed (median of CUDA-event-timed runs, bench/_common.py) with
the sample's own arguments. The table gives, per sample, both systems' outcome and per
kernel both times and their ratio. Writes bench/results/cutile_samples.json.

    python bench/cutile_samples.py --src /path/to/cutile-python [--only MatMul,Transpose]
"""

import argparse
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "compat"))

SKIP = {"AllGatherMatmul.py": "several GPUs: bench/allgather_matmul.py runs it",
        "BlockScaledMatMul.py": "Blackwell's block-scaled mma (sm_100)",
        "test_samples.py": "cuTile's pytest driver, not a sample"}
CHILD_TIMEOUT_S = int(os.environ.get("CUTILE_SAMPLE_TIMEOUT", "240"))


def samples(src: Path) -> list[str]:
    root = src / "samples"
    out = [p.relative_to(root).as_posix() for p in sorted(root.glob("*.py"))
           if p.name not in SKIP and p.name != "__init__.py"]
    return out + [p.relative_to(root).as_posix() for p in sorted(root.glob("quickstart/*.py"))]


def swapped_copy(src: Path) -> Path:
    """samples/ with cuTile's imports swapped for threadtile's, in a temporary folder."""
    from cutile_suite import swap_imports

    work = Path(tempfile.mkdtemp(prefix="tt-samples-")) / "samples"
    for p in (src / "samples").rglob("*.py"):
        dst = work / p.relative_to(src / "samples")
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(swap_imports(p.read_text()))
    return work


def child(system: str, root: Path, rel: str) -> dict:
    """Run one sample's __main__ --correctness-check in this process; time its kernels."""
    import torch
    from _common import cuda_time_ms

    if system == "threadtile":
        import threadtile.tile as ct
    else:
        import cuda.tile as ct
    launches: dict[str, tuple] = {}
    real = ct.launch

    def recording(stream, grid, kernel, args):
        name = getattr(kernel, "__name__", None) or getattr(
            getattr(kernel, "_pyfunc", None), "__name__", repr(kernel))
        launches.setdefault(name, (stream, grid, kernel, tuple(args)))
        return real(stream, grid, kernel, args)

    ct.launch = recording
    path = root / rel
    sys.path[:0] = [str(path.parent), str(root)]
    sys.argv = [str(path), "--correctness-check"]
    out = {"system": system, "sample": rel}
    t0 = time.perf_counter()
    try:
        runpy.run_path(str(path), run_name="__main__")
        torch.cuda.synchronize()
        out["status"] = "pass"
    except SystemExit as e:
        out["status"] = "pass" if not e.code else "fail"
    except BaseException as e:  # noqa: BLE001  (the sample's failure is the result)
        out["status"] = "fail"
        out["error"] = "".join(traceback.format_exception_only(e)).strip().splitlines()[-1][:300]
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    times = {}
    for name, (stream, grid, kernel, args) in launches.items():
        try:
            times[name] = round(cuda_time_ms(lambda s=stream, g=grid, k=kernel, a=args:
                                             real(s, g, k, a),
                                             warmup=2, reps=10), 4)
        except Exception as e:  # noqa: BLE001
            times[name] = "error: " + str(e).splitlines()[0][:200]
    out["kernels_ms"] = times
    return out


def run(system: str, root: Path, rel: str) -> dict:
    cmd = [sys.executable, __file__, "--child", system, "--root", str(root), rel]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                           cwd=str(HERE))
    except subprocess.TimeoutExpired:
        return {"system": system, "sample": rel, "status": "fail",
                "error": f"timed out after {CHILD_TIMEOUT_S} s"}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT "):])
    tail = (p.stderr or p.stdout).strip().splitlines()
    return {"system": system, "sample": rel, "status": "fail",
            "error": (tail[-1] if tail else f"exit {p.returncode}")[:300]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=os.environ.get("CUTILE_SRC", ""))
    ap.add_argument("--only", default="")
    ap.add_argument("--child", default="")
    ap.add_argument("--root", default="")
    ap.add_argument("rel", nargs="?")
    o = ap.parse_args()
    if o.child:
        sys.path.insert(0, str(HERE))
        res = child(o.child, Path(o.root), o.rel)
        print("@@RESULT " + json.dumps(res), flush=True)
        return
    src = Path(o.src)
    if not (src / "samples").is_dir():
        sys.exit("give --src (or CUTILE_SRC): a checkout of NVIDIA/cutile-python")
    names = samples(src)
    if o.only:
        keep = set(o.only.split(","))
        names = [n for n in names if Path(n).stem in keep]
    tt_root = swapped_copy(src)
    try:
        import cuda.tile  # noqa: F401

        have_cutile = True
    except Exception:  # noqa: BLE001
        have_cutile = False
    rows = []
    for rel in names:
        row = {"sample": rel, "threadtile": run("threadtile", tt_root, rel)}
        if have_cutile:
            row["cutile"] = run("cutile", src / "samples", rel)
        rows.append(row)
        t, c = row["threadtile"], row.get("cutile", {})
        ratio = {}
        for k, ms in t.get("kernels_ms", {}).items():
            cm = c.get("kernels_ms", {}).get(k)
            if isinstance(ms, float) and isinstance(cm, float):
                ratio[k] = round(cm / ms, 3)
        row["cutile_over_threadtile"] = ratio
        print(f"{rel:28} threadtile {t['status']:4} cuTile {c.get('status', '-'):4} "
              f"{t.get('kernels_ms', {})} {c.get('kernels_ms', {})} "
              f"{t.get('error', '')}", flush=True)
        if c.get("error"):
            print(f"{'':28} cuTile: {c['error']}", flush=True)
    if not o.only:
        from _common import write

        print("wrote", write("cutile_samples", {"samples": rows},
                             notes="cuTile's samples/, each run by its own __main__ "
                                   "--correctness-check; kernels re-timed with the sample's "
                                   "own launch arguments (ratio > 1: threadtile faster)"))


if __name__ == "__main__":
    main()
