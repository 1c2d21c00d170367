"""What the lockstep simulator computes: the CUDA backend's semantics, lane by lane.

Entry points (``simulate()``, ``THREADTILE_SIMULATE``), ``print``, atomics in lane order,
per-thread control flow under masks, Python arithmetic, arrays of every kind.
"""

import importlib
import importlib.util
import math

import numpy as np
import pytest

import threadtile as cuda
from threadtile import errors
from threadtile.backends.sim import simulate, switch
from threadtile.runtime.arrays import kernel_type

FULL = 0xFFFFFFFF


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
        spec = fill_tid.specialize([kernel_type(out)], {})
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
    f1 = f"{float(np.float32(1) * np.float32(0.1)):g}"
    f2 = f"{float(np.float32(2) * np.float32(0.1)):g}"
    assert lines == [
        "first 0 0 7 1e+20 -0",
        f"block 0 thread 1 x = {f1} False",
        f"block 0 thread 2 x = {f2} True",
        "first 1 0 7 1e+20 -0",
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


# ---- control flow under masks ----------------------------------------------------------------

@cuda.jit(device=True)
def first_multiple(a, k):
    for j in range(a.size):
        if a[j] % k == 0:
            return j
    return -1


@cuda.jit
def control(a, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    s = 0
    for j in range(10, 0, -2):  # negative step
        if j == i % 10:
            continue
        if j < i % 7:
            break
        s += j
    out[i, 0] = s
    n = 0
    while True:
        n += 1
        if n * n > i:
            break
    out[i, 1] = n
    out[i, 2] = first_multiple(a, i + 1)
    for q in range(i % 3):  # noqa: B007  (read after the loop)
        pass
    out[i, 3] = q if i % 3 else -7  # Python: the loop variable keeps its last value


def _control_ref(a, i):
    s = 0
    for j in range(10, 0, -2):
        if j == i % 10:
            continue
        if j < i % 7:
            break
        s += j
    n = 0
    while True:
        n += 1
        if n * n > i:
            break
    fm = next((j for j in range(a.size) if a[j] % (i + 1) == 0), -1)
    q = (i % 3) - 1 if i % 3 else -7
    return [s, n, fm, q]


def test_divergent_control_flow():
    a = np.array([7, 9, 4, 25, 6, 13, 35, 22], np.int64)
    out = np.zeros((50, 4), np.int64)
    with simulate():
        control[2, 32](a, out)
    ref = np.array([_control_ref(a, i) for i in range(50)])
    np.testing.assert_array_equal(out, ref)


# ---- arithmetic ------------------------------------------------------------------------------

@cuda.jit
def arith(x, y, fx, fy, out, fout):
    i = cuda.grid(1)
    a, b = x[i], y[i]
    out[i, 0] = a // b
    out[i, 1] = a % b
    out[i, 2] = min(a, b)
    out[i, 3] = max(a, b, 0)
    out[i, 4] = abs(a)
    out[i, 5] = a ** 3
    out[i, 6] = (a << 2) >> 1
    out[i, 7] = int(fx[i])
    p, q = fx[i], fy[i]
    fout[i, 0] = p // q
    fout[i, 1] = p % q
    fout[i, 2] = math.sqrt(abs(p))
    fout[i, 3] = p ** 2
    fout[i, 4] = math.floor(p)
    fout[i, 5] = min(p, q)


def test_python_arithmetic():
    rng = np.random.default_rng(9)
    x = rng.integers(-50, 50, 64).astype(np.int32)
    y = rng.integers(1, 9, 64).astype(np.int32) * rng.choice([-1, 1], 64).astype(np.int32)
    fx = rng.standard_normal(64) * 10
    fy = rng.standard_normal(64) + 3
    out = np.zeros((64, 8), np.int32)
    fout = np.zeros((64, 6))
    with simulate():
        arith[2, 32](x, y, fx, fy, out, fout)
    xi, yi = x.astype(np.int64), y.astype(np.int64)
    np.testing.assert_array_equal(out[:, 0], xi // yi)
    np.testing.assert_array_equal(out[:, 1], xi % yi)
    np.testing.assert_array_equal(out[:, 2], np.minimum(x, y))
    np.testing.assert_array_equal(out[:, 3], np.maximum(np.maximum(x, y), 0))
    np.testing.assert_array_equal(out[:, 4], np.abs(x))
    np.testing.assert_array_equal(out[:, 5], xi ** 3)
    np.testing.assert_array_equal(out[:, 6], (xi << 2) >> 1)
    np.testing.assert_array_equal(out[:, 7], np.trunc(fx))
    np.testing.assert_allclose(fout[:, 0], np.floor(fx / fy))
    np.testing.assert_allclose(fout[:, 1], np.mod(fx, fy), atol=1e-12)
    np.testing.assert_allclose(fout[:, 2], np.sqrt(np.abs(fx)))
    np.testing.assert_allclose(fout[:, 3], fx ** 2)
    np.testing.assert_allclose(fout[:, 4], np.floor(fx))
    np.testing.assert_allclose(fout[:, 5], np.minimum(fx, fy))


# ---- threads, warps and arrays ---------------------------------------------------------------

@cuda.jit
def ids3(out):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + \
        cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    g = t + (cuda.blockIdx.x + cuda.blockIdx.y * cuda.gridDim.x) * (
        cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z)
    out[g, 0] = cuda.laneid
    out[g, 1] = cuda.shfl_sync(FULL, t, 0)  # lane 0 of the warp: the warp's first thread
    out[g, 2] = cuda.ballot_sync(FULL, t % 3 == 0)


def test_warps_follow_the_linear_thread_id():
    out = np.zeros((2 * 2 * 96, 3), np.int64)
    with simulate():
        ids3[(2, 2), (8, 4, 3)](out)
    t = np.tile(np.arange(96), 4)
    np.testing.assert_array_equal(out[:, 0], t % 32)
    np.testing.assert_array_equal(out[:, 1], t - t % 32)
    bits = sum(1 << k for k in range(32) if k % 3 == 0)
    other = sum(1 << k for k in range(32) if (k + 32) % 3 == 0)
    third = sum(1 << k for k in range(32) if (k + 64) % 3 == 0)
    np.testing.assert_array_equal(out[:96, 2], np.repeat([bits, other, third], 32))


@cuda.jit
def views(a, out, tmp):
    i = cuda.grid(1)
    row = a[i]  # a row view per thread
    loc = cuda.local.array(4, np.float64)
    for k in range(4):
        loc[k] = row[k] * 2.0
    tail = row[1:]
    out[i, 0] = tail[0] + loc[3]
    out[i, 1] = len(tail)
    col = a[:, 2]
    out[i, 2] = col[i]
    sub = tmp[::2]
    sub[i] = i


def test_views_local_arrays_and_strides():
    base = np.arange(64, dtype=np.float64).reshape(8, 8)
    a = base[:, ::2]  # a strided argument
    out = np.zeros((8, 3))
    tmp = np.zeros(16)
    with simulate():
        views[1, 8](a, out, tmp)
    np.testing.assert_array_equal(out[:, 0], a[:, 1] + 2 * a[:, 3])
    np.testing.assert_array_equal(out[:, 1], 3)
    np.testing.assert_array_equal(out[:, 2], a[:, 2])
    np.testing.assert_array_equal(tmp[::2], np.arange(8))
    np.testing.assert_array_equal(tmp[1::2], 0)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_cpu_torch_tensors_are_modified_in_place():
    import torch

    out = torch.zeros(40, dtype=torch.int64)
    with simulate():
        fill_tid[2, 32](out)
    assert out.tolist() == list(range(40))
