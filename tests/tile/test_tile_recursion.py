"""A tile kernel's helper calling itself, as cuTile allows: each call is inlined, so that
compile-time arguments end the recursion (``if n > 0:`` of a Constant); past 1000 nested
calls a ``TileRecursionError``. Thread-level kernels keep numba's rule (no recursion,
tests/errors)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct
from threadtile.errors import KernelCompileError
from threadtile.tile import TileRecursionError


def add_levels(x, n):
    if n > 0:
        y = add_levels(x, n - 1) + 1
    else:
        y = x
    return y


def fib_tiles(t, n):  # fib(n) t (fib(0) = fib(1) = 1): two calls a level, an early return
    if n < 2:
        return t
    return fib_tiles(t, n - 1) + fib_tiles(t, n - 2)


@ct.kernel
def levels(x, out, n: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(16,))
    ct.store(out, index=(0,), tile=add_levels(t, n) + fib_tiles(t, 6))


@pytest.mark.parametrize("n", [0, 5, 109])
def test_recursion_ended_by_constants(target, rng, n):
    x = rng.standard_normal(16).astype(np.float32)
    out = target.to_device(poison(16, np.float32))
    target.launch_tile(levels, 1, target.to_device(x), out, n)
    np.testing.assert_allclose(target.to_host(out), (x + n) + 13 * x, rtol=1e-5, atol=1e-5)


def test_runaway_recursion_is_a_tile_recursion_error():
    x = np.zeros(16, np.float32)
    with pytest.raises(TileRecursionError, match="maximum recursion depth") as e:
        levels.cuda_source(x, x, 100000)
    assert isinstance(e.value, KernelCompileError) and "add_levels" in str(e.value)


def test_compiles():
    x = np.zeros(16, np.float32)
    assert compile_cubin(levels, x, x, 40, arch="sm_90")
