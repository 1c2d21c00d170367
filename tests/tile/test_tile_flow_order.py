"""Compile-time values along paths, arrays and closures chosen at compile time, and the order of
a block's memory operations, in tile kernels.

- A name assigned the same constant on every path to a point (both branches of an ``if``, every
  ``break`` of a ``while True``, the items of a tuple built on two paths) is a compile-time
  constant there: it sizes a tile; two different constants do not. ``n = len(arrays)`` bounds
  a loop that indexes the tuple, unrolled.
- An array variable bound by a branch on the block's own values (``bid``) picks one array per
  block; a lambda made in a tuple comprehension reads the comprehension's variable when called
  (its last value once the comprehension is done); a helper returning a method of a tiled view
  is inlined; ``astype`` of a number; ``num_tiles`` with ``shape=()``; ``mma`` of int8 by uint8.
- Tile atomics on a 0-d array; a lock between blocks (``while atomic_cas(...)`` with
  ``memory_order=ACQUIRE``, released with ``RELEASE``): blocks run one at a time in the
  simulator, and the release orders each critical section after the previous one.
- A block's tile memory operations in program order (ir/memorder.py): a store then a gather of
  the same elements by other threads, windows of a tiled view stored over each other, raw
  memory offsets between loads and stores: a barrier between them (in the IR both backends
  run), none for a load and store of one tile of one array.
- ``ct.launch`` with the grid ``()`` (one block), and grids past cuTile's 24-bit block ids.

Numerics on every target against NumPy (the ``target`` fixture), outputs poisoned first; the
kernels compile to sm_80 and sm_90 cubins through NVRTC.
"""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile as tt
import threadtile.tile as ct

# ---- compile-time values along paths ----------------------------------------------------------


@ct.kernel
def same_on_both_paths(x):
    """``w`` is 4 on both paths, ``n`` leaves the loop by two breaks with 2, ``pair[1]`` is 8
    on both paths: each sizes a tile."""
    if ct.bid(0) % 2 == 0:
        w = 4
        pair = (ct.bid(0), 8)
    else:
        w = 4
        pair = (ct.bid(0) + 1, 8)
    n = 1
    while True:
        if ct.bid(0) > 100:
            n = 2
            break
        n += 5
        if n > 3:
            n = 2
            break
    a = ct.full((w,), 1, ct.int32)
    b = ct.full((n,), 10, ct.int32)
    c = ct.arange(pair[1], dtype=ct.int32)
    base = ct.bid(0) * 3
    ct.scatter(x, base + 0, ct.sum(a))
    ct.scatter(x, base + 1, ct.sum(b))
    ct.scatter(x, base + 2, ct.sum(c) + pair[0])


def test_constants_along_paths(target):
    x = target.to_device(poison((6,), np.int32))
    target.launch_tile(same_on_both_paths, 2, x)
    np.testing.assert_array_equal(target.to_host(x), [4, 20, 28, 4, 20, 30])


def test_different_constants_on_two_paths_are_not_constant():
    @ct.kernel
    def k(x):
        if ct.bid(0) == 0:
            w = 2
        else:
            w = 4
        ct.store(x, (0,), ct.full((w,), 1, ct.int32))

    with pytest.raises(tt.KernelCompileError, match="must be a compile-time integer"), \
            tt.simulate():
        k[1](np.zeros(4, np.int32))


@ct.kernel
def sum_of_list(arrays, out):
    """``n = len(arrays)``, then ``range(n)`` indexing the tuple: unrolled."""
    n = len(arrays)
    acc = ct.zeros((8,), ct.float32)
    for i in range(n):
        acc = acc + ct.load(arrays[i], (0,), shape=(8,))
    ct.store(out, (0,), acc)


def test_loop_bounded_by_a_known_length(target):
    xs = [np.arange(8, dtype=np.float32) * (k + 1) for k in range(3)]
    out = target.to_device(poison((8,), np.float32))
    target.launch_tile(sum_of_list, 1, tuple(target.to_device(a) for a in xs), out)
    np.testing.assert_array_equal(target.to_host(out), sum(xs))


# ---- arrays, closures and methods chosen at compile time ------------------------------------


@ct.kernel
def pick_by_block(x, y):
    """Block 0 writes ``x``, the others ``y``: one array variable, bound by a branch."""
    if ct.bid(0) == 0:
        dst = x
    else:
        dst = y
    ct.store(dst, (ct.bid(0),), ct.full((4,), ct.bid(0) + 1, ct.int32))


def test_array_bound_by_a_branch_on_the_block(target):
    x = target.to_device(np.zeros(12, np.int32))
    y = target.to_device(np.zeros(12, np.int32))
    target.launch_tile(pick_by_block, 3, x, y)
    np.testing.assert_array_equal(target.to_host(x), [1] * 4 + [0] * 8)
    np.testing.assert_array_equal(target.to_host(y), [0] * 4 + [2] * 4 + [3] * 4)


