"""cuTile's errors in tile kernels: the exception classes and the words of cuTile's, each also a
``KernelCompileError`` at the kernel's line where the compiler finds it.

A global array subscripted in a tile kernel; 32-bit indexing of an array not annotated
``ct.IndexedWithInt64`` (an ``OverflowError`` at the launch); the number of kernel arguments; a
shape that is not a compile-time constant; gather/scatter and advanced-indexing type errors; a
variable no path assigns (``TileSyntaxError``) apart from one some paths assign
(``TileTypeError``); a global array read by a tile kernel; a helper's return type that depends on
the path; axis orders that are no permutation; memory orders cuTile does not define for a load or
a store; a kernel function called inside ``static_eval``; builtins and classes device code
cannot call; a type error before the register limit of a tile too big for the block.
"""

import numpy as np
import pytest

import threadtile as tt
import threadtile.tile as ct
from threadtile import KernelCompileError
from threadtile.errors import UnsupportedCallError
from threadtile.tile import TileStaticEvalError, TileSyntaxError, TileTypeError


def _raises(kernel, cls, words, *args, grid=1):
    """The error ``kernel[grid](*args)`` raises in the simulator, checked for class and
    words."""
    with pytest.raises(cls, match=words) as e, tt.simulate():
        kernel[grid](*args)
    return e.value


def _line(fn, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


# ---- arrays -------------------------------------------------------------------------------------

@ct.kernel
def array_getitem(x):
    x[0]


@ct.kernel
def array_setitem(x):
    x[0] = 3.0


@ct.kernel
def array_aug_setitem(x):
    x[0] += 3


@pytest.mark.parametrize(("kernel", "words"), [
    (array_getitem, "Arrays are not directly subscriptable"),
    (array_setitem, r"Arrays do not support item assignment. Use store\(\)"),
    (array_aug_setitem, "Arrays are not directly subscriptable"),
])
def test_a_global_array_is_not_subscriptable_in_a_tile_kernel(kernel, words):
    e = _raises(kernel, TileTypeError, words, np.zeros(10, np.float32))
    assert isinstance(e, KernelCompileError)
    assert e.loc.line == _line(kernel.py_func, "x[0]")


@tt.jit(num_warps=4)
def thread_code_indexes(x):
    t = ct.load(x, index=(0,), shape=(128,))
    ct.store(x, index=(0,), tile=t + 1)
    if tt.threadIdx.x == 0:
        x[0] = 7


def test_a_thread_level_kernel_with_tile_operations_still_indexes_arrays():
    x = np.zeros(128, np.float32)
    with tt.simulate():
        thread_code_indexes[1, 128](x)
    assert x[0] == 7 and (x[1:] == 1).all()


@ct.kernel
def no_op(value, out):
    pass


@ct.kernel
def no_op_wide(value: ct.IndexedWithInt64, out: ct.IndexedWithInt64):
    pass


def test_an_array_beyond_int32_needs_indexed_with_int64():
    base = np.zeros(128, np.float32)
    # a stride of 2**32 elements over one row: nothing beyond the 128 elements is read
    big_stride = np.lib.stride_tricks.as_strided(base, (1, 128), (4 << 32, 4))
    with pytest.raises(OverflowError, match=r"stride is too big.*'value'.*IndexedWithInt64"), \
            tt.simulate():
        ct.launch(None, (1,), no_op, (big_stride, base))
    long = np.lib.stride_tricks.as_strided(base, (2**31,), (0,))
    with pytest.raises(OverflowError, match=r"shape is too big.*'out'"), tt.simulate():
        ct.launch(None, (1,), no_op, (base, long))
    with tt.simulate():
        ct.launch(None, (1,), no_op_wide, (big_stride, long))


@ct.kernel
def one_arg(x):
    pass


@ct.kernel
def two_args(x, y):
    pass


def test_the_number_of_kernel_arguments():
    with pytest.raises(TypeError, match="Kernel expects 1 argument but 2 were given"), \
            tt.simulate():
        ct.launch(None, (1,), one_arg, (1, 2))
    with pytest.raises(TypeError, match="Kernel expects 2 arguments but 1 was given"), \
            tt.simulate():
        ct.launch(None, (1,), two_args, (1,))


# ---- shapes, orders, memory orders --------------------------------------------------------------

@ct.kernel
def shape_from_branches(x):
    if ct.bid(0) == 0:
        a = 1
    else:
        a = 2
    ct.store(x, (0,), ct.full((a,), 3.0, x.dtype))


def test_a_shape_that_is_not_constant():
    _raises(shape_from_branches, TileTypeError,
            r'Invalid argument "shape" of full\(\): Expected a constant integer tuple',
            np.zeros(2, np.float32))


@ct.kernel
def order_repeats(x):
    ct.store(x, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 4), order=(1, 1)))


