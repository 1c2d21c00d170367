"""A name re-bound to a tile of another shape or dtype (cuTile treats each assignment as a new
value), in straight-line code, inside loops and branches; ``ct.extract``, ``ct.insert`` and
``ct.cat``. Each numeric test runs in the simulator and on the GPU (the ``target`` fixture:
the GPU run is marked ``gpu``) with fresh random inputs and NaN-poisoned outputs; every kernel
compiles to sm_80 and sm_90 cubins; the refused forms are compile errors at the right line."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile
import threadtile.tile as ct
from threadtile.errors import KernelCompileError, TileTypeError

ConstInt = ct.Constant[int]


# ---- kernels -----------------------------------------------------------------------------------

@ct.kernel
def batch_matmul(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """cuTile's BatchMatMul: 3-d loads re-bound to their 2-d reshapes inside the k loop."""
    pb, px, py = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((tm, tn), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(A.shape[2], tk)):
        a = ct.load(A, index=(pb, px, k), shape=(1, tm, tk), padding_mode=ct.PaddingMode.ZERO)
        a = ct.reshape(a, (tm, tk))
        b = ct.load(B, index=(pb, k, py), shape=(1, tk, tn), padding_mode=ct.PaddingMode.ZERO)
        b = b.reshape((tk, tn))
        acc = ct.mma(a, b, acc=acc)
    acc = ct.astype(acc, C.dtype)           # float32 -> the output's dtype
    acc = ct.reshape(acc, (1, tm, tn))      # 2-d -> 3-d
    ct.store(C, index=(pb, px, py), tile=acc)


@ct.kernel
def retype_in_loop(x, y, n: int, T: ConstInt):
    """A dtype change and a shape change inside the body, not carried: each iteration starts
    afresh; the carried ``acc`` keeps its type."""
    i = ct.bid(0)
    acc = ct.zeros((T,), ct.float32)
    for j in range(n):
        t = ct.load(x, index=(i, j), shape=(1, T))   # (1, T) float32
        t = t.astype(ct.float16)                      # float16
        t = t.reshape((T,))                           # (T,)
        t = t.astype(ct.float32) * 2.0                # back to float32
        acc += t
    ct.store(y, index=(i, 0), tile=acc.reshape((1, T)))


@ct.kernel
def retype_in_branch(x, y, T: ConstInt):
    """Re-bound in one branch and used there; after the if the name is re-bound again before
    any read (the type differed between the paths)."""
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(1, T))
    if i % 2 == 0:
        t = t.reshape((T,)) + 1.0
        ct.store(y, index=(i, 0), tile=t.reshape((1, T)))
    else:
        t = t * 3.0
        ct.store(y, index=(i, 0), tile=t)
    t = ct.load(x, index=(i, 0), shape=(1, T))
    ct.store(y, index=(i, 1), tile=t - 1.0)


@ct.kernel
def retype_in_both_branches(x, y, T: ConstInt):
    """Both branches re-bind to one new type: after the if, the name holds it on every path."""
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(1, T))
    if i % 2 == 0:
        t = t.reshape((T,)) + 1.0
    else:
        t = t.reshape((T,)) * 2.0
    ct.store(y, index=(i, 0), tile=t.reshape((1, T)))


@ct.kernel
def tuple_carried(x, y, n: int):
    """A tuple of tiles re-bound from its own items: every item is evaluated first."""
    t = ct.load(x, index=(0,), shape=(16,)), ct.load(x, index=(1,), shape=(16,))
    for _ in range(n):
        t = t[1], t[0] + t[1]
    ct.store(y, index=(0,), tile=t[0])
    ct.store(y, index=(1,), tile=t[1])


