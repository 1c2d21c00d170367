"""The fluid's kernels: thread-level, written with numba.cuda's names (``import threadtile as
cuda``). Every field is a float32 array of shape ``(H, W)`` indexed ``[y, x]``: a warp's 32
threads take 32 consecutive ``x`` of one row, so every global load and store is coalesced.

The grid is collocated (Stam's "stable fluids"): velocity ``(u, v)``, pressure ``p`` and dye
``d`` all live at cell centres; lengths are in cells. The box is closed:

- the normal velocity is zero on the walls (``u`` in the first and last column, ``v`` in the
  first and last row), and zero outside them, where the divergence reads it;
- the pressure has a zero normal derivative there (Neumann): a neighbour outside the box does
  not take part in the Laplacian (a cell on the wall has 3 neighbours, a corner 2), and the
  gradient reads the wall cell's own value in its place;
- the curl and the confinement force read the nearest cell inside (clamped indices);
- a semi-Lagrangian departure point is clamped to the cell centres, ``[0, W-1] x [0, H-1]``.

The pressure ``p`` is ``dt`` times the physical pressure: ``sum over neighbours (p_n - p) = b``
with ``b = div u``, and the projection subtracts ``grad p`` without a ``dt``.

``relax`` does the pressure iterations: Jacobi or red-black SOR (both ``p + omega * (gs - p)``
with ``gs`` the Gauss-Seidel value), several per launch (temporal blocking): a block loads a
64x64 tile (``SPAN``) whose halo is as wide as the passes it makes (a Jacobi iteration is one
pass, a red-black one two), relaxes the whole tile in shared memory, the valid part shrinking
by one cell per pass, and writes the interior, ``64 - 2 * passes`` cells a side. The result is
exactly that of the same passes over the whole grid, one launch each; global memory sees one
read of ``p`` and ``b`` and one write of ``p`` per launch, however many passes it makes.
"""

from __future__ import annotations

import math

import numpy as np

import threadtile as cuda
from threadtile import Constant

from .params import MAX_PASSES

BLOCK = (32, 8)  # threads of every kernel: 32 consecutive x of 8 rows
THREADS = BLOCK[0] * BLOCK[1]
SPAN = 2 * BLOCK[0]  # the side of relax's tile, halo included: two columns per thread
ROWS = SPAN // BLOCK[1]  # the rows of relax's tile each thread takes


def _clamp_f(x, lo, hi):
    return min(max(x, lo), hi)


def _bilerp(q, x0, y0, fx, fy):
    """``q`` at ``(x0 + fx, y0 + fy)``, bilinearly, for ``0 <= fx, fy <= 1``."""
    a = q[y0, x0]
    b = q[y0, x0 + 1]
    c = q[y0 + 1, x0]
    d = q[y0 + 1, x0 + 1]
    lo = a + fx * (b - a)
    hi = c + fx * (d - c)
    return lo + fy * (hi - lo)


@cuda.jit
def curl(u, v, w):
    """``w = dv/dx - du/dy`` by central differences (clamped at the walls)."""
    i, j = cuda.grid(2)
    h, wd = u.shape
    if i < wd and j < h:
        vr = v[j, min(i + 1, wd - 1)]
        vl = v[j, max(i - 1, 0)]
        ut = u[min(j + 1, h - 1), i]
        ub = u[max(j - 1, 0), i]
        w[j, i] = 0.5 * ((vr - vl) - (ut - ub))


@cuda.jit
def forces(u, v, d, w, dt, eps, buoyancy, sx, sy, sr, inflow):
    """Vorticity confinement and buoyancy added to the velocity, then the source: the dye set
    to 1 and ``v`` to ``inflow`` in the disc of radius ``sr`` around ``(sx, sy)``.

    Confinement: ``f = eps * (N x w)`` with ``N = grad|w| / |grad|w||``, that is
    ``(eps * N_y * w, -eps * N_x * w)``; buoyancy: ``buoyancy * d`` upwards (towards +y)."""
    i, j = cuda.grid(2)
    h, wd = u.shape
    if i < wd and j < h:
        wc = w[j, i]
        gx = 0.5 * (abs(w[j, min(i + 1, wd - 1)]) - abs(w[j, max(i - 1, 0)]))
        gy = 0.5 * (abs(w[min(j + 1, h - 1), i]) - abs(w[max(j - 1, 0), i]))
        inv = eps / (math.sqrt(gx * gx + gy * gy) + 1e-5)
        dc = d[j, i]
        uc = u[j, i] + dt * (inv * gy * wc)
        vc = v[j, i] + dt * (buoyancy * dc - inv * gx * wc)
        rx = np.float32(i) - sx
        ry = np.float32(j) - sy
        if rx * rx + ry * ry <= sr * sr:
            dc = np.float32(1.0)
            vc = inflow
        u[j, i] = uc
        v[j, i] = vc
        d[j, i] = dc


