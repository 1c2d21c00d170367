"""numba's language beyond threadtile's own: compile-time shapes passed to device functions and
held by local names, atomic inc/dec on uint64, the bfloat16 intrinsics (``cuda.bf16``), vector
types, enums, exceptions raised in kernels and array methods. Each runs in the simulator
(lockstep and python mode) and compiles for sm_80 and sm_90 with NVRTC."""

import enum

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.backends.sim import simulate
from threadtile.errors import KernelCompileError

MODES = ["lockstep", "python"]


# ---- shapes from a device function's parameters, and from local literals ----------------------

def _fill_shared(out, n, dtype, shape2):
    sm = cuda.shared.array(n, dtype)
    sm2 = cuda.local.array(shape2, dtype)
    t = cuda.threadIdx.x
    sm[t] = t * 2
    sm2[0, 1] = n
    cuda.syncthreads()
    out[t] = sm[n - 1 - t] + sm2[0, 1]


@cuda.jit
def shape_from_caller(out):
    _fill_shared(out, 16, np.int32, (2, 3))


@cuda.jit
def shape_from_local(out):
    N = 16
    sm = cuda.shared.array(N, np.int32)
    t = cuda.threadIdx.x
    sm[t] = t
    cuda.syncthreads()
    out[t] = sm[N - 1 - t]


@pytest.mark.parametrize("mode", MODES)
def test_shape_from_caller_and_local(mode):
    out = np.zeros(16, np.int32)
    with simulate(mode=mode):
        shape_from_caller[1, 16](out)
    np.testing.assert_array_equal(out, (15 - np.arange(16)) * 2 + 16)
    with simulate(mode=mode):
        shape_from_local[1, 16](out)
    np.testing.assert_array_equal(out, 15 - np.arange(16))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_shape_from_caller_compiles(arch):
    out = np.zeros(16, np.int32)
    assert compile_cubin(shape_from_caller, out, arch=arch)
    assert compile_cubin(shape_from_local, out, arch=arch)


def test_shape_from_runtime_value_is_refused():
    @cuda.jit
    def k(out, n):
        _fill_shared(out, n, np.int32, (2, 3))

    with pytest.raises(KernelCompileError, match="compile-time integer constants"):
        with simulate():
            k[1, 16](np.zeros(16, np.int32), 16)


# ---- cuda.bf16 --------------------------------------------------------------------------------

bf = cuda.bf16


@cuda.jit
def bf16_ops(x, y, out, flags, ints):
    i = cuda.grid(1)
    if i < x.size:
        a = cuda.bfloat16(x[i])
        b = cuda.bfloat16(y[i])
        out[i, 0] = bf.hadd(a, b)
        out[i, 1] = bf.hmul_sat(a, b)
        out[i, 2] = bf.hfma_relu(a, b, a)
        out[i, 3] = bf.hmax(a, b)
        out[i, 4] = bf.hmin_nan(a, b)
        out[i, 5] = bf.hsqrt(bf.habs(a))
        out[i, 6] = bf.float32_to_bfloat16_rz(x[i])
        out[i, 7] = bf.float32_to_bfloat16_ru(x[i])
        out[i, 8] = bf.int32_to_bfloat16_rd(ints[i])
        out[i, 9] = bf.int16_as_bfloat16(bf.bfloat16_as_int16(a))
        flags[i, 0] = bf.hne(a, b)
        flags[i, 1] = bf.hltu(a, b)
        flags[i, 2] = bf.hisnan(a)
        flags[i, 3] = bf.hisinf(a)
        flags[i, 4] = bf.bfloat16_to_int32_rn(a)
        flags[i, 5] = bf.bfloat16_to_int32_rd(a)
        flags[i, 6] = bf.bfloat16_to_int32_ru(a)


def _bf(v):
    """Round float64 values to bfloat16 (ties to even), as float64."""
    import ml_dtypes
    return np.asarray(v, np.float64).astype(ml_dtypes.bfloat16).astype(np.float64)


def _directed(v, f):
    """bfloat16 rounding of finite v by f (floor, ceil, trunc) on 8 significant bits."""
    v = np.asarray(v, np.float64)
    q = np.ldexp(1.0, np.maximum(np.frexp(v)[1], -125) - 8)
    return f(v / q) * q


