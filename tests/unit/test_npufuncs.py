"""NumPy ufuncs in kernels (frontend/npufuncs.py): operator ufuncs on numbers, and any ufunc
with output arrays looping over the output's elements with NumPy's broadcasting, compared with
NumPy itself; the CUDA C++ compiles for sm_80 and sm_90."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.errors import KernelCompileError


def with_out(name: str):
    """``def fn(a0, ..., an): np.name(a0, ..., an)``: numba's own test kernels are made so."""
    uf = getattr(np, name)
    params = ", ".join(f"a{i}" for i in range(uf.nargs - (uf.nargs - uf.nin - uf.nout)))
    ns: dict = {}
    exec(f"def fn({params}):\n    np.{name}({params})\n", {"np": np}, ns)
    return cuda.jit(ns["fn"])


def _cases(rng):
    f2 = rng.standard_normal((3, 4))
    i1 = rng.integers(-50, 50, 6).astype(np.int32)
    return [
        ("sin", [f2], [np.float64]),
        ("cos", [np.asfortranarray(f2)], [np.float64]),
        ("arctan2", [f2, np.float64(0.3)], [np.float64]),
        ("add", [f2, f2[1]], [np.float64]),  # a row broadcast over the rows
        ("multiply", [f2[:, :1], f2], [np.float64]),  # a length-1 axis repeats
        ("less", [i1.astype(np.int64), rng.integers(0, 50, 6).astype(np.uint64)], [np.bool_]),
        ("logical_xor", [i1 % 2, i1 % 3], [np.bool_]),
        ("invert", [i1], [np.int32]),
        ("invert", [i1 > 0], [np.bool_]),
        ("maximum", [i1, i1[::-1].copy()], [np.int32]),
        ("floor_divide", [i1, np.int32(7)], [np.int32]),
        ("remainder", [i1, np.int32(7)], [np.int32]),
        ("modf", [f2 * 10], [np.float64, np.float64]),
        ("sin", [np.float32(0.5)], [np.float32]),  # a number into a 1-element output
        ("exp", [(f2 + 1j * f2[::-1]).astype(np.complex128)], [np.complex128]),
        ("log2", [(f2 + 1j * f2[::-1]).astype(np.complex64)], [np.complex64]),
    ]


@pytest.mark.parametrize("k", range(16))
def test_a_ufunc_with_outputs_is_numpys(target, rng, k):
    name, ins, otypes = _cases(rng)[k]
    uf = getattr(np, name)
    shape = np.broadcast_shapes(*[np.shape(a) for a in ins]) or (1,)
    want = [np.zeros(shape, t) for t in otypes]
    uf(*ins, out=tuple(want))
    outs = [target.to_device(np.full(shape, 77, t)) for t in otypes]  # poisoned
    args = [target.to_device(a) if isinstance(a, np.ndarray) else a for a in ins]
    target.launch(with_out(name), 1, 1, *args, *outs)
    for got, w in zip(outs, want):
        inexact = np.issubdtype(w.dtype, np.inexact)
        np.testing.assert_allclose(target.to_host(got), w,
                                   rtol=64 * np.finfo(w.dtype).eps if inexact else 0)


def scalar_ops(r, x, y):
    r[0] = np.add(x, y)
    r[1] = np.subtract(x, y)
    r[2] = np.less(x, y)
    r[3] = np.logical_and(x, y)
    r[4] = np.negative(x)
    r[5] = np.square(y)
    r[6] = np.true_divide(x, y)
    r[7] = np.logical_not(x)


def test_operator_ufuncs_on_numbers(target):
    r = target.to_device(np.full(8, 77.0))
    target.launch(cuda.jit(scalar_ops), 1, 1, r, 2.5, -4.0)
    np.testing.assert_array_equal(target.to_host(r),
                                  [-1.5, 6.5, 0.0, 1.0, -2.5, 16.0, -0.625, 0.0])


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_loops_compile(arch, rng):
    for name, ins, otypes in _cases(rng):
        shape = np.broadcast_shapes(*[np.shape(a) for a in ins]) or (1,)
        cubin = compile_cubin(with_out(name), *ins, *[np.zeros(shape, t) for t in otypes],
                              arch=arch)
        assert cubin[:4] == b"\x7fELF", name


