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

The search itself is ``threadtile.tuning.engine``'s, shared with ``@threadtile.autotune``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..jit import Kernel, Launch
from ..runtime.mode import requested
from ..tuning import engine
from ..tuning.engine import LaunchTimeout, Measurement, TuningResult

__all__ = ["exhaustive_search", "TuningResult", "Measurement", "LaunchTimeout"]

T = TypeVar("T")

# the engine's limits, under the names this module has always had
MIN_SAMPLES = engine.MIN_SAMPLES
MAX_SAMPLES = engine.MAX_SAMPLES
MAX_KERNEL_TIME_US = engine.MAX_KERNEL_TIME_US
REL_MARGIN = engine.REL_MARGIN
SLOW_FACTOR = engine.SLOW_FACTOR


def _launch(stream, grid, kernel: Kernel, args: tuple) -> None:
    if not isinstance(args, (tuple, list)):
        raise TypeError("args_fn must return a tuple of the kernel's arguments")
    Launch(kernel, (grid, kernel.block_threads, stream))(*args)


class _SearchTrial:
    """One configuration of ``exhaustive_search``: fresh arguments from ``args_fn`` before
    every launch."""

    def __init__(self, cfg, stream, grid, kernel: Kernel, args_fn):
        self.cfg, self.stream, self.grid, self.kernel, self.args_fn = (
            cfg, stream, grid, kernel, args_fn)
        self.args: Any = None

    def prepare(self) -> None:
        self.args = self.args_fn(self.cfg)

    def launch(self) -> None:
        _launch(self.stream, self.grid, self.kernel, self.args)


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

    made: dict[int, _SearchTrial] = {}

    def make_trial(cfg) -> _SearchTrial:
        # made once a configuration: its kernel (replace_hints makes a new one) keeps the
        # specialization precompile lowered, which the search's launches then use
        t = made.get(id(cfg))
        if t is None:
            k = kernel if isinstance(kernel, Kernel) else kernel(cfg)
            hints = hints_fn(cfg) if hints_fn is not None else {}
            if hints:
                k = k.replace_hints(**hints)
            t = made[id(cfg)] = _SearchTrial(cfg, stream, grid_fn(cfg), k, args_fn)
        return t

    if not requested():  # the configurations' cubins compiled at once, in processes
        from ..builds import precompile  # noqa: PLC0415

        precompile((make_trial(cfg).kernel, args_fn(cfg)) for cfg in search_space)
    result = engine.search(search_space, make_trial, stream, timed=not requested(),
                           single_run_timeout_sec=single_run_timeout_sec)
    if not quiet:
        print(result)
    return result
