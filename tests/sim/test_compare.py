"""``threadtile.compare`` without a GPU: the comparison of two runs (comparison.py's seam),
checked by comparing the simulator with a second simulator run in which a difference was
planted; and the clear error ``compare`` raises where there is no GPU. The GPU side is in
tests/gpu/test_compare_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernels.comparing import axpy, axpy_planted, count, count_planted, double, double_planted, racy

import threadtile
from threadtile import comparison as cmp
from threadtile.runtime import driver

HAVE_GPU = driver.gpu_available()


def _inputs(n=200):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32))


# ---- the seam: two simulator runs ------------------------------------------------------------

def test_planted_difference_is_found_with_its_writer():
    x, y, out = _inputs()
    args = (np.float32(2.0), x, y, out)
    ref = cmp.run_in_simulator(axpy[4, 64], args, kernel=axpy)
    planted = cmp.run_in_simulator(axpy_planted[4, 64], args, label="planted",
                                   kernel=axpy_planted)
    report = cmp.compare_runs(planted, ref, ["a", "x", "y", "out"], what="axpy")
    assert not report.ok
    assert [a.name for a in report.arrays] == ["x", "y", "out"]  # a is no array
    assert report["x"].ok and report["y"].ok
    d = report["out"]
    assert d.mismatches == 1 and d.index == (77,)
    assert d.device_value == -1.0
    assert d.reference_value == pytest.approx(2 * x[77] + y[77])
    w = d.writer
    assert w.block == (1, 0, 0) and w.thread == (13, 0, 0) and not w.atomic
    assert w.loc.line == axpy.py_func.__code__.co_firstlineno + 4  # out[i] = a * x[i] + y[i]
    text = str(report)
    assert "1 of 3 arrays differ" in text
    assert "out[77]: planted -1.0, simulator" in text
    assert "thread (13, 0, 0) of block (1, 0, 0)" in text
    assert not out.any(), "the arguments themselves are left as they were"


def test_same_runs_agree():
    x, y, out = _inputs()
    args = (np.float32(2.0), x, y, out)
    a = cmp.run_in_simulator(axpy[4, 64], args, kernel=axpy)
    b = cmp.run_in_simulator(axpy[4, 64], args, label="again", kernel=axpy)
    report = cmp.compare_runs(b, a, ["a", "x", "y", "out"])
    assert report.ok and not report.differences
    assert "again and simulator agree" in str(report)
    assert report.check() is report


def test_constant_parameters_do_not_shift_the_writers():
    """``k`` is a Constant: the record counts runtime arguments, the report positions."""
    values = np.arange(10, dtype=np.int32)
    bins = np.zeros(10, np.int32)
    args = (bins, values, 3)
    ref = cmp.run_in_simulator(count[1, 32], args, kernel=count)
    planted = cmp.run_in_simulator(count_planted[1, 32], args, label="planted",
                                   kernel=count_planted)
    report = cmp.compare_runs(planted, ref, ["bins", "values", "k"])
    d = report["bins"]
    assert (d.mismatches, d.index, d.device_value, d.reference_value) == (1, (5,), 16, 15)
    assert d.tolerance == (0.0, 0.0) and "exactly" in str(report)
    assert d.writer.thread == (5, 0, 0)


def test_tile_kernel_writers():
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    ref = cmp.run_in_simulator(double[4], (x, out, 32), kernel=double)
    planted = cmp.run_in_simulator(double_planted[4], (x, out, 32), label="planted",
                                   kernel=double_planted)
    report = cmp.compare_runs(planted, ref, ["x", "out", "tile"])
    d = report["out"]
    assert d.index == (64,) and d.mismatches == 32
    assert d.device_value == 129.0 and d.reference_value == 128.0
    assert d.writer.block == (2, 0, 0)
    assert d.writer.loc.line == double.py_func.__code__.co_firstlineno + 3


# ---- tolerances --------------------------------------------------------------------------------

def _run(label, *arrays):
    return cmp.Run(label, list(arrays), [str(a.dtype) for a in arrays])


def test_float_tolerance_per_dtype():
    ref = np.array([1.0, 2.0, np.nan, np.inf, 0.0], np.float32)
    near = ref * np.float32(1 + 1e-7)
    report = cmp.compare_runs(_run("GPU", near), _run("simulator", ref))
    assert report.ok
    far = ref.copy()
    far[1] = 2.001
    report = cmp.compare_runs(_run("GPU", far), _run("simulator", ref), ["out"])
    d = report["out"]
    assert (d.mismatches, d.index) == (1, (1,))
    assert d.tolerance == cmp.TOLERANCES["float32"]
    assert d.written == ""  # a Run without records: writers unknown, nothing said
    assert cmp.compare_runs(_run("GPU", far), _run("simulator", ref), rtol=1e-3).ok
    nan = ref.copy()
    nan[0] = np.nan
    assert cmp.compare_runs(_run("GPU", nan), _run("simulator", ref))["argument 0"].index == (0,)


def test_integers_compare_exactly():
    ref = np.arange(6, dtype=np.int64).reshape(2, 3)
    got = ref.copy()
    got[1, 2] += 1
    d = cmp.compare_runs(_run("GPU", got), _run("simulator", ref), rtol=1.0, atol=5)[
        "argument 0"]
    assert (d.mismatches, d.index, d.device_value, d.reference_value) == (1, (1, 2), 6, 5)
    assert d.tolerance == (0.0, 0.0)


def test_float64_and_shapes():
    ref = np.linspace(0, 1, 7)
    assert cmp.compare_runs(_run("GPU", ref + 1e-9), _run("simulator", ref)).ok
    assert not cmp.compare_runs(_run("GPU", ref + 1e-5), _run("simulator", ref)).ok
    bad = cmp.compare_runs(_run("GPU", ref[:3]), _run("simulator", ref))
    assert "shapes differ" in str(bad) and not bad.ok


def test_mismatch_error_on_request():
    ref = np.zeros(3, np.int32)
    report = cmp.compare_runs(_run("GPU", ref + 1), _run("simulator", ref))
    with pytest.raises(cmp.MismatchError) as e:
        report.check()
    assert e.value.report is report and isinstance(e.value, AssertionError)
    assert "3 of 3 elements differ" in str(e.value)


# ---- errors --------------------------------------------------------------------------------------

def test_simulator_error_is_reported_not_raised():
    out = np.zeros(1, np.float32)
    run = cmp.run_in_simulator(racy[1, 32], (out,), kernel=racy)
    assert isinstance(run.error, threadtile.RaceError)
    report = cmp.compare_runs(_run("GPU", np.full(1, 31, np.float32)), run, ["out"])
    assert not report.ok and "simulator" in report.errors
    assert "the simulator run raised RaceError" in str(report)


def test_writers_unknown_without_race_checks():
    x, y, out = _inputs()
    args = (np.float32(2.0), x, y, out)
    ref = cmp.run_in_simulator(axpy[4, 64], args, checks=False, kernel=axpy)
    planted = cmp.run_in_simulator(axpy_planted[4, 64], args, checks=False, label="planted")
    assert not ref.writers_known
    d = cmp.compare_runs(planted, ref)["argument 3"]
    assert d.index == (77,) and d.writer is None and d.written == ""


def test_torch_tensors_in_the_simulator():
    torch = pytest.importorskip("torch")
    x = torch.arange(96, dtype=torch.bfloat16)
    out = torch.zeros(96, dtype=torch.bfloat16)
    run = cmp.run_in_simulator(double[3], (x, out, 32), kernel=double)
    assert run.dtypes[:2] == ["bfloat16", "bfloat16"]
    np.testing.assert_array_equal(run.results[1], 2 * np.arange(96, dtype=np.float32))
    assert not out.any()
    planted = cmp.run_in_simulator(double_planted[3], (x, out, 32), label="planted")
    d = cmp.compare_runs(planted, run, ["x", "out"])["out"]
    assert d.tolerance == cmp.TOLERANCES["bfloat16"] and d.ok  # 129 vs 128: within 1.6e-2
    d = cmp.compare_runs(planted, run, ["x", "out"], rtol=1e-3)["out"]
    assert (d.index, d.device_value, d.reference_value) == ((64,), 129.0, 128.0)
    assert d.writer.block == (2, 0, 0)


@pytest.mark.skipif(HAVE_GPU, reason="checks the error raised without a GPU")
def test_compare_needs_a_gpu():
    x, y, out = _inputs()
    for call in (lambda: threadtile.compare(axpy[4, 64], np.float32(2.0), x, y, out),
                 lambda: threadtile.compare(None, (4,), double, (x, out, 32)),
                 lambda: threadtile.compare(double[4], x, out, 32)):
        with pytest.raises(RuntimeError, match="needs? a GPU|no CUDA GPU"):
            call()
    with threadtile.simulate(), pytest.raises(RuntimeError, match="no CUDA GPU"):
        threadtile.compare(axpy[4, 64], np.float32(2.0), x, y, out)


def test_compare_refuses_what_is_not_a_launch():
    with pytest.raises(TypeError, match="kernel\\[grid, block\\]"):
        threadtile.compare(axpy, 1.0)
    with pytest.raises(TypeError, match="args must be a tuple"):
        threadtile.compare(None, 4, double, np.zeros(3))


def test_simulated_device_arrays():
    """Device arrays made under simulate() are copied from the simulator's memory."""
    with threadtile.simulate():
        x = threadtile.to_device(np.arange(100, dtype=np.float32))
        out = threadtile.device_array(100, np.float32)
        out.copy_to_device(np.zeros(100, np.float32))
    run = cmp.run_in_simulator(double[4], (x, out, 32), kernel=double)
    np.testing.assert_array_equal(run.results[1], 2 * np.arange(100, dtype=np.float32))
    with threadtile.simulate():
        assert not out.copy_to_host().any()


def test_records_compare_exactly():
    rec = np.dtype([("a", np.int32), ("b", np.float64)])
    ref = np.zeros(4, rec)
    ref["b"] = [1.0, 2.0, 3.0, 4.0]
    got = ref.copy()
    got["b"][2] = 3.0000001
    d = cmp.compare_runs(cmp.Run("GPU", [got], ["record"]), cmp.Run("simulator", [ref], ["record"]))
    assert (d.arrays[0].mismatches, d.arrays[0].index) == (1, (2,))