@pytest.mark.parametrize("mode", MODES)
def test_bf16_intrinsics(mode):
    pytest.importorskip("ml_dtypes")
    x = np.array([1.5, -2.5, 0.3, np.nan, np.inf, 3.0, 1.0 / 3, -7.75], np.float32)
    y = np.array([0.75, 0.5, np.nan, 2.0, 1.0, 3.0, -0.2, 100.0], np.float32)
    ints = np.array([789, -789, 257, 1 << 20, 3, 0, -1, 12345], np.int32)
    out = np.zeros((8, 10), np.float32)
    flags = np.zeros((8, 7), np.int32)
    with simulate(mode=mode):
        bf16_ops[1, 8](x, y, out, flags, ints)
    a, b = _bf(x), _bf(y)
    with np.errstate(invalid="ignore"):
        fma = _bf(a * b + a)
        ref = np.stack([
            _bf(a + b), np.where(np.isnan(_bf(a * b)), 0, np.clip(_bf(a * b), 0, 1)),
            np.where(np.isnan(fma), fma, np.maximum(fma, 0)), np.fmax(a, b),
            np.where(np.isnan(a) | np.isnan(b), np.nan, np.minimum(a, b)),
            _bf(np.sqrt(np.abs(a))), np.where(np.isfinite(x), _directed(x, np.trunc), x),
            np.where(np.isfinite(x), _directed(x, np.ceil), x),
            _directed(ints, np.floor), a], axis=1)
    np.testing.assert_array_equal(out, ref.astype(np.float32))
    fin = np.isfinite(a)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(flags[:, 0], (a < b) | (a > b))
        np.testing.assert_array_equal(flags[:, 1], ~(a >= b))
    np.testing.assert_array_equal(flags[:, 2], np.isnan(a))
    np.testing.assert_array_equal(flags[:, 3], np.where(np.isinf(a), np.sign(a), 0))
    np.testing.assert_array_equal(flags[fin, 4], np.rint(a[fin]))
    np.testing.assert_array_equal(flags[fin, 5], np.floor(a[fin]))
    np.testing.assert_array_equal(flags[fin, 6], np.ceil(a[fin]))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_bf16_intrinsics_compile(arch):
    x = np.zeros(8, np.float32)
    assert compile_cubin(bf16_ops, x, x, np.zeros((8, 10), np.float32),
                         np.zeros((8, 7), np.int32), np.zeros(8, np.int32), arch=arch)


def test_bf16_names_cover_numba():
    from threadtile.lang import bf16 as lb
    assert lb.canonical("__bfloat162short_rz") == "bfloat16_to_int16_rz"
    assert lb.canonical("__ull2bfloat16_ru") == "uint64_to_bfloat16_ru"
    assert lb.canonical("__ushort_as_bfloat16") == "uint16_as_bfloat16"
    assert lb.canonical("__double2bfloat16") == "float64_to_bfloat16"
    assert lb.canonical("__hmax_nan") == "hmax_nan"
    assert lb.canonical("__nope") is None


# ---- vector types -------------------------------------------------------------------------------

def _scale(v, s):
    return cuda.float32x3(v.x * s, v.y * s, v.z * s)


@cuda.jit
def vectors(out, ints):
    i = cuda.grid(1)
    if i < out.shape[0]:
        a = cuda.float2(np.float32(i), 0.5)
        b = cuda.float32x3(a, np.float32(2.0))            # from a smaller vector and a number
        c = _scale(b, np.float32(2.0))                    # through a device function
        d = cuda.float4(cuda.float1(c.z), c)
        out[i, 0] = d.x
        out[i, 1] = d.y
        out[i, 2] = d.z
        out[i, 3] = d.w
        s = cuda.short2(i * 1000, 70000)                  # elements convert to int16
        ints[i, 0] = s.x
        ints[i, 1] = s.y


@pytest.mark.parametrize("mode", MODES)
def test_vector_types(mode):
    out = np.zeros((40, 4), np.float32)
    ints = np.zeros((40, 2), np.int64)
    with simulate(mode=mode):
        vectors[1, 40](out, ints)
    i = np.arange(40, dtype=np.float64)
    np.testing.assert_array_equal(out, np.stack([np.full(40, 4.0), 2 * i, np.full(40, 1.0),
                                                 np.full(40, 4.0)], axis=1))
    np.testing.assert_array_equal(ints[:, 0], (i * 1000).astype(np.int64).astype(np.int16))
    np.testing.assert_array_equal(ints[:, 1], np.int64(70000).astype(np.int16))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_vector_types_compile(arch):
    assert compile_cubin(vectors, np.zeros((4, 4), np.float32), np.zeros((4, 2), np.int64),
                         arch=arch)


