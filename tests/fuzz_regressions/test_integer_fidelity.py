"""Integer and conversion semantics the GPU fuzzer (bench/fuzz_gpu.py) found differing between
the GPU and the simulator, each reduced to a kernel of a few lines. Each runs on both targets
(the ``target`` fixture) against NumPy's answer, and its CUDA C++ compiles for sm_80 and sm_90.

- signed overflow wraps (NumPy's and numba's answer): C++ leaves it undefined and NVVM used
  that (``x * x`` taken as non-negative turned a floor division's result);
- ``np.int64(int8) << 40``: the left operand's cast must stay in C++, where a shift has the
  type of its promoted left operand (an ``int``);
- ``np.int32(uint32) % 6``: a same-width cast of an unsigned value may be negative, so the
  C % (truncating) is not Python's;
- a float out of an integer's range converts as the GPU's ``cvt.rzi`` does: clamped; NaN
  to the top bit (0 from float32 to 32 bits).
"""

import math

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda

I32_MAX = np.iinfo(np.int32).max


@cuda.jit
def square_floordiv(a, d, out):
    i = cuda.grid(1)
    x = a[i]
    out[i] = (x * x) // d[i]


@cuda.jit
def wide_shift(a, out):
    i = cuda.grid(1)
    out[i] = np.int64(a[i]) << 40


@cuda.jit
def same_width_mod(a, out):
    i = cuda.grid(1)
    out[i] = np.int32(a[i]) % 6


@cuda.jit
def float_to_int(x, o64, o32, ou32):
    i = cuda.grid(1)
    o64[i] = math.floor(x[i])
    o32[i] = np.int32(x[i])
    ou32[i] = np.uint32(x[i])


@cuda.jit
def mixed_floordiv(a, b, out):
    i = cuda.grid(1)
    out[i] = (np.int64(a[i]) << 28) // (np.int64(b[i]) % 6 + 2)


def _square_floordiv_ref(a, d):
    with np.errstate(over="ignore"):
        return (a * a) // d


def test_signed_overflow_wraps(target):
    a = np.array([46341, 65536, -65537, 3, I32_MAX, -I32_MAX - 1, 100000, 7], np.int32)
    d = np.array([-7, 3, -5, 2, -1, 7, -3, 5], np.int32)
    out = target.to_device(np.zeros(8, np.int32))
    target.launch(square_floordiv, 1, 8, target.to_device(a), target.to_device(d), out)
    assert target.to_host(out).tolist() == _square_floordiv_ref(a, d).tolist()


def test_shift_keeps_the_left_operands_width(target):
    a = np.array([-3, 1, 127, -128], np.int8)
    out = target.to_device(np.zeros(4, np.int64))
    target.launch(wide_shift, 1, 4, target.to_device(a), out)
    assert target.to_host(out).tolist() == [int(v) << 40 for v in a.tolist()]


def test_same_width_signed_cast_of_unsigned_takes_pythons_modulo(target):
    a = np.array([5, 0xFFFFFFFF, 0x80000000, 0xFFFFFFF9], np.uint32)
    out = target.to_device(np.zeros(4, np.int32))
    target.launch(same_width_mod, 1, 4, target.to_device(a), out)
    assert target.to_host(out).tolist() == [int(v) % 6 for v in a.view(np.int32).tolist()]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_to_int_is_clamped_as_the_gpu_converts(target, dtype):
    """Out of range: clamped (an unsigned type takes negatives to 0). NaN: the top bit, except
    float32 to a 32-bit type, which gives 0 (measured on the H100 and H200)."""
    x = np.array([np.nan, np.inf, -np.inf, -3.7, 1e30, -1e30, 2.0 ** 63, 5e9], dtype)
    o64, o32, ou32 = (target.to_device(np.zeros(8, t)) for t in (np.int64, np.int32, np.uint32))
    target.launch(float_to_int, 1, 8, target.to_device(x), o64, o32, ou32)
    i64, i32 = np.iinfo(np.int64), np.iinfo(np.int32)
    single = dtype == np.float32
    assert target.to_host(o64).tolist() == [i64.min, i64.max, i64.min, -4, i64.max, i64.min,
                                            i64.max, 5_000_000_000]
    assert target.to_host(o32).tolist() == [0 if single else i32.min, i32.max, i32.min, -3,
                                            i32.max, i32.min, i32.max, i32.max]
    assert target.to_host(ou32).tolist() == [0 if single else 2 ** 31, 2 ** 32 - 1, 0, 0,
                                             2 ** 32 - 1, 0, 2 ** 32 - 1, 2 ** 32 - 1]


