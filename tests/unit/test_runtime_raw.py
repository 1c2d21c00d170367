"""RawKernel without a GPU: compiling (through the cache), launch syntax, the parameter lists
made from the driver's sizes, and launching through CompiledKernel (cuLaunchKernel a stub)."""

import ctypes
import struct
import types

import numpy as np
import pytest

from threadtile.lang.types import float32, int32, int64
from threadtile.runtime import abi, arrays, cache, driver, nvrtc
from threadtile.runtime.launcher import CompiledKernel
from threadtile.runtime.raw import RawKernel

SRC = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path))


def test_compile_without_a_gpu_and_cache_hits(monkeypatch):
    k = RawKernel(SRC, "scale")
    cubin = k.compile(arch="sm_90")
    assert cubin[:4] == b"\x7fELF"
    assert cache.info()["entries"] == 1
    calls = []
    real = nvrtc.compile_cubin
    monkeypatch.setattr(nvrtc, "compile_cubin", lambda *a, **kw: calls.append(a[1]) or real(
        *a, **kw))
    again = RawKernel(SRC, "scale").compile(arch="sm_90")
    assert again == cubin and calls == []  # served by the disk cache
    assert RawKernel(SRC, "scale", arch="sm_80").cubin[:4] == b"\x7fELF"
    assert calls == ["sm_80"]


def test_options_are_part_of_the_key():
    a = RawKernel(SRC, "scale").compile("sm_90")
    b = RawKernel(SRC, "scale", options=("-lineinfo",)).compile("sm_90")
    assert a != b
    assert cache.info()["entries"] == 2


def test_launch_syntax_errors():
    k = RawKernel(SRC, "scale")
    with pytest.raises(TypeError, match=r"scale\[grid, block\]"):
        k(1, 2)
    with pytest.raises(TypeError, match="kernel\\[grid, block\\]"):
        k[1]
    with pytest.raises(ValueError, match=">= 1"):
        k[0, 32]
    with pytest.raises(ValueError, match="shared_bytes"):
        k[1, 32, 0, -5]
    launch = k[(2, 2), 64, None, 1024]
    assert (launch.grid, launch.block, launch.shared_bytes) == ((2, 2, 1), (64, 1, 1), 1024)
    assert k[(2, 2), 64, None, 1024] is launch  # configurations are cached


class Dev:
    def __init__(self):
        self.__cuda_array_interface__ = {"shape": (8,), "typestr": "<f4", "data": (0x1000, False),
                                         "version": 3, "strides": None}


def _plan(params, *args):
    """(struct, parameter list, offsets) RawKernel lays these arguments out with, given the
    driver's (offset, size) list ``params``."""
    ps, at = abi.raw_params("scale", params, arrays.describe_all(args))
    layout = abi.param_layout(ps, at)
    return layout.struct, ps, layout.offsets


def test_plan_follows_the_driver_layout():
    st, ps, offsets = _plan([(0, 8), (8, 4), (12, 4)], Dev(), 2.0, 8)
    assert st.format == "<Qfi" and ps[0] is abi.POINTER and offsets == (0, 8, 12)
    st, *_ = _plan([(0, 8), (8, 8), (16, 8)], Dev(), 2.0, 8)  # double and long long
    assert st.format == "<Qdq"
    st, *_ = _plan([(0, 1), (8, 8)], True, Dev())
    assert st.format == "<?7xQ"
    st, *_ = _plan([(0, 2), (4, 4)], np.float16(1), np.uint32(3))
    assert st.format == "<e2xI"


def test_plan_errors():
    with pytest.raises(TypeError, match="takes 3 arguments, got 2"):
        _plan([(0, 8), (8, 4), (12, 4)], Dev(), 2.0)
    with pytest.raises(TypeError, match="argument 2 is a int64 \\(8 bytes\\), but the kernel's "
                                        "parameter is 4 bytes"):
        _plan([(0, 8), (8, 4), (12, 4)], Dev(), 2.0, np.int64(8))
    with pytest.raises(TypeError, match="argument 0 is an array"):
        _plan([(0, 4), (8, 4), (12, 4)], Dev(), 2.0, 8)
    with pytest.raises(TypeError, match="a float"):
        _plan([(0, 8), (8, 1), (12, 4)], Dev(), 2.0, 8)


