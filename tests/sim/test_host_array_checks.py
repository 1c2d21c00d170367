"""Host arrays at the edge of what kernels take: non-native byte order is refused before the
launch; a read-only NumPy array may be read, but writing it is a compile error at the line that
writes (in the simulator and for the GPU alike); an empty constant array."""

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.errors import KernelCompileError


@cuda.jit
def double(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * 2


def test_big_endian_arrays_are_refused_before_the_launch(target):
    out = np.zeros(8, np.float32)
    with target.running(), pytest.raises(TypeError, match=r"argument 'a' .* >f4.* non-native "
                                                          r"byte order.*newbyteorder"):
        double[1, 8](np.arange(8, dtype=">f4"), out)
    assert not out.any()


def test_read_only_inputs_are_read(target, rng):
    a = rng.standard_normal(100).astype(np.float32)
    a.flags.writeable = False
    out = np.full(100, np.nan, np.float32)
    with target.running():
        double.forall(100)(a, out)
    np.testing.assert_allclose(out, a.astype(np.float64) * 2, rtol=1e-6)


def test_writing_a_read_only_array_is_a_compile_error_at_its_line(target):
    out = np.zeros(8, np.float32)
    out.flags.writeable = False
    with target.running(), pytest.raises(KernelCompileError) as e:
        double[1, 8](np.ones(8, np.float32), out)
    assert "out[i] = a[i] * 2" in str(e.value) and "read-only" in str(e.value)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_read_only_parameters_compile(arch):
    a = np.ones(8, np.float32)
    a.flags.writeable = False
    assert compile_cubin(double, a, np.zeros(8, np.float32), arch=arch)


EMPTY = np.array([], dtype=np.float64)


@cuda.jit("void(int64[:])")
def length_of_empty_constant(out):
    c = cuda.const.array_like(EMPTY)
    out[cuda.grid(1)] = len(c)


def test_an_empty_constant_array(target):
    out = np.full(1, -1, np.int64)
    with target.running():
        length_of_empty_constant[1, 1](out)
    assert out[0] == 0
    for arch in ("sm_80", "sm_90"):
        assert compile_cubin(length_of_empty_constant, out, arch=arch)
