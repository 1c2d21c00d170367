"""The fluid's parameters, shared by the kernels' driver and the NumPy reference."""

from __future__ import annotations

import dataclasses
import math

SOLVERS = ("jacobi", "sor")
MAX_PASSES = 12  # kernels.relax's passes per launch: its 64-cell tile keeps 64 - 2 * 12 = 40


@dataclasses.dataclass(frozen=True)
class Params:
    """One simulation's constants. Lengths are in cells, velocities in cells per time unit.

    - ``dt``: the time step.
    - ``solver``: ``"jacobi"`` (weighted Jacobi, ``omega`` 1 by default) or ``"sor"``
      (red-black successive over-relaxation).
    - ``iters``: pressure iterations per step (a red-black iteration is a red and a black
      half-sweep).
    - ``per_launch``: iterations done in one ``relax`` launch (temporal blocking); the last
      launch of a step takes what is left. At most 12 Jacobi or 6 red-black iterations (a
      red-black iteration is two passes; a launch makes at most ``MAX_PASSES``).
    - ``omega``: the relaxation weight; ``None``: 1 for Jacobi, ``2 / (1 + sin(pi / n))``
      (the optimum for the Laplacian on an n x n grid) for SOR.
    - ``vorticity``: the confinement strength; ``buoyancy``: upward force per unit of dye.
    - ``inflow``: the vertical velocity in the source disc; ``source_x``, ``source_y``,
      ``source_r``: its centre and radius as fractions of the width (x, r) and height (y).
    """

    dt: float = 0.5
    solver: str = "jacobi"
    iters: int = 40
    per_launch: int = 4
    omega: float | None = None
    vorticity: float = 0.3
    buoyancy: float = 0.05
    inflow: float = 2.0
    source_x: float = 0.5
    source_y: float = 0.1
    source_r: float = 0.06

    def __post_init__(self) -> None:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, not {self.solver!r}")
        for name in ("iters", "per_launch"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, not {value!r}")
        if self.per_launch * (2 if self.solver == "sor" else 1) > MAX_PASSES:
            raise ValueError(f"per_launch: at most {MAX_PASSES} passes per launch, and a "
                             f"{self.solver} iteration makes {2 if self.solver == 'sor' else 1}")
        if not self.dt > 0:
            raise ValueError(f"dt must be positive, not {self.dt!r}")
        if self.omega is not None and not 0 < self.omega < 2:
            raise ValueError(f"omega must lie in (0, 2), not {self.omega!r}")

    def relaxation(self, shape: tuple[int, int], solver: str | None = None) -> float:
        """``omega``, or its default for the grid's ``shape`` and ``solver`` (by default
        ``self.solver``; another solver than this one's takes its own default)."""
        solver = solver or self.solver
        if self.omega is not None and solver == self.solver:
            return self.omega
        if solver == "jacobi":
            return 1.0
        return 2.0 / (1.0 + math.sin(math.pi / max(shape)))

    def source(self, w: int, h: int) -> tuple[float, float, float]:
        """The source disc's centre and radius in cells, rounded to quarters of a cell (exact
        in float32, so the kernels and the reference agree on which cells it covers)."""
        q = 4.0
        return (round(self.source_x * (w - 1) * q) / q, round(self.source_y * (h - 1) * q) / q,
                max(1.0, round(self.source_r * w * q) / q))
