"""Whether a launch runs in the simulator, asked at every launch: ``requested()``.

The state lives in ``runtime/mode.py``, below this package, because the host API of the
runtime (device arrays, streams, events, device queries) asks the same question: made under
``simulate()`` or with ``THREADTILE_SIMULATE`` set, an array lives in the simulator's host
memory. This module is the simulator's name for it; ``jit`` hands ``requested`` to the C launch
path (runtime/_fastlaunch.c's ``Call``).
"""

from __future__ import annotations

from ...runtime.mode import ENV, STATE, State, requested

__all__ = ["ENV", "STATE", "State", "requested"]
