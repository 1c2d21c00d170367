"""Tuning: a kernel's configuration chosen by timing it.

- :mod:`.engine`: the search (each configuration compiled and launched once, then timed with
  CUDA events; in the simulator the first that runs), shared by ``ct.tune.exhaustive_search``
  and ``@autotune``;
- :mod:`.autotuner`: ``@threadtile.autotune(configs=[threadtile.Config(...)], key=[...])``;
- :mod:`.store`: the choices kept on disk, in threadtile's cache folder.

docs/torch.md ("Autotuning") is the user's guide.
"""

from __future__ import annotations

from .autotuner import ENV, Autotuner, Choice, Config, TuningWarning, autotune
from .engine import LaunchTimeout, Measurement, TuningResult
from .store import TuningRecord, clear, list_cached

__all__ = ["autotune", "Autotuner", "Config", "Choice", "TuningWarning", "TuningResult",
           "Measurement", "LaunchTimeout", "TuningRecord", "list_cached", "clear", "ENV"]
