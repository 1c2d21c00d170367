"""Shared by the benchmark scripts: timing, environment facts, and the results file."""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "src"))


def versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "triton", "numba", "numba_cuda", "cupy", "cuda.core",
                "cuda.bindings", "threadtile"):
        try:
            m = __import__(mod, fromlist=["_"])
            out[mod] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001  (absent or broken peer: recorded, not fatal)
            continue
    try:
        from cuda.bindings import nvrtc

        _, major, minor = nvrtc.nvrtcVersion()
        out["nvrtc"] = f"{major}.{minor}"
    except Exception:  # noqa: BLE001
        pass
    return out


def device_info() -> dict:
    info = {"machine": platform.machine(), "cpu_count": os.cpu_count()}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        name, driver = [s.strip() for s in q.stdout.strip().splitlines()[0].split(",")]
        info.update(device=name, driver=driver)
    except Exception:  # noqa: BLE001
        info.update(device="cpu", driver=None)
    return info


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip() or "?"
    except Exception:  # noqa: BLE001
        return os.environ.get("THREADTILE_COMMIT", "?")


def write(name: str, results: dict, notes: str = "") -> Path:
    doc = {"benchmark": name, "date": datetime.datetime.now(datetime.UTC).isoformat(
        timespec="seconds"), "commit": os.environ.get("THREADTILE_COMMIT") or commit(),
        **device_info(), "versions": versions(), "notes": notes, "results": results}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    out = os.environ.get("OUT")
    if out:
        Path(out, f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return path


def cuda_time_ms(fn, warmup: int = 5, reps: int = 30) -> float:
    """Median milliseconds of ``fn`` over ``reps`` runs, timed with CUDA events."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)