@ct.kernel
def late_lambdas(x):
    """Lambdas read the comprehension's variable when called: its last value (Python's
    closures); an outer name of the same name assigned later is another variable; a lambda of an
    inner comprehension reads both comprehensions' variables, each at its last value."""
    fs = tuple(lambda: k * 10 for k in ct.static_iter(range(3)))  # noqa: B023 (the point)
    k = 100  # noqa: F841
    nested = tuple(tuple(lambda: j + i for j in ct.static_iter(range(2)))  # noqa: B023
                   for i in ct.static_iter(range(2)))
    now = tuple((lambda: m)() for m in ct.static_iter(range(3)))
    for p, f in ct.static_iter(enumerate(fs)):
        ct.scatter(x, p, f())
    for p, f in ct.static_iter(enumerate(nested[0] + nested[1])):
        ct.scatter(x, 3 + p, f())
    for p, v in ct.static_iter(enumerate(now)):
        ct.scatter(x, 7 + p, v)


def test_lambdas_over_comprehension_variables(target):
    x = target.to_device(poison((10,), np.int32))
    target.launch_tile(late_lambdas, 1, x)
    np.testing.assert_array_equal(target.to_host(x), [20, 20, 20, 2, 2, 2, 2, 0, 1, 2])


def _adder(tv):
    return tv.atomic_store_add


@ct.kernel
def helper_gives_a_method(x, y, T: ct.Constant[int]):
    """A helper returning a tiled view's method (inlined: no device function returns one);
    ``astype`` of a number and of a static_eval'd tile extent; num_tiles with shape ()."""
    tx = x.tiled_view((T,))
    t = ct.load(y, (ct.bid(0),), shape=(T,))
    _adder(tx)((ct.bid(0),), t)
    if ct.bid(0) == 0:
        n = ct.static_eval(t.shape)[0].astype(ct.int16)
        ct.scatter(y, 0, (n + ct.num_tiles(y, 0, shape=())).astype(ct.int32))


def test_methods_from_helpers_and_scalar_astype(target):
    x = target.to_device(np.ones(16, np.int32))
    y = np.arange(16, dtype=np.int32)
    yd = target.to_device(y)
    target.launch_tile(helper_gives_a_method, 4, x, yd, 4)
    np.testing.assert_array_equal(target.to_host(x), 1 + y)
    assert target.to_host(yd)[0] == 4 + 16


@ct.kernel
def mixed_int_mma(a, b, c):
    acc = ct.load(c, (0, 0), shape=(16, 16))
    acc = ct.mma(ct.load(a, (0, 0), shape=(16, 32)), ct.load(b, (0, 0), shape=(32, 16)), acc)
    ct.store(c, (0, 0), acc)


def test_mma_of_int8_by_uint8(target):
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(0, 256, (32, 16)).astype(np.uint8)
    c = np.full((16, 16), 7, np.int32)
    cd = target.to_device(c)
    target.launch_tile(mixed_int_mma, 1, target.to_device(a), target.to_device(b), cd)
    np.testing.assert_array_equal(target.to_host(cd), c + a.astype(np.int64) @ b)


# ---- atomics on 0-d arrays, a lock between blocks ------------------------------------------


@ct.kernel
def locked_total(total, lock, count):
    """Each block adds its id to a 0-d total under a lock of a 0-d array, and counts itself
    with an atomic."""
    while ct.atomic_cas(lock, (), 0, 1, memory_order=ct.MemoryOrder.ACQUIRE) == 1:
        pass
    t = ct.gather(total, ())
    ct.scatter(total, (), t + ct.bid(0))
    ct.atomic_add(count, (), 1)
    ct.atomic_xchg(lock, (), 0, memory_order=ct.MemoryOrder.RELEASE)


def test_lock_between_blocks_on_0d_arrays(target):
    total = target.to_device(np.array(5, np.int64))
    lock = target.to_device(np.array(0, np.int32))
    count = target.to_device(np.array(0, np.int32))
    target.launch_tile(locked_total, 40, total, lock, count)
    assert int(target.to_host(total)) == 5 + sum(range(40))
    assert int(target.to_host(count)) == 40 and int(target.to_host(lock)) == 0


# ---- memory operations in program order -----------------------------------------------------


@ct.kernel
def reverse_in_place(x, T: ct.Constant[int]):
    """A store, then a gather of its elements in reverse (other threads), stored again."""
    ct.store(x, (0,), ct.arange(T, dtype=ct.int32) * 3)
    back = ct.gather(x, T - 1 - ct.arange(T, dtype=ct.int32))
    ct.store(x, (0,), back)


