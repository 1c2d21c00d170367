"""Numerics of kernels declared with numba's signatures (``jit("void(float32[:], int32)")``), on
every target (the ``target`` fixture): the parameters take the signature's types whatever the
arguments were, scalars converted as numba's launch converts them, a contiguous array passed to a
strided parameter, several signatures dispatched by argument types, device functions whose
signature converts their arguments and result, and kernels compiled with numba's options.
Results are compared in float64 with NumPy; inputs are fresh random arrays."""

import numpy as np
from conftest import assert_close, cdiv, poison

import threadtile as cuda
from threadtile import float32, float64, int32, void


@cuda.jit("void(float32[:], float32, float32[:], int32)")
def saxpy(out, a, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + out[i]


def test_saxpy_in_float32(target, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = float(rng.uniform(0.5, 2.0))  # a Python float: float32 by the signature
    out = target.to_device(y)
    target.launch(saxpy, cdiv(n, 128), 128, out, a, target.to_device(x), n)
    ref = np.float32(a).astype(np.float64) * x + y
    assert_close(target.to_host(out), ref, "float32")


def test_a_strided_view_to_a_strided_parameter(target, rng):
    n = 300
    base = rng.standard_normal(2 * n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    view = target.to_device(base[::2])  # every other element: a strided "A" array
    target.launch(saxpy, cdiv(n, 64), 64, view, 2.0, target.to_device(x), n)
    assert_close(target.to_host(view), 2.0 * x + base[::2].astype(np.float64), "float32")


@cuda.jit(void(float64[:, ::1], float64[:, ::1], int32, int32))
def transpose(out, m, rows, cols):
    i, j = cuda.grid(2)
    if i < rows and j < cols:
        out[j, i] = m[i, j]


def test_a_c_contiguous_2d_signature(target, rng):
    rows, cols = 37, 53
    m = rng.standard_normal((rows, cols))
    out = target.to_device(poison((cols, rows), np.float64))
    target.launch(transpose, (cdiv(rows, 16), cdiv(cols, 16)), (16, 16), out,
                  target.to_device(m), rows, cols)
    assert_close(target.to_host(out), m.T, "float64")


@cuda.jit(["(int64[::1], int64[::1], int64)", "(float64[::1], float64[::1], float64)"])
def scale(out, x, s):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * s


def test_several_signatures_dispatch_by_argument_types(target, rng):
    n = 200
    xi = rng.integers(-1000, 1000, n)
    out_i = target.to_device(poison(n, np.int64))
    target.launch(scale, cdiv(n, 64), 64, out_i, target.to_device(xi), 3)
    assert_close(target.to_host(out_i), xi * 3, "int64")
    xf = rng.standard_normal(n)
    out_f = target.to_device(poison(n, np.float64))
    target.launch(scale, cdiv(n, 64), 64, out_f, target.to_device(xf), 3)  # int -> float64
    assert_close(target.to_host(out_f), xf * 3, "float64")


@cuda.jit("void(int32[:], int32, uint8)")
def wrap(out, v, u):
    out[0] = v
    out[1] = u


def test_scalars_wrap_to_the_parameter_width(target):
    out = target.to_device(poison(2, np.int32))
    target.launch(wrap, 1, 1, out, 2 ** 32 + 5, -1)
    assert target.to_host(out).tolist() == [5, 255]


def hypot_f32(x, y):
    return (x * x + y * y) ** 0.5


dev_hypot = cuda.jit("float32(float32, float32)", device=True)(hypot_f32)


@cuda.jit
def hypots(out, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = dev_hypot(x[i], y[i])  # float64 arguments, computed in float32


def test_a_device_signature_computes_in_its_types(target, rng):
    n = 500
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    out = target.to_device(poison(n, np.float64))
    target.launch(hypots, cdiv(n, 128), 128, out, target.to_device(x), target.to_device(y))
    xf, yf = x.astype(np.float32).astype(np.float64), y.astype(np.float32).astype(np.float64)
    got = target.to_host(out)
    assert_close(got, np.hypot(xf, yf), "float32", ulps=4)
    # the result was rounded to float32 before the float64 store
    assert np.array_equal(got, got.astype(np.float32).astype(np.float64))


def body(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i] * x[i] - 1.0


def test_kernels_compiled_with_numbas_options(target, rng):
    n = 256
    x = rng.standard_normal(n).astype(np.float32)
    sig = "void(float32[:], float32[:], int32)"
    for opts in ({"debug": True, "opt": False}, {"opt": False}, {"launch_bounds": (128, 2)},
                 {"fastmath": True, "max_registers": 32}, {"cache": True, "lineinfo": False},
                 {"shared_memory_carveout": "MaxShared"}):
        k = cuda.jit(sig, **opts)(body)
        out = target.to_device(poison(n, np.float32))
        target.launch(k, n // 128, 128, out, target.to_device(x), n)
        ulps = 4 if opts.get("fastmath") else 1
        assert_close(target.to_host(out), x.astype(np.float64) ** 2 - 1.0, "float32", ulps=ulps,
                     err_msg=str(opts))


def test_specialize_fixes_the_types(target, rng):
    k = cuda.jit(body).specialize(float32[:], float32[:], int32)
    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    out = target.to_device(poison(n, np.float32))
    target.launch(k, 1, 128, out, target.to_device(x), n)
    assert_close(target.to_host(out), x.astype(np.float64) ** 2 - 1.0, "float32")
