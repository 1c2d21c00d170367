"""Whether a launch runs in the simulator, asked at every launch.

``simulate()`` sets ``STATE.active`` while its context is open; the environment variable
``THREADTILE_SIMULATE`` asks for the simulator too ("", "0" or unset: no), and is read at each
launch, so a test or a notebook can switch it without re-importing anything. ``requested()``
is the one predicate; the launch path's C base (runtime/_fastlaunch.c, ``Call``) is handed
``STATE`` and the environment's raw mapping and asks the same question without a Python frame.
"""

from __future__ import annotations

import os

ENV = "THREADTILE_SIMULATE"
# os.environ.get costs about a microsecond (it encodes the key and decodes the value); the
# launch path asks at every launch, so it looks in the raw bytes mapping instead
ENV_DATA = getattr(os.environ, "_data", None)
ENV_KEY = os.environ.encodekey(ENV) if hasattr(os.environ, "encodekey") else None


class State:
    """``active``: a ``simulate()`` context is open."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = False


STATE = State()


def requested() -> bool:
    """Whether the next launch should run in the simulator."""
    if STATE.active:
        return True
    if ENV_DATA is not None and ENV_KEY is not None:
        v = ENV_DATA.get(ENV_KEY)
        return v is not None and v not in (b"", b"0")
    return os.environ.get(ENV, "") not in ("", "0")
