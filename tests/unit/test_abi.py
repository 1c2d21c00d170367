"""The kernel argument ABI (threadtile.runtime.abi) without a GPU: layouts of mixed parameter
lists, the driver's offsets, every check and conversion an argument goes through and the errors
it raises, and the steady-state specs (what the C launcher and its Python twin pack)."""

import struct
import types

import numpy as np
import pytest
from fake_torch import F32, Tensor

from threadtile.errors import ThreadtileError
from threadtile.lang import types as ty
from threadtile.lang.types import ArrayType, bool_, float32, float64, int32, int64
from threadtile.runtime import abi, arrays
from threadtile.runtime.abi import POINTER, TensorMapParam, param_layout

C1 = ArrayType(float32, 1, "C")
A2 = ArrayType(float32, 2, "A")
TMAP = TensorMapParam(0, (64, 64))


# -- layout --------------------------------------------------------------------------------------

def test_every_kind_of_parameter():
    assert abi.param_format(ArrayType(ty.int8, 3, "C")) == ("Q" + "q" * 6, 56, 8)
    assert abi.param_format(ArrayType(ty.float16, 0, "C")) == ("Q", 8, 8)
    assert abi.param_format(ty.int16) == ("h", 2, 2)
    assert abi.param_format(ty.bfloat16) == ("H", 2, 2)  # its bits
    assert abi.param_format(bool_) == ("?", 1, 1)
    assert abi.param_format(POINTER) == ("Q", 8, 8)
    assert abi.param_format(TMAP) == ("128s", 128, 64)
    with pytest.raises(TypeError, match="arrays, scalars, pointers or tensor maps"):
        abi.param_format("float")


def test_mixed_parameter_list():
    # bool @0, pointer @8, 2-d array @16 (40 bytes), tensor map @64 (64-aligned, 128 bytes),
    # ty.int16 @192, float64 @200, 1-d array @208
    params = [bool_, POINTER, A2, TMAP, ty.int16, float64, C1]
    layout = param_layout(params)
    assert layout.offsets == (0, 8, 16, 64, 192, 200, 208)
    assert layout.sizes == (1, 8, 40, 128, 2, 8, 24)
    assert layout.nbytes == 232  # no tail padding
    assert layout.struct.format == "<?7xQQqqqq8x128sh6xdQqq"
    packed = layout.struct.pack(True, 0xAB, 0xCD, 4, 5, 5, 1, b"\1" * 128, -2, 0.5, 0xEF, 9, 1)
    assert struct.unpack_from("<Q", packed, 8) == (0xAB,)
    assert packed[64:192] == b"\1" * 128 and struct.unpack_from("<h", packed, 192) == (-2,)


def test_driver_offsets():
    layout = param_layout([C1, ty.int8, TMAP], at=[0, 24, 128])
    assert layout.offsets == (0, 24, 128) and layout.struct.format == "<Qqqb103x128s"
    with pytest.raises(ThreadtileError, match="parameter 1 overlaps"):
        param_layout([C1, ty.int8], at=[0, 16])


def test_the_driver_layout_is_checked_and_tensor_map_offsets_adopted():
    params = [C1, int32, TMAP]
    mine = param_layout(params)  # C1 @0, int32 @24, the map @64
    assert mine.offsets == (0, 24, 64)
    assert abi.driver_layout("k", params, mine, None, 2) is mine  # the driver cannot tell
    assert abi.driver_layout("k", params, mine, [(0, 24), (24, 4), (64, 128)], 2) is mine
    moved = abi.driver_layout("k", params, mine, [(0, 24), (24, 4), (128, 128)], 2)
    assert moved.offsets == (0, 24, 128) and moved.sizes == mine.sizes
    for info in ([(0, 24), (32, 4), (64, 128)],  # an argument moved
                 [(0, 24), (24, 8), (64, 128)],  # another size
                 [(0, 24), (24, 4)]):  # a parameter missing
        with pytest.raises(ThreadtileError, match="this is a threadtile bug"):
            abi.driver_layout("k", params, mine, info, 2)


# -- arguments -----------------------------------------------------------------------------------

