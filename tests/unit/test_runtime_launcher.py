"""Launch configuration, stream handles, the parameter packing layout, and the general launch
path's argument checks, which happen before anything touches a GPU (cuLaunchKernel is a stub
recording the packed buffer)."""

import ctypes
import struct

import numpy as np
import pytest

from threadtile.errors import LaunchError
from threadtile.lang.types import (
    ArrayType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from threadtile.runtime import arrays, driver, launcher
from threadtile.runtime.abi import param_layout
from threadtile.runtime.launcher import CompiledKernel, cdiv, dim3, normalize_dims, stream_handle

# -- dims ----------------------------------------------------------------------------------------

def test_normalize_dims_accepts_ints_tuples_and_dim3():
    assert normalize_dims(5, "grid") == (5, 1, 1)
    assert normalize_dims((4, 2), "grid") == (4, 2, 1)
    assert normalize_dims([4, 2, 3], "grid") == (4, 2, 3)
    assert normalize_dims(dim3(8, 4), "block") == (8, 4, 1)
    assert normalize_dims(np.int64(7), "grid") == (7, 1, 1)
    assert normalize_dims((np.int32(2), 3), "grid") == (2, 3, 1)

    class D:
        x, y, z = 2, 3, 4

    assert normalize_dims(D(), "block") == (2, 3, 4)


@pytest.mark.parametrize("bad, exc, match", [
    (0, ValueError, ">= 1"),
    ((4, -1), ValueError, ">= 1"),
    ((1, 2, 3, 4), ValueError, "1, 2 or 3 integers"),
    ((), ValueError, "1, 2 or 3 integers"),
    (2.5, TypeError, "int"),
    ((2.0, 1), TypeError, "ints"),
    ("8", TypeError, "int"),
    (True, TypeError, "int"),
])
def test_normalize_dims_rejects(bad, exc, match):
    with pytest.raises(exc, match=match):
        normalize_dims(bad, "block")


def test_dim3_and_cdiv():
    assert dim3(3) == (3, 1, 1) and dim3(3, 2).y == 2
    assert cdiv(1000, 256) == 4 and cdiv(1024, 256) == 4 and cdiv(0, 256) == 0


# -- streams -------------------------------------------------------------------------------------

def test_stream_handles():
    class Torch:
        cuda_stream = 0x1234

    class Cupy:
        ptr = 0x5678

    class Core:
        def __cuda_stream__(self):
            return (0, 0x9ABC)

    class Handle:
        handle = ctypes.c_void_p(0x42)

    assert stream_handle(None) == 0
    assert stream_handle(0) == 0
    assert stream_handle(77) == 77
    assert stream_handle(Torch()) == 0x1234
    assert stream_handle(Cupy()) == 0x5678
    assert stream_handle(Core()) == 0x9ABC
    assert stream_handle(Handle()) == 0x42
    with pytest.raises(TypeError, match="stream"):
        stream_handle("default")


# -- packing layout ------------------------------------------------------------------------------

def _ctypes_array(ndim):
    return type(f"A{ndim}", (ctypes.Structure,), {"_fields_": [
        ("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * ndim),
        ("strides", ctypes.c_int64 * ndim)]})


_CT = {bool_: ctypes.c_bool, int8: ctypes.c_int8, uint8: ctypes.c_uint8, int16: ctypes.c_int16,
       int32: ctypes.c_int32, int64: ctypes.c_int64, float16: ctypes.c_uint16,
       bfloat16: ctypes.c_uint16, float32: ctypes.c_float, float64: ctypes.c_double}


def _ctypes_struct(params):
    fields = []
    for i, p in enumerate(params):
        fields.append((f"p{i}", _ctypes_array(p.ndim) if isinstance(p, ArrayType) else _CT[p]))
    return type("Params", (ctypes.Structure,), {"_fields_": fields})


LAYOUTS = [
    [ArrayType(float32, 1, "C")] * 3,
    [ArrayType(float32, 2, "A"), int32, ArrayType(float64, 1)],
    [bool_, ArrayType(int8, 3), int8, int16, float16, int64],
    [int8, int32, int8, float64, int16, bfloat16, uint8, float32],
    [ArrayType(float16, 0), bool_],
]


@pytest.mark.parametrize("params", LAYOUTS, ids=range(len(LAYOUTS)))
def test_layout_matches_ctypes_structure(params):
    layout = param_layout(params)
    ref = _ctypes_struct(params)
    assert layout.offsets == tuple(getattr(ref, f"p{i}").offset for i in range(len(params)))
    assert layout.sizes == tuple(getattr(ref, f"p{i}").size for i in range(len(params)))
    end = layout.offsets[-1] + layout.sizes[-1]
    assert layout.nbytes == end  # no tail padding: the driver reads each parameter's size


def test_layout_by_hand():
    # bool @0, array<int8,3> @8 (8 + 48 bytes), int8 @64, int16 @66, half @68, int64 @72
    layout = param_layout([bool_, ArrayType(int8, 3), int8, int16, float16, int64])
    assert layout.offsets == (0, 8, 64, 66, 68, 72)
    assert layout.sizes == (1, 56, 1, 2, 2, 8)
    assert layout.struct.format == "<?7xQqqqqqqb1xhe2xq"
    # arrays are 8 + 16 * ndim bytes, 8-byte aligned
    assert param_layout([ArrayType(float32, 2)]).sizes == (40,)
    assert param_layout([int8, ArrayType(float32, 1)]).offsets == (0, 8)


def test_packed_bytes_of_an_array_param():
    layout = param_layout([int32, ArrayType(float32, 2, "A")])
    buf = bytearray(layout.nbytes)
    layout.struct.pack_into(buf, 0, -3, 0xDEAD0000, 4, 5, 5, 1)
    assert struct.unpack_from("<i", buf, 0) == (-3,)
    assert struct.unpack_from("<Qqqqq", buf, 8) == (0xDEAD0000, 4, 5, 5, 1)


# -- the fast path and argument checks (no GPU: they run before any driver call) ------------------

C1 = ArrayType(float32, 1, "C")
A2 = ArrayType(float32, 2, "A")


class FakeCuda:
    """A device array as far as describe() can tell (CUDA array interface, no GPU)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7000_0000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}


def _infos(*objs):
    return arrays.describe_all(objs, [f"a{i}" for i in range(len(objs))])


G, B = (1, 1, 1), (32, 1, 1)


def _stubbed(monkeypatch, k, dev=0):
    """``k`` as if loaded and configured for (G, B) on ``dev``, with a cuLaunchKernel that
    records the packed parameters; returns the list it records into."""
    calls = []

    def cu(h, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        # the parameters kernelParams points at (the first one starts the buffer)
        first = ctypes.c_void_p.from_address(argv).value if argv else 0
        calls.append(ctypes.string_at(first, k.layout.nbytes) if argv else b"")
        return (0,)

    k._func, k._handle, k._cu_launch, k._cfg = object(), 1, cu, (G, B, 0, dev)
    k._stream = (0, 0)
    monkeypatch.setattr(driver.tls, "device", dev)
    monkeypatch.setattr(driver, "current_index", lambda: dev)
    return calls


def _on(dev, infos):
    return [i._replace(device=dev) if i.kind == "array" else i for i in infos]


def test_exact_arguments_pack_their_flat_values(monkeypatch):
    k = CompiledKernel(b"", "k", [C1, int64, C1])
    calls = _stubbed(monkeypatch, k)
    monkeypatch.setattr(k, "_checked", None)  # the inline check takes them: no full check
    k.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)), 3, FakeCuda((4,)))))
    assert calls == [k.layout.struct.pack(0x7000_0000, 4, 1, 3, 0x7000_0000, 4, 1)]
    # an array that does not say its device goes with the others
    k.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)), 3))[:2] + _infos(FakeCuda((5,))))
    assert calls[1] == k.layout.struct.pack(0x7000_0000, 4, 1, 3, 0x7000_0000, 5, 1)


def test_other_arguments_take_the_full_check(monkeypatch):
    k = CompiledKernel(b"", "k", [C1, int32])
    calls = _stubbed(monkeypatch, k)
    k.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)), 7)))  # an int64 for an int32
    assert calls == [k.layout.struct.pack(0x7000_0000, 4, 1, 7)]
    with pytest.raises(OverflowError, match="argument 1: 4294967296 does not fit in int32"):
        k.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)), 2**32)))
    assert len(calls) == 1
    k2 = CompiledKernel(b"", "k", [C1, C1])
    _stubbed(monkeypatch, k2)
    with pytest.raises(LaunchError, match="different devices"):
        k2.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)))) + _on(1, _infos(FakeCuda((4,)))))


def test_launches_take_a_parameter_buffer_no_other_launch_packs_into(monkeypatch):
    k = CompiledKernel(b"", "k", [C1, int32])
    calls = _stubbed(monkeypatch, k)
    infos = _on(0, _infos(FakeCuda((4,)), 7))
    (mine,) = k._buffers
    k._buffers.clear()  # another thread is between its pack and its launch with it
    k.launch(G, B, None, 0, infos)
    assert calls == [k.layout.struct.pack(0x7000_0000, 4, 1, 7)]
    assert mine[0].raw[:k.layout.nbytes] == bytes(k.layout.nbytes)  # left alone
    (made,) = k._buffers  # the one made meanwhile, kept
    k._buffers.append(mine)
    k.launch(G, B, None, 0, _on(0, _infos(FakeCuda((4,)), 8)))
    assert calls[1] == k.layout.struct.pack(0x7000_0000, 4, 1, 8) == mine[0].raw
    assert k._buffers == [made, mine]


def test_scalars_alone_and_no_parameters(monkeypatch):
    k = CompiledKernel(b"", "k", [int32])
    calls = _stubbed(monkeypatch, k)
    k.launch(G, B, None, 0, _infos(np.int32(5)))
    assert calls == [struct.pack("<i", 5)]
    k0 = CompiledKernel(b"", "k", [])
    calls0 = _stubbed(monkeypatch, k0)
    k0.launch(G, B, None, 0, [])
    assert calls0 == [b""]


def _launch(k, *objs):
    k.launch((1, 1, 1), (32, 1, 1), 0, 0, _infos(*objs))


def test_argument_count():
    k = CompiledKernel(b"", "add", [C1, C1, C1])
    with pytest.raises(TypeError, match="kernel 'add' takes 3 arguments, got 2"):
        _launch(k, FakeCuda((4,)), FakeCuda((4,)))


def test_array_dtype_and_rank_are_checked():
    k = CompiledKernel(b"", "add", [C1, C1])
    with pytest.raises(TypeError, match=r"argument 1 must be a 1-d array of float32, got a 1-d "
                                        r"array of int32"):
        _launch(k, FakeCuda((4,)), FakeCuda((4,), "<i4"))
    with pytest.raises(TypeError, match=r"argument 0 must be a 1-d array of float32, got a 2-d"):
        _launch(k, FakeCuda((4, 4)), FakeCuda((4,)))
    with pytest.raises(TypeError, match=r"argument 1 must be an array of float32 with 1 "
                                        r"dimension, got a scalar"):
        _launch(k, FakeCuda((4,)), 1.0)


def test_contiguous_parameter_refuses_a_strided_array():
    k = CompiledKernel(b"", "k", [C1])
    with pytest.raises(TypeError, match="C-contiguous"):
        _launch(k, FakeCuda((4,), strides=(8,)))


def test_scalar_parameters():
    k = CompiledKernel(b"", "k", [int32])
    with pytest.raises(TypeError, match="argument 0 must be a int32 scalar, got 1.5"):
        _launch(k, 1.5)
    with pytest.raises(TypeError, match="argument 0 must be a int32 scalar, got a 1-d array"):
        _launch(k, FakeCuda((4,)))


def test_arrays_on_two_devices():
    infos = _infos(FakeCuda((4,)), FakeCuda((4,)))
    infos = [infos[0]._replace(device=0), infos[1]._replace(device=1)]
    with pytest.raises(ValueError, match="different devices.*argument 0 on cuda:0, argument 1 "
                                         "on cuda:1"):
        launcher.arrays_device("k", infos)
    assert launcher.arrays_device("k", [infos[0], arrays.describe(2)]) == (0, infos[0])