@ct.kernel
def order_out_of_range(x):
    ct.store(x, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 4), order=(0, 2)))


@ct.kernel
def order_too_short(x):
    ct.store(x, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 4), order=(0,)))


@pytest.mark.parametrize(("kernel", "words"), [
    (order_repeats, "Axis order must be a permutation, but axis 1 is used at least twice"),
    (order_out_of_range, "Axis 2 is out of range for rank 2"),
    (order_too_short, "Expected tuple of length 2, got 1"),
])
def test_an_axis_order_that_is_no_permutation(kernel, words):
    _raises(kernel, TileTypeError, words, np.zeros((4, 4), np.float32))


@ct.kernel
def load_with_order(x, order: ct.Constant[int]):
    if order == 0:
        t = ct.load(x, index=(0,), shape=(8,), memory_order=ct.MemoryOrder.RELEASE)
    else:
        t = ct.load(x, index=(0,), shape=(8,), memory_order=ct.MemoryOrder.ACQUIRE)
    ct.store(x, index=(0,), tile=t)


@ct.kernel
def store_acquire(x):
    ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(8,)),
             memory_order=ct.MemoryOrder.ACQ_REL)


def test_memory_orders_a_load_or_a_store_does_not_have():
    x = np.zeros(8, np.int32)
    _raises(load_with_order, TileTypeError, "Invalid memory order for tile_load. Got "
            "MemoryOrder.RELEASE, expected one of", x, 0)
    _raises(store_acquire, TileTypeError, "Invalid memory order for tile_store", x)
    # one cuTile defines that threadtile does not implement: a compile error of its own
    e = _raises(load_with_order, KernelCompileError, "not supported", x, 1)
    assert not isinstance(e, TileTypeError)


# ---- gather, scatter, advanced indexing ---------------------------------------------------------

@ct.kernel
def gather_int_mask(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, mask=i, check_bounds=False))


@ct.kernel
def gather_short_mask(x, y):
    i = ct.arange(8, dtype=ct.int32)
    ct.scatter(y, i, ct.gather(x, i, mask=ct.arange(4, dtype=ct.int32) > 0))


@ct.kernel
def advanced_two_sparse(x, y):
    r = ct.arange(4, dtype=ct.int32)
    ct.store(y, (0,), ct.load_advanced_indexing(x, (r, r)))


@ct.kernel
def advanced_three_indices(x):
    ct.load_advanced_indexing(x, (ct.arange(4, dtype=ct.int32), ct.Slice(0, 4), ct.Slice(0, 4)))


@ct.kernel
def advanced_2d_index(x):
    ct.load_advanced_indexing(x, (ct.zeros((4, 4), dtype=ct.int32), ct.Slice(0, 4)))


@pytest.mark.parametrize(("kernel", "args", "words"), [
    (gather_int_mask, 2, "boolean"),
    (gather_short_mask, 2, "not broadcastable"),
    (advanced_two_sparse, 22, "exactly one index must be a 1D integer Tile"),
    (advanced_three_indices, 20, "does not match array rank"),
    (advanced_2d_index, 20, "1D"),
])
def test_gather_and_advanced_indexing_type_errors(kernel, args, words):
    a = np.zeros(8, np.float32) if args // 10 == 0 else np.zeros((8, 8), np.float32)
    arrays = (a, np.zeros(8, np.float32))[:args % 10 or 1]
    _raises(kernel, TileTypeError, words, *arrays)


# ---- variables, globals, returns ----------------------------------------------------------------

global_n = 128
global_array = np.zeros(8, np.float32)


@ct.kernel
def read_before_assignment(x):
    t = ct.load(x, index=(0,), shape=(global_n,))  # noqa: F823
    global_n += 1  # noqa: F841
    ct.store(x, index=(0,), tile=t)


@ct.kernel
def assigned_on_one_path(x):
    if ct.bid(0) == 0:
        v = 1
    ct.scatter(x, 0, v)


def test_undefined_and_potentially_undefined_variables():
    e = _raises(read_before_assignment, TileSyntaxError, "Undefined variable global_n used",
                np.zeros(128, np.float32))
    assert e.loc.line == _line(read_before_assignment.py_func, "shape=(global_n,)")
    e = _raises(assigned_on_one_path, TileTypeError, "Use of potentially undefined variable `v`",
                np.zeros(8, np.int32))
    assert not isinstance(e, TileSyntaxError)


