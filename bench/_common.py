"""Shared by the benchmark scripts: timing, environment facts, and the results file."""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
KERNELS = ROOT / "bench" / "kernels.py"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT / "examples"))  # tile_kernels: the tile kernels tile_bench times


def load_kernels(target: str, path: Path = KERNELS, name: str | None = None):
    """bench/kernels.py (or a copy of it at ``path``) as a fresh module whose ``cuda`` is
    ``target``'s: ``"threadtile"`` or ``"numba"`` (numba.cuda: the GPU, or numba's simulator
    where ``NUMBA_ENABLE_CUDASIM=1`` was set before numba's first import).

    The module's ``TARGET`` is set before its body runs, and the module is registered in
    ``sys.modules`` under ``name`` (default ``bench_kernels_<target>``) as a real import would be.
    """
    if target not in ("threadtile", "numba"):
        raise ValueError(f"load_kernels: target must be 'threadtile' or 'numba', not {target!r}")
    name = name or f"bench_kernels_{target}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"load_kernels: cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    mod.TARGET = target
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    got = getattr(mod.cuda, "__name__", "?")  # numba.cuda may be numba_cuda.numba.cuda
    if not got.startswith(target):
        raise ImportError(f"load_kernels({target!r}): {path} bound cuda to {got}")
    return mod


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
    """Median milliseconds of ``fn``'s device work over ``reps`` runs, timed with CUDA events.

    Before each run the stream gets a short spin kernel (``torch.cuda._sleep``), so that the
    GPU is still busy while the host records the start event and launches ``fn``: the events
    then bracket the device work alone, not the host's launch time (which for a kernel of
    tens of microseconds would be a large part; bench/launch_overhead.py measures that)."""
    return statistics.median(cuda_times_ms(fn, warmup, reps))


def cuda_times_ms(fn, warmup: int = 5, reps: int = 30, before=None) -> list[float]:
    """Each run's milliseconds, as ``cuda_time_ms`` times them; ``before()`` runs ahead of
    each (bench/llama_tp.py: a barrier of the ranks)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if before is not None:
            before()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SPIN_CYCLES)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return times


def capture(fn, warmup: int = 3):
    """``fn`` run ``warmup`` times on a side stream, then captured once into a CUDA graph:
    (the graph, None), or (None, why the capture failed)."""
    import torch

    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
    except Exception as e:  # noqa: BLE001  (recorded: what could not be captured)
        return None, f"{type(e).__name__}: {str(e)[:200]}"
    return graph, None


def graphed_time_ms(fn, warmup: int = 3, reps: int = 30) -> tuple[float | None, str | None]:
    """``fn`` captured once into a CUDA graph (``capture``) and its replay timed as
    ``cuda_time_ms`` times: the device time of all its kernels with no host launch gaps
    between them (a layer of many small kernels launched from Python can leave the GPU
    waiting on the host, and then its time depends on the host's speed). (milliseconds,
    None), or (None, why the capture failed)."""
    graph, why = capture(fn, warmup)
    if graph is None:
        return None, why
    return cuda_time_ms(graph.replay, warmup, reps), None


# about 500 us at H100 clocks: longer than a call's host work, also a threadtile.compute call
# of several launches on a slower host (at 100 us, 115-150 us of host time a call showed up in
# the events: reduce of 2^26 float32 read 0.154 ms against 0.066 of device time, H200)
SPIN_CYCLES = 1_000_000
