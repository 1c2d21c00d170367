"""The fluid's scheme written with torch tensor operations: the peer bench/fluid.py times the
kernels against (the same operations as kernels.py and reference.py, in float32, on any torch
device). Advection is ``grid_sample`` (bilinear, ``align_corners=True``: the cell centres are
the sample points; departure points clamped first, as the kernels do); a Jacobi iteration is a
``conv2d`` with the 5-point cross (zero padding: a neighbour outside the box adds nothing).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .params import Params


class TorchFluid:
    """The fields ``u, v, d, p`` as ``(H, W)`` float32 tensors on ``device``."""

    def __init__(self, shape: int | tuple[int, int], params: Params | None = None,
                 device: str | torch.device = "cuda") -> None:
        h, w = (shape, shape) if isinstance(shape, int) else tuple(shape)
        self.shape, self.params, self.device = (h, w), params or Params(), torch.device(device)
        z = dict(dtype=torch.float32, device=self.device)
        self.f = {k: torch.zeros(h, w, **z) for k in ("u", "v", "d", "p")}
        y, x = torch.meshgrid(torch.arange(h, **z), torch.arange(w, **z), indexing="ij")
        self._x, self._y = x, y
        walls = (x == 0).float() + (x == w - 1).float() + (y == 0).float() + (y == h - 1).float()
        self._inv_nb = 1.0 / (4.0 - walls)
        self._red = ((x + y).remainder(2) == 0)
        self._cross = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
                                   **z).view(1, 1, 3, 3)
        sx, sy, sr = self.params.source(w, h)
        self._disc = (x - sx) ** 2 + (y - sy) ** 2 <= sr * sr
        self._wall_x = (x == 0) | (x == w - 1)
        self._wall_y = (y == 0) | (y == h - 1)
        self._omega = self.params.relaxation((h, w))

    def set_fields(self, **fields) -> None:
        for k, value in fields.items():
            self.f[k] = torch.as_tensor(value, dtype=torch.float32).to(self.device).clone()

    def field(self, name: str):
        return self.f[name].detach().cpu().numpy()

    # -- the operations ----------------------------------------------------------------------

    @staticmethod
    def _dx(a: torch.Tensor, mode: str) -> torch.Tensor:
        """``a[y, x + 1] - a[y, x - 1]``, outside the box ``a``'s edge value or zero."""
        pad = F.pad(a[None, None], (1, 1, 0, 0), mode=mode)[0, 0]
        return pad[:, 2:] - pad[:, :-2]

    @staticmethod
    def _dy(a: torch.Tensor, mode: str) -> torch.Tensor:
        pad = F.pad(a[None, None], (0, 0, 1, 1), mode=mode)[0, 0]
        return pad[2:, :] - pad[:-2, :]

    def _nsum(self, p: torch.Tensor) -> torch.Tensor:
        return F.conv2d(p[None, None], self._cross, padding=1)[0, 0]

    def step(self) -> None:
        u, v, d, p = (self.f[k] for k in ("u", "v", "d", "p"))
        prm = self.params
        h, w = self.shape
        # curl, confinement, buoyancy, source
        wc = 0.5 * (self._dx(v, "replicate") - self._dy(u, "replicate"))
        a = wc.abs()
        gx = 0.5 * self._dx(a, "replicate")
        gy = 0.5 * self._dy(a, "replicate")
        inv = prm.vorticity / (torch.sqrt(gx * gx + gy * gy) + 1e-5)
        u = u + prm.dt * (inv * gy * wc)
        v = v + prm.dt * (prm.buoyancy * d - inv * gx * wc)
        d = torch.where(self._disc, 1.0, d)
        v = torch.where(self._disc, prm.inflow, v)
        # advection
        xs = (self._x - prm.dt * u).clamp_(0, w - 1)
        ys = (self._y - prm.dt * v).clamp_(0, h - 1)
        grid = torch.stack((xs * (2.0 / (w - 1)) - 1.0, ys * (2.0 / (h - 1)) - 1.0), dim=-1)
        fields = torch.stack((u, v, d))[None]
        u, v, d = F.grid_sample(fields, grid[None], mode="bilinear", padding_mode="border",
                                align_corners=True)[0]
        u = u.masked_fill(self._wall_x, 0.0)
        v = v.masked_fill(self._wall_y, 0.0)
        # pressure
        b = 0.5 * (self._dx(u, "constant") + self._dy(v, "constant"))
        p = self.solve(p, b, prm.iters)
        # projection
        u = (u - 0.5 * self._dx(p, "replicate")).masked_fill_(self._wall_x, 0.0)
        v = (v - 0.5 * self._dy(p, "replicate")).masked_fill_(self._wall_y, 0.0)
        self.f.update(u=u.contiguous(), v=v.contiguous(), d=d.contiguous(), p=p)

    def solve(self, p: torch.Tensor, b: torch.Tensor, iters: int) -> torch.Tensor:
        """``iters`` Jacobi or red-black SOR iterations from ``p``."""
        omega = self._omega
        if self.params.solver == "jacobi":
            for _ in range(iters):
                gs = self._nsum(p).sub_(b).mul_(self._inv_nb)
                p = gs if omega == 1.0 else p.lerp_(gs, omega)
            return p
        p = p.clone()
        for _ in range(iters):
            for m in (self._red, ~self._red):
                gs = self._nsum(p).sub_(b).mul_(self._inv_nb)
                p = torch.where(m, p.lerp(gs, omega), p)
        return p