@ct.kernel
def accumulates_from_nothing(a, c, n: int):
    for k in range(n):
        t = ct.load(a, index=(k,), shape=(8,))
        acc = acc + t  # noqa: F821 (never assigned before the loop)
    ct.store(c, index=(0,), tile=acc)


@ct.kernel
def accumulates_from_zero(a, c, n: int):
    acc = ct.zeros((8,), dtype=ct.float32)
    for k in range(n):
        t = ct.load(a, index=(k,), shape=(8,))
        acc = acc + t
    k2 = 0
    while k2 < n:
        last = ct.load(a, index=(k2,), shape=(8,))
        k2 += 1
    ct.store(c, index=(0,), tile=acc + last)


def test_loop_carried_values_start_before_the_loop():
    """cuTile's rule (its test_uninitialized_vars): a tile kernel's loop body reading a name
    before the body assigns it, with nothing assigning it before the loop, is an error at the
    read, not a loop-carried value of no initial value; after the loop, what the body assigned
    is read as before."""
    a, c = np.arange(32, dtype=np.float32), np.zeros(8, np.float32)
    e = _raises(accumulates_from_nothing, TileTypeError, "[Uu]ndefined variable", a, c, 4)
    assert "`acc`" in str(e) and "before the loop" in str(e)
    assert e.loc.line == _line(accumulates_from_nothing.py_func, "acc = acc + t")
    with tt.simulate():
        accumulates_from_zero[1](a, c, 4)
    np.testing.assert_array_equal(c, a.reshape(4, 8).sum(0) + a[24:])


@ct.kernel
def reads_global_array(y):
    ct.store(y, (0,), ct.load(global_array, (0,), (8,)))


def test_a_tile_kernel_takes_arrays_as_arguments():
    _raises(reads_global_array, TileTypeError,
            "Cannot create constant from value of type numpy.ndarray", np.zeros(8, np.float32))


def int_or_float():
    if ct.bid(0) == 0:
        return 3
    return 5.0


def int_or_int():
    if ct.bid(0) == 0:
        return 3
    return ct.bid(0)


@ct.kernel
def mixed_returns(x):
    ct.scatter(x, 0, int_or_float())


@ct.kernel
def same_kind_returns(x):
    ct.scatter(x, ct.bid(0), int_or_int())


def test_a_return_type_that_depends_on_the_path():
    x = np.zeros(2, np.float32)
    _raises(mixed_returns, TileTypeError, "Type of return value depends on path taken", x)
    with tt.simulate():  # a loose constant and an int32 of one kind: one type
        same_kind_returns[2](x)
    assert x.tolist() == [3, 1]


# ---- static_eval, calls -------------------------------------------------------------------------

@ct.kernel
def static_eval_calls_closure():
    def f(n):
        return n + 1
    ct.static_eval(f(3))


@ct.kernel
def static_eval_calls_method(x):
    ct.static_eval(x.slice(0, 1, 2))


@pytest.mark.parametrize(("kernel", "args", "words"), [
    (static_eval_calls_closure, (), r"f\(\) cannot be called inside static_eval\(\)"),
    (static_eval_calls_method, (np.zeros(3, np.int32),),
     r"slice\(\) cannot be called inside static_eval\(\)"),
])
def test_kernel_functions_cannot_run_inside_static_eval(kernel, args, words):
    _raises(kernel, TileStaticEvalError, words, *args)


class Foo:
    pass


@ct.kernel
def calls_eval():
    eval("2 + 2")


@ct.kernel
def makes_foo():
    Foo()


def test_calls_device_code_cannot_make():
    _raises(calls_eval, UnsupportedCallError, r"eval\(\) is not supported in device code")
    e = _raises(makes_foo, UnsupportedCallError,
                'Creating instances of type "Foo" is not supported in device code')
    assert isinstance(e, KernelCompileError)


# ---- the register limit comes after the kernel's own errors -------------------------------------

@ct.kernel
def transpose_3d_big(x, y):
    ct.store(y, index=(0, 0, 0), tile=ct.transpose(ct.load(x, index=(0, 0, 0),
                                                           shape=(128, 64, 32))))


@ct.kernel
def big_tile(x):
    ct.store(x, index=(0, 0, 0), tile=ct.load(x, index=(0, 0, 0), shape=(128, 64, 32)) + 1)


def test_a_type_error_comes_before_the_register_limit():
    x = np.zeros((128, 64, 32), np.float32)
    _raises(transpose_3d_big, TileTypeError,
            "`axes` must be specified for tile with more than 2 dimensions", x, x)
    e = _raises(big_tile, KernelCompileError, "registers per thread", x)
    assert not isinstance(e, TileTypeError)