@cuda.jit
def advect(u, v, d, u2, v2, d2, dt):
    """Semi-Lagrangian advection of ``u``, ``v`` and the dye: each cell takes the bilinear value
    at its departure point ``x - dt * u(x)`` (clamped to the box), into ``u2, v2, d2``; then
    the wall condition on ``u2, v2``."""
    i, j = cuda.grid(2)
    h, wd = u.shape
    if i < wd and j < h:
        x = _clamp_f(np.float32(i) - dt * u[j, i], np.float32(0.0), np.float32(wd - 1))
        y = _clamp_f(np.float32(j) - dt * v[j, i], np.float32(0.0), np.float32(h - 1))
        x0 = min(int(x), wd - 2)
        y0 = min(int(y), h - 2)
        fx = x - np.float32(x0)
        fy = y - np.float32(y0)
        uu = _bilerp(u, x0, y0, fx, fy)
        vv = _bilerp(v, x0, y0, fx, fy)
        d2[j, i] = _bilerp(d, x0, y0, fx, fy)
        u2[j, i] = np.float32(0.0) if i == 0 or i == wd - 1 else uu
        v2[j, i] = np.float32(0.0) if j == 0 or j == h - 1 else vv


@cuda.jit
def divergence(u, v, b):
    """``b = du/dx + dv/dy`` by central differences; the normal velocity outside is zero."""
    i, j = cuda.grid(2)
    h, wd = u.shape
    if i < wd and j < h:
        ur = u[j, i + 1] if i + 1 < wd else np.float32(0.0)
        ul = u[j, i - 1] if i > 0 else np.float32(0.0)
        vt = v[j + 1, i] if j + 1 < h else np.float32(0.0)
        vb = v[j - 1, i] if j > 0 else np.float32(0.0)
        b[j, i] = 0.5 * ((ur - ul) + (vt - vb))


@cuda.jit
def project(u, v, p):
    """``u -= grad p`` (central differences, Neumann at the walls), then the wall condition."""
    i, j = cuda.grid(2)
    h, wd = u.shape
    if i < wd and j < h:
        pr = p[j, min(i + 1, wd - 1)]
        pl = p[j, max(i - 1, 0)]
        pt = p[min(j + 1, h - 1), i]
        pb = p[max(j - 1, 0), i]
        uc = u[j, i] - 0.5 * (pr - pl)
        vc = v[j, i] - 0.5 * (pt - pb)
        u[j, i] = np.float32(0.0) if i == 0 or i == wd - 1 else uc
        v[j, i] = np.float32(0.0) if j == 0 or j == h - 1 else vc


@cuda.jit
def residual(p, b, partial):
    """The squared residual ``(b - sum over neighbours (p_n - p))**2`` summed over each block's
    cells into ``partial[block]`` (a shared-memory tree reduction; the host adds the blocks)."""
    i, j = cuda.grid(2)
    h, wd = p.shape
    acc = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.y * BLOCK[0] + cuda.threadIdx.x
    r = np.float32(0.0)
    if i < wd and j < h:
        pc = p[j, i]
        s = np.float32(0.0)
        if i > 0:
            s += p[j, i - 1] - pc
        if i + 1 < wd:
            s += p[j, i + 1] - pc
        if j > 0:
            s += p[j - 1, i] - pc
        if j + 1 < h:
            s += p[j + 1, i] - pc
        r = b[j, i] - s
    acc[t] = r * r
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            acc[t] += acc[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x] = acc[0]


