"""``threadtile.coop``: cuda.coop's block- and warp-wide primitives (``coop.block.sum``,
``coop.block.radix_sort_keys``, ``coop.warp.reduce``...) called inside thread-level kernels,
compiled to CUB's classes. The reference is lang/collectives.py's docstrings and
docs/coop.md."""

from .lang.collectives import block, warp

__all__ = ["block", "warp"]
