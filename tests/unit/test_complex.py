"""Complex numbers: types and promotion, the C++ the CUDA backend writes for them, the
kernel argument ABI of complex scalars."""

import numpy as np
import pytest
from kernels import complexes as K

from threadtile.lang.types import (
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int32,
    int64,
    promote,
)
from threadtile.runtime import abi


@pytest.mark.parametrize("a, b, want", [
    (complex64, float32, complex64), (complex64, float64, complex128),
    (complex64, int64, complex64), (complex64, float16, complex64),
    (complex128, float32, complex128), (complex64, complex128, complex128),
    (int32, complex128, complex128),
])
def test_promotion(a, b, want):
    assert promote(a, b) is want and promote(b, a) is want


def test_parts_types():
    assert complex64.real_type is float32 and complex128.real_type is float64
    assert complex64.numpy == np.complex64 and complex128.itemsize == 16


def test_arithmetic_includes_only_complex_h():
    src = K.arith.cuda_source(np.zeros(4, np.complex64), np.zeros(4, np.complex64),
                              np.zeros(4, np.float32), np.zeros((4, 10), np.complex64))
    assert '#include "complex.h"' in src and "cmath.h" not in src
    assert "tt::cpow(" in src and "tt::conj(" in src and "tt::cabs(" in src
    # a weak literal keeps complex64: `f[i] * 1j` on float32 is complex64
    assert "tt::complex<double>" not in src.split("out(i, 4LL)")[1].split(";")[0]


def test_cmath_includes_cmath_h():
    src = K.cmath_funcs.cuda_source(np.zeros(4, np.complex128), np.zeros((4, 20), np.complex128))
    assert '#include "cmath.h"' in src and "tt::cmath::atanh(" in src


def test_complex_scalar_parameters_are_two_aligned_floats():
    lay = abi.param_layout([int32, complex128, complex64])
    assert lay.offsets == (0, 16, 32) and lay.sizes == (4, 16, 8)
    vals = abi.values("k", [complex128, complex64], [_info(1 + 2j), _info(3.0)])
    assert vals == [1.0, 2.0, 3.0, 0.0]


def _info(v):
    from threadtile.runtime.arrays import describe  # noqa: PLC0415

    return describe(v, 0, "z")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_kernels_compile(arch, dtype):
    """Every cmath function and the arithmetic, through NVRTC (cmath.h is threadtile's own
    code, no libcu++)."""
    from conftest import compile_cubin

    z = np.zeros(4, dtype)
    real = np.zeros(4, np.float32 if dtype == np.complex64 else np.float64)
    assert compile_cubin(K.cmath_funcs, z, np.zeros((4, K.N_CMATH), dtype), arch=arch)[:4] \
        == b"\x7fELF"
    assert compile_cubin(K.arith, z, z, real, np.zeros((4, K.N_ARITH), dtype), arch=arch)[:4] \
        == b"\x7fELF"