def test_mixed_width_floordiv(target):
    a = np.array([-128, 127, 5, -1], np.int8)
    b = np.array([7, 0xFFFFFFFF, 2, 11], np.uint32)
    out = target.to_device(np.zeros(4, np.int64))
    target.launch(mixed_floordiv, 1, 4, target.to_device(a), target.to_device(b), out)
    want = [(int(x) << 28) // (int(y) % 6 + 2) for x, y in zip(a.tolist(), b.tolist())]
    assert target.to_host(out).tolist() == want


def test_wrapping_arithmetic_is_spelled_in_the_cuda_source():
    src = square_floordiv.cuda_source(np.zeros(1, np.int32), np.zeros(1, np.int32),
                                      np.zeros(1, np.int32))
    assert "tt::floordiv(tt::wmul(x, x)" in src
    # index arithmetic the emitter can bound stays plain C++
    assert "(int64_t)threadIdx.x + (int64_t)blockIdx.x * (int64_t)blockDim.x" in src
    src = wide_shift.cuda_source(np.zeros(1, np.int8), np.zeros(1, np.int64))
    assert "(int64_t)a(i) << 40LL" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_kernels_compile(arch):
    i32, u32, i8 = np.zeros(4, np.int32), np.zeros(4, np.uint32), np.zeros(4, np.int8)
    i64, f64 = np.zeros(4, np.int64), np.zeros(4, np.float64)
    for k, args in [(square_floordiv, (i32, i32, i32)), (wide_shift, (i8, i64)),
                    (same_width_mod, (u32, i32)), (float_to_int, (f64, i64, i32, u32)),
                    (mixed_floordiv, (i8, u32, i64))]:
        assert compile_cubin(k, *args, arch=arch)[:4] == b"\x7fELF"


@cuda.jit
def constant_float_division(out):
    z = np.float32(np.uint8(np.float16(0.5)))  # a constant 0.0 (fuzzer seed 147)
    out[0] = np.float32(0.25) / z
    out[1] = -np.float32(0.25) / z


def test_a_float_constant_divided_by_zero_is_inf_not_a_compile_error(target):
    out = target.to_device(np.zeros(2, np.float32))
    target.launch(constant_float_division, 1, 1, out)
    assert target.to_host(out).tolist() == [np.inf, -np.inf]


@cuda.jit
def int_minimum_constants(a, out, out64):
    i = cuda.grid(1)
    out[i] = max(a[i], np.int32(np.uint8(np.int32(100))) << 29)  # fuzzer seed 13135
    out64[i] = max(np.int64(a[i]), np.int64(-9223372036854775807 - 1))


def test_the_most_negative_constants_keep_their_type(target):
    a = np.array([-(2 ** 31), 5, -7, 2 ** 31 - 1], np.int32)
    out = target.to_device(np.zeros(4, np.int32))
    out64 = target.to_device(np.zeros(4, np.int64))
    target.launch(int_minimum_constants, 1, 4, target.to_device(a), out, out64)
    assert target.to_host(out).tolist() == a.tolist()
    assert target.to_host(out64).tolist() == a.tolist()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_most_negative_constants_compile(arch):
    args = (np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.int64))
    src = int_minimum_constants.cuda_source(*args)
    assert "(-2147483647 - 1)" in src and "(-9223372036854775807LL - 1)" in src
    assert compile_cubin(int_minimum_constants, *args, arch=arch)[:4] == b"\x7fELF"


def test_a_known_bad_nvrtc_is_reported(monkeypatch):
    """NVRTC 13.0-13.3's ptxas drops the negation in max(a, max(b, -c)) (fuzzer seeds 10360
    and 13771, read in their SASS): compiling with one warns once, naming the fix."""
    from threadtile.runtime import nvrtc

    monkeypatch.setattr(nvrtc, "nvrtc_version", lambda: (13, 2))
    nvrtc._warn_known_bugs.cache_clear()
    with pytest.warns(RuntimeWarning, match=r"NVRTC 13.2: .*VIMNMX3.*nvidia-cuda-nvrtc>=13.4"):
        nvrtc._warn_known_bugs()
    monkeypatch.setattr(nvrtc, "nvrtc_version", lambda: (13, 4))
    nvrtc._warn_known_bugs.cache_clear()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nvrtc._warn_known_bugs()
    nvrtc._warn_known_bugs.cache_clear()
