"""What goes wrong with tile kernels, and what the user is told: compile errors naming the
construct, launch errors, and the simulator's checks (bounds, divergence, races)."""

import numpy as np
import pytest

import threadtile as tt
import threadtile.tile as ct
from threadtile import KernelCompileError

PAD = ct.PaddingMode.ZERO


def _line(fn, text: str) -> int:
    """The file line of the first source line of ``fn`` containing ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


# ---- the simulator's checks ------------------------------------------------------------------

@ct.kernel
def load_no_padding(a, out, T: ct.Constant[int]):
    t = ct.load(a, index=(ct.bid(0),), shape=(T,))  # the last tile passes the end
    ct.store(out, index=(ct.bid(0),), tile=t)


def test_a_load_past_the_end_is_padded_and_one_entirely_outside_is_out_of_bounds():
    """cuTile's rule: a tile that extends past the array loads with an undetermined padding
    (the simulator's is NaN; the store then skips those elements); a tile entirely outside is
    undefined, and the simulator's OutOfBoundsError."""
    a = np.arange(100, dtype=np.float32)
    out = np.full(100, -1, np.float32)
    with tt.simulate():
        load_no_padding[4](a, out, 32)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(tt.OutOfBoundsError) as e, tt.simulate():
        load_no_padding[5](a, a.copy(), 32)
    assert e.value.line == _line(load_no_padding.py_func, "ct.load(a")
    assert e.value.block == (4, 0, 0)
    assert e.value.index == (128,) and e.value.shape == (100,)
    assert "entirely outside" in str(e.value)


@ct.kernel
def sum_partial(a, out, T: ct.Constant[int]):
    t = ct.load(a, index=(ct.bid(0),), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=ct.sum(t, axis=0, keepdims=True))


def test_a_result_of_the_undetermined_padding_is_nan_in_the_simulator():
    out = np.zeros(4, np.float32)
    with tt.simulate():
        sum_partial[4](np.ones(100, np.float32), out, 32)
    assert (out[:3] == 32).all() and np.isnan(out[3])


def test_store_past_the_end_is_skipped():
    a = np.arange(100, dtype=np.float32)
    out = np.full(100, -1, np.float32)
    with tt.simulate():
        load_no_padding[3](a, out, 32)  # the tiles stay inside: no error
    assert (out[:96] == a[:96]).all() and (out[96:] == -1).all()


@ct.kernel
def store_outside(out):
    ct.store(out, index=(5,), tile=ct.ones((16,), ct.float32))


def test_store_entirely_outside_is_out_of_bounds():
    with pytest.raises(tt.OutOfBoundsError, match="entirely outside"), tt.simulate():
        store_outside[1](np.zeros(64, np.float32))


def test_a_tile_of_an_empty_array_loads_padding_and_stores_nothing():
    """An array of no elements (an empty slice, as cuTile's own slice tests make) has nothing
    a tile could lie inside of: its load is all padding and its store writes nothing, with no
    error; the same tile of an array with elements is still out of bounds."""
    out = np.full(0, -1, np.float32)
    with tt.simulate():
        load_no_padding[1](np.zeros(0, np.float32), out, 32)
        store_outside[1](np.zeros(0, np.float32))
    assert out.shape == (0,)
    with pytest.raises(tt.OutOfBoundsError, match="entirely outside"), tt.simulate():
        store_outside[1](np.zeros(1, np.float32))


@ct.kernel
def load_in_branch(a, out):
    if tt.threadIdx.x < 64:
        t = ct.load(a, index=(0,), shape=(16,))
        ct.store(out, index=(0,), tile=t)


def test_tile_op_in_divergent_branch():
    a = np.zeros(16, np.float32)
    with pytest.raises(tt.BarrierDivergenceError) as e, tt.simulate():
        load_in_branch[1](a, a.copy())
    assert e.value.line == _line(load_in_branch.py_func, "ct.load(")
    assert "block-collective" in str(e.value)
    assert len(e.value.missing) == 64


@ct.kernel
def per_thread_index(a, out):
    t = ct.load(a, index=(tt.threadIdx.x // 64,), shape=(16,))
    ct.store(out, index=(0,), tile=t)


def test_tile_op_argument_differs_between_threads():
    a = np.zeros(64, np.float32)
    with pytest.raises(tt.BarrierDivergenceError, match="differs between the threads"), \
            tt.simulate():
        per_thread_index[1](a, a.copy())


@ct.kernel
def same_tile_twice(out):
    ct.store(out, index=(0,), tile=ct.full((32,), ct.bid(0), ct.float32))


def test_two_blocks_storing_one_tile_race():
    with pytest.raises(tt.RaceError, match="different blocks"), tt.simulate():
        same_tile_twice[2](np.zeros(32, np.float32))


@ct.kernel
def load_unwritten_shared(out):
    sh = tt.shared.array(64, np.float32)
    ct.store(out, index=(0,), tile=ct.load(sh, index=(0,), shape=(64,)))


def test_load_of_unwritten_shared_memory():
    with pytest.raises(tt.UninitializedReadError), tt.simulate():
        load_unwritten_shared[1](np.zeros(64, np.float32))


# ---- compile errors -----------------------------------------------------------------------------

@ct.kernel
def uses_atan2(a):
    t = ct.arange(16, dtype=ct.float32)
    ct.store(a, index=(0,), tile=ct.atan2(t, t))


@ct.kernel
def odd_shape(a):
    ct.store(a, index=(0,), tile=ct.load(a, index=(0,), shape=(12,)))


@ct.kernel
def tile_ternary(a, flag):
    t = ct.load(a, index=(0,), shape=(16,))
    ct.store(a, index=(0,), tile=flag if flag else t * 2)  # a bool and a tile


@ct.kernel
def retyped_in_loop(a):
    t = ct.zeros((16,), ct.float32)
    for _i in range(2):
        t = ct.zeros((32,), ct.float32)
    ct.store(a, index=(0,), tile=t)


@ct.kernel
def mma_mixed_dtypes(a, b, c):
    x = ct.load(a, index=(0, 0), shape=(16, 16))
    y = ct.load(b, index=(0, 0), shape=(16, 16))
    ct.store(c, index=(0, 0), tile=ct.mma(x, y, ct.zeros((16, 16), ct.float32)))


@tt.jit
def thread_kernel_with_tiles(a):
    ct.store(a, index=(0,), tile=ct.zeros((16,), ct.float32))


@ct.kernel
def exp_approx_float64(a):
    t = ct.load(a, index=(0,), shape=(16,))
    ct.store(a, index=(0,), tile=ct.exp(t, rounding_mode=ct.RoundingMode.APPROX))


@ct.kernel
def exp_round_toward_zero(a):
    t = ct.load(a, index=(0,), shape=(16,))
    ct.store(a, index=(0,), tile=ct.exp(t, rounding_mode=ct.RoundingMode.RZ))


@pytest.mark.parametrize(("kernel", "args", "message", "hint"), [
    (uses_atan2, (np.zeros(16, np.float32),), "cuTile's atan2() is not supported",
     "docs/tiles.md"),
    (odd_shape, (np.zeros(16, np.float32),), "must be a power of two", "pad the data"),
    (tile_ternary, (np.zeros(16, np.float32), True), "conditional expression have different "
     "types", "astype"),
    (retyped_in_loop, (np.zeros(16, np.float32),), "carried around the loop", "new name"),
    (mma_mixed_dtypes, (np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32),
                        np.zeros((16, 16), np.float32)),
     "must have the same dtype, got float16 and float32",
     "astype"),
    (thread_kernel_with_tiles, (np.zeros(16, np.float32),), "needs the block size",
     "num_warps"),
    (exp_approx_float64, (np.zeros(16, np.float64),), "not float64", "cast the tile"),
    (exp_round_toward_zero, (np.zeros(16, np.float32),), "rounding_mode=RoundingMode.RZ",
     "RoundingMode.APPROX"),
], ids=["unsupported", "shape", "ternary", "retype", "mma", "no-block-size", "approx-f64",
        "exp-rz"])
def test_compile_errors(kernel, args, message, hint):
    with pytest.raises(KernelCompileError) as e:
        kernel.cuda_source(*args)
    text = str(e.value)
    assert message in text and hint in text
    assert __file__ in text  # the error points at this file, with its line and carets


def test_unknown_name_says_what_is_supported():
    with pytest.raises(AttributeError, match="docs/tiles.md"):
        ct.no_such_function  # noqa: B018


# ---- launches ------------------------------------------------------------------------------

def test_tile_kernel_is_launched_with_its_grid_alone():
    with pytest.raises(TypeError, match="grid alone"):
        store_outside[(1, 1), (128, 1)]
    assert store_outside[4].block == (128, 1, 1)
    assert ct.kernel(num_warps=8)(store_outside.py_func)[(2, 3)].block == (256, 1, 1)


@tt.jit(num_warps=2)
def fixed_block(a):
    ct.store(a, index=(0,), tile=ct.zeros((64,), ct.float32))


def test_fixed_block_kernel_checks_its_block():
    with pytest.raises(tt.LaunchError, match="blocks of 64 threads"):
        fixed_block[1, 128]
    a = np.ones(64, np.float32)
    with tt.simulate():
        fixed_block[1, (32, 2)](a)
    assert (a == 0).all()


def test_tile_ops_do_not_run_on_the_host():
    with pytest.raises(RuntimeError, match="inside a kernel"):
        ct.load(np.zeros(4), index=(0,), shape=(4,))
    assert ct.cdiv(10, 4) == 3  # cdiv also computes on the host