def test_plan_without_driver_parameter_info():
    st, _, offsets = _plan(None, Dev(), np.float32(2), np.int32(8))
    assert st.format == "<Qfi" and offsets == (0, 8, 12)
    with pytest.raises(TypeError, match="np.int32"):
        _plan(None, Dev(), 2.0, 8)


def _loaded(k, params):
    """``k`` as if its cubin were loaded and the driver had reported ``params``."""
    k._func = types.SimpleNamespace(cubin=b"", handle=1, kernel=None, _shared_set={})
    k._params = params


def test_python_and_numpy_scalars_get_separate_launchers():
    k = RawKernel(SRC, "scale")
    _loaded(k, [(0, 8), (8, 4), (12, 4)])
    c = k._kernel_for(arrays.describe_all([Dev(), 2.0, 8]))
    assert isinstance(c, CompiledKernel) and c.params == [abi.POINTER, float32, int32]
    assert k._kernel_for(arrays.describe_all([Dev(), 3.0, 9])) is c
    with pytest.raises(TypeError, match="8 bytes"):
        k._kernel_for(arrays.describe_all([Dev(), 2.0, np.int64(8)]))


def test_launch_goes_through_compiled_kernel(monkeypatch):
    """A RawKernel launch is a CompiledKernel launch: its checks, its buffer and its
    cuLaunchKernel call, with the parameters at the driver's offsets."""
    k = RawKernel(SRC, "scale")
    _loaded(k, [(0, 8), (8, 4), (12, 4)])
    launch = k[2, 32]
    c = k._kernel_for(arrays.describe_all([Dev(), 2.0, 8]))
    calls = []

    def cu(h, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        params = ctypes.string_at(ctypes.c_void_p.from_address(argv).value, c.layout.nbytes)
        calls.append(((gx, gy, gz), (bx, by, bz), params))
        return (0,)

    monkeypatch.setattr(c, "_load", lambda: None)
    c._func, c._handle, c._cu_launch, c._stream = k._func, 1, cu, (0, 0)
    c._cfg = (launch.grid, launch.block, 0, 0)
    monkeypatch.setattr(driver, "current_index", lambda: 0)
    launch(Dev(), 0.5, 7)
    assert calls == [((2, 1, 1), (32, 1, 1), struct.pack("<Qfi", 0x1000, 0.5, 7))]
    with pytest.raises(OverflowError, match="argument 2: 4294967296 does not fit in int32"):
        launch(Dev(), 0.5, 2**32)


def test_python_int_arguments_take_the_inline_path(monkeypatch):
    """threadtile.compute launches with Python ints for pointers and integers: after the
    first launch they pack as they are (no per-launch conversion), values out of their
    parameter's range still raise before anything is launched, and a kernel launched with
    two configurations in turn checks each once."""
    k = RawKernel(SRC, "scale")
    _loaded(k, [(0, 8), (8, 8), (16, 4)])
    args = (0x2000, 2**40, 7)
    c = k._kernel_for(arrays.describe_all(list(args)))
    assert c.params == [int64, int64, int32]  # (a pointer passed as an int is an int64)
    calls, checks = [], []

    def cu(h, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        calls.append((gx, ctypes.string_at(ctypes.c_void_p.from_address(argv).value,
                                           c.layout.nbytes)))
        return (0,)

    monkeypatch.setattr(c, "_load", lambda: None)
    c._func, c._handle, c._cu_launch, c._stream = k._func, 1, cu, (0, 0)
    monkeypatch.setattr(driver, "current_index", lambda: 0)
    monkeypatch.setattr(c, "_checked", lambda infos: pytest.fail("slow path taken"))
    monkeypatch.setattr(c, "_configure", lambda *a: checks.append(a[0]) or setattr(
        c, "_cfg", (a[0], a[1], a[2], a[3])))
    big, one = k[4224, 256], k[1, 256]
    for _ in range(3):
        big(*args)
        one(*args)
    assert [g for g, _ in calls] == [4224, 1] * 3
    assert calls[0][1] == struct.pack("<QqiI", 0x2000, 2**40, 7, 0)[:c.layout.nbytes]
    assert checks == [big.grid, one.grid]  # each configuration checked once
    monkeypatch.undo()
    with pytest.raises(OverflowError, match="argument 2: 4294967296 does not fit in int32"):
        c._cfg = (big.grid, big.block, 0, 0)
        monkeypatch.setattr(driver, "current_index", lambda: 0)
        big(0x2000, 5, 2**32)
    assert len(calls) == 6
