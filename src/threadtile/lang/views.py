"""The types of cuTile's array views in tile kernels: a tiled view (``Array.tiled_view``) and
an array's raw memory (``Array.get_raw_memory``).

Both are arrays at run time (the same view struct in the CUDA backend, the same ``ArrayRef``
in the simulator); what the frontend knows of them at compile time (a tiled view's tile shape,
traversal steps and padding) lives in the type, so that a variable holding one keeps it through
loops and branches, and two paths that make different views are a type error.
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import ArrayType


@dataclass(frozen=True)
class TiledViewType(ArrayType):
    """``array.tiled_view(tile_shape, padding_mode=..., traversal_steps=...)``: the array, cut
    into tiles of ``tile_shape`` (``()``: one element, a 0-d tile) whose origins are
    ``steps`` elements apart along each axis; ``padding`` is the load's padding mode (a
    ``PaddingMode`` value, None for undetermined)."""

    tile_shape: tuple = ()
    steps: tuple = ()
    padding: str | None = None

    @property
    def block_shape(self) -> tuple:
        """The tile shape with one entry per array axis (a 0-d tile is (1, ..., 1))."""
        return self.tile_shape if self.tile_shape or not self.ndim else (1,) * self.ndim

    def __repr__(self) -> str:
        pad = f", padding_mode={self.padding}" if self.padding else ""
        return (f"TiledView<{self.dtype}, {self.ndim}d, tile_shape={self.tile_shape}, "
                f"traversal_steps={self.steps}{pad}>")


@dataclass(frozen=True)
class RawMemoryType(ArrayType):
    """``array.get_raw_memory()``: the memory from the array's first element on, as a 1-d
    C-contiguous array indexed by element offsets."""

    def __repr__(self) -> str:
        return f"RawArrayMemory<{self.dtype}>"
