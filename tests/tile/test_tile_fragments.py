"""Tiles kept in the tensor cores' fragments between multiplies (ir/fraglayout.py,
tile/fragments.h): the code after an ``mma`` — elementwise operations, reductions along the rows
and their broadcasts back, casts — and the next ``mma`` reading its A operand from registers, as
attention's online softmax is written in cuTile's style. Each numeric test runs in the simulator
and on the GPU (the ``target`` fixture) with fresh random inputs and NaN-poisoned outputs
against NumPy in float64; every kernel compiles to sm_80 and sm_90 cubins; the generated code is
checked for the layouts chosen."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct
from threadtile.runtime import nvrtc

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def flash(Q, K, V, Out, scale: float, TM: ConstInt, TN: ConstInt, D: ConstInt,
          GROUP: ConstInt, CAUSAL: ConstBool):
    """Attention over (batch * heads, seq, D) arrays, K given as (heads, seq, D) and read
    transposed by the load's order; GROUP query heads share a K/V head; exp2 with the scale
    folded in, as FlashAttention writes it."""
    bm, bh = ct.bid(0), ct.bid(1)
    kh = bh // GROUP
    q = ct.load(Q, index=(bh, bm, 0), shape=(1, TM, D)).reshape((TM, D))
    rows = (bm * TM + ct.arange(TM, dtype=ct.int32))[:, None]
    m_i = ct.full((TM, 1), -np.inf, dtype=ct.float32)
    l_i = ct.full((TM, 1), 0.0, dtype=ct.float32)
    acc = ct.full((TM, D), 0.0, dtype=ct.float32)
    qk_scale = scale * 1.4426950408889634
    n = ct.cdiv(K.shape[1], TN)
    if CAUSAL:
        n = min(n, ct.cdiv((bm + 1) * TM, TN))
    for j in range(n):
        k = ct.load(K, index=(kh, 0, j), shape=(1, D, TN), order=(0, 2, 1)).reshape((D, TN))
        qk = ct.mma(q, k, ct.full((TM, TN), 0.0, dtype=ct.float32))
        if CAUSAL and (j + 1) * TN > bm * TM:
            cols = j * TN + ct.arange(TN, dtype=ct.int32)
            qk = qk + ct.where(cols[None, :] <= rows, 0.0, -np.inf)
        m_ij = max(m_i, ct.max(qk, axis=-1, keepdims=True) * qk_scale)
        p = ct.exp2(qk * qk_scale - m_ij)
        alpha = ct.exp2(m_i - m_ij)
        l_i = l_i * alpha + ct.sum(p, axis=-1, keepdims=True)
        acc = acc * alpha
        v = ct.load(V, index=(kh, j, 0), shape=(1, TN, D)).reshape((TN, D))
        acc = ct.mma(p.astype(Q.dtype), v, acc)
        m_i = m_ij
    out = (acc / l_i).reshape((1, TM, D)).astype(Out.dtype)
    ct.store(Out, index=(bh, bm, 0), tile=out)


def _softmax_of_product(A, B, Out, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    """softmax(A @ B) along the rows, one (TM, TN) tile per block, stored from fragments."""
    i = ct.bid(0)
    a = ct.load(A, index=(i, 0), shape=(TM, TK))
    b = ct.load(B, index=(0, 0), shape=(TK, TN))
    s = ct.mma(a, b, ct.zeros((TM, TN), ct.float32))
    e = ct.exp(s - ct.max(s, axis=1, keepdims=True))
    ct.store(Out, index=(i, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


softmax_of_product = ct.kernel(_softmax_of_product)
# on 8 warps a 64-row tile does not give each warp whole rows (its rows stay blocked)
softmax_of_product_8w = ct.kernel(_softmax_of_product, num_warps=8)


@ct.kernel
def two_products(A, B, V, Out, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    """exp(A @ B - rowmax) @ (2 V): the first product's fragments are the second's A operand
    in registers; its B is computed (not loaded), so it is staged through the scratch."""
    i = ct.bid(0)
    a = ct.load(A, index=(i, 0), shape=(TM, TK))
    s = ct.mma(a, ct.load(B, index=(0, 0), shape=(TK, TN)), ct.zeros((TM, TN), ct.float32))
    p = ct.exp(s - ct.max(s, axis=1, keepdims=True)).astype(ct.float16)
    v = ct.load(V, index=(0, 0), shape=(TN, TK)) * 2
    ct.store(Out, index=(i, 0), tile=ct.mma(p, v, ct.zeros((TM, TK), ct.float32)))


def _attention_ref(q, k, v, scale, group, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    kk = np.repeat(k, group, axis=0)
    vv = np.repeat(v, group, axis=0)
    s = np.einsum("hqd,hkd->hqk", q, kk) * scale
    if causal:
        sq, sk = s.shape[1:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("hqk,hkd->hqd", p / p.sum(axis=-1, keepdims=True), vv)


_ATTN = [  # (heads, group, seq, TM, TN, D, causal)
    (2, 1, 256, 64, 64, 64, False),
    (4, 2, 256, 128, 64, 64, True),
    (2, 1, 256, 128, 128, 64, False),
    (2, 1, 128, 64, 32, 128, True),
]


@pytest.mark.parametrize(("heads", "group", "seq", "TM", "TN", "D", "causal"), _ATTN)
def test_flash_attention(target, rng, heads, group, seq, TM, TN, D, causal):
    if target.name == "sim" and TM * TN * D > 64 * 64 * 64:
        pytest.skip("the simulator runs the smaller shapes (the GPU runs all)")
    q = rng.standard_normal((heads, seq, D)).astype(np.float16)
    k = rng.standard_normal((heads // group, seq, D)).astype(np.float16)
    v = rng.standard_normal((heads // group, seq, D)).astype(np.float16)
    out = target.to_device(poison((heads, seq, D), np.float16))
    scale = 1 / np.sqrt(D)
    target.launch_tile(flash, (seq // TM, heads), target.to_device(q), target.to_device(k),
                       target.to_device(v), out, scale, TM, TN, D, group, causal)
    ref = _attention_ref(q, k, v, scale, group, causal)
    # P rounds to float16 before the second product (relative 2**-11), the output too
    np.testing.assert_allclose(target.to_host(out).astype(np.float64), ref, atol=6e-3,
                               rtol=6e-3)


@pytest.mark.parametrize("kernel", [softmax_of_product, softmax_of_product_8w],
                         ids=["4-warps", "8-warps"])
def test_softmax_of_product(target, rng, kernel):
    TM, TN, TK = 64, 64, 32
    a = rng.standard_normal((2 * TM, TK)).astype(np.float16)
    b = rng.standard_normal((TK, TN)).astype(np.float16)
    out = target.to_device(poison((2 * TM, TN), np.float32))
    target.launch_tile(kernel, 2, target.to_device(a), target.to_device(b), out, TM, TN, TK)
    s = a.astype(np.float64) @ b.astype(np.float64)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(target.to_host(out), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


def test_a_operand_in_registers_b_computed(target, rng):
    TM, TN, TK = 64, 32, 32
    a = (rng.standard_normal((2 * TM, TK)) / 4).astype(np.float16)
    b = (rng.standard_normal((TK, TN)) / 4).astype(np.float16)
    v = rng.standard_normal((TN, TK)).astype(np.float16)
    out = target.to_device(poison((2 * TM, TK), np.float32))
    target.launch_tile(two_products, 2, target.to_device(a), target.to_device(b),
                       target.to_device(v), out, TM, TN, TK)
    s = a.astype(np.float64) @ b.astype(np.float64)
    # P rounds to float16 before the second product, as the kernel says (an exponential one
    # float32 ulp away may round to the next float16: 2**-11 of a term, times 2 |v|)
    p = np.exp(s - s.max(axis=1, keepdims=True)).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(target.to_host(out), p @ (2 * v.astype(np.float64)),
                               rtol=1e-3, atol=8e-3)
    src = two_products.cuda_source(a, b, v, np.zeros((2 * TM, TK), np.float32), TM=TM, TN=TN,
                                   TK=TK)
    assert "tile_f16_64x32_mma" in src and "to_blocked" not in src


# ---- the layouts chosen ----------------------------------------------------------------------

def _flash_args(TM=128, TN=64, D=64):
    z = np.zeros
    f16 = np.float16
    return ((z((2, 256, D), f16), z((2, 256, D), f16), z((2, 256, D), f16),
             z((2, 256, D), f16), 0.125), {"TM": TM, "TN": TN, "D": D, "GROUP": 1,
                                           "CAUSAL": True})


def test_softmax_stays_in_registers():
    args, consts = _flash_args()
    src = flash.cuda_source(*args, **consts)
    body = src[src.index("for (int32_t j"):]
    body = body[:body.index("\n  }\n")]
    # the rows' max and sum by shuffles, their broadcasts in registers, P straight into the
    # second product; the causal mask in fragments: the query positions (rows) converted
    # once before the loop, the key positions (cols, 64 values) where computed, their
    # broadcasts, compare and select in registers
    assert body.count("reduce_mma_rows<tt::tile::MAX>") == 1
    assert body.count("reduce_mma_rows<tt::tile::SUM>") == 1
    assert "broadcast_frag<tile_f32_128x64_mma>" in body
    assert "to_blocked" not in body and "to_mma(" not in body
    assert body.count("to_mma_cols(") == 1 and "to_mma_rows(" not in body
    assert "broadcast_frag<tile_i32_128x64_mma>(rows)" in body
    assert "tile_b8_128x64_mma _t9 = tt::tile::le(" in body
    assert "tile_i32_128x1_mmarow rows = tt::tile::to_mma_rows(" in src
    # K (read transposed) and V straight into shared memory, both copies issued first: the
    # first product waits for K's alone
    # (on sm_90a builds without the portable loops by TMA: load_operand_tma)
    assert body.count("load_operand_tma<") == 2
    # (laid out for wgmma: on sm_90a both products run on it, elsewhere mma.sync)
    assert "load_operand_tma<tile_f16_64x64_smemtw" in body and \
        "load_operand_tma<tile_f16_64x64_smemw," in body
    # K's copy for the next iteration issued as soon as the scores have read the buffer
    # (ir/prefetch.py): each product leaves one later copy pending (V's; the next K's)
    assert body.count("mma<true, 1>(") == 2
    assert body.index("mma<true, 1>(q, k") < body.index("k = tt::tile::load_operand_tma<")
    assert "k = tt::tile::load_operand_tma<" in src[:src.index("for (int32_t j")]
    assert "tt::tile::operand_drain(k);" in src[src.index("for (int32_t j"):]
    # Q into its own buffer once, before the loop
    head = src[:src.index("for (int32_t j")]
    assert "tile_f16_128x64_smemw q = tt::tile::load_operand_tma<" in head
    # the output divided, reshaped to 3-d, cast and stored from fragments: no scratch
    tail = src[src.index("for (int32_t j"):]
    tail = tail[tail.index("\n  }\n"):]
    assert "to_blocked" not in tail and "tt::tile::store_fragments(Out, " in tail
    ir = flash.ir(*args, **consts)
    assert "m_i: tile<float32, (128, 1), mmarow>" in ir
    assert "acc: tile<float32, (128, 64), mma>" in ir


def test_rows_need_whole_strips_per_warp():
    f16, f32 = np.float16, np.float32
    z = np.zeros
    src = softmax_of_product_8w.cuda_source(z((128, 32), f16), z((32, 64), f16),
                                            z((128, 64), f32), TM=64, TN=64, TK=32)
    assert "reduce_mma_rows" not in src and "MmaRows" not in src
    src = softmax_of_product.cuda_source(z((128, 32), f16), z((32, 64), f16),
                                         z((128, 64), f32), TM=64, TN=64, TK=32)
    assert "reduce_mma_rows" in src and "store_fragments" in src


def test_a_product_split_below_whole_strips_warns():
    """num_warps=8 on a 64-row product: a PerformanceWarning at the product's line, naming
    the block that keeps it in fragments; none on 4 warps."""
    import warnings  # noqa: PLC0415

    from threadtile.errors import PerformanceWarning  # noqa: PLC0415

    args = [np.zeros((128, 32), np.float16), np.zeros((32, 64), np.float16),
            np.zeros((128, 64), np.float32)]
    consts = dict(TM=64, TN=64, TK=32)
    with pytest.warns(PerformanceWarning, match="64 rows runs on 8 warps.*num_warps=4") as w:
        assert ct.kernel(_softmax_of_product, num_warps=8)._spec_for(args, consts).module
    assert w[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        assert ct.kernel(_softmax_of_product, num_warps=4)._spec_for(args, consts).module


def test_kernels_without_mma_keep_blocked_tiles():
    @ct.kernel
    def scaled_rows(X, Y, T: ConstInt):
        x = ct.load(X, index=(ct.bid(0), 0), shape=(64, T))
        ct.store(Y, index=(ct.bid(0), 0), tile=x / ct.sum(x, axis=1, keepdims=True))

    z = np.zeros((64, 64), np.float32)
    assert "mma" not in scaled_rows.cuda_source(z, z, T=64).split("#include \"tile.h\"")[1]


@pytest.mark.parametrize("shape", [(64, 64, 64), (128, 64, 128), (128, 128, 64)])
def test_products_take_wgmma_on_sm90a(shape):
    args, consts = _flash_args(*shape)
    src = flash.cuda_source(*args, **consts)
    for arch, want in (("sm_90a", True), ("sm_90", False), ("sm_80", False)):
        ptx = nvrtc.compile_ptx(src, arch)
        ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
        assert ("wgmma.mma_async" in ptx) == want, arch
        assert ("mma.sync.aligned.m16n8k16" in ptx) != want, arch


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("shape", [(64, 64, 64), (128, 64, 128), (128, 128, 64)])
def test_compiles(arch, shape):
    args, consts = _flash_args(*shape)
    assert compile_cubin(flash, *args, arch=arch, **consts)
    f16, f32 = np.float16, np.float32
    z = np.zeros
    for kernel in (softmax_of_product, softmax_of_product_8w):
        assert compile_cubin(kernel, z((128, 32), f16), z((32, 64), f16), z((128, 64), f32),
                             arch=arch, TM=64, TN=64, TK=32)


@ct.kernel
def rows_and_columns(A, B, Out, M: ct.Constant[int]):
    """Out = A @ B - round16(rowmax) + (col + 1): a row vector and a column vector, each cast,
    broadcast over the product in fragments (``mmarow``, ``mmacol``)."""
    a = ct.load(A, index=(0, 0), shape=(M, 64))
    b = ct.load(B, index=(0, 0), shape=(64, 64))
    s = ct.mma(a, b, ct.zeros((M, 64), dtype=ct.float32))
    r = ct.max(s, axis=1, keepdims=True).astype(ct.float16).astype(ct.float32)
    c = (ct.arange(64, dtype=ct.int32).reshape((1, 64)) + 1).astype(ct.float32)
    ct.store(Out, index=(0, 0), tile=s - r + c)


def test_columns_of_fragments(target, rng):
    """(1, N) tiles broadcast over fragment tiles hold the fragments' columns (ir/fraglayout.py
    ``_index_tiles``, tile/fragments.h ``MmaCols``): computed there, cast there, no (M, N)
    conversion."""
    m = 64
    a = rng.standard_normal((m, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    z = np.zeros
    src = rows_and_columns.cuda_source(a, b, z((m, 64), np.float32), m)
    assert "tile_f32_1x64_mmacol" in src and "to_mma(" not in src and "to_blocked" not in src
    out = target.to_device(poison((m, 64), np.float32))
    target.launch_tile(rows_and_columns, (1,), target.to_device(a), target.to_device(b), out, m)
    s = a.astype(np.float64) @ b.astype(np.float64)
    r = s.max(axis=1, keepdims=True).astype(np.float16).astype(np.float64)
    ref = s - r + (np.arange(64) + 1)[None, :]
    np.testing.assert_allclose(target.to_host(out), ref, rtol=1e-3, atol=1e-2)
    for arch in ("sm_80", "sm_90a"):
        assert compile_cubin(rows_and_columns, a, b, z((m, 64), np.float32), m,
                             arch=arch)[:4] == b"\x7fELF"