@ct.kernel
def restored_in_loop(x, y, n: int, T: ConstInt):
    """Carried around the loop, re-typed inside it and given back its type before the
    iteration ends; a while loop and a continue in the mix."""
    i = ct.bid(0)
    acc = ct.load(x, index=(i,), shape=(T,))
    j = 0
    while j < n:
        j += 1
        acc = acc.reshape((T // 2, 2))
        acc = acc * 2.0
        acc = acc.reshape((T,))
        if j == 2:
            continue
        acc = acc.astype(ct.float16)
        acc = acc.astype(ct.float32) + 1.0
    ct.store(y, index=(i,), tile=acc)


@ct.kernel
def extract_cat(x, y, TX: ConstInt, TY: ConstInt):
    """cuTile's test_extract: two halves changed and joined back."""
    tx = ct.load(x, index=(ct.bid(0), 0), shape=(TX, TY))
    top = ct.extract(tx, index=(0, 0), shape=(TX // 2, TY))
    bottom = tx.extract((1, 0), (TX // 2, TY))
    top += 5.0
    bottom -= 3.0
    tx = ct.cat((top, bottom), axis=0)
    ct.store(y, index=(ct.bid(0), 0), tile=tx)


@ct.kernel
def extract_runtime(x, y, i: int, j: int, T: ConstInt):
    """A subtile at a runtime cell, one element of it as a 0-d tile, and cat along the last
    axis (-1) of two tiles."""
    tx = ct.load(x, index=(0, 0), shape=(T, T))
    sub = ct.extract(tx, index=(i, j), shape=(T // 4, T // 2))
    one = ct.extract(sub, index=(1, 0), shape=())
    both = ct.cat((sub, sub + one.item()), -1)
    ct.store(y, index=(0, 0), tile=both)


@ct.kernel
def insert_subtile(x, v, y, i: int, j: int):
    tx = ct.load(x, index=(0, 0), shape=(32, 64))
    tv = ct.load(v, index=(0, 0), shape=(8, 16))
    tx = ct.insert(tx, (i, j), tv)
    tx = tx.insert((0, 0), ct.full((), -1.0, ct.float32))
    ct.store(y, index=(0, 0), tile=tx)


@ct.kernel
def cat_1d_int(out, axis: ConstInt):
    a = ct.arange(16, dtype=ct.int32)
    b = ct.full((16,), 7, ct.int32)
    c = ct.cat((a, b), axis)
    c = ct.cat((c,), 0)   # one tile: itself
    ct.store(out, index=(0,), tile=c)


@ct.kernel
def attention(Q, KT, V, Out, scale: float, TM: ConstInt, TN: ConstInt, D: ConstInt,
              CAUSAL: ct.Constant[bool]):
    """Attention with an online softmax, re-binding as cuTile's AttentionFMHA does: 3-d loads
    to their 2-d reshapes in the loop, a bool mask re-bound to its float32 form inside a
    branch, the float32 weights re-bound to float16 for the second mma, row offsets re-bound
    from (TM,) to (TM, 1)."""
    bm, bh = ct.bid(0), ct.bid(1)
    q = ct.load(Q, index=(bh, bm, 0), shape=(1, TM, D)).reshape((TM, D))
    rows = bm * TM + ct.arange(TM, dtype=ct.int32)
    rows = rows[:, None]
    m = ct.full((TM, 1), -np.inf, ct.float32)
    total = ct.zeros((TM, 1), ct.float32)
    acc = ct.zeros((TM, D), ct.float32)
    for j in range(ct.cdiv(KT.shape[2], TN)):
        k = ct.load(KT, index=(bh, 0, j), shape=(1, D, TN))
        k = k.reshape((D, TN))
        s = ct.mma(q, k, ct.zeros((TM, TN), ct.float32))
        if CAUSAL and (j + 1) * TN > bm * TM:
            cols = j * TN + ct.arange(TN, dtype=ct.int32)
            mask = cols[None, :] <= rows
            mask = ct.where(mask, 0.0, -np.inf)
            s = s + mask
        m_new = max(m, ct.max(s, axis=1, keepdims=True) * scale)
        p = ct.exp(s * scale - m_new)
        alpha = ct.exp(m - m_new)
        total = total * alpha + ct.sum(p, axis=1, keepdims=True)
        acc = acc * alpha
        p = p.astype(V.dtype)
        v = ct.load(V, index=(bh, j, 0), shape=(1, TN, D)).reshape((TN, D))
        acc = ct.mma(p, v, acc)
        m = m_new
    acc = acc / total
    acc = acc.reshape((1, TM, D)).astype(Out.dtype)
    ct.store(Out, index=(bh, bm, 0), tile=acc)


def _doubled_rows(t, n):
    """A helper re-binding its tile parameter: to its own type in a loop, then to another."""
    t = t * 2.0
    for _ in range(n):
        t = t + 1.0
    t = t.reshape((4, 16))
    return t


@ct.kernel
def helper_rebinds_parameter(x, y, n: int):
    t = ct.load(x, index=(ct.bid(0),), shape=(64,))
    ct.store(y, index=(ct.bid(0), 0), tile=_doubled_rows(t, n))


# ---- numerics ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("batch", "m", "n", "k", "tm", "tn", "tk"),
                         [(2, 64, 64, 64, 32, 32, 16), (3, 50, 40, 70, 16, 32, 32)])
def test_batch_matmul(target, rng, batch, m, n, k, tm, tn, tk):
    a = rng.standard_normal((batch, m, k)).astype(np.float16)
    b = rng.standard_normal((batch, k, n)).astype(np.float16)
    c = target.to_device(poison((batch, m, n), np.float32))
    target.launch_tile(batch_matmul, (batch, ct.cdiv(m, tm), ct.cdiv(n, tn)),
                       target.to_device(a), target.to_device(b), c, tm, tn, tk)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # float16 products are exact in float32; the sums round in float32
    np.testing.assert_allclose(target.to_host(c), ref, rtol=1e-5, atol=1e-4 * np.sqrt(k))


def test_retype_in_loop(target, rng):
    rows, n, T = 4, 5, 64
    x = rng.standard_normal((rows, n * T)).astype(np.float32)
    y = target.to_device(poison((rows, T), np.float32))
    target.launch_tile(retype_in_loop, rows, target.to_device(x), y, n, T)
    x16 = x.astype(np.float16).astype(np.float64) * 2
    ref = x16.reshape(rows, n, T).sum(axis=1)
    np.testing.assert_allclose(target.to_host(y), ref, rtol=1e-5, atol=1e-5)


def test_retype_in_branch(target, rng):
    rows, T = 6, 32
    x = rng.standard_normal((rows, T)).astype(np.float32)
    y = target.to_device(poison((rows, 2 * T), np.float32))
    target.launch_tile(retype_in_branch, rows, target.to_device(x), y, T)
    x64 = x.astype(np.float64)
    first = np.where((np.arange(rows) % 2 == 0)[:, None], x64 + 1.0, x64 * 3.0)
    ref = np.concatenate((first, x64 - 1.0), axis=1)
    np.testing.assert_allclose(target.to_host(y), ref.astype(np.float32), rtol=1e-6)


def test_retype_in_both_branches(target, rng):
    rows, T = 5, 64
    x = rng.standard_normal((rows, T)).astype(np.float32)
    y = target.to_device(poison((rows, T), np.float32))
    target.launch_tile(retype_in_both_branches, rows, target.to_device(x), y, T)
    ref = np.where((np.arange(rows) % 2 == 0)[:, None], x + np.float32(1), x * np.float32(2))
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_tuple_carried(target, rng):
    x = rng.standard_normal(32).astype(np.float32)
    y = target.to_device(poison(32, np.float32))
    target.launch_tile(tuple_carried, 1, target.to_device(x), y, 6)
    a, b = x[:16], x[16:]
    for _ in range(6):
        a, b = b, a + b
    np.testing.assert_array_equal(target.to_host(y), np.r_[a, b])


def test_restored_in_loop(target, rng):
    rows, n, T = 3, 4, 64
    x = rng.standard_normal((rows * T,)).astype(np.float32)
    y = target.to_device(poison((rows * T,), np.float32))
    target.launch_tile(restored_in_loop, rows, target.to_device(x), y, n, T)
    ref = x.copy()
    for j in range(1, n + 1):
        ref = ref * np.float32(2.0)
        if j != 2:
            ref = ref.astype(np.float16).astype(np.float32) + np.float32(1.0)
    np.testing.assert_array_equal(target.to_host(y), ref)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_extract_cat(target, rng, dtype):
    TX, TY, blocks = 64, 32, 3
    x = rng.standard_normal((blocks * TX, TY)).astype(dtype)
    y = target.to_device(poison(x.shape, dtype))
    target.launch_tile(extract_cat, blocks, target.to_device(x), y, TX, TY)
    h = TX // 2
    ref = x.astype(np.float64).reshape(blocks, TX, TY)
    ref = np.concatenate((ref[:, :h] + 5.0, ref[:, h:] - 3.0), axis=1).reshape(x.shape)
    np.testing.assert_array_equal(target.to_host(y), ref.astype(dtype))


@pytest.mark.parametrize(("i", "j"), [(0, 0), (3, 1), (2, 0)])
def test_extract_runtime_cell(target, rng, i, j):
    T = 32
    x = rng.standard_normal((T, T)).astype(np.float32)
    y = target.to_device(poison((T // 4, T), np.float32))
    target.launch_tile(extract_runtime, 1, target.to_device(x), y, i, j, T)
    sub = x[i * 8:(i + 1) * 8, j * 16:(j + 1) * 16]
    ref = np.concatenate((sub, sub + sub[1, 0]), axis=1)
    np.testing.assert_array_equal(target.to_host(y), ref)


def test_insert(target, rng):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    v = rng.standard_normal((8, 16)).astype(np.float32)
    y = target.to_device(poison(x.shape, np.float32))
    target.launch_tile(insert_subtile, 1, target.to_device(x), target.to_device(v), y, 2, 3)
    ref = x.copy()
    ref[16:24, 48:64] = v
    ref[0, 0] = -1.0
    np.testing.assert_array_equal(target.to_host(y), ref)


@pytest.mark.parametrize("axis", [0, -1])
def test_cat_1d(target, axis):
    out = target.to_device(poison((32,), np.int32))
    target.launch_tile(cat_1d_int, 1, out, axis)
    np.testing.assert_array_equal(target.to_host(out), np.r_[np.arange(16), np.full(16, 7)])


@pytest.mark.parametrize("causal", [False, True])
def test_attention(target, rng, causal):
    H, N, D, TM, TN = 2, 128, 32, 32, 32
    q, k, v = (rng.standard_normal((H, N, D)).astype(np.float16) for _ in range(3))
    o = target.to_device(poison((H, N, D), np.float16))
    scale = 1.0 / np.sqrt(D)
    kt = np.ascontiguousarray(k.transpose(0, 2, 1))
    target.launch_tile(attention, (N // TM, H), target.to_device(q), target.to_device(kt),
                       target.to_device(v), o, scale, TM, TN, D, causal)
    s = q.astype(np.float64) @ kt.astype(np.float64) * scale
    if causal:
        s = np.where(np.tril(np.ones((N, N), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = (p / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    # the weights are rounded to float16 for the second product, the output to float16
    np.testing.assert_allclose(target.to_host(o).astype(np.float64), ref, rtol=1e-2, atol=5e-3)


def test_helper_rebinds_its_parameter(target, rng):
    x = rng.standard_normal(128).astype(np.float32)
    y = target.to_device(poison((8, 16), np.float32))
    target.launch_tile(helper_rebinds_parameter, 2, target.to_device(x), y, 3)
    ref = x * np.float32(2)
    for _ in range(3):
        ref = ref + np.float32(1)  # rounded after each addition, as the kernel does
    np.testing.assert_array_equal(target.to_host(y), ref.reshape(8, 16))


def test_ir_shows_one_variable_per_type():
    f16 = np.zeros((2, 64, 64), np.float16)
    ir = batch_matmul.ir(f16, f16, f16, tm=32, tn=32, tk=16)
    assert "a: tile<float16, (1, 32, 16)>" in ir and "a_1: tile<float16, (32, 16)>" in ir
    # the batched k loop is one mma_loop (ir/kloop.py): its mma reads the re-bound versions
    assert "mma=tile.mma(a_1, b_1, acc)" in ir and "batch=True" in ir
    # (the cast and the reshape to 3-d stay in the accumulator's fragments: ir/fraglayout.py)
    assert "acc_1: tile<float16, (32, 32), mma>" in ir and \
        "acc_2: tile<float16, (1, 32, 32), mma>" in ir


# ---- cubins --------------------------------------------------------------------------------------

def _cases():
    f16, f32 = np.float16, np.float32
    z = np.zeros
    return [
        (batch_matmul, (z((2, 64, 64), f16), z((2, 64, 64), f16), z((2, 64, 64), f32)),
         {"tm": 32, "tn": 32, "tk": 16}),
        (retype_in_loop, (z((4, 256), f32), z((4, 64), f32), 4), {"T": 64}),
        (retype_in_branch, (z((4, 32), f32), z((4, 64), f32)), {"T": 32}),
        (restored_in_loop, (z(128, f32), z(128, f32), 3), {"T": 64}),
        (retype_in_both_branches, (z((4, 32), f32), z((4, 32), f32)), {"T": 32}),
        (extract_cat, (z((64, 32), f16), z((64, 32), f16)), {"TX": 64, "TY": 32}),
        (extract_runtime, (z((32, 32), f32), z((8, 32), f32), 1, 1), {"T": 32}),
        (insert_subtile, (z((32, 64), f32), z((8, 16), f32), z((32, 64), f32), 1, 1), {}),
        (cat_1d_int, (z(32, np.int32),), {"axis": 0}),
        (helper_rebinds_parameter, (z(128, f32), z((8, 16), f32), 2), {}),
        (attention, (z((2, 128, 32), f16), z((2, 32, 128), f16), z((2, 128, 32), f16),
                     z((2, 128, 32), f16), 0.125), {"TM": 32, "TN": 32, "D": 32,
                                                     "CAUSAL": True}),
    ]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", range(11), ids=["bmm", "loop", "branch", "restored",
                                                 "both-branches", "cat", "runtime", "insert",
                                                 "cat-1d", "helper", "attention"])
def test_compiles(arch, case):
    kernel, args, consts = _cases()[case]
    assert compile_cubin(kernel, *args, arch=arch, **consts)


def test_extract_cat_source_goes_through_the_scratch():
    f16 = np.zeros((64, 32), np.float16)
    src = extract_cat.cuda_source(f16, f16, TX=64, TY=32)
    assert "tt::tile::extract<tile_f16_32x32>(tx, 0LL, 0LL)" in src
    assert "tt::tile::extract<tile_f16_32x32>(tx, 1LL, 0LL)" in src
    assert "tx = tt::tile::cat<tile_f16_64x32, 0>(top, bottom);" in src
    assert "#define TT_SCRATCH_BYTES 4096" in src  # the 64x32 tile, or both halves


# ---- errors ------------------------------------------------------------------------------------

@ct.kernel
def carried_retyped(x, n: int):
    t = ct.zeros((16,), ct.float32)
    for _ in range(n):
        t = t.reshape((4, 4)) * 2.0
    ct.store(x, index=(0,), tile=t.reshape((16,)))


@ct.kernel
def carried_retyped_at_break(x, n: int):
    t = ct.zeros((16,), ct.float32)
    for j in range(n):
        t = t.astype(ct.float16)
        if j == 3:
            break
        t = t.astype(ct.float32)
    ct.store(x, index=(0,), tile=t)


@ct.kernel
def path_dependent(x, c: int):
    t = ct.zeros((16,), ct.float32)
    if c > 0:
        t = ct.zeros((16,), ct.float16)
    ct.store(x, index=(0,), tile=t)


@ct.kernel
def read_before_retyped_in_loop(x, n: int):
    for j in range(n):
        if j > 0:
            ct.store(x, index=(0, 0), tile=prev)  # noqa: F821 (the previous iteration's)
        prev = ct.load(x, index=(0, 0), shape=(1, 16))
        prev = prev.reshape((16,)).reshape((1, 16))
        prev = prev.reshape((16,))


@ct.kernel
def number_or_tile(x, c: int):
    t = 0.0
    if c > 0:
        t = ct.zeros((16,), ct.float32)
    ct.store(x, index=(0,), tile=t + 1.0)


@ct.kernel
def extract_out_of_grid(x):
    t = ct.load(x, index=(0, 0), shape=(16, 16))
    ct.store(x, index=(0, 0), tile=ct.extract(t, index=(2, 0), shape=(8, 16)))


@ct.kernel
def cat_three(x):
    t = ct.ones((4,), ct.float32)
    ct.store(x, index=(0,), tile=ct.cat((t, t, t, t), 0))


@ct.kernel
def cat_not_pow2(x):
    t = ct.ones((2, 2), ct.float32)
    u = ct.ones((4, 2), ct.float32)
    ct.store(x, index=(0, 0), tile=ct.cat((t, u), 0))


@ct.kernel
def cat_dtypes(x):
    t = ct.ones((2, 2), ct.float32)
    u = ct.ones((2, 2), ct.int32)
    ct.store(x, index=(0, 0), tile=ct.cat((t, u), 0))


@ct.kernel
def cat_axis(x):
    t = ct.ones((2, 2), ct.float32)
    ct.store(x, index=(0, 0), tile=ct.cat((t, t), 2))


@ct.kernel
def extract_not_dividing(x):
    t = ct.load(x, index=(0, 0), shape=(16, 16))
    ct.store(x, index=(0, 0), tile=ct.extract(t, index=(0, 0), shape=(32, 16)))


_F16 = (np.zeros(16, np.float32), 3)
_M = (np.zeros((16, 16), np.float32),)
_M3 = (np.zeros((16, 16), np.float32), 3)


@pytest.mark.parametrize(("kernel", "args", "line", "words"), [
    (carried_retyped, _F16, "t = t.reshape((4, 4)) * 2.0",
     ["'t' is carried around the loop", "tile<float32, (16)> when the loop starts",
      "tile<float32, (4, 4)> at the end of an iteration"]),
    (carried_retyped_at_break, _F16, "t = t.astype(ct.float16)",
     ["'t' is carried around the loop", "tile<float16, (16)> where the loop breaks"]),
    (path_dependent, _F16, "ct.store(x, index=(0,), tile=t)",
     ["tile<float32, (16)> on one path", "tile<float16, (16)> on another"]),
    (number_or_tile, _F16, "tile=t + 1.0)",
     ["'t' is float64 on one path", "tile<float32, (16)> on another"]),
    (read_before_retyped_in_loop, _M3, "tile=prev)",
     ["Use of potentially undefined variable `prev`", "assign 'prev' before the loop"]),
    (extract_out_of_grid, _M, "ct.extract(t, index=(2, 0)", ["index 2 is out of bounds"]),
    (extract_not_dividing, _M, "shape=(32, 16)", ["not divisible"]),
    (cat_three, (np.zeros(16, np.float32),), "ct.cat((t, t, t, t), 0)",
     ["cat() supports at most 2 tiles, got 4"]),
    (cat_not_pow2, _M, "ct.cat((t, u), 0)", ["Result tile shape must be power of 2"]),
    (cat_dtypes, _M, "ct.cat((t, u), 0)", ["same dtype"]),
    (cat_axis, _M, "ct.cat((t, t), 2)", ["axis 2 is out of range"]),
], ids=["carried", "carried-break", "path", "number-or-tile", "read-before", "extract-oob",
        "extract-divide", "cat-3", "cat-pow2", "cat-dtype", "cat-axis"])
def test_compile_errors(kernel, args, line, words):
    with pytest.raises(KernelCompileError) as e:
        kernel.cuda_source(*args)
    text = str(e.value)
    assert line in text, text
    for w in words:
        assert w in text, text


def test_runtime_cell_outside_the_grid_is_reported_by_the_simulator():
    import threadtile as tt
    from threadtile.errors import OutOfBoundsError
    x = np.zeros((32, 32), np.float32)
    y = np.zeros((8, 32), np.float32)
    with tt.simulate(), pytest.raises(OutOfBoundsError, match="outside the grid"):
        extract_runtime[1](x, y, 4, 0, 32)


# ---- cuTile: a Python int that becomes a runtime value takes a concrete type --------------------

@ct.kernel
def _loop_carried_int(n: ct.Constant[int], x):
    t = n
    for _ in range(2):  # carried by the loop: t is a runtime int32 (n fits in one)
        t += 1
    ct.scatter(x, (), t)


@ct.kernel
def _straight_line_int(n: ct.Constant[int], out):
    t = (n + 2) * 3  # reassigned outside any loop or branch: still a Python int
    t = -t
    a = ct.arange(4, dtype=ct.int8)
    ct.static_assert((a - t).dtype == ct.int8)
    ct.scatter(out, ct.arange(4, dtype=ct.int32), a - t)


@pytest.mark.parametrize("dtype, refused", [(np.int16, True), (np.int32, False),
                                            (np.int64, False), (np.uint64, True)])
def test_a_loop_carried_python_int_is_int32(dtype, refused):
    x = np.zeros((), dtype)
    with threadtile.simulate():
        if refused:
            with pytest.raises(TileTypeError, match="cannot implicitly cast int32"):
                ct.launch(None, (1,), _loop_carried_int, (5, x))
        else:
            ct.launch(None, (1,), _loop_carried_int, (5, x))
            assert int(x) == 7


def test_a_python_int_reassigned_in_straight_line_code_stays_loose():
    out = np.zeros(4, np.int32)
    with threadtile.simulate():
        ct.launch(None, (1,), _straight_line_int, (5, out))
    assert out.tolist() == [21, 22, 23, 24]