def test_vector_names():
    assert cuda.float4 is cuda.float32x4 and cuda.ulonglong2 is cuda.uint64x2
    assert cuda.float32x2(cuda.float32x1(1), 2) == (1.0, 2.0)

    @cuda.jit
    def k(out):
        v = cuda.int2(1, 2, 3)
        out[0] = v.x

    with pytest.raises(KernelCompileError, match="takes 2 elements"):
        with simulate():
            k[1, 1](np.zeros(1, np.int32))


# ---- enums --------------------------------------------------------------------------------------

class Color(enum.Enum):
    red = 1
    green = 2


class Mint(enum.Enum):
    mint = 1  # Color.red's value, another class


class Slot(enum.IntEnum):
    first = 0
    third = 2


def _pick(p):
    return Color.red if p else Color.green


@cuda.jit
def enums(flags, out):
    i = cuda.grid(1)
    if i < out.size:
        flags[i, 0] = Color.red == Color["green"]
        flags[i, 1] = Color.red is Color.red
        flags[i, 2] = Color.red == Mint.mint          # folded as Python does: False
        flags[i, 3] = _pick(i % 2 == 0) == Color.red  # chosen at run time: compared by value
        out[i] = i + Slot.third
        flags[i, 4 + Slot.first] = Color.green != Color.red


@pytest.mark.parametrize("mode", MODES)
def test_enums(mode):
    flags = np.zeros((6, 5), np.bool_)
    out = np.zeros(6, np.int64)
    with simulate(mode=mode):
        enums[1, 6](flags, out)
    i = np.arange(6)
    ref = np.zeros((6, 5), np.bool_)
    ref[:, 1] = ref[:, 4] = True
    ref[:, 3] = i % 2 == 0
    np.testing.assert_array_equal(flags, ref)
    np.testing.assert_array_equal(out, i + 2)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_enums_compile(arch):
    assert compile_cubin(enums, np.zeros((2, 5), np.bool_), np.zeros(2, np.int64), arch=arch)


# ---- raise and assert ---------------------------------------------------------------------------

class MyError(Exception):
    pass


@cuda.jit
def raises_at(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 1.0
        if x[i] == 1:
            raise MyError
        if x[i] == 2:
            raise MyError("foo", 3)
        assert x[i] != 3, "three"


@pytest.mark.parametrize("mode", MODES)
def test_raise_names_the_thread(mode):
    out = np.zeros(8)
    with simulate(mode=mode):
        raises_at[2, 4](np.zeros(8, np.int32), out)      # nothing raised
    assert out.tolist() == [1.0] * 8
    for code, cls, text in ((1, MyError, "tid=[1, 0, 0] ctaid=[1, 0, 0]"),
                            (2, MyError, "tid=[1, 0, 0] ctaid=[1, 0, 0]: ('foo', 3)"),
                            (3, AssertionError, "tid=[1, 0, 0] ctaid=[1, 0, 0]: three")):
        x = np.zeros(8, np.int32)
        x[5] = code
        with pytest.raises(cls) as info:
            with simulate(mode=mode):
                raises_at[2, 4](x, np.zeros(8))
        assert text in str(info.value)
        if mode == "lockstep":
            assert "In function 'raises_at'" in str(info.value)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_raise_compiles(arch):
    src = raises_at.cuda_source(np.zeros(8, np.int32), np.zeros(8))
    assert 'asm volatile("exit;")' in src
    assert compile_cubin(raises_at, np.zeros(8, np.int32), np.zeros(8), arch=arch)


def test_raise_needs_constant_arguments():
    @cuda.jit
    def k(x):
        raise ValueError(x[0])

    with pytest.raises(KernelCompileError, match="compile-time constants"):
        with simulate():
            k[1, 1](np.zeros(1))


# ---- array methods -------------------------------------------------------------------------------

TABLE = np.array([1.0, 2.0, 3.0])[::-1]


@cuda.jit
def copies(out):
    q = TABLE.copy()                        # a global array: the frozen constant array
    loc = cuda.local.array(3, dtype="float64")
    for i in range(len(out)):
        loc[i] = q[i]
        out[i] = loc[i] * 2


@pytest.mark.parametrize("mode", MODES)
def test_copy_of_a_global_and_a_string_dtype(mode):
    out = np.zeros(3)
    with simulate(mode=mode):
        copies[1, 1](out)
    np.testing.assert_array_equal(out, TABLE * 2)


def test_copy_of_an_argument_is_refused():
    @cuda.jit
    def k(a):
        b = a.copy()
        b[0] = 1

    with pytest.raises(KernelCompileError, match="copying an array allocates"):
        with simulate():
            k[1, 1](np.zeros(2))
