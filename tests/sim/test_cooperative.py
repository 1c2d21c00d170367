"""Cooperative groups (``cg.this_grid().sync()``) in both simulation modes, the cooperative
flag and limits numba exposes, and the generated C++ compiled for sm_80 and sm_90."""

from pathlib import Path

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile import int32
from threadtile.errors import BarrierDivergenceError, LaunchError, RaceError

_LINES = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    hits = [k + 1 for k, text in enumerate(_LINES) if text.rstrip().endswith(f"# BUG: {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, M.shape[0]):
        M[row, col] = M[row - 1, M.shape[1] - col - 1] + 1
        g.sync()


def rows_unsynced(M):
    col = cuda.grid(1)
    for row in range(1, M.shape[0]):
        M[row, col] = M[row - 1, M.shape[1] - col - 1] + 1  # BUG: no grid sync


@cuda.jit
def marks_only(a):
    cuda.cg.this_grid()
    a[0] = 1.0


@cuda.jit
def plain(a):
    a[0] = 1.0


@cuda.jit
def sync_in_branch(a):
    i = cuda.grid(1)
    if i % 2 == 0:
        a[i] = 1.0
        cuda.cg.this_grid().sync()  # BUG: grid sync on one path


@cuda.jit
def heat(a, b, steps):
    i = cuda.grid(1)
    if i >= a.size:  # threads past the data return: they count as arrived
        return
    g = cuda.cg.this_grid()
    for s in range(steps):
        if s % 2 == 0:
            src = a
            dst = b
        else:
            src = b
            dst = a
        left = src[i - 1] if i > 0 else 0.0
        right = src[i + 1] if i < src.size - 1 else 0.0
        dst[i] = 0.5 * src[i] + 0.25 * (left + right)
        g.sync()


MODES = ["lockstep", "python"]


def _sim(mode):
    return cuda.simulate(mode="python") if mode == "python" else cuda.simulate()


@pytest.mark.parametrize("mode", MODES)
def test_grid_sync_orders_rows_across_blocks(mode):
    k = cuda.jit((int32[:, ::1],))(sequential_rows)
    with _sim(mode):
        A = np.zeros((6, 96), np.int32)
        k[3, 32](A)
    np.testing.assert_array_equal(A, np.tile(np.arange(6)[:, None], (1, 96)))


@pytest.mark.parametrize("mode", MODES)
def test_returned_threads_count_as_arrived(mode):
    n, steps = 50, 7
    x = np.zeros(n)
    x[n // 2] = 1.0
    ref, other = x.copy(), np.zeros(n)
    for s in range(steps):
        src, dst = (ref, other) if s % 2 == 0 else (other, ref)
        pad = np.concatenate([[0.0], src, [0.0]])
        dst[:] = 0.5 * src + 0.25 * (pad[:-2] + pad[2:])
    a, b = x.copy(), np.zeros(n)
    with _sim(mode):
        heat[2, 32](a, b, steps)
    np.testing.assert_allclose(b if steps % 2 else a, other if steps % 2 else ref, rtol=1e-12)


def test_race_without_grid_sync_is_reported():
    k = cuda.jit(rows_unsynced)
    with cuda.simulate(), pytest.raises(RaceError) as e:
        k[2, 32](np.zeros((4, 64), np.int32))
    assert e.value.line == line_of("no grid sync")
    assert "different blocks" in str(e.value)


def test_grid_sync_on_one_path_is_divergence():
    with cuda.simulate(), pytest.raises(BarrierDivergenceError) as e:
        sync_in_branch[2, 32](np.zeros(64))
    assert e.value.line == line_of("grid sync on one path")
    assert "grid sync()" in str(e.value)


def test_cooperative_flag_and_limits():
    with cuda.simulate():
        a = np.zeros(1)
        marks_only[1, 1](a)
        plain[1, 1](a)
        assert a[0] == 1.0
        assert all(o.cooperative for o in marks_only.overloads.values())
        assert not any(o.cooperative for o in plain.overloads.values())
        sig = (int32[:, ::1],)
        k = cuda.jit(sig)(sequential_rows)
        o = k.overloads[sig]
        assert o.cooperative
        # the simulated H100: 132 SMs x 2048 threads
        assert o.max_cooperative_grid_blocks(256) == 132 * 8
        assert o.max_cooperative_grid_blocks((16, 16)) == o.max_cooperative_grid_blocks(
            (16, 4, 4)) == 132 * 8
        assert o.max_cooperative_grid_blocks(32) == 132 * 32
        with pytest.raises(LaunchError, match="cooperatively"):
            k[132 * 8 + 1, 256](np.zeros((2, (132 * 8 + 1) * 256), np.int32))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_grid_sync_compiles(arch):
    k = cuda.jit(sequential_rows)
    src = k.cuda_source(np.zeros((4, 64), np.int32))
    assert "cooperative_groups::this_grid().sync()" in src
    assert compile_cubin(k, np.zeros((4, 64), np.int32), arch=arch)[:4] == b"\x7fELF"
