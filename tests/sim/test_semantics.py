"""What the lockstep simulator computes: the CUDA backend's semantics, lane by lane.

Entry points (``simulate()``, ``THREADTILE_SIMULATE``), ``print``, atomics in lane order, CPU
torch tensors. Per-thread control flow under masks, Python arithmetic, warps and arrays of
every kind run on both targets, in tests/gpu/test_numerics.py.
"""

import importlib
import importlib.util

import numpy as np
import pytest

import threadtile as cuda
from threadtile import errors
from threadtile.backends.sim import simulate, switch
from threadtile.runtime.arrays import kernel_type

# ---- entry points ----------------------------------------------------------------------------

@cuda.jit
def fill_tid(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


def test_environment_variable_is_read_at_launch(monkeypatch):
    out = np.zeros(40, np.int64)
    monkeypatch.setenv("THREADTILE_SIMULATE", "1")
    fill_tid[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(40))
    monkeypatch.setenv("THREADTILE_SIMULATE", "python")
    out[:] = 0
    fill_tid[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(40))


def test_simulate_nests_restores_and_decorates():
    assert not switch.STATE.active
    with simulate():
        with simulate(checks=False):
            assert switch.STATE.active
        assert switch.STATE.active
    assert not switch.STATE.active

    @simulate(mode="python")
    def work():
        out = np.zeros(8, np.int64)
        fill_tid[1, 8](out)
        return out

    np.testing.assert_array_equal(work(), np.arange(8))
    assert not switch.STATE.active
    with pytest.raises(ValueError, match="unknown simulator checks"):
        simulate(checks={"races"})
    with pytest.raises(ValueError, match="mode"):
        simulate(mode="fast")


def test_translation_is_made_once_per_specialization():
    out = np.zeros(8, np.int64)
    with simulate():
        fill_tid[1, 8](out)
        spec = fill_tid.specialization([kernel_type(out)], {})
        prog = spec._sim_program
        fill_tid[1, 8](out)
    assert spec._sim_program is prog
    assert "def f_fill_tid(B, _m, v_out):" in prog.source


def test_launch_errors_before_running():
    with simulate(), pytest.raises((errors.LaunchError, ValueError)):
        fill_tid[1, 2048](np.zeros(8, np.int64))


# ---- print -----------------------------------------------------------------------------------

@cuda.jit
def chatty(x):
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    # lanes print in reverse order of threads within the block: output is still sorted
    if t >= 1:
        print("block", b, "thread", t, "x =", x[t] * 0.1, t == 2)
    if t == 0:
        print("first", b, x[t] / 3, np.uint32(7), 1e20, -0.0)


def test_print_order_and_format(capsys):
    with simulate():
        chatty[2, 3](np.arange(3, dtype=np.float32))
    lines = capsys.readouterr().out.splitlines()
    f1 = f"{float(np.float32(1) * np.float32(0.1)):f}"  # numba's format: %f
    f2 = f"{float(np.float32(2) * np.float32(0.1)):f}"
    big = "100000000000000000000.000000"
    assert lines == [
        f"first 0 0.000000 7 {big} -0.000000",
        f"block 0 thread 1 x = {f1} False",
        f"block 0 thread 2 x = {f2} True",
        f"first 1 0.000000 7 {big} -0.000000",
        f"block 1 thread 1 x = {f1} False",
        f"block 1 thread 2 x = {f2} True",
    ]


# ---- atomics ---------------------------------------------------------------------------------

@cuda.jit
def tickets(counter, old):
    i = cuda.grid(1)
    old[i] = cuda.atomic.add(counter, 0, 1)


@cuda.jit
def atomic_ops(v, res, olds):
    i = cuda.grid(1)
    x = v[i]
    olds[0, i] = cuda.atomic.max(res, 0, x)
    olds[1, i] = cuda.atomic.min(res, 1, x)
    olds[2, i] = cuda.atomic.exch(res, 2, x)
    olds[3, i] = cuda.atomic.cas(res, 3, i, i + 1)
    olds[4, i] = cuda.atomic.sub(res, 4, x)
    olds[5, i] = cuda.atomic.xor(res, 5, x)


@cuda.jit
def atomic_wrap(res, olds):
    i = cuda.grid(1)
    olds[0, i] = cuda.atomic.inc(res, 0, np.uint32(4))
    olds[1, i] = cuda.atomic.dec(res, 1, np.uint32(4))


def test_atomics_serialize_in_thread_order():
    counter = np.zeros(1, np.int32)
    old = np.zeros(300, np.int32)
    with simulate():
        tickets[3, 100](counter, old)
    assert counter[0] == 300
    np.testing.assert_array_equal(old, np.arange(300))


def test_atomic_operations_return_the_old_values():
    v = np.random.default_rng(0).integers(0, 50, 64).astype(np.int64)
    res = np.array([0, 100, -1, 0, 1000, 0], np.int64)
    olds = np.zeros((6, 64), np.int64)
    ref = res.copy()
    ref_olds = np.zeros_like(olds)
    for i, x in enumerate(v):  # the serial order the simulator promises
        ref_olds[:, i] = ref
        ref[0] = max(ref[0], x)
        ref[1] = min(ref[1], x)
        ref[2] = x
        ref[3] = i + 1 if ref[3] == i else ref[3]
        ref[4] -= x
        ref[5] ^= x
    with simulate():
        atomic_ops[2, 32](v, res, olds)
    np.testing.assert_array_equal(res, ref)
    np.testing.assert_array_equal(olds, ref_olds)
    r = np.array([0, 0], np.uint32)
    o = np.zeros((2, 10), np.uint32)
    with simulate():
        atomic_wrap[1, 10](r, o)
    np.testing.assert_array_equal(o[0], [0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(o[1], [0, 4, 3, 2, 1, 0, 4, 3, 2, 1])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_cpu_torch_tensors_are_modified_in_place():
    import torch

    out = torch.zeros(40, dtype=torch.int64)
    with simulate():
        fill_tid[2, 32](out)
    assert out.tolist() == list(range(40))
