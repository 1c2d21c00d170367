"""``raise`` in the lockstep simulator: the first thread of the mask (in lane order: block,
then thread) raises the kernel's exception on the host, named as numba names it."""

from __future__ import annotations

import numpy as np

from ...ir import raises


def raise_first(B, m, k: int) -> None:
    """Raise exception record ``k`` for the first lane of ``B`` in mask ``m``, if any."""
    # a mask of None is every lane
    lanes = np.arange(B.L) if m is None else np.flatnonzero(
        np.broadcast_to(np.asarray(m, bool), (B.L,)))
    if not len(lanes):
        return
    lane = int(lanes[0])

    def at(v) -> int:
        return int(v) if np.ndim(v) == 0 else int(v[lane])

    tid = [at(getattr(B, f"tid_{a}")) for a in "xyz"]
    ctaid = [at(getattr(B, f"ctaid_{a}")) for a in "xyz"]
    raise raises.exception(k, tid, ctaid)
