"""Whether work runs in the simulator: launches, and the host API (arrays, streams, devices).

``simulate()`` (backends/sim) sets ``STATE.active`` while its context is open; the environment
variable ``THREADTILE_SIMULATE`` asks for the simulator too ("", "0" or unset: no), and is read
at each call, so a test or a notebook can switch it without re-importing anything.
``requested()`` is the one definition of that question: the Python launch path calls it
(through ``backends/sim/switch.py``), and so does the C one (runtime/_fastlaunch.c's ``Call``,
handed this function by ``jit``); the host API asks it when it makes an array, a stream or an
event, and when it answers a device query.
"""

from __future__ import annotations

import os

ENV = "THREADTILE_SIMULATE"

# os.environ.get costs about a microsecond (it encodes the key and decodes the value); every
# launch asks, so the question goes to the raw mapping behind os.environ where there is one
_data = getattr(os.environ, "_data", None)
if isinstance(_data, dict) and hasattr(os.environ, "encodekey"):
    _lookup, _key = _data.get, os.environ.encodekey(ENV)
else:
    _lookup, _key = os.environ.get, ENV
_OFF = frozenset((None, "", "0", b"", b"0"))  # the raw mapping holds bytes on POSIX


class State:
    """``active``: a ``simulate()`` context is open."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = False


STATE = State()


def requested() -> bool:
    """Whether the next launch should run in the simulator."""
    return STATE.active or _lookup(_key) not in _OFF
