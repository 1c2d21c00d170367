"""cuTile's dtype rules in tile kernels: arithmetic promotion, implicit conversions on store,
and the checks of the atomics on arrays.

Tile arithmetic promotes by cuTile's rule (its docs' "Arithmetic Promotion"): bool <
integral < floating point, the higher category's dtype winning (an int16 tile plus a float16
tile is float16, where the thread level's NumPy rule gives float32); within a category the
wider dtype, with no common dtype for signed with unsigned integers or float16 with bfloat16
(cuTile's ``TileTypeError``, "Implicit promotion of ... is not supported"). A value stored by
``ct.scatter`` or an atomic converts implicitly where its dtype promotes to the array's.
``ct.atomic_*`` on arrays check cuTile's dtypes (bitwise ones: integers, the update of exactly
the array's dtype), memory orders (no WEAK) and scopes (not NONE).
Numerics on every target against NumPy (the ``target`` fixture), outputs poisoned first;
every kernel compiles to sm_80 and sm_90 cubins through NVRTC.
"""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile as tt
import threadtile.tile as ct
from threadtile.tile import TileTypeError

N = 32


@ct.kernel
def add_tiles(x, y, out):
    tx = ct.load(x, index=(0,), shape=(N,))
    ty = ct.load(y, index=(0,), shape=(N,))
    ct.store(out, index=(0,), tile=tx + ty)


@ct.kernel
def scatter_into(x, y):
    i = ct.arange(N, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i))


@ct.kernel
def atomic_add_into(x, y):
    i = ct.arange(N, dtype=ct.int32)
    ct.atomic_add(x, i, ct.gather(y, i))


def _raises(kernel, words, *args):
    with pytest.raises(TileTypeError, match=words), tt.simulate():
        kernel[1](*args)


def test_int_and_float16_promote_to_float16(target):
    """The sum is a float16 tile: above 2048 float16 holds even integers only, and the float32
    output shows the rounding (the NumPy rule would add in float32, exactly)."""
    rng = np.random.default_rng(1)
    x = rng.integers(2049, 3000, N).astype(np.int16)
    y = rng.standard_normal(N).astype(np.float16)
    out = target.to_device(poison((N,), np.float32))
    target.launch_tile(add_tiles, 1, target.to_device(x), target.to_device(y), out)
    want = (x.astype(np.float16) + y).astype(np.float32)  # one float16 addition
    assert not np.array_equal(want, x.astype(np.float32) + y.astype(np.float32))
    np.testing.assert_array_equal(target.to_host(out), want)


def test_wider_of_one_kind_wins(target):
    x = np.arange(N, dtype=np.uint8) * 7
    y = np.arange(N, dtype=np.uint32) * 100_000
    out = target.to_device(poison((N,), np.uint32))
    target.launch_tile(add_tiles, 1, target.to_device(x), target.to_device(y), out)
    np.testing.assert_array_equal(target.to_host(out), x.astype(np.uint32) + y)


@pytest.mark.parametrize("a, b", [(np.int32, np.uint32), (np.uint8, np.int64),
                                  (np.float16, "bfloat16")])
def test_no_common_dtype_is_an_error(a, b):
    import ml_dtypes

    b = ml_dtypes.bfloat16 if b == "bfloat16" else b
    x, y = np.zeros(N, a), np.zeros(N, b)
    _raises(add_tiles, r"Implicit promotion of \w+ and \w+ is not supported", x, y,
            np.zeros(N, np.float32))


def test_scatter_converts_an_integer_to_float16(target):
    x = np.arange(N, dtype=np.int32) - 10
    y = target.to_device(poison((N,), np.float16))
    target.launch_tile(scatter_into, 1, target.to_device(x), y)
    np.testing.assert_array_equal(target.to_host(y), x.astype(np.float16))


@pytest.mark.parametrize("a, b", [(np.float32, np.int32), (np.int32, np.uint32),
                                  (np.int64, np.int32)])
def test_scatter_refuses_what_cutile_does_not_convert(a, b):
    _raises(scatter_into, "cannot implicitly cast", np.zeros(N, a), np.zeros(N, b))


def test_atomic_add_widens_the_update(target):
    x = np.arange(N, dtype=np.int64) * 3
    y = np.arange(N, dtype=np.int32) - 5
    d = target.to_device(x.copy())
    target.launch_tile(atomic_add_into, 1, d, target.to_device(y))
    np.testing.assert_array_equal(target.to_host(d), x + y)


def test_atomic_add_refuses_a_narrowing_or_mixed_sign_update():
    _raises(atomic_add_into, "Update is incompatible with the target dtype: cannot implicitly "
            "cast int64 to int32", np.zeros(N, np.int32), np.zeros(N, np.int64))
    _raises(atomic_add_into, "cannot implicitly cast int32 to uint32",
            np.zeros(N, np.uint32), np.zeros(N, np.int32))


@ct.kernel
def atomic_or_into(x, y):
    i = ct.arange(N, dtype=ct.int32)
    ct.atomic_or(x, i, ct.gather(y, i))


def test_bitwise_atomics_need_integers_of_the_same_dtype():
    _raises(atomic_or_into, "Unsupported array dtype: float32", np.zeros(N, np.float32),
            np.zeros(N, np.float32))
    _raises(atomic_or_into, r"require the update dtype \(int32\) to exactly match the target "
            r"dtype \(int64\)", np.zeros(N, np.int64), np.zeros(N, np.int32))


@ct.kernel
def weak_add(x):
    ct.atomic_add(x, 0, 1, memory_order=ct.MemoryOrder.WEAK)


@ct.kernel
def unscoped_cas(x):
    ct.atomic_cas(x, 0, 0, 1, memory_order=ct.MemoryOrder.RELAXED,
                  memory_scope=ct.MemoryScope.NONE)


def test_atomic_memory_order_and_scope():
    _raises(weak_add, "Invalid memory order for tile_atomic_rmw", np.zeros(1, np.int32))
    _raises(unscoped_cas, "tile_atomic_cas with RELAXED memory ordering requires a memory "
            "scope", np.zeros(1, np.int32))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    i16, f16 = np.zeros(N, np.int16), np.zeros(N, np.float16)
    assert compile_cubin(add_tiles, i16, f16, np.zeros(N, np.float32), arch=arch)
    assert compile_cubin(scatter_into, np.zeros(N, np.int32), f16, arch=arch)
    assert compile_cubin(atomic_add_into, np.zeros(N, np.int64), np.zeros(N, np.int32),
                         arch=arch)
