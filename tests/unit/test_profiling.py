"""The compile trace (THREADTILE_TRACE) and NVTX ranges (THREADTILE_NVTX), without a GPU."""

import sys
import types
import warnings

import numpy as np
import pytest

import threadtile as cuda
from threadtile.runtime import driver, profiling
from threadtile.runtime.launcher import CompiledKernel

PHASES = ("source cache", "frontend", "passes", "emit", "cubin cache", "nvrtc")


def k_scale(x, a, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = x[i] * a


X = np.zeros(16, np.float32)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty disk cache, no trace or NVTX variable, no binding looked up yet."""
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(profiling.TRACE_ENV, raising=False)
    monkeypatch.delenv(profiling.NVTX_ENV, raising=False)
    profiling.reset()
    yield tmp_path
    profiling.reset()


def _lines(text: str) -> dict:
    """phase -> the rest of its trace line, for the lines of k_scale's one specialization."""
    out = {}
    for line in text.splitlines():
        assert line.startswith("threadtile trace: k_scale(float32[::1], float32, int64) "), line
        rest = line.split(") ", 1)[1]
        for p in PHASES:
            if rest.startswith(p):
                out[p] = rest[len(p):]
    return out


def test_trace_names_each_phase_with_its_time(fresh, monkeypatch, capsys):
    monkeypatch.setenv(profiling.TRACE_ENV, "1")
    cuda.jit(k_scale).compile(X, np.float32(2), 16, arch="sm_80")
    got = _lines(capsys.readouterr().err)
    assert set(got) == set(PHASES), got
    assert got["source cache"].split()[0] == "miss" and got["cubin cache"].split()[0] == "miss"
    assert got["nvrtc"].split()[1] == "ms" and "sm_80" in got["nvrtc"]
    assert float(got["nvrtc"].split()[0]) > 0
    # a fresh kernel of the same function: both disk caches hit, nothing compiles
    cuda.jit(k_scale).compile(X, np.float32(2), 16, arch="sm_80")
    got = _lines(capsys.readouterr().err)
    assert set(got) == {"source cache", "cubin cache"}, got
    assert got["source cache"].split()[0] == "hit" and got["cubin cache"].split()[0] == "hit"


def test_no_trace_without_the_variable(fresh, monkeypatch, capsys):
    cuda.jit(k_scale).compile(X, np.float32(2), 16, arch="sm_80")
    with cuda.simulate():
        cuda.jit(k_scale)[1, 16](X.copy(), np.float32(2), 16)
    out = capsys.readouterr()
    assert "threadtile trace" not in out.err + out.out
    assert profiling.tracer("x") is profiling.NULL
    for off in ("", "0", "off"):
        monkeypatch.setenv(profiling.TRACE_ENV, off)
        assert profiling.tracer("x") is profiling.NULL


def test_trace_to_a_file(fresh, monkeypatch, capsys):
    path = fresh / "trace.txt"
    monkeypatch.setenv(profiling.TRACE_ENV, str(path))
    with cuda.simulate():  # the simulator lowers too: frontend and passes
        cuda.jit(k_scale)[1, 16](X.copy(), np.float32(2), 16)
    assert capsys.readouterr().err == ""
    got = _lines(path.read_text())
    assert {"frontend", "passes"} <= set(got)


def test_trace_to_a_file_that_cannot_be_written_warns_and_uses_stderr(fresh, monkeypatch,
                                                                         capsys):
    blocker = fresh / "file"
    blocker.write_text("")
    monkeypatch.setenv(profiling.TRACE_ENV, str(blocker / "trace.txt"))
    with pytest.warns(RuntimeWarning, match="cannot append the compile trace"):
        profiling.tracer("k()").event("cubin cache", "hit", 0.5)
    assert "threadtile trace: k() cubin cache   hit" in capsys.readouterr().err


def test_trace_of_a_load(fresh, monkeypatch, capsys):
    """The driver's load is a phase of its own (faked here: no GPU)."""
    monkeypatch.setattr(driver, "load_function", lambda cubin, entry: types.SimpleNamespace(
        handle=1, kernel=1, name=entry))
    monkeypatch.setattr(driver, "param_info", lambda func: None)
    monkeypatch.setenv(profiling.TRACE_ENV, "1")
    k = CompiledKernel(b"", "k", [])
    k.label = lambda: "k(float32[::1])"
    k.load()
    assert "threadtile trace: k(float32[::1]) load" in capsys.readouterr().err


# -- NVTX -------------------------------------------------------------------------------------

def test_nvtx_without_a_binding_warns_once(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "nvtx", None)  # neither binding importable
    monkeypatch.setitem(sys.modules, "torch", None)
    assert not profiling.nvtx_enabled()  # unset: not even looked up
    monkeypatch.setenv(profiling.NVTX_ENV, "1")
    with pytest.warns(profiling.NvtxWarning, match="THREADTILE_NVTX is set but no NVTX "
                                                   "binding is importable"):
        assert not profiling.nvtx_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not profiling.nvtx_enabled()


def test_nvtx_ranges_wrap_the_launch(fresh, monkeypatch):
    """With a binding, a loaded kernel's driver call runs inside a range named after it, and
    the steady-state launcher declines (it has no hook for ranges)."""
    seen = []
    monkeypatch.setattr(profiling, "_find_binding", lambda: (
        lambda name: seen.append(("push", name)), lambda: seen.append(("pop",))))
    monkeypatch.setenv(profiling.NVTX_ENV, "1")
    assert profiling.nvtx_enabled()
    ranged = profiling.nvtx_wrap("k_scale", lambda *a: seen.append(("launch", a)) or (0,))
    assert ranged(1, 2) == (0,)
    assert seen == [("push", "k_scale"), ("launch", (1, 2)), ("pop",)]
    monkeypatch.setattr(driver, "load_function", lambda cubin, entry: types.SimpleNamespace(
        handle=1, kernel=1, name=entry))
    monkeypatch.setattr(driver, "param_info", lambda func: None)
    k = CompiledKernel(b"", "k_scale", [])
    k.load()
    assert k._nvtx and k.direct((1, 1, 1), (32, 1, 1), 0, 0, (), []) is None


def test_nvtx_off_leaves_the_launch_alone(fresh, monkeypatch):
    monkeypatch.setattr(driver, "load_function", lambda cubin, entry: types.SimpleNamespace(
        handle=1, kernel=1, name=entry))
    monkeypatch.setattr(driver, "param_info", lambda func: None)
    k = CompiledKernel(b"", "k_scale", [])
    k.load()
    assert not k._nvtx and k._cu_launch is driver._cu().cuLaunchKernel
