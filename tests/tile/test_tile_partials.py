"""A running sum read only reduced is kept reduced (ir/partials.py): ``acc += x`` in a loop and
``ct.sum(acc, axis)`` after it become ``acc_sum += ct.sum(x, axis)``, where the sum is done in
each thread's registers (leading axes) or the accumulator is large. The same statements run in
the simulator and on the GPU (``target``), against NumPy in float64 with fresh inputs and
poisoned outputs; kernels where the sum must not move keep their form."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def column_sums(DW, DB, FW, FB, TM: ConstInt, TN: ConstInt):
    """cuTile's LayerNorm dW/dB reduction as its sample writes it: (TM, TN) partial sums over
    the row tiles, summed over axis 0 after the loop."""
    bid = ct.bid(0)
    n = ct.num_tiles(DW, axis=0, shape=(TM, TN))
    dw = ct.zeros((TM, TN), dtype=ct.float32)
    db = ct.zeros((TM, TN), dtype=ct.float32)
    for i in range(n):
        dw += ct.load(DW, index=(i, bid), shape=(TM, TN), padding_mode=ZERO)
        db = ct.load(DB, index=(i, bid), shape=(TM, TN), padding_mode=ZERO) + db
    ct.store(FW, index=(bid,), tile=ct.sum(dw, axis=0))
    ct.store(FB, index=(bid,), tile=ct.sum(db, axis=0))


@ct.kernel
def row_sums_big(X, Out, TM: ConstInt, TN: ConstInt):
    """A large (TM, TN) running total summed over its rows (axis 1) after the loop: the sum
    crosses threads, kept reduced because the total is 64 registers a thread and more. The
    initial value is the first tile itself (an assignment that is not zeros)."""
    bid = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(TM, TN))
    acc = ct.load(X, index=(bid, 0), shape=(TM, TN), padding_mode=ZERO)
    for j in range(1, n):
        acc = acc + ct.load(X, index=(bid, j), shape=(TM, TN), padding_mode=ZERO)
    ct.store(Out, index=(bid,), tile=ct.sum(acc, axis=1))


@ct.kernel
def row_sums_small(X, Out, TN: ConstInt):
    """LayerNorm's forward mean: a (1, TN) running total summed over axis 1 after the loop.
    The sum crosses threads and the total is small: it stays as written."""
    bid = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(1, TN))
    acc = ct.full((1, TN), 0, dtype=ct.float32)
    for j in range(n):
        acc += ct.load(X, index=(bid, j), shape=(1, TN), padding_mode=ZERO)
    ct.store(Out, index=(bid,), tile=ct.sum(acc, axis=1))


@ct.kernel
def total_also_stored(X, Out, Total, TM: ConstInt, TN: ConstInt):
    """The running total is stored as well as summed: it must exist, it stays."""
    bid = ct.bid(0)
    n = ct.num_tiles(X, axis=0, shape=(TM, TN))
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for i in range(n):
        acc += ct.load(X, index=(i, bid), shape=(TM, TN), padding_mode=ZERO)
    ct.store(Total, index=(0, bid), tile=acc)
    ct.store(Out, index=(bid,), tile=ct.sum(acc, axis=0))


def _cols(m=64, n=2048):
    z = np.zeros
    return z((m, n), np.float32), z((m, n), np.float32), z(n, np.float32), z(n, np.float32)


def test_column_sums_are_taken_in_the_loop():
    src = column_sums.cuda_source(*_cols(), 32, 1024)
    head, rest = src.split("for (", 1)
    body, tail = rest.split("\n  }\n", 1)
    assert "tile_f32_32x1024 dw" not in src and "tile_f32_32x1024 db" not in src
    assert "dw_sum = tt::tile::full<tile_f32_1024>(0.0f);" in head
    assert body.count("reduce_cols<tt::tile::SUM, 1024>") == 2
    assert "reduce" not in tail


def test_a_small_total_summed_across_threads_stays():
    src = row_sums_small.cuda_source(np.zeros((4, 4096), np.float32),
                                     np.zeros(4, np.float32), 1024)
    body = src.split("for (", 1)[1].split("\n  }\n", 1)[0]
    assert "reduce" not in body and "tt::tile::add(acc" in body


def test_a_total_read_otherwise_stays():
    z = np.zeros
    src = total_also_stored.cuda_source(z((64, 2048), np.float32), z(2048, np.float32),
                                        z((32, 2048), np.float32), 32, 1024)
    body = src.split("for (", 1)[1].split("\n  }\n", 1)[0]
    assert "reduce" not in body


def test_a_large_total_is_summed_each_step():
    src = row_sums_big.cuda_source(np.zeros((256, 1024), np.float32),
                                   np.zeros(256, np.float32), 64, 256)
    body = src.split("for (", 1)[1].split("\n  }\n", 1)[0]
    assert "reduce" in body and "acc_sum = tt::tile::add(acc_sum" in body


@pytest.mark.parametrize(("m", "n"), [(64, 2048), (100, 1024), (32, 3000), (0, 1024)])
def test_column_sums(target, rng, m, n):
    dw = rng.standard_normal((m, n)).astype(np.float32)
    db = rng.standard_normal((m, n)).astype(np.float32)
    fw, fb = (target.to_device(poison(n, np.float32)) for _ in range(2))
    target.launch_tile(column_sums, (-(-n // 1024),), target.to_device(dw),
                       target.to_device(db), fw, fb, 32, 1024)
    np.testing.assert_allclose(target.to_host(fw), dw.astype(np.float64).sum(0),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(target.to_host(fb), db.astype(np.float64).sum(0),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("m", "n"), [(128, 1024), (64, 1000), (64, 256)])
def test_row_sums(target, rng, m, n):
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = target.to_device(poison(m, np.float32))
    target.launch_tile(row_sums_big, (m // 64,), target.to_device(x), out, 64, 256)
    np.testing.assert_allclose(target.to_host(out), x.astype(np.float64).sum(1),
                               rtol=1e-5, atol=1e-4)
    small = target.to_device(poison(m, np.float32))
    target.launch_tile(row_sums_small, (m,), target.to_device(x), small, 256)
    np.testing.assert_allclose(target.to_host(small), x.astype(np.float64).sum(1),
                               rtol=1e-5, atol=1e-4)


def test_a_total_read_otherwise(target, rng):
    x = rng.standard_normal((80, 2048)).astype(np.float32)
    out = target.to_device(poison(2048, np.float32))
    total = target.to_device(poison((32, 2048), np.float32))
    target.launch_tile(total_also_stored, (2,), target.to_device(x), out, total, 32, 1024)
    xp = np.concatenate([x, np.zeros((16, 2048), np.float32)]).astype(np.float64)
    np.testing.assert_allclose(target.to_host(total), xp.reshape(3, 32, 2048).sum(0),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(target.to_host(out), x.astype(np.float64).sum(0),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    assert compile_cubin(column_sums, *_cols(), 32, 1024, arch=arch)[:4] == b"\x7fELF"
    assert compile_cubin(row_sums_big, np.zeros((256, 1024), np.float32),
                         np.zeros(256, np.float32), 64, 256, arch=arch)[:4] == b"\x7fELF"
