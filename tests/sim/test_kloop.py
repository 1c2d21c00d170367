"""The simulator runs a tensor-core matmul through the k-loop operation the GPU runs
(ir/kloop.py: ``mma_loop``), and still catches the bugs of the loop it stands for, each at the
kernel's own line: a missing barrier in a kernel that mixes thread code with the tile loop, a
k range one step too long, a loop bound that differs between the threads of a block."""

import inspect

import numpy as np
import pytest

import threadtile as cuda
import threadtile.tile as ct
from threadtile import errors
from threadtile.backends.sim import simulate
from threadtile.ir import nodes as ir
from threadtile.runtime.arrays import kernel_type

TM, TN, TK = 32, 32, 16
PAD = ct.PaddingMode.ZERO


@cuda.jit(num_warps=4)
def scaled_matmul(X, A, B, C, barrier: cuda.Constant[bool], extra: cuda.Constant[int]):
    """C = (2 X) @ B for one row strip per block: the block's threads first write 2 X into A
    (thread code), then the tile loop multiplies A's strip by B on tensor cores."""
    bi = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = X.shape[1]
    for e in range(t, TM * n, 128):
        r = bi * TM + e // n
        A[r, e % n] = X[r, e % n] * 2
    if barrier:
        cuda.syncthreads()
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK)) + extra):
        a = ct.load(A, index=(bi, k), shape=(TM, TK))
        b = ct.load(B, index=(k, 0), shape=(TK, TN))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bi, 0), tile=acc)


@ct.kernel(num_warps=4)
def uneven_bounds(A, B, C):
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    # a trip count that depends on the thread: the loop is block-collective, so this diverges
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK)) - cuda.threadIdx.x // 64):
        a = ct.load(A, index=(ct.bid(0), k), shape=(TM, TK), padding_mode=PAD)
        b = ct.load(B, index=(k, 0), shape=(TK, TN), padding_mode=PAD)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), 0), tile=acc)


def _line(fn, text: str) -> int:
    src, first = inspect.getsourcelines(fn.py_func)
    return first + next(i for i, s in enumerate(src) if text in s)


def _arrays(rng, m=64, k=48):
    x = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, TN)).astype(np.float16)
    a = np.zeros_like(x)
    c = np.full((m, TN), np.nan, np.float32)
    return x, a, b, c


def _ops(kernel, args, consts) -> list[str]:
    module = kernel.specialization([kernel_type(a) for a in args], consts).module
    return [x.op for x in ir.walk_module_exprs(module) if isinstance(x, ir.TileOp)]


def test_the_simulator_runs_the_k_loop_as_one_operation(rng):
    x, a, b, c = _arrays(rng)
    ops = _ops(scaled_matmul, (x, a, b, c), dict(barrier=True, extra=0))
    assert "mma_loop" in ops and "mma" not in ops  # the loop is the GPU's one operation
    with simulate():
        scaled_matmul[x.shape[0] // TM, 128](x, a, b, c, True, 0)
    ref = (2 * x.astype(np.float64)) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=2e-3, atol=2e-3)
    assert np.array_equal(a, 2 * x)


def test_a_missing_barrier_before_the_k_loop_is_a_race_at_the_load(rng):
    x, a, b, c = _arrays(rng)
    with simulate(), pytest.raises(errors.RaceError) as e:
        scaled_matmul[x.shape[0] // TM, 128](x, a, b, c, False, 0)
    err = e.value
    assert err.line == _line(scaled_matmul, "a = ct.load(A")  # inside the fused loop
    assert "read of A[" in str(err) and "block (0, 0, 0)" in str(err)
    # the write it races with: the thread code before the loop
    assert f"line {_line(scaled_matmul, 'A[r, e % n] =')}," in str(err)


def test_a_k_range_past_the_array_is_out_of_bounds_at_the_load(rng):
    x, a, b, c = _arrays(rng)
    ops = _ops(scaled_matmul, (x, a, b, c), dict(barrier=True, extra=1))
    assert "mma_loop" in ops
    with simulate(), pytest.raises(errors.OutOfBoundsError) as e:
        scaled_matmul[x.shape[0] // TM, 128](x, a, b, c, True, 1)
    assert e.value.line == _line(scaled_matmul, "a = ct.load(A")
    assert "tile index (0, 3)" in str(e.value)


def test_a_k_loop_bound_that_differs_between_threads_is_divergence(rng):
    x, _, b, c = _arrays(rng)
    with simulate(), pytest.raises(errors.BarrierDivergenceError) as e:
        uneven_bounds[x.shape[0] // TM](x, b, c)
    assert e.value.line == _line(uneven_bounds, "for k in range")
    assert "k loop" in str(e.value) and "ct.mma()" in str(e.value)
