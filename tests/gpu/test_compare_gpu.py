"""``threadtile.compare`` on a GPU: correct kernels agree with the simulator (thread and tile
kernels, NumPy and torch arguments, both launch forms), and a run of a deliberately different
kernel on the GPU is reported at the right element with the simulator's writer. The comparison
itself is tested without a GPU in tests/sim/test_compare.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernels.comparing import axpy, axpy_planted, count, double, double_planted

import threadtile
from threadtile import comparison as cmp
from threadtile.runtime import driver

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not driver.gpu_available(), reason="needs an NVIDIA GPU")]


def _inputs(n=200):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32))


def test_correct_thread_kernel_agrees():
    x, y, out = _inputs()
    report = threadtile.compare(axpy[4, 64], np.float32(2.0), x, y, out)
    assert report.ok, str(report)
    assert [a.name for a in report.arrays] == ["x", "y", "out"]
    assert "GPU and simulator agree" in str(report)
    assert not out.any(), "compare runs on copies"
    values = np.arange(40, dtype=np.int32)
    assert threadtile.compare(count[2, 32], np.zeros(40, np.int32), values, 3,
                              raise_on_mismatch=True).ok


def test_correct_tile_kernel_agrees_in_both_forms():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    assert threadtile.compare(double[4], x, out, 32).ok
    assert threadtile.compare(None, (4,), double, (x, out, 32)).ok


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = torch.arange(96, dtype=torch.bfloat16, device="cuda")
    out = torch.zeros(96, dtype=torch.bfloat16, device="cuda")
    report = threadtile.compare(None, (3,), double, (x, out, 32))
    assert report.ok and report["out"].dtype == "bfloat16", str(report)
    assert not out.any()
    a, b = torch.randn(200, device="cuda"), torch.randn(200, device="cuda")
    assert threadtile.compare(axpy[4, 64], 2.0, a, b, torch.zeros_like(a)).ok
    cpu = threadtile.compare(axpy[4, 64], 2.0, a.cpu(), b.cpu(), torch.zeros(200))
    assert cpu.ok, "CPU tensors are copied to the GPU for its run"


def test_a_different_kernel_on_the_gpu_is_found():
    """The GPU runs the planted kernel, the simulator the correct one (the seam compare()
    is built on): the report names element 77 and the simulated thread that wrote it."""
    x, y, out = _inputs()
    args = (np.float32(2.0), x, y, out)
    report = cmp.compare_runs(cmp.run_on_gpu(axpy_planted[4, 64], args),
                              cmp.run_in_simulator(axpy[4, 64], args, kernel=axpy),
                              ["a", "x", "y", "out"], what="axpy")
    d = report["out"]
    assert not report.ok and (d.mismatches, d.index, d.device_value) == (1, (77,), -1.0)
    assert d.writer.block == (1, 0, 0) and d.writer.thread == (13, 0, 0)
    assert "out[77]: GPU -1.0, simulator" in str(report)
    x = np.arange(100, dtype=np.float32)
    tiles = cmp.compare_runs(cmp.run_on_gpu(double_planted[4], (x, out[:100], 32)),
                             cmp.run_in_simulator(double[4], (x, out[:100], 32), kernel=double),
                             ["x", "out", "tile"])["out"]
    assert (tiles.index, tiles.mismatches, tiles.writer.block) == ((64,), 32, (2, 0, 0))


def test_mismatch_raises_on_request():
    x, y, out = _inputs()
    args = (np.float32(2.0), x, y, out)
    report = cmp.compare_runs(cmp.run_on_gpu(axpy_planted[4, 64], args),
                              cmp.run_in_simulator(axpy[4, 64], args, kernel=axpy))
    with pytest.raises(cmp.MismatchError, match="77"):
        report.check()


def test_compare_inside_simulate_still_uses_the_gpu():
    x, y, out = _inputs()
    with threadtile.simulate():
        report = threadtile.compare(axpy[4, 64], np.float32(2.0), x, y, out)
    assert report.ok and report.device == "GPU"