@cuda.jit
def relax(p, b, out, omega, passes: Constant[int], redblack: Constant[int]):
    """``passes`` relaxation passes of ``p`` for ``sum over neighbours (p_n - p) = b``, into
    ``out`` (not ``p``: other blocks read ``p``'s halo). Each pass sets a cell to
    ``p + omega * (gs - p)``, ``gs = (sum of the neighbours inside the box - b) / their
    number``; with ``redblack`` 0 every cell from the previous pass's values (weighted Jacobi),
    else the cells with ``x + y`` even on even passes and odd on odd ones, in place (SOR).

    A block's tile is ``SPAN x SPAN`` cells, of which it writes the ``SPAN - 2 * passes``
    square inside the halo; the launch grid is ``relax_grid``. A thread keeps to column ``x``
    and ``x + 32`` (Jacobi) or to the one of ``2x, 2x + 1`` of the pass's colour (red-black)
    and walks down the rows ``y, y + 8, ...``: no division, every lane busy. Dynamic shared
    memory: ``relax_smem(redblack)`` bytes."""
    n = SPAN * SPAN
    sh = cuda.shared.array(0, np.float32)  # [b | p, buffer 0 | p, buffer 1 (Jacobi only)]
    h, wd = p.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    ox = cuda.blockIdx.x * (SPAN - 2 * passes) - passes  # the tile's first cell in the grid
    oy = cuda.blockIdx.y * (SPAN - 2 * passes) - passes
    # loops of constant trip counts: the compiler unrolls them and issues the loads together
    for r in range(ROWS):
        ly = ty + r * BLOCK[1]
        gy = oy + ly
        for half in range(2):
            lx = tx + half * BLOCK[0]
            gx = ox + lx
            c = ly * SPAN + lx
            # read the nearest cell inside, unconditionally (no branch between the loads),
            # and keep 0 for a cell outside: it adds nothing to its neighbours' sums
            cx = min(max(gx, 0), wd - 1)
            cy = min(max(gy, 0), h - 1)
            inside = cx == gx and cy == gy
            pv = p[cy, cx]
            bv = b[cy, cx]
            pv = pv if inside else np.float32(0.0)
            sh[c] = bv if inside else np.float32(0.0)
            sh[n + c] = pv
            if redblack == 0:
                sh[2 * n + c] = pv  # the edges of buffer 1 are read, never written
    cuda.syncthreads()
    # a block away from the walls: every cell inside the box, four neighbours each
    interior = ox >= 0 and oy >= 0 and ox + SPAN <= wd and oy + SPAN <= h
    for k in range(passes):
        src = n + (k % 2) * n if redblack == 0 else n
        dst = n + ((k + 1) % 2) * n if redblack == 0 else n
        # cells within k of the tile's edge are not needed any more
        for r in range(ROWS):
            ly = ty + r * BLOCK[1]
            gy = oy + ly
            for half in range(2 if redblack == 0 else 1):
                if redblack == 0:
                    lx = tx + half * BLOCK[0]
                else:
                    lx = 2 * tx + ((k + ox + oy + ly) & 1)  # the cell of this pass's colour
                gx = ox + lx
                if k < lx < SPAN - 1 - k and k < ly < SPAN - 1 - k:
                    q = ly * SPAN + lx
                    s4 = sh[src + q - 1] + sh[src + q + 1] + sh[src + q - SPAN] \
                        + sh[src + q + SPAN] - sh[q]
                    old = sh[src + q]
                    if interior:
                        sh[dst + q] = old + omega * (np.float32(0.25) * s4 - old)
                    elif 0 <= gx < wd and 0 <= gy < h:  # outside the box stays 0
                        nb = 4 - int(gx == 0) - int(gx == wd - 1) - int(gy == 0) \
                            - int(gy == h - 1)
                        sh[dst + q] = old + omega * (s4 / np.float32(nb) - old)
        cuda.syncthreads()
    fin = n + (passes % 2) * n if redblack == 0 else n
    for r in range(ROWS):
        ly = ty + r * BLOCK[1]
        gy = oy + ly
        for half in range(2):
            lx = tx + half * BLOCK[0]
            gx = ox + lx
            if passes <= lx < SPAN - passes and passes <= ly < SPAN - passes \
                    and gx < wd and gy < h:
                out[gy, gx] = sh[fin + ly * SPAN + lx]


@cuda.jit
def jacobi(p, b, out, omega):
    """One weighted Jacobi pass of ``p`` into ``out``, the plain stencil: each thread reads
    its cell's neighbours straight from global memory (the caches catch the reuse), with no
    shared-memory tile. The same arithmetic as ``relax`` with ``passes=1``; launched on
    ``BLOCK`` threads over the grid (``jacobi_grid``)."""
    x, y = cuda.grid(2)
    h, w = p.shape
    if x < w and y < h:
        zero = np.float32(0.0)  # a neighbour outside the box adds nothing
        left = p[y, x - 1] if x > 0 else zero
        right = p[y, x + 1] if x < w - 1 else zero
        up = p[y - 1, x] if y > 0 else zero
        down = p[y + 1, x] if y < h - 1 else zero
        s4 = left + right + up + down - b[y, x]
        nb = 4 - int(x == 0) - int(x == w - 1) - int(y == 0) - int(y == h - 1)
        old = p[y, x]
        gs = np.float32(0.25) * s4 if nb == 4 else s4 / np.float32(nb)
        out[y, x] = old + omega * (gs - old)


