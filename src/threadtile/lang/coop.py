"""Cooperative groups, numba's ``cuda.cg``: the grid as a group whose ``sync()`` is a barrier
across every thread of the launch.

A kernel that calls ``cg.this_grid()`` is *cooperative* (numba's rule): it is launched with
``cuLaunchCooperativeKernel``, which refuses a grid larger than what the device can hold
resident at once, since a grid barrier can only be met by blocks that all run together.
"""

from __future__ import annotations

from .thread import _here, _intrinsic


class GridGroup:
    """What ``cg.this_grid()`` returns: the launch's whole grid. At compile time it is an
    object with no runtime value (as numba's grid group is an opaque handle)."""

    sync = staticmethod(_intrinsic("cg.grid_sync", """grid.sync(): barrier for every thread of
the grid; the writes made before it by any thread are seen by every thread after it. Every
thread of the launch must reach it, as every thread of a block must reach syncthreads()."""))

    def __repr__(self) -> str:
        return "threadtile.cg.GridGroup()"


GRID = GridGroup()


def _this_grid() -> GridGroup:
    _here("cg.this_grid")
    return GRID


_this_grid._threadtile_intrinsic = "cg.this_grid"
_this_grid.__name__ = _this_grid.__qualname__ = "this_grid"
_this_grid.__doc__ = """this_grid() -> the grid group of the launch (``g.sync()`` is a grid-wide
barrier). A kernel that uses it is launched cooperatively."""


class _CG:
    this_grid = staticmethod(_this_grid)

    def __repr__(self) -> str:
        return "threadtile.cg"


cg = _CG()