def allocating(a):
    np.sin(a)


def bad_keyword(a, b):
    np.sin(a, b, where=True)


def test_a_ufunc_that_would_allocate_is_refused():
    with pytest.raises(KernelCompileError, match="new array.*cannot allocate") as e:
        cuda.jit(allocating).cuda_source(np.zeros(3))
    assert "out" in e.value.hint
    with pytest.raises(KernelCompileError, match="keyword 'where'"):
        cuda.jit(bad_keyword).cuda_source(np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal", "maximum",
                                  "minimum", "fmax", "fmin", "logical_and", "logical_xor",
                                  "equal"])
def test_complex_numbers_in_numpys_order(target, name):
    """NumPy orders complex numbers by real part, then imaginary part; maximum/minimum keep a
    NaN, fmax/fmin the other operand."""
    nan = complex(np.nan, 0)
    a = np.array([1 + 2j, 1 + 2j, 1 + 3j, 0 + 9j, 2 - 9j, nan, 0j, 3 + 0j], np.complex128)
    b = np.array([1 + 2j, 1 + 3j, 1 + 2j, 1 + 0j, 1 + 9j, 1 + 1j, nan, 0j], np.complex128)
    uf = getattr(np, name)
    want = np.zeros(a.shape, np.complex128 if uf.types[-1][-1] != "?" else np.bool_)
    with np.errstate(invalid="ignore"):
        uf(a, b, out=want)
    got = target.to_device(np.full(a.shape, 5, want.dtype))
    target.launch(with_out(name), 1, 1, target.to_device(a), target.to_device(b), got)
    np.testing.assert_array_equal(target.to_host(got), want)


def test_complex_log2(target):
    z = np.array([0.5 + 0.5j, -1 + 0j, 3 - 4j])
    got = target.to_device(np.zeros(3, np.complex128))
    target.launch(with_out("log2"), 1, 1, target.to_device(z), got)
    np.testing.assert_allclose(target.to_host(got), np.log2(z), rtol=1e-14)


def extremes(r, a, b):
    r[0] = max(a, b)
    r[1] = min(b, a)
    r[2] = np.fmax(a, b)
    r[3] = np.fmin(b, a)
    r[4] = np.maximum(b, a)
    r[5] = np.minimum(a, b)


@pytest.mark.parametrize("a, b", [(np.nan, 1.0), (1.0, np.nan), (2.0, -3.0)])
def test_min_and_max_of_floats_are_numbas(target, a, b):
    """The builtins and fmin/fmax are C's fmin/fmax (numba's): a NaN operand loses;
    np.minimum/np.maximum keep it (NumPy's)."""
    r = target.to_device(np.full(6, 77.0, np.float32))
    target.launch(cuda.jit(extremes), 1, 1, r, np.float32(a), np.float32(b))
    f, n = np.fmax(a, b), np.fmin(a, b)
    np.testing.assert_array_equal(target.to_host(r), np.float32(
        [f, n, f, n, np.maximum(a, b), np.minimum(a, b)]))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_builtin_max_of_floats_is_one_instruction(arch):
    ptx = cuda.inspection.asm(cuda.jit(extremes), (cuda.float32[::1], cuda.float32,
                                                   cuda.float32), arch=arch)
    assert "max.f32" in ptx and "min.f32" in ptx


def add_mixed(r, a, b):
    r[0] = a + b


@pytest.mark.parametrize("ity, want", [(np.int8, np.float16), (np.uint8, np.float16),
                                       (np.int16, np.float32), (np.int32, np.float64),
                                       (np.int64, np.float64)])
def test_half_with_an_integer_promotes_as_numpy(target, ity, want):
    """float16 with an integer: NumPy's (and numba's) type, so 0.3 + 54 keeps its digits;
    float32 with an integer stays float32 (threadtile's C rule)."""
    assert np.result_type(np.float16, ity) == want
    r = target.to_device(np.zeros(1, want))
    target.launch(cuda.jit(add_mixed), 1, 1, r, np.float16(0.3), ity(54))
    np.testing.assert_array_equal(target.to_host(r), np.array([np.float16(0.3)], want) + 54)
    src = cuda.jit(add_mixed).cuda_source(np.zeros(1, np.float32), np.float32(1), np.int32(2))
    assert "double" not in src