STRIP = 8  # the rows of jacobi_strip's column strip
STRIP_BLOCK = (32, 4)  # jacobi_strip's threads: 32 consecutive x, 4 strips one above another


@cuda.jit
def jacobi_strip(p, b, out, omega):
    """One weighted Jacobi pass of ``p`` into ``out``, as ``jacobi`` computes it (bit for bit),
    each thread taking ``STRIP`` cells of one column. It reads its column's ``STRIP + 2``
    values of ``p`` (the strip and one above and below) once into registers, so each value of
    ``p`` is loaded from memory by one thread instead of five; the left and right neighbours
    are loads of the next columns, which the warp's neighbours have just read (the L1 cache
    serves them). Every load comes before the first store: they are all in flight together.
    Launched on ``STRIP_BLOCK`` threads over ``jacobi_strip_grid``."""
    h, w = p.shape
    x = cuda.blockIdx.x * STRIP_BLOCK[0] + cuda.threadIdx.x
    y0 = (cuda.blockIdx.y * STRIP_BLOCK[1] + cuda.threadIdx.y) * STRIP
    cx = min(x, w - 1)  # a thread past the last column loads its last column's values
    zero = np.float32(0.0)
    col = cuda.local.array(STRIP + 2, np.float32)  # p at rows y0 - 1 ... y0 + STRIP
    left = cuda.local.array(STRIP, np.float32)
    right = cuda.local.array(STRIP, np.float32)
    rhs = cuda.local.array(STRIP, np.float32)
    for r in range(STRIP + 2):  # constant trip counts: unrolled, the arrays are registers
        y = y0 - 1 + r
        cy = min(max(y, 0), h - 1)
        v = p[cy, cx]
        col[r] = v if y == cy else zero  # a row outside the box adds nothing
    for r in range(STRIP):
        cy = min(y0 + r, h - 1)
        rhs[r] = b[cy, cx]
        lv = p[cy, max(cx - 1, 0)]
        rv = p[cy, min(cx + 1, w - 1)]
        left[r] = lv if cx > 0 else zero
        right[r] = rv if cx < w - 1 else zero
    if x < w:
        for r in range(STRIP):
            y = y0 + r
            if y < h:
                s4 = left[r] + right[r] + col[r] + col[r + 2] - rhs[r]
                nb = 4 - int(x == 0) - int(x == w - 1) - int(y == 0) - int(y == h - 1)
                old = col[r + 1]
                gs = np.float32(0.25) * s4 if nb == 4 else s4 / np.float32(nb)
                out[y, x] = old + omega * (gs - old)


def jacobi_strip_grid(shape: tuple[int, int]) -> tuple[int, int]:
    """``jacobi_strip``'s launch grid for a ``shape`` grid."""
    rows = STRIP_BLOCK[1] * STRIP
    return (-(-shape[1] // STRIP_BLOCK[0]), -(-shape[0] // rows))


def jacobi_grid(shape: tuple[int, int]) -> tuple[int, int]:
    """``jacobi``'s launch grid for a ``shape`` grid (``BLOCK`` threads a block)."""
    return (-(-shape[1] // BLOCK[0]), -(-shape[0] // BLOCK[1]))


def relax_grid(shape: tuple[int, int], passes: int) -> tuple[int, int]:
    """``relax``'s launch grid for a ``shape`` grid and ``passes`` passes per launch."""
    if not 1 <= passes <= MAX_PASSES:
        raise ValueError(f"relax makes 1 to {MAX_PASSES} passes per launch, not {passes}")
    inner = SPAN - 2 * passes
    return (-(-shape[1] // inner), -(-shape[0] // inner))


def relax_smem(redblack: bool) -> int:
    """The bytes of dynamic shared memory ``relax`` needs: ``b`` and one (red-black) or two
    (Jacobi) buffers of ``p``, ``SPAN x SPAN`` float32 each."""
    return (2 if redblack else 3) * SPAN * SPAN * 4
