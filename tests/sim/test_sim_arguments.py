"""A launch argument that a kernel does not take is the same error in the simulator as on the
GPU path: both describe their arguments (runtime.arrays) and check them against the kernel's
parameters (runtime.abi). The GPU path's checks run here without a GPU: they come before
anything is loaded."""

import numpy as np
import pytest

import threadtile as tt
from threadtile.backends.sim import simulate, switch
from threadtile.lang.types import ArrayType, float32, int64
from threadtile.runtime import arrays
from threadtile.runtime.launcher import CompiledKernel


@tt.jit
def scale(x, n):
    i = tt.grid(1)
    if i < n:
        x[i] = x[i] * 2.0


@pytest.fixture
def gpu_path(monkeypatch):
    """Launches take the GPU path (which raises before needing a GPU) unless simulate() is on."""
    monkeypatch.delenv("THREADTILE_SIMULATE", raising=False)
    monkeypatch.setattr(switch.STATE, "active", False)


def _error(fn) -> str:
    with pytest.raises(TypeError) as e:
        fn()
    return str(e.value)


KINDS = {
    "a string": ("x", 4),
    "a list": ([1.0, 2.0], 4),
    "a dict for the size": (np.zeros(4, np.float32), {}),
    "a timedelta array": (np.zeros(4, "m8[s]"), 4),
    "an object array": (np.zeros(4, object), 4),
}


@pytest.mark.parametrize("what", list(KINDS))
def test_kinds_and_dtypes_kernels_do_not_take(gpu_path, what):
    args = KINDS[what]
    on_gpu = _error(lambda: scale[1, 32](*args))
    with simulate():
        in_sim = _error(lambda: scale[1, 32](*args))
    assert in_sim == on_gpu
    assert "argument 'x' (position 0)" in on_gpu or "argument 'n' (position 1)" in on_gpu


MISMATCHES = {
    "another rank": (np.zeros((2, 2), np.float32), 4),
    "another dtype": (np.zeros(4, np.float64), 4),
    "a scalar for the array": (3.0, 4),
    "an array for the scalar": (np.zeros(4, np.float32), np.zeros(2, np.int64)),
    "a float for the int": (np.zeros(4, np.float32), 4.0),
}


@pytest.mark.parametrize("what", list(MISMATCHES))
def test_arguments_that_do_not_match_the_parameters(gpu_path, monkeypatch, what):
    """A specialization made for other arguments (as if the dispatch had gone wrong) refuses
    these with the same message on both targets."""
    args = MISMATCHES[what]
    spec = scale.specialization([ArrayType(float32, 1, "C"), int64], {})
    params = list(spec.params)
    on_gpu = _error(lambda: CompiledKernel(b"", spec.entry, params).launch(
        (1, 1, 1), (32, 1, 1), None, 0, arrays.describe_all(args, ["x", "n"])))
    monkeypatch.setattr(scale, "specialization", lambda types, consts: spec)
    with simulate():
        in_sim = _error(lambda: scale[1, 32](*args))
    assert in_sim == on_gpu and on_gpu.startswith("kernel 'scale' argument ")


def test_host_arrays_keep_their_layout_in_the_simulator():
    a = np.arange(8, dtype=np.float32)
    with simulate():
        scale[1, 32](a[::2], 4)  # a strided view, run in place
    assert a.tolist() == [0, 1, 4, 3, 8, 5, 12, 7]
    info = arrays.describe_host(a[::2], 0, "x")
    assert info.layout == "A" and info.strides == (2,) and info.device == arrays.HOST
    assert arrays.describe(a[::2]).layout == "C"  # the GPU path copies it to a contiguous one
