"""The fluid's scheme in NumPy, float64: the reference the kernels are tested against.

The same operations as kernels.py, cell for cell (see its docstring for the grid, the walls
and the units), written with whole-array operations; ``step`` is one time step of
``solver.Fluid.step`` with the same parameters.
"""

from __future__ import annotations

import numpy as np

from .params import Params


def _shift(a: np.ndarray, dy: int, dx: int, mode: str) -> np.ndarray:
    """``a[y + dy, x + dx]`` for every cell: outside the box the nearest cell's value
    (``mode="edge"``) or zero (``mode="zero"``)."""
    pad = np.pad(a, 1, mode="edge" if mode == "edge" else "constant")
    h, w = a.shape
    return pad[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]


def curl(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return 0.5 * ((_shift(v, 0, 1, "edge") - _shift(v, 0, -1, "edge"))
                  - (_shift(u, 1, 0, "edge") - _shift(u, -1, 0, "edge")))


def forces(u, v, d, w, prm: Params) -> None:
    """Confinement, buoyancy and the source, in place."""
    a = np.abs(w)
    gx = 0.5 * (_shift(a, 0, 1, "edge") - _shift(a, 0, -1, "edge"))
    gy = 0.5 * (_shift(a, 1, 0, "edge") - _shift(a, -1, 0, "edge"))
    inv = prm.vorticity / (np.sqrt(gx * gx + gy * gy) + 1e-5)
    u += prm.dt * (inv * gy * w)
    v += prm.dt * (prm.buoyancy * d - inv * gx * w)
    h, wd = u.shape
    sx, sy, sr = prm.source(wd, h)
    y, x = np.mgrid[0:h, 0:wd]
    disc = (x - sx) ** 2 + (y - sy) ** 2 <= sr * sr
    d[disc] = 1.0
    v[disc] = prm.inflow


def _sample(q: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    h, w = q.shape
    x0 = np.minimum(np.floor(x).astype(np.int64), w - 2)
    y0 = np.minimum(np.floor(y).astype(np.int64), h - 2)
    fx, fy = x - x0, y - y0
    a, b = q[y0, x0], q[y0, x0 + 1]
    c, e = q[y0 + 1, x0], q[y0 + 1, x0 + 1]
    lo, hi = a + fx * (b - a), c + fx * (e - c)
    return lo + fy * (hi - lo)


def advect(u, v, d, dt: float):
    h, w = u.shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    xs = np.clip(x - dt * u, 0.0, w - 1.0)
    ys = np.clip(y - dt * v, 0.0, h - 1.0)
    u2, v2, d2 = _sample(u, xs, ys), _sample(v, xs, ys), _sample(d, xs, ys)
    u2[:, [0, -1]] = 0.0
    v2[[0, -1], :] = 0.0
    return u2, v2, d2


def divergence(u, v) -> np.ndarray:
    return 0.5 * ((_shift(u, 0, 1, "zero") - _shift(u, 0, -1, "zero"))
                  + (_shift(v, 1, 0, "zero") - _shift(v, -1, 0, "zero")))


def neighbours(shape) -> np.ndarray:
    """How many of each cell's four neighbours are inside the box."""
    h, w = shape
    y, x = np.mgrid[0:h, 0:w]
    walls = (x == 0).astype(int) + (x == w - 1) + (y == 0) + (y == h - 1)
    return (4 - walls).astype(np.float64)


def _nsum(p: np.ndarray) -> np.ndarray:
    return (_shift(p, 0, 1, "zero") + _shift(p, 0, -1, "zero")
            + _shift(p, 1, 0, "zero") + _shift(p, -1, 0, "zero"))


def residual(p, b) -> float:
    """The RMS of ``b - sum over neighbours (p_n - p)``."""
    r = b - (_nsum(p) - neighbours(p.shape) * p)
    return float(np.sqrt(np.mean(r * r)))


def jacobi(p, b, iters: int, omega: float = 1.0, history: list | None = None) -> np.ndarray:
    nb = neighbours(p.shape)
    for _ in range(iters):
        gs = (_nsum(p) - b) / nb
        p = p + omega * (gs - p)
        if history is not None:
            history.append(residual(p, b))
    return p


def sor(p, b, iters: int, omega: float, history: list | None = None) -> np.ndarray:
    """Red-black SOR: cells with ``x + y`` even, then odd."""
    nb = neighbours(p.shape)
    h, w = p.shape
    y, x = np.mgrid[0:h, 0:w]
    colours = [(x + y) % 2 == 0, (x + y) % 2 == 1]
    p = p.copy()
    for _ in range(iters):
        for m in colours:
            gs = (_nsum(p) - b) / nb
            p[m] += omega * (gs[m] - p[m])
        if history is not None:
            history.append(residual(p, b))
    return p


def project(u, v, p) -> None:
    u -= 0.5 * (_shift(p, 0, 1, "edge") - _shift(p, 0, -1, "edge"))
    v -= 0.5 * (_shift(p, 1, 0, "edge") - _shift(p, -1, 0, "edge"))
    u[:, [0, -1]] = 0.0
    v[[0, -1], :] = 0.0


def step(state: dict, prm: Params) -> dict:
    """One time step of the fields ``state`` (``u, v, d, p``: float64 arrays), as a new dict."""
    u, v, d, p = (state[k].copy() for k in ("u", "v", "d", "p"))
    w = curl(u, v)
    forces(u, v, d, w, prm)
    u, v, d = advect(u, v, d, prm.dt)
    b = divergence(u, v)
    if prm.solver == "jacobi":
        p = jacobi(p, b, prm.iters, prm.relaxation(p.shape))
    else:
        p = sor(p, b, prm.iters, prm.relaxation(p.shape))
    project(u, v, p)
    return {"u": u, "v": v, "d": d, "p": p}