class FakeCuda:
    """A device array as far as describe() can tell (CUDA array interface, no GPU)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7000_0000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}


def _infos(*objs):
    return arrays.describe_all(objs)


def test_values_of_every_kind():
    infos = _infos(FakeCuda((4,)), FakeCuda((2, 3), strides=(4, 8)), 3, True, 2.5,
                   FakeCuda((5,), ptr=0x9000))
    vals = abi.values("k", [C1, A2, float32, int32, float64, POINTER], infos)
    assert vals == [0x7000_0000, 4, 1, 0x7000_0000, 2, 3, 1, 2, 3.0, 1, 2.5, 0x9000]
    assert [type(v) for v in vals[8:11]] == [float, int, float]


def test_a_c_contiguous_array_fills_a_strided_parameter():
    assert abi.values("k", [A2], _infos(FakeCuda((2, 3)))) == [0x7000_0000, 2, 3, 3, 1]


@pytest.mark.parametrize("param, arg, message", [
    (C1, 1.0, "argument 0 must be an array of float32 with 1 dimension, got a scalar "
              "(float64)"),
    (A2, 1, "argument 0 must be an array of float32 with 2 dimensions, got a scalar (int64)"),
    (C1, FakeCuda((4,), "<i4"), "argument 0 must be a 1-d array of float32, got a 1-d array of "
                                "int32"),
    (C1, FakeCuda((4, 4)), "argument 0 must be a 1-d array of float32, got a 2-d array of "
                           "float32"),
    (C1, FakeCuda((4,), strides=(8,)), "argument 0 must be C-contiguous"),
    (int32, FakeCuda((4,)), "argument 0 must be a int32 scalar, got a 1-d array of float32"),
    (int32, 1.5, "argument 0 must be a int32 scalar, got 1.5 (float64): a float64 does not "
                 "convert to int32 without losing its meaning"),
    (bool_, 2, "argument 0 must be a bool scalar, got 2 (int64)"),
    (bool_, 1.0, "argument 0 must be a bool scalar, got 1.0"),
    (ty.uint8, np.float32(2), "(float32): a float32 does not convert to uint8"),
    (POINTER, 3, "argument 0 must be an array (passed as a pointer), got a scalar (3)"),
    (TMAP, FakeCuda((4,)), "parameter 0: TensorMapParam(arg=0, box=(64, 64), rows=0) is not an "
                           "argument's parameter"),
])
def test_conversion_errors(param, arg, message):
    with pytest.raises(TypeError) as e:
        abi.values("k", [param], _infos(arg))
    assert str(e.value).startswith("kernel 'k' ") and message in str(e.value)


def test_argument_count():
    with pytest.raises(TypeError, match="kernel 'add' takes 3 arguments, got 2"):
        abi.values("add", [C1, C1, C1], _infos(FakeCuda((4,)), FakeCuda((4,))))
    with pytest.raises(TypeError, match="kernel 'k' takes 1 argument, got 0"):
        abi.check("k", [int32], [])


def test_scalar_conversions():
    def conv(v, p):
        return abi.convert_scalar(arrays.describe(v), p, "x")

    assert conv(3, float32) == 3.0 and type(conv(3, float32)) is float
    assert conv(3, ty.int8) == 3 and conv(True, int32) == 1 and conv(np.uint32(7), int64) == 7
    assert conv(np.int8(-1), float64) == -1.0 and conv(False, bool_) is False
    assert conv(1.0, ty.bfloat16) == 0x3F80 and conv(3, ty.bfloat16) == 0x4040  # the bits
    assert conv(np.float16(0.5), float32) == 0.5


def test_a_bfloat16_argument_keeps_its_bits():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    v = ml_dtypes.bfloat16(1.5)
    assert abi.convert_scalar(arrays.describe(v), ty.bfloat16, "x") == 0x3FC0


@pytest.mark.parametrize("param, value", [
    (int32, 2**31), (int32, -2**31 - 1), (ty.uint8, -1), (ty.uint32, 2**32), (int64, 2**63),
    (ty.int8, True + 127)])
def test_a_value_that_does_not_fit_is_an_overflow_error(param, value):
    infos = _infos(FakeCuda((4,)), value)
    params = [C1, param]
    vals = abi.values("k", params, infos)
    with pytest.raises(struct.error) as e:
        param_layout(params).struct.pack(*vals)
    err = abi.pack_error("k", params, infos, e.value)
    assert isinstance(err, OverflowError)
    assert str(err) == f"kernel 'k' argument 1: {value!r} does not fit in {param}"


def test_a_pack_error_without_a_scalar_to_blame():
    err = abi.pack_error("k", [C1], _infos(FakeCuda((4,))), struct.error("boom"))
    assert isinstance(err, TypeError) and "could not pack the arguments (boom)" in str(err)


# -- RawKernel's parameters ------------------------------------------------------------------------

def test_raw_parameters_take_the_drivers_sizes():
    infos = _infos(FakeCuda((4,)), 2, 2, 2.0, True, True, np.float16(1), np.uint32(3))
    info = [(0, 8), (8, 1), (16, 8), (24, 4), (28, 1), (32, 4), (36, 2), (40, 4)]
    params, at = abi.raw_params("r", info, infos)
    assert params == [POINTER, ty.int8, int64, float32, bool_, int32, ty.float16, ty.uint32]
    assert at == [0, 8, 16, 24, 28, 32, 36, 40]
    vals = abi.values("r", params, infos)
    assert param_layout(params, at).struct.pack(*vals)[:8] == struct.pack("<Q", 0x7000_0000)


def test_raw_parameters_without_the_drivers_sizes():
    params, at = abi.raw_params("r", None, _infos(FakeCuda((4,)), np.int16(1), np.float64(2)))
    assert params == [POINTER, ty.int16, float64] and at is None
    assert param_layout(params).offsets == (0, 8, 16)


# -- steady-state specs --------------------------------------------------------------------------



def _torch_infos(args):
    return [types.SimpleNamespace(kind="array", framework="torch", device=a.get_device())
            if isinstance(a, Tensor) else types.SimpleNamespace(kind="scalar", framework=None,
                                                                 device=-1) for a in args]


PARAMS = [ArrayType(float32, 3, "C"), A2, int64, float64, bool_, ArrayType(float32, 4, "C")]
LAYOUT = param_layout(PARAMS)


def _args(**kw):
    kw.setdefault("contiguous", True)
    return (Tensor((2, 3, 4), strides=(99, 4, 1), ptr=0x1000, **kw),  # an odd stride on no
            # axis of length 1
            Tensor((3, 5), strides=(1, 3), contiguous=False, ptr=0x2000), 7, 0.25, False,
            Tensor((1, 2, 3, 4), strides=(24, 12, 4, 1), ptr=0x3000))


def test_launcher_specs():
    args = _args()
    specs, dev = abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args))
    assert dev == 0
    assert specs == (("array", 0, 3, True, Tensor, F32, False),
                     ("array", 56, 2, False, Tensor, F32, False), ("q", 96), ("d", 104),
                     ("?", 112), ("array", 120, 4, True, Tensor, F32, False))
    assert isinstance(specs[0], abi.ArraySpec) and isinstance(specs[2], abi.ScalarSpec)


def test_a_tile_kernels_constants_and_32_bit_arrays():
    """A tile kernel's Constant arguments are ConstSpecs at their places among all arguments
    (later calls must pass values of the same type equal to them; nothing is packed), and an
    array it indexes in 32-bit declines extents or strides beyond int32."""
    args = _args()
    specs, dev = abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args),
                                    {1: 64, 7: "x"}, [True, False, False, False, False, True])
    assert [s[0] for s in specs] == ["array", "const", "array", "q", "d", "?", "array", "const"]
    assert specs[0].narrow and not specs[2].narrow and specs[1] == ("const", 0, 0, False, int, 64)
    full = args[:1] + (64,) + args[1:] + ("x",)
    assert abi.spec_values(specs, full, dev) == abi.spec_values(
        abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args))[0], args, dev)
    assert abi.spec_values(specs, full[:1] + (32,) + full[2:], dev) is None  # another value
    assert abi.spec_values(specs, full[:1] + (64.0,) + full[2:], dev) is None  # another type
    wide = (Tensor((2, 3, 2**31), ptr=0x1000),) + full[1:]
    assert abi.spec_values(specs, wide, dev) is None
    assert abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args), {0: [1]}) is None


@pytest.mark.parametrize("params, args", [
    ([C1], (FakeCuda((4,)),)),  # not a torch tensor
    ([float32], (1.0,)),  # a scalar type the launchers do not pack
    ([int64], (np.int64(1),)),  # not a Python int
    ([C1, C1], (Tensor((4,)), Tensor((4,), device=1))),  # two devices
    ([C1], (Tensor((4,)), 1)),  # a count that differs
    ([], ()),
])
def test_no_specs_for_other_arguments(params, args):
    infos = [types.SimpleNamespace(kind="array", framework=None, device=0) if isinstance(
        a, FakeCuda) else i for a, i in zip(args, _torch_infos(args))]
    assert abi.launcher_specs(params, param_layout(params), args, infos) is None


def test_spec_values_pack_what_the_general_path_packs():
    """The steady state and the general path pack the same bytes for the same arguments (a
    contiguous array's strides from its shape, the others from stride())."""
    args = _args()
    specs, dev = abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args))
    vals = abi.spec_values(specs, args, dev)
    general = [0x1000, 2, 3, 4, 12, 4, 1, 0x2000, 3, 5, 1, 3, 7, 0.25, False,
               0x3000, 1, 2, 3, 4, 24, 12, 4, 1]
    assert vals == general
    assert LAYOUT.struct.pack(*vals) == LAYOUT.struct.pack(*general)


@pytest.mark.parametrize("change", [
    lambda a: list(a),
    lambda a: a[:-1],
    lambda a: (Tensor((2, 3)),) + a[1:],  # another rank
    lambda a: (Tensor((2, 3, 4), contiguous=False),) + a[1:],
    lambda a: a[:1] + (Tensor((3, 5), strides=(5, 1)),) + a[2:],  # contiguous for an "A" one
    lambda a: (Tensor((2, 3, 4), device=1),) + a[1:],
    lambda a: a[:2] + (True,) + a[3:],  # a bool for an int
    lambda a: a[:3] + (1,) + a[4:],  # an int for a float
])
def test_spec_values_decline_other_kinds(change):
    args = _args()
    specs, dev = abi.launcher_specs(PARAMS, LAYOUT, args, _torch_infos(args))
    assert abi.spec_values(specs, change(args), dev) is None
