"""Loop-invariant tile operations leave their loops (ir/licm.py): the moved code runs once, the
results are those of the loop as written (simulator and GPU, the ``target`` fixture), and what
may raise or is not invariant stays."""

import numpy as np
from conftest import poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def gathered_rows(A, rows, Out, n: int, T: ConstInt):
    """Sums ``n`` column blocks of the rows ``rows`` names; the row indices' broadcast (through
    shared memory) is written inside the loop, where it is used."""
    r = ct.load(rows, index=(0,), shape=(T,))
    acc = ct.zeros((T, T), ct.float32)
    for k in range(n):
        cols = k * T + ct.arange(T, dtype=ct.int32)
        idx = r[:, None] + 0 * cols[None, :]
        acc = acc + ct.gather(A, (idx, cols[None, :] + 0 * idx))
    ct.store(Out, index=(0, 0), tile=acc)


@ct.kernel
def divides_in_loop(x, out, d: int, n: int):
    t = ct.load(x, index=(0,), shape=(16,))
    acc = ct.zeros((16,), ct.int32)
    for _ in range(n):
        acc = acc + t // d  # (may raise: stays in the loop, which may not run)
    ct.store(out, index=(0,), tile=acc)


def test_invariants_leave_the_loop(target, rng):
    T, n = 16, 3
    a = rng.standard_normal((64, n * T)).astype(np.float32)
    rows = rng.integers(0, 64, T).astype(np.int32)
    out = target.to_device(poison((T, T), np.float32))
    target.launch_tile(gathered_rows, 1, target.to_device(a), target.to_device(rows), out, n, T)
    ref = a[rows].astype(np.float64).reshape(T, n, T).sum(axis=1)
    np.testing.assert_allclose(target.to_host(out), ref, rtol=1e-5, atol=1e-5)


def test_what_moves():
    z = np.zeros
    src = gathered_rows.cuda_source(z((64, 48), np.float32), z(16, np.int32),
                                    z((16, 16), np.float32), 3, T=16)
    loop = src[src.index("for (int64_t k"):]
    loop = loop[:loop.index("\n  }\n")]
    head = src[:src.index("for (int64_t k")]
    # the row indices' broadcast depends on nothing the loop changes: before it, once
    assert "broadcast_smem<16, 16>" in head and "broadcast_smem" not in loop
    assert "tt::tile::gather<" in loop and "arange" not in loop
    src = divides_in_loop.cuda_source(z(16, np.int32), z(16, np.int32), 3, 0)
    loop = src[src.index("for ("):]
    assert "floordiv" in loop


def test_a_loop_that_does_not_run_raises_nothing(target):
    x = np.arange(16, dtype=np.int32)
    out = target.to_device(poison(16, np.int32))
    # n = 0: the division by zero never runs
    target.launch_tile(divides_in_loop, 1, target.to_device(x), out, 0, 0)
    np.testing.assert_array_equal(target.to_host(out), 0)
