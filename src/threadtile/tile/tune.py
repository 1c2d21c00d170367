"""``threadtile.tile.tune``: choosing a kernel's configuration by timing it (cuTile's
``ct.tune.exhaustive_search``).

A *configuration* is any Python object (a dict, a ``SimpleNamespace``, a number); the caller
says how each maps to a grid, a kernel (or its compiler hints) and arguments::

    result = ct.tune.exhaustive_search(
        [dict(tm=64, tn=64), dict(tm=128, tn=64)], stream,
        grid_fn=lambda cfg: (ct.cdiv(m, cfg["tm"]), ct.cdiv(n, cfg["tn"])),
        kernel=matmul,
        args_fn=lambda cfg: (a, b, c.clone(), cfg["tm"], cfg["tn"]),
        hints_fn=lambda cfg: {"num_warps": 8 if cfg["tm"] == 128 else 4})
    best = result.best.config

On the GPU each configuration is launched once (compiling it; an error there, or in the hints,
is a failure of that configuration and the search goes on), then timed with CUDA events,
launch by launch, until the mean is known within 2% (95% confidence) or 100 samples or about
a second of kernel time; a configuration whose first samples are more than twice as slow as
the best so far stops there. The fastest mean wins.

In the simulator (``threadtile.simulate()``) nothing is timed: configurations are tried in
order, each launched once in the simulator with every check on, and the **first one that runs
is the result** (its ``mean_us`` is NaN and ``num_samples`` 0; the ones after it are not
tried). That keeps a program's tuning step working, and checked, on a machine without a GPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..jit import Kernel, Launch
from ..runtime import streams as rt_streams
from ..runtime.mode import requested

__all__ = ["exhaustive_search", "TuningResult", "Measurement", "LaunchTimeout"]

T = TypeVar("T")

MIN_SAMPLES = 5
MAX_SAMPLES = 100
MAX_KERNEL_TIME_US = 1_000_000
REL_MARGIN = 0.02
SLOW_FACTOR = 2.0


class LaunchTimeout(RuntimeError):
    """A launch that ran longer than ``single_run_timeout_sec`` (measured once it finished)."""


@dataclass(frozen=True, kw_only=True)
class Measurement(Generic[T]):
    """One configuration's timing: ``mean_us`` (microseconds per launch), ``num_samples``
    (launches timed), ``error_margin_us`` (half the 95% confidence interval)."""

    config: T
    mean_us: float
    num_samples: int
    error_margin_us: float


@dataclass(frozen=True, kw_only=True)
class TuningResult(Generic[T]):
    """The search's outcome: ``best`` (a :class:`Measurement`), ``successes`` (every
    configuration measured), ``failures`` (``(config, exception type, message)`` of each one
    that failed to compile or run)."""

    best: Measurement
    successes: Sequence[Measurement]
    failures: Sequence[tuple]

    def summary(self, *, top_k: int = 10, bottom_k: int = 2) -> str:
        """The result as text: counts, the fastest ``top_k`` and slowest ``bottom_k``
        configurations (the best marked ``*``), the failures' first lines."""
        lines = [f"{len(self.successes)} succeeded, {len(self.failures)} failed"]
        ranked = sorted(self.successes, key=lambda m: (math.isnan(m.mean_us), m.mean_us))
        shown = list(ranked)
        if len(ranked) > top_k + bottom_k + 1:
            shown = shown[:top_k] + [None] + shown[len(ranked) - bottom_k:]
        for m in shown:
            if m is None:
                lines.append(f"    ... {len(ranked) - top_k - bottom_k} more")
                continue
            mark = "*" if m is self.best else " "
            timing = "not timed (simulator)" if m.num_samples == 0 else (
                f"{m.mean_us:.1f} ± {m.error_margin_us:.1f} us ({m.num_samples} samples)")
            lines.append(f"{mark} {m.config}: {timing}")
        if self.failures:
            lines.append(f"  {len(self.failures)} failed:")
            for cfg, typ, msg in self.failures[:top_k]:
                # a compile error's text starts with its location: show what went wrong
                first = next((ln for ln in msg.splitlines() if ln and not ln[0].isspace()),
                             msg.strip())
                lines.append(f"    {cfg}: {typ.__name__}: {first[:80]}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _launch(stream, grid, kernel: Kernel, args: tuple) -> None:
    if not isinstance(args, (tuple, list)):
        raise TypeError("args_fn must return a tuple of the kernel's arguments")
    Launch(kernel, (grid, kernel.block_threads, stream))(*args)


def _sync(stream) -> None:
    ev = rt_streams.event(timing=False)
    ev.record(stream)
    ev.synchronize()


class _Candidate:
    def __init__(self, cfg, grid, kernel, args_fn):
        self.cfg, self.grid, self.kernel, self.args_fn = cfg, grid, kernel, args_fn
        self.samples: list[float] = []

    def sample(self, stream) -> None:
        args = self.args_fn(self.cfg)
        start, end = rt_streams.event(), rt_streams.event()
        start.record(stream)
        _launch(stream, self.grid, self.kernel, args)
        end.record(stream)
        end.synchronize()
        self.samples.append(start.elapsed_time(end) * 1000.0)

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples)

    @property
    def margin(self) -> float:
        n = len(self.samples)
        if n < 2:
            return math.inf
        m = self.mean
        var = sum((x - m) ** 2 for x in self.samples) / (n - 1)
        return 1.96 * math.sqrt(var / n)

    def done(self) -> bool:
        n = len(self.samples)
        return n >= MAX_SAMPLES or sum(self.samples) >= MAX_KERNEL_TIME_US or (
            n >= MIN_SAMPLES and self.margin <= REL_MARGIN * self.mean)

    def measurement(self) -> Measurement:
        return Measurement(config=self.cfg, mean_us=self.mean, num_samples=len(self.samples),
                           error_margin_us=0.0 if len(self.samples) < 2 else self.margin)


