"""describe(): what a kernel argument is, for every kind of argument, without a GPU."""

import numpy as np
import pytest

from threadtile.lang.types import ArrayType, bool_, float16, float32, float64, int32, int64
from threadtile.runtime import arrays
from threadtile.runtime.arrays import HOST, describe, describe_all


def test_python_scalars():
    i = describe(7)
    assert (i.kind, i.dtype, i.ndim, i.value, i.flat, i.type) == ("scalar", int64, 0, 7, (7,),
                                                                  int64)
    assert describe(2.5).dtype == float64
    b = describe(True)
    assert b.dtype == bool_ and b.flat == (True,)
    assert i.writeback is None and i.device == -1


def test_numpy_scalars_keep_their_dtype():
    assert describe(np.float32(1.5)).dtype == float32
    assert describe(np.int32(3)).dtype == int32
    assert describe(np.float16(1)).dtype == float16
    assert describe(np.bool_(True)).dtype == bool_
    assert describe(np.float32(1.5)).key == arrays.type_key(float32)


def test_keys_are_small_ints_equal_for_equal_types():
    a = describe(np.zeros(3, np.float32))
    b = describe(np.ones(5, np.float32))
    c = describe(np.ones((5, 2), np.float32))
    assert isinstance(a.key, int) and a.key == b.key != c.key
    assert a.type == ArrayType(float32, 1, "C")
    assert arrays.array_type(float32, 1, "C")[0] is a.type


def test_host_numpy_array_defers_the_copy():
    h = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]  # not contiguous
    i = describe(h, 2, "a")
    assert i.kind == "array" and i.dtype == float64 and i.ndim == 2
    assert i.layout == "C"  # the launcher passes a contiguous device copy
    assert i.ptr == 0 and i.device == HOST and i.writeback is h
    assert i.shape == (3, 2) and i.strides == (2, 1)
    assert i.flat == (0, 3, 2, 2, 1)


def test_zero_size_and_zero_d_arrays():
    z = describe(np.zeros((0, 4), np.int32))
    assert z.shape == (0, 4) and z.strides == (4, 1)
    s = describe(np.array(5.0))
    assert s.ndim == 0 and s.flat == (0,)


def test_numpy_subclass_takes_the_host_path():
    m = np.arange(4.0).view(type("Sub", (np.ndarray,), {}))
    assert describe(m).device == HOST


def test_cuda_array_interface():
    class Dev:
        def __init__(self, **cai):
            self.__cuda_array_interface__ = {"version": 3, "data": (0x1000, False), **cai}

    c = describe(Dev(shape=(3, 4), typestr="<f4", strides=None))
    assert (c.layout, c.strides, c.ptr, c.device) == ("C", (4, 1), 0x1000, -1)
    t = describe(Dev(shape=(3, 4), typestr="<f4", strides=(4, 12)))  # a transpose
    assert (t.layout, t.strides) == ("A", (1, 3))
    one = describe(Dev(shape=(1, 4), typestr="<f4", strides=(1000, 4)))
    assert one.layout == "C"  # a length-1 axis may have any stride
    with pytest.raises(TypeError, match="masked"):
        describe(Dev(shape=(3,), typestr="<f4", mask=object()))
    with pytest.raises(TypeError, match="multiple of its item size"):
        describe(Dev(shape=(3,), typestr="<f4", strides=(6,)))
    with pytest.raises(TypeError, match="timedelta64"):
        describe(Dev(shape=(3,), typestr="<m8"), 1, "z")


def test_host_dlpack_array_is_refused():
    class HostTensor:
        def __dlpack__(self, **kw):
            raise AssertionError("not reached")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match=r"argument 'x' \(position 3\) is a host \(CPU\) "
                                        r"HostTensor; a kernel needs device memory"):
        describe(HostTensor(), 3, "x")


def test_unknown_objects_and_dtypes():
    with pytest.raises(TypeError, match="kernels take device arrays"):
        describe("hello", 0, "s")
    with pytest.raises(TypeError, match="timedelta64"):
        describe(np.zeros(3, "m8[s]"), 0, "c")
    with pytest.raises(TypeError, match="argument 'c'"):
        describe(np.timedelta64(1), 0, "c")
    z = describe(np.complex64(1 + 2j), 0, "z")  # complex numbers are two floats
    assert (z.dtype.name, z.flat) == ("complex64", (1.0, 2.0))
    assert describe(3j, 0, "z").flat == (0.0, 3.0)


class FakeDevice:
    def __init__(self, kind):
        self.type = kind


class FakeDtype:
    def __str__(self):
        return "torch.float32"


F32 = FakeDtype()


class FakeTensor:
    """Exposes the parts of torch.Tensor that describe() reads."""

    dtype = F32

    def __init__(self, shape, stride, dev=0, ptr=0xABC000):
        self.shape, self._stride, self._dev, self._ptr = shape, stride, dev, ptr
        self.device = FakeDevice("cuda" if dev >= 0 else "cpu")

    def get_device(self):
        return self._dev

    def is_contiguous(self):
        return self._stride == arrays._c_strides(self.shape)

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride


def test_torch_like_tensors():
    arrays.register_handler(FakeTensor, arrays._describe_torch)
    t = describe(FakeTensor((4, 8), (8, 1)))
    assert (t.kind, t.dtype, t.layout, t.ptr, t.shape, t.strides, t.device, t.framework) == (
        "array", float32, "C", 0xABC000, (4, 8), (8, 1), 0, "torch")
    assert t.flat == (0xABC000, 4, 8, 8, 1)
    tt = describe(FakeTensor((8, 4), (1, 8), dev=1))
    assert (tt.layout, tt.device, tt.type) == ("A", 1, ArrayType(float32, 2, "A"))
    with pytest.raises(TypeError, match=r"argument 'a' \(position 2\) is a CPU torch.Tensor; "
                                        r"a kernel needs device memory: move it with \.cuda\(\) "
                                        r"\(or run under threadtile.simulate\(\)\)"):
        describe(FakeTensor((4,), (1,), dev=-1), 2, "a")


def test_describe_all_matches_describe():
    objs = [np.zeros(3, np.float32), 4, 2.0, np.int32(1)]
    assert describe_all(objs, list("abcd")) == [describe(o) for o in objs]


def test_bfloat16_bits():
    assert arrays.bf16_bits(1.0) == 0x3F80
    assert arrays.bf16_bits(-2.0) == 0xC000
    assert arrays.bf16_bits(np.float32(1.00390625)) == 0x3F80  # ties round to even
    assert arrays.bf16_bits(float("nan")) & 0x7F80 == 0x7F80


def test_bfloat16_arrays_from_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    a = describe(np.zeros(3, ml.bfloat16))
    assert a.dtype.name == "bfloat16"
    s = describe(np.array(1.0, ml.bfloat16)[()])
    assert s.flat == (0x3F80,)


def test_device_array_helpers_need_no_gpu_to_import():
    # the numba-style names exist; outside simulate() using them needs a GPU (tests/gpu)
    import threadtile.runtime as rt

    for name in ("to_device", "device_array", "device_array_like", "as_cuda_array",
                 "synchronize", "DeviceArray"):
        assert callable(getattr(rt, name))
    with pytest.raises(TypeError, match="device memory"):
        rt.as_cuda_array(np.zeros(3))  # NumPy speaks DLPack, from the CPU
    with pytest.raises(TypeError, match="not a device array"):
        rt.as_cuda_array([1, 2, 3])