@ct.kernel
def overlapping_windows(x, out, T: ct.Constant[int], S: ct.Constant[int]):
    """Windows of T elements every S < T stored over each other: the last store wins."""
    src = x.tiled_view(T, traversal_steps=S)
    dst = out.tiled_view(T, traversal_steps=S)
    for i in range(src.num_tiles(0)):
        dst.store(i, src.load(i) + i * 100)


@ct.kernel
def offsets_in_order(a):
    """Raw memory: a store, an offset load of it, an offset store, a load of that."""
    mem = a.get_raw_memory()
    ct.store(a, (0,), ct.full((4,), 2.0, ct.float32))
    first = mem.load_offset(ct.arange(4, dtype=ct.int64) + 3)
    mem.store_offset(ct.arange(4, dtype=ct.int64) + 4, first + 1.0)
    ct.store(a, (3,), ct.load(a, (1,), shape=(4,)) * 10.0)


@ct.kernel
def in_place(x):
    """A load and a store of the same tile: each element stays with its thread, no barrier."""
    t = ct.load(x, (ct.bid(0),), shape=(64,))
    ct.store(x, (ct.bid(0),), t + 1)


def test_store_then_gather_of_other_threads(target):
    x = target.to_device(poison((256,), np.int32))
    target.launch_tile(reverse_in_place, 1, x, 256)
    np.testing.assert_array_equal(target.to_host(x), (np.arange(256) * 3)[::-1])


def test_overlapping_windows_keep_the_last_store(target):
    n, T, S = 20, 8, 4
    x = np.arange(n, dtype=np.float32)
    out = target.to_device(np.zeros(n, np.float32))
    target.launch_tile(overlapping_windows, 1, target.to_device(x), out, T, S)
    want = np.zeros(n, np.float32)
    for i in range(-(-n // S)):
        want[i * S:i * S + T] = x[i * S:i * S + T] + i * 100
    np.testing.assert_array_equal(target.to_host(out), want)


def test_raw_offsets_in_program_order(target):
    a = target.to_device(np.zeros(16, np.float32))
    target.launch_tile(offsets_in_order, 1, a)
    want = np.zeros(16, np.float32)
    want[:4] = 2.0
    want[4:8] = [3.0, 1.0, 1.0, 1.0]
    want[12:16] = want[4:8] * 10.0
    np.testing.assert_array_equal(target.to_host(a), want)


def _barriers(kernel, *args, **consts) -> int:
    return kernel.ir(*args, **consts).count("syncthreads()")


def test_barriers_only_where_threads_change():
    x = np.zeros(256, np.int32)
    assert _barriers(reverse_in_place, x, T=256) == 2  # before the gather, before the store
    assert _barriers(overlapping_windows, x.astype(np.float32), x.astype(np.float32), T=8,
                     S=4) == 1
    assert _barriers(in_place, x) == 0
    assert _barriers(locked_total, np.zeros((), np.int64), np.zeros((), np.int32),
                     np.zeros((), np.int32)) == 1  # the gather's readers before the scatter


# ---- launches ---------------------------------------------------------------------------------


def test_launch_grid_of_no_axes_and_24_bit_ids():
    x = np.zeros(64, np.int32)
    with tt.simulate():
        ct.launch(None, (), in_place, (x,))
        assert (x == 1).all()
        with pytest.raises(ValueError, match="exceeds 24-bit limit"):
            ct.launch(None, (1 << 24, 1, 1), in_place, (x,))


# ---- cubins ------------------------------------------------------------------------------------


def _cases():
    i32, f32 = np.zeros(64, np.int32), np.zeros(64, np.float32)
    return {
        "paths": (same_on_both_paths, (i32,), {}),
        "list": (sum_of_list, ((f32, f32), f32), {}),
        "pick": (pick_by_block, (i32, i32), {}),
        "lambdas": (late_lambdas, (i32,), {}),
        "method": (helper_gives_a_method, (i32, i32), {"T": 4}),
        "mma": (mixed_int_mma, (np.zeros((16, 32), np.int8), np.zeros((32, 16), np.uint8),
                                np.zeros((16, 16), np.int32)), {}),
        "lock": (locked_total, (np.zeros((), np.int64), np.zeros((), np.int32),
                                np.zeros((), np.int32)), {}),
        "reverse": (reverse_in_place, (i32,), {"T": 64}),
        "windows": (overlapping_windows, (f32, f32), {"T": 8, "S": 4}),
        "offsets": (offsets_in_order, (f32,), {}),
    }


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", ["paths", "list", "pick", "lambdas", "method", "mma", "lock",
                                  "reverse", "windows", "offsets"])
def test_compiles(arch, case):
    kernel, args, consts = _cases()[case]
    assert compile_cubin(kernel, *args, arch=arch, **consts)
