"""Who wrote what: the record a simulated launch leaves while :func:`recording` is open.

``threadtile.compare`` (comparison.py) names, for an element where the GPU and the simulator
disagree, the simulator's thread that wrote it. The race check already keeps that: per element
of every global array, the last writer's global thread id and site (checks.py, ``Shadow.w``).
A launch run while a recording is open appends a :class:`Written` holding its
``checks.Launch`` (to turn thread ids and sites into names) and its argument views, whose
shadows outlive the launch. Writers are known only where race checks ran (``simulate()``'s
default).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ...ir.nodes import Loc
from . import checks
from .memory import ArrayRef

__all__ = ["Writer", "Written", "recording", "record"]

# the records of the innermost open recording, or None: lockstep.run appends to it
_open: list[list] = []


@dataclass(frozen=True)
class Writer:
    """The simulated thread that last wrote an element: its block and thread (x, y, z), the
    kernel's line, and whether the write was an atomic update."""

    block: tuple
    thread: tuple
    loc: Loc
    atomic: bool = False

    def __str__(self) -> str:
        b, t = self.block, self.thread
        what = "an atomic update by " if self.atomic else ""
        return (f"{what}thread ({t[0]}, {t[1]}, {t[2]}) of block ({b[0]}, {b[1]}, {b[2]}) at "
                f"{self.loc.filename}:{self.loc.line}")


class Written:
    """One simulated launch: ``writer(arg, index)`` of its ``arg``-th runtime argument (the
    arguments left after ``Constant`` ones, in order)."""

    def __init__(self, launch: checks.Launch, values: list, race_checked: bool):
        self.launch = launch
        self.values = values
        self.race_checked = race_checked

    def writer(self, arg: int, index: tuple) -> Writer | None:
        """The last writer of element ``index`` of argument ``arg``, or None: no thread wrote
        it, it is not an array, or race checks (which keep writers) were off."""
        if not self.race_checked or not 0 <= arg < len(self.values):
            return None
        ref = self.values[arg]
        if not isinstance(ref, ArrayRef) or ref.mem.shadow is None or ref.mem.shadow.w is None:
            return None
        if len(index) != len(ref.shape) or np.ndim(ref.origin) or any(
                np.ndim(s) for s in ref.strides):
            return None
        off = int(ref.origin) + sum(int(i) * int(s) for i, s in zip(index, ref.strides))
        wt, _, wx, _ = ref.mem.shadow.w
        if not 0 <= off < len(wt) or wt[off] < 0:
            return None
        block, thread = self.launch.thread_of(int(wt[off]))
        x = int(wx[off])
        return Writer(block, thread, self.launch.sites[x >> 1].loc, bool(x & 1))


@contextlib.contextmanager
def recording():
    """Collect a :class:`Written` per simulated (lockstep) launch made inside the block: the
    list it yields fills as launches finish."""
    got: list = []
    _open.append(got)
    try:
        yield got
    finally:
        _open.remove(got)


def record(launch: checks.Launch, values: list) -> None:
    """Called by lockstep.run after a launch: keep it where a recording is open."""
    if _open:
        _open[-1].append(Written(launch, values, launch.race))