def exhaustive_search(search_space: Sequence[T], stream, grid_fn: Callable[[T], tuple],
                      kernel: Kernel | Callable[[T], Kernel],
                      args_fn: Callable[[T], tuple[Any, ...]],
                      hints_fn: Callable[[T], dict] | None = None, *, quiet: bool = False,
                      single_run_timeout_sec: float | None = None) -> TuningResult[T]:
    """Time every configuration of ``search_space`` and return the fastest (see the module's
    docstring; in the simulator, the first that runs).

    ``grid_fn(cfg)`` gives the grid; ``kernel`` is a ``@ct.kernel`` or ``kernel(cfg)`` makes
    one; ``args_fn(cfg)`` gives the arguments of one launch (called before every timed launch,
    so it may hand out fresh copies of arrays a kernel updates in place); ``hints_fn(cfg)``
    gives options for ``kernel.replace_hints``. ``quiet`` suppresses the printed summary.
    ``single_run_timeout_sec``: a launch that ran longer is a failure of its configuration
    (threadtile measures it when the launch finishes; it cannot stop a running kernel). A
    ValueError where the search space is empty or nothing runs."""
    if len(search_space) == 0:
        raise ValueError("Search space is empty.")
    simulated = requested()
    failures: list[tuple] = []
    measured: list[_Candidate] = []
    best: _Candidate | None = None
    for cfg in search_space:
        try:
            k = kernel if isinstance(kernel, Kernel) else kernel(cfg)
            hints = hints_fn(cfg) if hints_fn is not None else {}
            if hints:
                k = k.replace_hints(**hints)
            cand = _Candidate(cfg, grid_fn(cfg), k, args_fn)
            t0 = time.perf_counter()
            _launch(stream, cand.grid, k, args_fn(cfg))  # compiles; a first check
            if not simulated:
                _sync(stream)
                took = time.perf_counter() - t0
                if single_run_timeout_sec is not None and took > single_run_timeout_sec:
                    raise LaunchTimeout(f"CUDA kernel launch exceeded timeout "
                                        f"({took:.1f} s > {single_run_timeout_sec:g} s)")
        except Exception as e:  # noqa: BLE001  (a configuration that fails is skipped)
            failures.append((cfg, type(e), str(e)))
            continue
        if simulated:  # no timing: the first configuration that runs
            measured.append(cand)
            break
        try:
            while not cand.done():
                cand.sample(stream)
                if best is not None and len(cand.samples) >= MIN_SAMPLES and \
                        cand.mean > SLOW_FACTOR * best.mean:
                    break  # cannot win
        except Exception as e:  # noqa: BLE001
            failures.append((cfg, type(e), str(e)))
            continue
        measured.append(cand)
        if best is None or cand.mean < best.mean:
            best = cand
    if not measured:
        cfg, typ, msg = failures[0]
        raise ValueError(f"No valid config found in search space.\nConfig: {cfg}\n"
                         f"{typ.__name__}: {msg}")
    if simulated:
        c = measured[0]
        ms = [Measurement(config=c.cfg, mean_us=math.nan, num_samples=0,
                          error_margin_us=math.nan)]
        top = ms[0]
    else:
        ms = [c.measurement() for c in measured]
        top = ms[measured.index(best)]
    result = TuningResult(best=top, successes=tuple(ms), failures=tuple(failures))
    if not quiet:
        print(result)
    return result
