"""The fluid on the GPU or in threadtile's simulator: ``Fluid`` owns the fields and launches
the kernels of kernels.py, one time step at a time.

    fluid = Fluid(256, Params(solver="sor"))            # the GPU: torch tensors if torch is there
    fluid = Fluid(64, Params(), backend="simulator")    # NumPy arrays, launches simulated
    for _ in range(100):
        fluid.step()
    dye = fluid.field("d")                               # a float32 NumPy copy
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable

import numpy as np

import threadtile as cuda

from . import kernels as K
from .params import Params

FIELDS = ("u", "v", "d", "p")
BACKENDS = ("auto", "simulator", "torch", "device")


class Fluid:
    """The state of one simulation (velocity ``u, v``, dye ``d``, pressure ``p``: float32
    arrays of ``shape``) and the launches that advance it.

    ``backend``: ``"simulator"`` (NumPy arrays; every launch in ``threadtile.simulate(checks)``),
    ``"torch"`` (CUDA tensors), ``"device"`` (threadtile device arrays), or ``"auto"``: torch if
    it is installed, else device arrays.
    """

    def __init__(self, shape: int | tuple[int, int], params: Params | None = None,
                 backend: str = "auto", checks: bool | set | dict = True) -> None:
        h, w = (shape, shape) if isinstance(shape, int) else tuple(shape)
        if min(h, w) < 4:
            raise ValueError(f"the grid must be at least 4x4 cells, not {h}x{w}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        if backend == "auto":
            backend = "torch" if importlib.util.find_spec("torch") else "device"
        self.shape = (h, w)
        self.params = params or Params()
        self.backend, self.checks = backend, checks
        self._alloc = _allocator(backend)
        self.a = {name: self._alloc(np.zeros((h, w), np.float32))
                  for name in ("u", "v", "d", "p", "u2", "v2", "d2", "p2", "w", "b")}
        grid = (cuda.cdiv(w, K.BLOCK[0]), cuda.cdiv(h, K.BLOCK[1]))
        self._partial = self._alloc(np.zeros(grid[0] * grid[1], np.float32))
        self._curl = K.curl[grid, K.BLOCK]
        self._forces = K.forces[grid, K.BLOCK]
        self._advect = K.advect[grid, K.BLOCK]
        self._divergence = K.divergence[grid, K.BLOCK]
        self._project = K.project[grid, K.BLOCK]
        self._residual = K.residual[grid, K.BLOCK]
        self._relaxers: dict = {}
        self.steps = 0

    # -- fields ----------------------------------------------------------------------------------

    def field(self, name: str) -> np.ndarray:
        """A float32 NumPy copy of field ``name``: ``u``, ``v``, ``d``, ``p``, or the last
        step's divergence ``b`` or vorticity ``w``."""
        if name not in (*FIELDS, "b", "w"):
            raise KeyError(f"no field {name!r}: the fields are {FIELDS + ('b', 'w')}")
        return _to_host(self.a[name])

    def set_fields(self, **fields: np.ndarray) -> None:
        """Replace fields (``u=..., d=...``) with copies of NumPy arrays of the grid's shape."""
        for name, value in fields.items():
            if name not in FIELDS:
                raise KeyError(f"no field {name!r}: the fields are {FIELDS}")
            value = np.asarray(value)
            if value.shape != self.shape:
                raise ValueError(f"{name}: shape {value.shape} is not the grid's {self.shape}")
            self.a[name] = self._alloc(np.ascontiguousarray(value, np.float32))

    # -- stepping --------------------------------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Advance ``n`` time steps."""
        with self._where():
            for _ in range(n):
                self._step()

    def _step(self) -> None:
        a, prm = self.a, self.params
        h, w = self.shape
        f32 = np.float32
        sx, sy, sr = prm.source(w, h)
        self._curl(a["u"], a["v"], a["w"])
        self._forces(a["u"], a["v"], a["d"], a["w"], f32(prm.dt), f32(prm.vorticity),
                     f32(prm.buoyancy), f32(sx), f32(sy), f32(sr), f32(prm.inflow))
        self._advect(a["u"], a["v"], a["d"], a["u2"], a["v2"], a["d2"], f32(prm.dt))
        for k in ("u", "v", "d"):
            a[k], a[k + "2"] = a[k + "2"], a[k]
        self._divergence(a["u"], a["v"], a["b"])
        self._solve(prm.iters, prm.per_launch, prm.solver)
        self._project(a["u"], a["v"], a["p"])
        self.steps += 1

    def _solve(self, iters: int, per_launch: int, solver: str,
               each: Callable[[int], None] | None = None) -> None:
        a = self.a
        redblack = solver == "sor"
        omega = np.float32(self.params.relaxation(self.shape, solver))
        done = 0
        while done < iters:
            k = min(per_launch, iters - done)
            passes = 2 * k if redblack else k
            self._relaxer(passes, redblack)(a["p"], a["b"], a["p2"], omega, passes,
                                            int(redblack))
            a["p"], a["p2"] = a["p2"], a["p"]
            done += k
            if each is not None:
                each(done)

    def _relaxer(self, passes: int, redblack: bool):
        """``relax``'s launch configuration for ``passes`` (made once: a launch made again at
        every call would add its host time to each of a step's many launches)."""
        key = (passes, redblack)
        if key not in self._relaxers:
            grid = K.relax_grid(self.shape, passes)
            self._relaxers[key] = K.relax[grid, K.BLOCK, 0, K.relax_smem(redblack)]
        return self._relaxers[key]

    # -- diagnostics -----------------------------------------------------------------------------

    def residual(self) -> float:
        """The RMS residual of the pressure equation for the current ``p`` and ``b``."""
        with self._where():
            self._residual(self.a["p"], self.a["b"], self._partial)
        total = float(np.sum(_to_host(self._partial), dtype=np.float64))
        return (total / (self.shape[0] * self.shape[1])) ** 0.5

    def residual_history(self, iters: int, solver: str, per_launch: int = 1) -> list[float]:
        """The RMS residual of a pressure solve of the last step's divergence ``b`` from
        ``p = 0``: first before the solve, then after each launch (``per_launch`` iterations).
        The fields are left as they were."""
        saved = self.a["p"]
        self.a["p"] = self._alloc(np.zeros(self.shape, np.float32))
        history = [self.residual()]
        try:
            with self._where():
                self._solve(iters, per_launch, solver, each=lambda _: history.append(
                    self.residual()))
        finally:
            self.a["p"] = saved
        return history

    def _where(self) -> contextlib.AbstractContextManager:
        if self.backend == "simulator":
            return cuda.simulate(checks=self.checks)
        return contextlib.nullcontext()


def _allocator(backend: str) -> Callable[[np.ndarray], object]:
    if backend == "simulator":
        return lambda a: np.array(a, np.float32, copy=True)
    if backend == "torch":
        import torch  # noqa: PLC0415

        return lambda a: torch.from_numpy(np.array(a, np.float32, copy=True)).to("cuda")
    return lambda a: cuda.to_device(np.array(a, np.float32, copy=True))


def _to_host(a) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a.copy()
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host()
    return a.detach().cpu().numpy()
