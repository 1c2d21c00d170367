"""The optional C launcher (threadtile.runtime._fastlaunch) without a GPU: a ctypes callback
stands in for cuLaunchKernel and records what it is given, and small fake tensors stand in for
torch's. The packed parameters must be the bytes the Python ``struct`` layout packs, and the
bytes its Python twin (launcher.PyLauncher, abi.spec_values) packs from the same specs; every
argument that is not of the recorded kind must be declined (False) by both before anything
launches."""

import ctypes
import gc
import os
import struct
import subprocess
import sys
import types
import weakref

import pytest
from fake_torch import F32, F64, Tensor, c_strides

from threadtile.backends.sim import switch
from threadtile.errors import CudaDriverError
from threadtile.lang.types import ArrayType, bool_, float32, float64, int64
from threadtile.runtime import abi, launcher
from threadtile.runtime.abi import param_layout, struct_code
from threadtile.runtime.launcher import CompiledKernel, PyLauncher


@pytest.fixture
def fl():
    return pytest.importorskip("threadtile.runtime._fastlaunch")


# CUresult cuLaunchKernel(CUfunction, 3 x grid, 3 x block, shared, CUstream, void**, void**)
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class Recorder:
    """A cuLaunchKernel stand-in: records each call with the parameter bytes it was given
    (read through kernelParams, each at its layout offset) and returns ``result``."""

    def __init__(self, layout, result=0):
        self.layout, self.result, self.calls = layout, result, []
        self.cfunc = LAUNCH(self._launch)  # kept alive as long as the recorder
        self.addr = ctypes.cast(self.cfunc, ctypes.c_void_p).value

    def _launch(self, func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        buf = bytearray(self.layout.nbytes)
        base = params[0] - self.layout.offsets[0]
        for i, (o, n) in enumerate(zip(self.layout.offsets, self.layout.sizes)):
            assert params[i] - base == o  # one buffer, at the layout's offsets
            buf[o:o + n] = ctypes.string_at(params[i], n)
        self.calls.append({"func": func, "grid": (gx, gy, gz), "block": (bx, by, bz),
                           "shared": shared, "stream": stream or 0, "params": bytes(buf),
                           "extra": extra})
        return self.result


class OtherTensor(Tensor):
    pass


# C 2-d, strided 2-d, C 3-d, int64, float64, bool, C 1-d (after the bool: 7 bytes of padding),
# C 4-d (strides from stride())
PARAMS = [ArrayType(float32, 2, "C"), ArrayType(float32, 2, "A"), ArrayType(float64, 3, "C"),
          int64, float64, bool_, ArrayType(float32, 1, "C"), ArrayType(float32, 4, "C")]
LAYOUT = param_layout(PARAMS)


def good_args():
    return (Tensor((5, 7), ptr=0x1000),
            Tensor((7, 5), ptr=0x2000, strides=(1, 9)),  # a transposed view of a wider array
            Tensor((2, 1, 4), F64, ptr=0x3000, strides=(4, 99, 1), contiguous=True),
            -12345, 2.5, True, Tensor((11,), ptr=0x4000), Tensor((1, 2, 3, 4), ptr=0x5000))


def expected_bytes(args):
    vals = []
    for p, a in zip(PARAMS, args):
        if isinstance(p, ArrayType):
            st = c_strides(a.shape) if p.layout == "C" and p.ndim <= 3 else a.stride()
            vals += [a.data_ptr(), *a.shape, *st]
        else:
            vals.append(a)
    return LAYOUT.struct.pack(*vals)


def specs(args):
    return tuple(abi.ArraySpec("array", o, p.ndim, p.layout == "C", type(a), a.dtype)
                 if isinstance(p, ArrayType) else abi.ScalarSpec(struct_code(p), o)
                 for p, a, o in zip(PARAMS, args, LAYOUT.offsets))


def make(fl, rec, *, stream=0x55, tls=None, failed=None):
    tls = types.SimpleNamespace(device=1) if tls is None else tls
    return fl.Launcher(rec.addr, 0xF00D0000, (3, 2, 1), (128, 1, 1), 4096, stream, 1, tls,
                       specs(good_args()), LAYOUT.nbytes, failed or (lambda err: None))


def on_device_1(args):
    return tuple(Tensor(a.shape, a.dtype, 1, a._ptr, a._strides, a._contiguous)
                 if isinstance(a, Tensor) else a for a in args)


def test_packs_what_struct_packs_and_launches(fl):
    rec = Recorder(LAYOUT)
    go = make(fl, rec)
    args = on_device_1(good_args())
    assert go(args) is True
    (call,) = rec.calls
    assert call == {"func": 0xF00D0000, "grid": (3, 2, 1), "block": (128, 1, 1), "shared": 4096,
                    "stream": 0x55, "params": expected_bytes(args), "extra": None}
    # new values of the same kinds: new pointers (one above 2**63), shapes and scalars
    args2 = (Tensor((3, 9), ptr=2**64 - 256, device=1), Tensor((4, 6), ptr=0x2200, strides=(6, 2),
                                                           contiguous=False, device=1),
             Tensor((3, 5, 7), F64, ptr=0x3300, device=1), 2**63 - 1, -0.0, False,
             Tensor((1,), ptr=0x4400, device=1), Tensor((2, 2, 2, 2), ptr=0x5500, device=1))
    assert go(args2) is True
    assert rec.calls[1]["params"] == expected_bytes(args2)


def test_stream_getter_is_asked_per_launch(fl):
    rec, asked = Recorder(LAYOUT), []

    def getstream(dev):
        asked.append(dev)
        return 0x7000 + len(asked)

    go = make(fl, rec, stream=getstream)
    args = on_device_1(good_args())
    assert go(args) and go(args)
    assert asked == [1, 1] and [c["stream"] for c in rec.calls] == [0x7001, 0x7002]


def with_list_shape(t):
    t = Tensor(t.shape, t.dtype, t._device, t._ptr)
    t.shape = list(t.shape)  # torch.Size is a tuple; anything else goes the general path
    return t


def _mismatches():
    def replace(i, v):
        return lambda a: a[:i] + (v,) + a[i + 1:]

    def tensor(i, cls=Tensor, **kw):
        def f(a):
            t = a[i]
            d = {"shape": t.shape, "dtype": t.dtype, "device": t._device, "ptr": t._ptr,
                 "strides": t._strides, "contiguous": t._contiguous, **kw}
            return a[:i] + (cls(**d),) + a[i + 1:]
        return f

    return {
        "too few arguments": lambda a: a[:-1],
        "too many arguments": lambda a: a + (1,),
        "a list, not a tuple": list,
        "a tensor subclass": tensor(0, cls=OtherTensor),
        "another dtype": tensor(0, dtype=F64),
        "another device": tensor(6, device=0),
        "another rank": tensor(0, shape=(35,), strides=(1,)),
        "a shape that is a list": lambda a: (with_list_shape(a[0]),) + a[1:],
        "non-contiguous for a C parameter": tensor(2, contiguous=False),
        "contiguous for a strided parameter": tensor(1, strides=(5, 1), contiguous=True),
        "a number for a tensor": replace(0, 3),
        "a tensor for a number": replace(3, Tensor((5, 7), device=1)),
        "a float for an int": replace(3, 1.0),
        "a bool for an int": replace(3, True),
        "an int for a float": replace(4, 2),
        "an int for a bool": replace(5, 1),
        "an int above int64": replace(3, 2**63),
        "an int below int64": replace(3, -2**63 - 1),
        "a negative pointer": tensor(0, ptr=-1),
        "a pointer above 64 bits": tensor(0, ptr=2**64),
        "a shape that does not fit": tensor(0, shape=(2**63, 1), strides=(1, 1)),
        "strides whose product does not fit": tensor(2, shape=(1, 2**32, 2**32)),
        "a float in the shape": tensor(6, shape=(3.0,), strides=(1,)),
        "stride() of the wrong length": tensor(1, strides=(1, 9, 3)),
        "a stride that does not fit": tensor(1, strides=(1, 2**63)),
    }


MISMATCHES = _mismatches()


@pytest.mark.parametrize("what", list(MISMATCHES))
def test_mismatches_decline_without_launching(fl, what):
    rec = Recorder(LAYOUT)
    go = make(fl, rec)
    args = MISMATCHES[what](on_device_1(good_args()))
    assert go(args) is False
    assert rec.calls == []
    assert go(on_device_1(good_args())) is True  # and the launcher still works


def params_at(argv: int) -> bytes:
    """The parameter buffer a kernelParams array (at address ``argv``) points into."""
    return ctypes.string_at(ctypes.c_void_p.from_address(argv).value, LAYOUT.nbytes)


def twin(monkeypatch, calls, args=None):
    """The Python twin of make()'s launcher, over a CompiledKernel whose cuLaunchKernel (the
    cuda-bindings wrapper it launches through) records the packed buffer."""
    from threadtile.runtime import driver

    k = CompiledKernel(b"", "k", PARAMS)
    k._handle = 0xF00D0000

    def cu(h, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        calls.append(params_at(argv))
        return (0,)

    k._cu_launch = cu
    k._stream = (0x55, 0x55)  # as if converted to a CUstream before
    monkeypatch.setattr(driver.tls, "device", 1)
    return PyLauncher(k, (3, 2, 1), (128, 1, 1), 0x55, 4096, 1, specs(args or good_args()))


def test_python_twin_packs_the_c_launchers_bytes(fl, monkeypatch):
    rec, calls = Recorder(LAYOUT), []
    go, py_go = make(fl, rec), twin(monkeypatch, calls)
    args = on_device_1(good_args())
    args2 = MISMATCHES["another rank"](args)  # declined by both
    for a in (args, args2, args):
        assert go(a) is py_go(a)
    assert len(calls) == 2 and calls == [c["params"] for c in rec.calls]


@pytest.mark.parametrize("what", list(MISMATCHES))
def test_python_twin_declines_the_same_mismatches(monkeypatch, what):
    calls = []
    py_go = twin(monkeypatch, calls)
    assert py_go(MISMATCHES[what](on_device_1(good_args()))) is False and calls == []
    args = on_device_1(good_args())
    assert py_go(args) is True and calls == [expected_bytes(args)]


def test_another_current_device_declines(fl):
    rec, tls = Recorder(LAYOUT), types.SimpleNamespace(device=0)
    go = make(fl, rec, tls=tls)
    assert go(on_device_1(good_args())) is False and rec.calls == []
    tls.device = 1
    assert go(on_device_1(good_args())) is True and len(rec.calls) == 1


def test_exceptions_from_arguments_propagate(fl):
    class Broken(Tensor):
        def data_ptr(self):
            raise RuntimeError("no storage")

    rec = Recorder(LAYOUT)
    args = on_device_1(good_args())
    broken = Broken(args[0].shape, device=1)
    go = fl.Launcher(rec.addr, 1, (1, 1, 1), (1, 1, 1), 0, 0, 1, types.SimpleNamespace(device=1),
                     specs((broken,) + args[1:]), LAYOUT.nbytes, lambda err: None)
    with pytest.raises(RuntimeError, match="no storage"):
        go((broken,) + args[1:])
    assert rec.calls == []

    def getstream(dev):
        raise KeyError(dev)

    go = make(fl, rec, stream=getstream)
    with pytest.raises(KeyError):
        go(args)
    assert rec.calls == []


def test_reentrant_call_declines(fl):
    """A call made while the launcher is between its checks and its launch (here from an
    argument's method) gets False instead of overwriting the parameter buffer."""
    rec, inner = Recorder(LAYOUT), []
    args = on_device_1(good_args())

    class Reentrant(Tensor):
        def get_device(self):
            inner.append(go(args))
            return super().get_device()

    r = Reentrant(args[0].shape, device=1, ptr=0x1000)
    go = fl.Launcher(rec.addr, 1, (1, 1, 1), (1, 1, 1), 0, 0, 1, types.SimpleNamespace(device=1),
                     specs((r,) + args[1:]), LAYOUT.nbytes, lambda err: None)
    assert go((r,) + args[1:]) is True
    assert inner == [False] and len(rec.calls) == 1
    assert rec.calls[0]["params"] == expected_bytes((r,) + args[1:])


def test_launch_failure_calls_failed_which_raises(fl):
    rec, seen = Recorder(LAYOUT, result=701), []

    def failed(err):
        seen.append(err)
        raise CudaDriverError("launch failed", name="CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
                              code=err)

    go = make(fl, rec, failed=failed)
    with pytest.raises(CudaDriverError, match="launch failed"):
        go(on_device_1(good_args()))
    assert seen == [701] and len(rec.calls) == 1
    rec.result = 0
    assert go(on_device_1(good_args())) is True


def test_no_reference_leaks(fl):
    rec = Recorder(LAYOUT)
    go = make(fl, rec)
    args = on_device_1(good_args())
    bad = MISMATCHES["non-contiguous for a C parameter"](args)  # declined after reading shapes
    over = MISMATCHES["an int above int64"](args)  # declined while packing
    watched = [args[0], args[1], args[2], bad[2], F32, F64, args, bad, over, Tensor]
    for a in (args, bad, over):
        go(a)
    gc.collect()
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(1000):
        assert go(args) is True
        assert go(bad) is False
        assert go(over) is False
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before
    assert len(rec.calls) == 1001


def test_reference_cycles_are_collected(fl):
    class Owner:
        def failed(self, err):
            raise RuntimeError(err)

    owner, rec = Owner(), Recorder(LAYOUT)
    owner.go = make(fl, rec, failed=owner.failed)  # owner -> launcher -> bound method -> owner
    ref = weakref.ref(owner)
    del owner
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("kw, exc", [
    ({"launch": 0}, ValueError),
    ({"grid": (0, 1, 1)}, ValueError),
    ({"block": (1, 1)}, TypeError),
    ({"shared": -1}, ValueError),
    ({"stream": "s"}, TypeError),
    ({"device": -1}, ValueError),
    ({"params": (("f", 0),)}, ValueError),  # float32 scalars never reach the C launcher
    ({"params": (("q", 4),)}, ValueError),  # misaligned
    ({"params": (("array", 8, 2, True, Tensor, F32),)}, ValueError),  # past the buffer
    ({"params": ()}, ValueError),
    ({"failed": None}, TypeError),
])
def test_constructor_checks_its_arguments(fl, kw, exc):
    base = {"launch": 1, "func": 1, "grid": (1, 1, 1), "block": (1, 1, 1), "shared": 0,
            "stream": 0, "device": 0, "tls": types.SimpleNamespace(device=0),
            "params": (("q", 0),), "nbytes": 16, "failed": lambda err: None}
    with pytest.raises(exc):
        fl.Launcher(**{**base, **kw})


# -- through CompiledKernel.direct ---------------------------------------------------------------

@pytest.fixture
def c_direct(fl):
    if not launcher.FAST_LAUNCH:
        pytest.skip("the C launcher is disabled (THREADTILE_NO_CEXT)")
    return fl


def compiled(monkeypatch, rec):
    from threadtile.runtime import driver

    k = CompiledKernel(b"", "k", PARAMS)
    k._handle = driver._cu().CUfunction(0xF00D0000)  # as if loaded
    monkeypatch.setattr(launcher, "_cu_launch_address", lambda: rec.addr)
    monkeypatch.setattr(driver.tls, "device", 1)
    return k


def go_specs(k, args):
    """The specs direct() builds its launcher from (abi.launcher_specs)."""
    return abi.launcher_specs(k.params, k.layout, args, infos(args))[0]


def infos(args):
    return [types.SimpleNamespace(kind="array", framework="torch", device=a.get_device())
            if isinstance(a, Tensor) else types.SimpleNamespace(kind="scalar", framework=None,
                                                                 device=-1) for a in args]


def test_direct_builds_the_c_launcher_and_packs_as_the_python_one(c_direct, monkeypatch):
    fl = c_direct
    rec = Recorder(LAYOUT)
    k = compiled(monkeypatch, rec)
    args = on_device_1(good_args())
    go = k.direct((3, 2, 1), (128, 1, 1), 0x55, 4096, args, infos(args))
    assert isinstance(go, fl.Launcher)
    assert go(args) and rec.calls[0]["params"] == expected_bytes(args)
    assert rec.calls[0]["func"] == 0xF00D0000 and rec.calls[0]["stream"] == 0x55

    # the Python twin, given the same arguments, packs the same bytes
    py_calls = []

    def cu(h, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        py_calls.append(params_at(argv))
        return (0,)

    monkeypatch.setattr(launcher, "_fastlaunch", None)
    k._cu_launch = cu
    py_go = k.direct((3, 2, 1), (128, 1, 1), 0x55, 4096, args, infos(args))
    assert isinstance(py_go, PyLauncher) and py_go.specs == go_specs(k, args) and py_go(args)
    assert py_calls == [rec.calls[0]["params"]]


def test_direct_c_launcher_reports_driver_errors(c_direct, monkeypatch):
    rec = Recorder(LAYOUT, result=1)  # CUDA_ERROR_INVALID_VALUE
    k = compiled(monkeypatch, rec)
    args = on_device_1(good_args())
    go = k.direct((3, 2, 1), (128, 1, 1), 0, 0, args, infos(args))
    with pytest.raises(CudaDriverError, match="CUDA_ERROR_INVALID_VALUE"):
        go(args)


def test_without_libcuda_direct_uses_the_python_launcher(monkeypatch):
    k = compiled(monkeypatch, Recorder(LAYOUT))
    monkeypatch.setattr(launcher, "_cu_launch_address", lambda: 0)
    args = on_device_1(good_args())
    assert isinstance(k.direct((1, 1, 1), (1, 1, 1), 0, 0, args, infos(args)), PyLauncher)


def test_threadtile_no_cext_chooses_the_python_launcher():
    code = ("from threadtile.runtime import launcher\n"
            "print(launcher.FAST_LAUNCH, launcher._fastlaunch)\n")
    env = {**os.environ, "THREADTILE_NO_CEXT": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "None"]


def test_packing_formats_match_struct():
    """The C launcher's assumptions about the layout: an array is "Q" then 2N "q", the scalars
    it takes are int64 "q", double "d" and bool "?", 8-byte aligned but the bool."""
    assert [struct_code(t) for t in (int64, float64, bool_)] == ["q", "d", "?"]
    layout = param_layout([ArrayType(float32, 3, "C"), bool_, float64])
    assert layout.offsets == (0, 56, 64) and layout.sizes == (56, 1, 8)
    assert layout.struct.format == "<Q" + "q" * 6 + "?7xd"
    assert struct.calcsize(layout.struct.format) == layout.nbytes


# ---- a tensor type with torch's kinds of attributes, and the Call base of kernel[grid, block] --

class PropTensor:
    """A fake whose type holds its attributes the way torch.Tensor's does: dtype, shape and
    is_cuda as data descriptors (read through the type's descriptors), and methods. It counts
    what is read of it."""

    reads: list = []

    def __init__(self, shape, dtype=F32, ptr=0x1000, cuda=True, device=0):
        self._shape, self._dtype, self._ptr, self._cuda, self._device = (
            tuple(shape), dtype, ptr, cuda, device)

    def _read(self, name, value):
        PropTensor.reads.append(name)
        return value

    dtype = property(lambda self: self._read("dtype", self._dtype))
    shape = property(lambda self: self._read("shape", self._shape))
    is_cuda = property(lambda self: self._read("is_cuda", self._cuda))

    def get_device(self):
        return self._read("get_device", self._device)

    def is_contiguous(self):
        return self._read("is_contiguous", True)

    def data_ptr(self):
        return self._read("data_ptr", self._ptr)

    def stride(self):
        return self._read("stride", c_strides(self._shape))


PARAMS2 = [ArrayType(float32, 1, "C"), ArrayType(float32, 2, "C"), int64]
LAYOUT2 = param_layout(PARAMS2)


def make2(fl, rec, *, device=0, one_device=True):
    specs2 = (("array", LAYOUT2.offsets[0], 1, True, PropTensor, F32),
              ("array", LAYOUT2.offsets[1], 2, True, PropTensor, F32),
              ("q", LAYOUT2.offsets[2]))
    return fl.Launcher(rec.addr, 0xF00D0000, (1, 1, 1), (32, 1, 1), 0, 0x55, device,
                       types.SimpleNamespace(device=device), specs2, LAYOUT2.nbytes,
                       lambda err: None, one_device=one_device)


def test_type_descriptors_and_one_device(fl):
    rec = Recorder(LAYOUT2)
    go = make2(fl, rec)
    a, b = PropTensor((11,), ptr=0x4000), PropTensor((5, 7), ptr=0x8000)
    PropTensor.reads = []
    assert go((a, b, 3)) is True
    assert rec.calls[0]["params"] == LAYOUT2.struct.pack(0x4000, 11, 1, 0x8000, 5, 7, 7, 1, 3)
    # one device: is_cuda instead of get_device()
    assert "get_device" not in PropTensor.reads and PropTensor.reads.count("is_cuda") == 2
    assert sorted(set(PropTensor.reads)) == ["data_ptr", "dtype", "is_contiguous", "is_cuda",
                                             "shape"]
    # a tensor not on the GPU, or of another rank, launches nothing
    assert go((PropTensor((11,), cuda=False), b, 3)) is False
    assert go((PropTensor((11, 1)), b, 3)) is False
    assert go((a, PropTensor((35,)), 3)) is False
    assert len(rec.calls) == 1


def test_several_devices_ask_get_device(fl):
    rec = Recorder(LAYOUT2)
    for one_device, device in ((False, 0), (True, 1)):  # one_device holds for device 0 only
        go = make2(fl, rec, device=device, one_device=one_device)
        PropTensor.reads = []
        args = (PropTensor((4,), device=device), PropTensor((2, 2), device=device), 0)
        assert go(args) is True
        assert PropTensor.reads.count("get_device") == 2 and "is_cuda" not in PropTensor.reads
        assert go((PropTensor((4,), device=device + 1),) + args[1:]) is False


@pytest.fixture
def call_cls(fl):
    fl.set_simulation(switch.requested)

    class Launch(fl.Call):
        def __init__(self):
            self.slow = []

        def _call(self, *args, **kwargs):
            self.slow.append((args, kwargs))
            return "general path"

    return Launch


def test_call_runs_its_launcher_from_c(fl, call_cls):
    rec = Recorder(LAYOUT2)
    k = call_cls()
    assert k.direct is None and k(1, 2) == "general path"  # no launcher yet
    k.direct = make2(fl, rec)
    args = (PropTensor((3,), ptr=0x10), PropTensor((1, 4), ptr=0x20), 9)
    assert k(*args) is None and len(rec.calls) == 1 and len(k.slow) == 1
    assert rec.calls[0]["params"] == LAYOUT2.struct.pack(0x10, 3, 1, 0x20, 1, 4, 4, 1, 9)
    # keywords, or arguments the launcher declines: the general path
    assert k(*args, x=1) == "general path" and k.slow[-1] == (args, {"x": 1})
    assert k(args[0], args[1], 9.0) == "general path"
    assert len(rec.calls) == 1 and len(k.slow) == 3
    # a launcher in Python gets the argument tuple; its result's truth says it launched
    seen = []
    k.direct = lambda a: seen.append(a) or len(seen) == 1
    assert k(*args) is None and len(k.slow) == 3  # launched
    assert k(*args) == "general path" and len(k.slow) == 4  # declined
    assert seen == [args, args]

    def raising(a):
        raise KeyError("from the launcher")

    k.direct = raising
    with pytest.raises(KeyError, match="from the launcher"):
        k(*args)
    assert len(rec.calls) == 1 and len(k.slow) == 4
    del k.direct  # a member: deleting it leaves None
    assert k.direct is None


def test_call_takes_the_general_path_while_simulating(fl, call_cls, monkeypatch):
    jit = sys.modules["threadtile.jit"]
    if jit.Launch.__base__ is not fl.Call:
        pytest.skip("jit does not use the C base here")
    rec = Recorder(LAYOUT2)
    k = call_cls()
    k.direct = make2(fl, rec)
    args = (PropTensor((3,)), PropTensor((1, 4)), 9)
    monkeypatch.setattr(switch.STATE, "active", True)
    assert k(*args) == "general path"
    monkeypatch.setattr(switch.STATE, "active", False)
    for value, launches in (("1", False), ("yes", False), ("0", True), ("", True)):
        monkeypatch.setenv("THREADTILE_SIMULATE", value)
        before = len(rec.calls)
        assert (k(*args) is None) == launches and len(rec.calls) == before + launches
    monkeypatch.delenv("THREADTILE_SIMULATE")
    assert k(*args) is None


def test_constants_are_checked_and_not_packed(fl, monkeypatch):
    """A tile kernel's Constant arguments (ConstSpecs among the parameters): a call passes
    them where they were, of the same type and equal, and they pack nothing (kernelParams
    holds the parameters alone); an array indexed in 32-bit declines extents or strides
    beyond int32. The C launcher and its Python twin agree."""
    rec = Recorder(LAYOUT)
    args = on_device_1(good_args())
    base = list(specs(args))
    base[0] = base[0]._replace(narrow=True)
    full_specs = tuple(base[:1]) + (abi.ConstSpec("const", 0, 0, False, int, 128),) + \
        tuple(base[1:]) + (abi.ConstSpec("const", 0, 0, False, str, "row"),)
    tls = types.SimpleNamespace(device=1)
    go = fl.Launcher(rec.addr, 0xF00D0000, (3, 2, 1), (128, 1, 1), 0, 0x55, 1, tls, full_specs,
                     LAYOUT.nbytes, lambda err: None)
    full = args[:1] + (128,) + args[1:] + ("row",)
    assert go(full) is True and rec.calls[0]["params"] == expected_bytes(args)
    assert abi.spec_values(full_specs, full, 1) == abi.spec_values(specs(args), args, 1)
    for other in (full[:1] + (64,) + full[2:], full[:1] + (128.0,) + full[2:],
                  full[:-1] + ("col",), full[:-1]):
        assert go(other) is False and abi.spec_values(full_specs, other, 1) is None
    wide = (Tensor((5, 2**31), ptr=0x1000, device=1),) + full[1:]
    assert go(wide) is False and abi.spec_values(full_specs, wide, 1) is None
    assert len(rec.calls) == 1
