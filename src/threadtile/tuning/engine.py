"""The timing engine both tuners ride on: ``ct.tune.exhaustive_search`` (tile/tune.py) and
``@threadtile.autotune`` (tuning/autotuner.py).

A caller hands :func:`search` its configurations and, for each, a :class:`Trial`: what to do
before every launch (``prepare``: fresh arguments, values restored; never timed) and the
launch itself. The engine then, configuration by configuration:

1. makes the trial and launches it once (which compiles it). An exception there, or in making
   the trial, is a *failure* of that configuration: it is recorded and the search goes on;
2. without timing (the simulator: ``timed=False``) stops at the first configuration that ran:
   that is the result, with ``mean_us`` NaN and ``num_samples`` 0;
3. otherwise waits for that launch (``single_run_timeout_sec``: a launch that took longer is a
   failure), launches ``warmup`` more times untimed, and times it: with the caller's
   ``do_bench`` where one is given, else launch by launch with CUDA events until the mean is
   known within :data:`REL_MARGIN` (95% confidence), or :data:`MAX_SAMPLES` samples, or
   :data:`MAX_KERNEL_TIME_US` of kernel time; a configuration whose first
   :data:`MIN_SAMPLES` samples average more than :data:`SLOW_FACTOR` times the best mean so
   far stops there (it cannot win).

Each timed launch is preceded on the stream by a short spin kernel, so that the GPU is still
busy while the host records the start event and launches: the events then bracket the kernel
alone, not the host's launch path (tens of microseconds on the general path, as much as a
small kernel takes). Where the spin kernel cannot be built the launches are timed without it.

``time_budget_s`` caps the whole search (compiles included): once it is spent, the
configuration being timed stops with the samples it has and those not yet tried are returned
in ``skipped``. At least one configuration always runs to a result.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ..runtime import streams as rt_streams
from ..runtime.raw import RawKernel

__all__ = ["search", "Trial", "Measurement", "TuningResult", "LaunchTimeout", "MIN_SAMPLES",
           "MAX_SAMPLES", "MAX_KERNEL_TIME_US", "REL_MARGIN", "SLOW_FACTOR"]

T = TypeVar("T")

MIN_SAMPLES = 5
MAX_SAMPLES = 100
MAX_KERNEL_TIME_US = 1_000_000
REL_MARGIN = 0.02
SLOW_FACTOR = 2.0
SPIN_CYCLES = 200_000  # about 100 us at an H100's clock: longer than a launch from Python


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
    that failed to compile or run), ``skipped`` (the configurations not tried because the
    time budget was spent)."""

    best: Measurement
    successes: Sequence[Measurement]
    failures: Sequence[tuple]
    skipped: Sequence = ()

    def summary(self, *, top_k: int = 10, bottom_k: int = 2) -> str:
        """The result as text: counts, the fastest ``top_k`` and slowest ``bottom_k``
        configurations (the best marked ``*``), the failures' first lines."""
        lines = [f"{len(self.successes)} succeeded, {len(self.failures)} failed" +
                 (f", {len(self.skipped)} not tried (time budget)" if self.skipped else "")]
        ranked = sorted(self.successes, key=lambda m: (math.isnan(m.mean_us), m.mean_us))
        shown = list(ranked)
        if len(ranked) > top_k + bottom_k + 1:
            shown = shown[:top_k] + [None] + shown[len(ranked) - bottom_k:]
        for m in shown:
            if m is None:
                lines.append(f"    ... {len(ranked) - top_k - bottom_k} more")
                continue
            mark = "*" if m is self.best else " "
            lines.append(f"{mark} {m.config}: {describe(m)}")
        if self.failures:
            lines.append(f"  {len(self.failures)} failed:")
            for cfg, typ, msg in self.failures[:top_k]:
                lines.append(f"    {cfg}: {typ.__name__}: {first_line(msg)[:80]}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def describe(m: Measurement) -> str:
    """A measurement's time as text (or that the simulator did not time it)."""
    if m.num_samples == 0:
        return "not timed (simulator)"
    return f"{m.mean_us:.1f} ± {m.error_margin_us:.1f} us ({m.num_samples} samples)"


def first_line(msg: str) -> str:
    """The line of an error message that says what went wrong: a compile error's text starts
    with its location (``"k.py", line 3 ...``, indented source and carets follow)."""
    return next((ln for ln in msg.splitlines() if ln and not ln[0].isspace()), msg.strip())


class Trial(Protocol):
    """One configuration, ready to launch: ``prepare()`` runs before every launch and is never
    timed (fresh arguments, restored values); ``launch()`` enqueues one launch on the
    search's stream."""

    def prepare(self) -> None: ...

    def launch(self) -> None: ...


def _sync(stream) -> None:
    ev = rt_streams.event(timing=False)
    ev.record(stream)
    ev.synchronize()


@functools.cache
def _spin_kernel():
    """A kernel that keeps the GPU busy for ``cycles`` clock cycles, or None where it cannot
    be built."""
    try:
        k = RawKernel('extern "C" __global__ void tt_tune_spin(long long cycles) {\n'
                      "    long long t0 = clock64();\n"
                      "    while (clock64() - t0 < cycles) {}\n}\n", "tt_tune_spin")
        k.compile()
        return k
    except Exception:  # noqa: BLE001  (a missing or refusing NVRTC: time without it)
        return None


def _spinner(stream) -> Callable[[], None] | None:
    """What enqueues the spin kernel on ``stream``, or None where it cannot run there (the
    launches are then timed without it)."""
    k = _spin_kernel()
    if k is None:
        return None
    launch = k[1, 1, stream]
    cycles = np.int64(SPIN_CYCLES)
    try:
        launch(cycles)
        _sync(stream)
    except Exception:  # noqa: BLE001
        return None
    return lambda: launch(cycles)


class _Candidate:
    """A configuration's samples, taken with CUDA events around each launch."""

    def __init__(self, cfg, trial: Trial):
        self.cfg, self.trial = cfg, trial
        self.samples: list[float] = []

    def sample(self, stream, spin) -> None:
        self.trial.prepare()
        start, end = rt_streams.event(), rt_streams.event()
        if spin is not None:
            spin()
        start.record(stream)
        self.trial.launch()
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


def _bench(cand: _Candidate, do_bench: Callable, stream) -> Measurement:
    """The caller's ``do_bench(launch)`` (microseconds per launch), counting its launches."""
    count = 0

    def launch() -> None:
        nonlocal count
        cand.trial.prepare()
        cand.trial.launch()
        count += 1

    us = float(do_bench(launch))
    _sync(stream)
    if not math.isfinite(us) or us < 0:
        raise ValueError(f"do_bench returned {us!r}: it must return microseconds per launch")
    return Measurement(config=cand.cfg, mean_us=us, num_samples=max(count, 1),
                       error_margin_us=0.0)


def search(configs: Sequence[T], make_trial: Callable[[T], Trial], stream, *, timed: bool,
           do_bench: Callable[[Callable[[], None]], float] | None = None, warmup: int = 0,
           single_run_timeout_sec: float | None = None, time_budget_s: float | None = None,
           on_failure: Callable[[T, BaseException], Any] | None = None,
           progress: Callable[[str], Any] | None = None) -> TuningResult[T]:
    """Run the search the module's docstring describes over ``configs`` (in order) and return
    its :class:`TuningResult`. ``make_trial(cfg)`` makes a configuration's :class:`Trial`;
    ``timed`` False takes the first configuration that runs. ``on_failure(cfg, exc)`` is
    told of each failure, ``progress(line)`` of each configuration's outcome. A ValueError
    where ``configs`` is empty or none runs."""
    if len(configs) == 0:
        raise ValueError("Search space is empty.")
    deadline = None if time_budget_s is None else time.perf_counter() + time_budget_s
    spin = None
    failures: list[tuple] = []
    measured: list[Measurement] = []
    best: Measurement | None = None
    skipped: list = []

    def fail(cfg, e: BaseException) -> None:
        failures.append((cfg, type(e), str(e)))
        if on_failure is not None:
            on_failure(cfg, e)
        if progress is not None:
            progress(f"  {cfg}: failed, {type(e).__name__}: {first_line(str(e))[:100]}")

    for i, cfg in enumerate(configs):
        if measured and deadline is not None and time.perf_counter() > deadline:
            skipped = list(configs[i:])
            break
        try:
            trial = make_trial(cfg)
            trial.prepare()
            t0 = time.perf_counter()
            trial.launch()  # compiles; a first check
            if timed:
                _sync(stream)
                took = time.perf_counter() - t0
                if single_run_timeout_sec is not None and took > single_run_timeout_sec:
                    raise LaunchTimeout(f"CUDA kernel launch exceeded timeout "
                                        f"({took:.1f} s > {single_run_timeout_sec:g} s)")
        except Exception as e:  # noqa: BLE001  (a configuration that fails is skipped)
            fail(cfg, e)
            continue
        if not timed:  # no timing: the first configuration that runs
            measured.append(Measurement(config=cfg, mean_us=math.nan, num_samples=0,
                                        error_margin_us=math.nan))
            best = measured[0]
            if progress is not None:
                progress(f"  {cfg}: ran (simulator: the first that runs is chosen)")
            break
        cand = _Candidate(cfg, trial)
        if spin is None and do_bench is None:
            spin = _spinner(stream) or (lambda: None)
        try:
            for _ in range(warmup):
                trial.prepare()
                trial.launch()
            if do_bench is not None:
                m = _bench(cand, do_bench, stream)
            else:
                while not cand.done():
                    cand.sample(stream, spin)
                    if best is not None and len(cand.samples) >= MIN_SAMPLES and \
                            cand.mean > SLOW_FACTOR * best.mean_us:
                        break  # cannot win
                    if deadline is not None and time.perf_counter() > deadline:
                        break  # the budget is spent: what it has
                m = cand.measurement()
        except Exception as e:  # noqa: BLE001
            fail(cfg, e)
            continue
        measured.append(m)
        if progress is not None:
            progress(f"  {cfg}: {describe(m)}")
        if best is None or m.mean_us < best.mean_us:
            best = m
    if best is None:
        cfg, typ, msg = failures[0]
        raise ValueError(f"No valid config found in search space.\nConfig: {cfg}\n"
                         f"{typ.__name__}: {msg}")
    return TuningResult(best=best, successes=tuple(measured), failures=tuple(failures),
                        skipped=tuple(skipped))
