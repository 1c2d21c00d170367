"""Numerics of math functions (tests/kernels/mathfuncs.py) and of every dtype
(tests/kernels/dtypes.py) against float64 NumPy references, on every target; then the
arrays users already have (torch, CuPy, threadtile DeviceArrays, NumPy host arrays), on
the GPU only.

Each test runs on every target (the ``target`` fixture, tests/conftest.py): in the simulator and
on the GPU, from one body. Inputs are fresh random arrays (the seed is printed), outputs are
poisoned (NaN or a sentinel) before the launch so that an element a kernel fails to write
shows, and results are compared in float64 with tolerances that follow from the dtype.
"""

import math

import numpy as np
import pytest
from conftest import assert_close, cdiv, gpu_target, poison, quantize
from kernels import dtypes, language, mathfuncs, numba_docs

# ---- math ------------------------------------------------------------------------------------

_UNARY_REF = [
    lambda v: np.sqrt(np.abs(v)), np.exp, lambda v: np.log(np.abs(v)),
    lambda v: np.abs(v) ** 1.5, np.sin, np.cos, np.tanh, np.floor, np.ceil, np.abs,
    lambda v: np.vectorize(math.erf)(v), lambda v: np.sqrt(np.abs(v)) + np.exp(-np.abs(v)),
    lambda v: np.floor(v * 2) / 2, lambda v: np.abs(v) ** 2 + np.abs(v) ** 0.5,
    lambda v: np.exp(v * 0.5) - np.log(np.abs(v) * 2), lambda v: v * math.pi - math.e,
]
_ULPS = {"float32": 8, "float64": 8, "float16": 4, "bfloat16": 4}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_unary_math(target, rng, dtype):
    n = 100
    xv = rng.uniform(0.1, 3, n) * rng.choice([-1, 1], n)
    xq = quantize(xv, dtype)  # the inputs as the kernel sees them
    x = target.array(xq, dtype)
    out = target.array(np.full((mathfuncs.N_UNARY, n), np.nan), dtype)
    target.launch(mathfuncs.unary_math, 1, 128, x, out)
    got = target.to_host(out)
    for k, f in enumerate(_UNARY_REF):
        assert_close(got[k], f(xq), dtype, ulps=_ULPS[dtype], err_msg=f"row {k}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nan_inf(target, rng, dtype):
    xh = rng.standard_normal(32).astype(dtype)
    xh[:4] = [np.nan, np.inf, -np.inf, 0.0]
    flags = target.to_device(np.ones((32, 3), np.bool_))  # the reference has False in each
    vals = target.to_device(np.full((32, 3), 7.0, dtype))  # NaN is a result here: poison with 7
    target.launch(mathfuncs.nan_inf, 1, 32, target.to_device(xh), flags, vals)
    x = xh.astype(np.float64)
    assert_close(target.to_host(flags), np.stack([np.isnan(x), np.isinf(x), np.isfinite(x)], -1),
                 "bool")
    ref = np.stack([np.where(x > 0, np.inf, -np.inf), x, np.where(np.isnan(x), 0.0, x)], -1)
    assert_close(target.to_host(vals), ref, dtype, ulps=0)


@pytest.mark.parametrize(("itype", "otype"), [("int32", "float64"), ("int64", "float32")])
def test_int_math(target, rng, itype, otype):
    xh = rng.integers(-1000, 1000, 64).astype(itype)
    out = target.to_device(poison((64, 3), otype))
    target.launch(mathfuncs.int_math, 1, 64, target.to_device(xh), out)
    x = xh.astype(np.int64)
    ref = np.stack([np.abs(x), x // 3, np.abs(x) + np.maximum(x, 2) - np.minimum(x, -2)], -1)
    assert_close(target.to_host(out), ref, otype)


# ---- dtypes ----------------------------------------------------------------------------------

def _values(rng, dtype: str, n: int, lo: int, hi: int) -> np.ndarray:
    """Random values that ``dtype`` holds exactly, in [lo, hi] (floats get fractions)."""
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(np.float64)
    if dtype.startswith("u"):
        lo = max(lo, 0)
    v = rng.integers(lo, hi, n, endpoint=True).astype(np.float64)
    if dtype.startswith("float") or dtype == "bfloat16":
        v = quantize(v + rng.uniform(0, 1, n), dtype)
    return v


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_add_arrays(target, rng, dtype):
    n = 100
    xv, yv = _values(rng, dtype, n, -50, 50), _values(rng, dtype, n, -50, 50)
    out = target.array(poison(n, dtype) if dtype != "bool" else np.zeros(n), dtype)
    target.launch(dtypes.add_arrays, 1, 128, target.array(xv, dtype), target.array(yv, dtype),
                  out)
    ref = (xv + yv) != 0 if dtype == "bool" else quantize(xv + yv, dtype)
    assert_close(target.to_host(out), ref, dtype)


@pytest.mark.parametrize("dtype", [d for d in dtypes.DTYPES if d != "bool"])
def test_affine_literal(target, rng, dtype):
    n = 100
    xv = _values(rng, dtype, n, -40, 40) if dtype not in ("uint8",) else \
        _values(rng, dtype, n, 1, 80)
    if dtype.startswith("u"):
        xv = np.maximum(xv, 1)
    out = target.array(poison(n, dtype), dtype)
    target.launch(dtypes.affine_literal, 1, 128, target.array(xv, dtype), out)
    ref = quantize(quantize(xv * 3, dtype) - 1, dtype)  # two roundings for floats
    assert_close(target.to_host(out), ref, dtype, ulps=2)


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_to_float64(target, rng, dtype):
    xv = _values(rng, dtype, 100, -100, 100)
    out = target.to_device(poison(100, np.float64))
    target.launch(dtypes.to_float64, 1, 128, target.array(xv, dtype), out)
    assert_close(target.to_host(out), xv, "float64", ulps=0)


@pytest.mark.parametrize("dtype", dtypes.DTYPES)
def test_from_float64(target, rng, dtype):
    n = 100
    lo = 0 if dtype.startswith("u") or dtype == "bool" else -100
    src = rng.uniform(lo, 100, n)
    src[:3] = [0.0, 12.75, 99.5]
    out = target.array(poison(n, dtype), dtype)
    target.launch(dtypes.from_float64, 1, 128, target.to_device(src), out)
    if dtype == "bool":
        ref = src != 0
    elif dtype.startswith(("int", "uint")):
        ref = np.trunc(src)  # C's conversion truncates towards zero
    else:
        ref = quantize(src, dtype)
    assert_close(target.to_host(out), ref, dtype, ulps=0 if dtype != "bfloat16" else 1)


@pytest.mark.parametrize("dtype", dtypes.SMALL_INTS)
def test_small_int_math(target, rng, dtype):
    n = 100
    ah = rng.integers(0 if dtype[0] == "u" else -10, 11, n).astype(dtype)
    bh = rng.integers(0 if dtype[0] == "u" else -10, 11, n).astype(dtype)
    out = target.to_device(poison((n, 7), dtype))
    target.launch(dtypes.small_int_math, 1, 128, target.to_device(ah), target.to_device(bh), out)
    def wrap(v):  # NumPy's wrap-around in the dtype
        return np.array(v, np.int64).astype(dtype).astype(np.int64)

    a, b = ah.astype(np.int64), bh.astype(np.int64)
    ref = np.stack([np.minimum(a, 2), np.maximum(wrap(a + b), b), wrap(a + b) // 3,
                    wrap(a - b) % 5, wrap(a * a), (wrap(a - b) > 4).astype(np.int64),
                    wrap(-a)], -1)
    assert_close(target.to_host(out), wrap(ref), dtype)


def test_logic(target, rng):
    ah = rng.integers(0, 2, 64).astype(np.bool_)
    bh = rng.integers(0, 2, 64).astype(np.bool_)
    out = target.to_device(np.zeros((64, 4), np.bool_))
    target.launch(dtypes.logic, 1, 64, target.to_device(ah), target.to_device(bh), out)
    ref = np.stack([ah & ~bh, ah | bh, ah == bh, (ah != bh) & (ah | bh)], -1)
    assert_close(target.to_host(out), ref, "bool")


# ---- the arrays users already have (GPU only) ------------------------------------------------

@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:kernel 'add' was given a NumPy array")  # documented, once
@pytest.mark.parametrize("lib", ["torch", "cupy", "device", "host"])
def test_vector_add_array_kinds(rng, lib):
    """The same kernel on torch tensors, CuPy arrays, threadtile DeviceArrays and NumPy host
    arrays (copied to the device and back by the runtime)."""
    t = gpu_target(lib)
    n = 5000
    xh = rng.standard_normal(n).astype(np.float32)
    yh = rng.standard_normal(n).astype(np.float32)
    out = t.to_device(poison(n, np.float32))
    t.launch(numba_docs.add, cdiv(n, 256), 256, t.to_device(xh), t.to_device(yh), out)
    assert_close(t.to_host(out), xh.astype(np.float64) + yh, "float32")


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_strided_views_array_kinds(rng, lib):
    """Transposed and sliced views of torch tensors and CuPy arrays keep their strides."""
    t = gpu_target(lib)
    h, w = 20, 13
    sh = rng.standard_normal((w, h)).astype(np.float32)
    big_dev = t.to_device(poison((2 * h, w), np.float32))
    t.launch(language.strided_copy, (cdiv(h, 8), cdiv(w, 8)), (8, 8), t.to_device(sh.T),
             big_dev[::2])
    got = t.to_host(big_dev)
    assert_close(got[::2], sh.T.astype(np.float64) * 2 + 1, "float32", ulps=2)
    assert np.isnan(got[1::2]).all()
