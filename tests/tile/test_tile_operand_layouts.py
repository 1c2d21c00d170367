"""Operands and accumulators of ``mma`` laid out where the code a user writes first puts them:

- loads of attention's Q, K and V from (batch, seq, heads, dim) arrays, tile shapes with ones
  between the two kept axes and K transposed by ``order=(0, 2, 3, 1)``, go straight to
  shared memory (``load_operand``, ir/operands.py) as the (batch, heads, seq, dim) layout's do;
- ``ct.extract`` of whole column blocks of an accumulator in fragments (SwiGLU's gate and up
  halves of one product) picks registers (``extract_frag``, ir/fraglayout.py) instead of a
  round trip through shared memory, so the whole kernel keeps the Hopper main loop's block.

Each numeric test runs in the simulator and on the GPU (``target``) against NumPy in float64
with fresh inputs and poisoned outputs; every kernel compiles for sm_80, sm_90 and sm_90a."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def attention_bshd(Q, K, V, Out, scale: float, G: ConstInt, D: ConstInt, TM: ConstInt,
                   TN: ConstInt):
    """Causal attention, Q/Out (batch, seq, heads, D), K/V (batch, seq, kv heads, D)."""
    i, h, b = ct.bid(0), ct.bid(1), ct.bid(2)
    kvh = h // G
    seq = Q.shape[1]
    q = ct.load(Q, index=(b, i, h, 0), shape=(1, TM, 1, D), padding_mode=ZERO).reshape((TM, D))
    rows = (i * TM + ct.arange(TM, dtype=ct.int32)).reshape((TM, 1))
    cols = ct.arange(TN, dtype=ct.int32).reshape((1, TN))
    m = ct.full((TM, 1), -np.inf, dtype=ct.float32)
    den = ct.zeros((TM, 1), dtype=ct.float32)
    acc = ct.zeros((TM, D), dtype=ct.float32)
    for j in range(ct.cdiv(min((i + 1) * TM, seq), TN)):
        k = ct.load(K, index=(b, kvh, 0, j), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                    padding_mode=ZERO).reshape((D, TN))
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32)) * scale
        s = ct.where((j * TN + cols <= rows) & (j * TN + cols < seq), s, -np.inf)
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp(s - m_new)
        alpha = ct.exp(m - m_new)
        den = den * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(b, j, kvh, 0), shape=(1, TN, 1, D),
                    padding_mode=ZERO).reshape((TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m = m_new
    ct.store(Out, index=(b, i, h, 0), tile=(acc / den).reshape((1, TM, 1, D)).astype(Out.dtype))


@ct.kernel
def gated(A, W, C, tm: ConstInt, tn: ConstInt, tk: ConstInt, parts: ConstInt):
    """C = silu(A @ W[:, gate block]) * (A @ W[:, up block]) from one (tm, parts tn)
    accumulator: column block ``by`` of W holds ``parts`` blocks of tn columns; the first is
    the gate, the last the up projection."""
    bx, by = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, parts * tn), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
        w = ct.load(W, index=(k, by), shape=(tk, parts * tn), padding_mode=ZERO)
        acc = ct.mma(a, w, acc)
    g = ct.extract(acc, index=(0, 0), shape=(tm, tn))
    u = ct.extract(acc, index=(0, parts - 1), shape=(tm, tn))
    ct.store(C, index=(bx, by), tile=(g / (1.0 + ct.exp(-g)) * u).astype(C.dtype))


@ct.kernel
def project_bshd(X, W, R, Out, TM: ConstInt, D: ConstInt):
    """Out[b, rows, h] = X[b, rows, h] @ W + R[b, rows, h] over (batch, seq, heads, D) arrays:
    the residual loads, and the sum stores, as (1, TM, 1, D) tiles."""
    i, h, b = ct.bid(0), ct.bid(1), ct.bid(2)
    x = ct.load(X, index=(b, i, h, 0), shape=(1, TM, 1, D), padding_mode=ZERO).reshape((TM, D))
    w = ct.load(W, index=(0, 0), shape=(D, D))
    acc = ct.mma(x, w, ct.zeros((TM, D), dtype=ct.float32))
    r = ct.load(R, index=(b, i, h, 0), shape=(1, TM, 1, D), padding_mode=ZERO)
    out = acc.reshape((1, TM, 1, D)) + r.astype(ct.float32)
    ct.store(Out, index=(b, i, h, 0), tile=out.astype(Out.dtype))


def _attention_ref(q, k, v, scale, group):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    n = s.shape[-1]
    s = np.where(np.arange(n)[None, :] <= np.arange(n)[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bkhd->bqhd", p / p.sum(axis=-1, keepdims=True), v)


def _packed_qkv(rng, b, seq, heads, kv, d, dtype):
    """Q, K, V as views of one (b, seq, heads + 2 kv, d) projection, as a decoder has them."""
    qkv = rng.standard_normal((b, seq, heads + 2 * kv, d)).astype(dtype)
    return qkv, (slice(0, heads), slice(heads, heads + kv), slice(heads + kv, heads + 2 * kv))


_ATTN = [(1, 128, 4, 2, 64, 64, 32), (2, 96, 4, 1, 64, 32, 32), (1, 256, 2, 2, 128, 128, 64)]


@pytest.mark.parametrize(("b", "seq", "heads", "kv", "d", "tm", "tn"), _ATTN)
def test_attention_over_bshd_views(target, rng, b, seq, heads, kv, d, tm, tn):
    if target.name == "sim" and tm * tn * d > 64 * 64 * 64:
        pytest.skip("the simulator runs the smaller shapes (the GPU runs all)")
    qkv, (sq, sk, sv) = _packed_qkv(rng, b, seq, heads, kv, d, np.float16)
    dev = target.to_device(qkv)
    out = target.to_device(poison((b, seq, heads, d), np.float16))
    scale = 1 / np.sqrt(d)
    target.launch_tile(attention_bshd, (-(-seq // tm), heads, b), dev[:, :, sq], dev[:, :, sk],
                       dev[:, :, sv], out, scale, heads // kv, d, tm, tn)
    ref = _attention_ref(qkv[:, :, sq], qkv[:, :, sk], qkv[:, :, sv], scale, heads // kv)
    np.testing.assert_allclose(target.to_host(out).astype(np.float64), ref, atol=6e-3,
                               rtol=6e-3)


@pytest.mark.parametrize(("m", "k", "n", "tm", "tn", "parts"),
                         [(128, 128, 256, 64, 64, 2), (256, 192, 256, 128, 128, 2),
                          (128, 64, 128, 64, 32, 4), (100, 80, 128, 64, 64, 2)])
def test_extract_of_an_accumulator(target, rng, m, k, n, tm, tn, parts):
    if target.name == "sim" and tm * tn * parts > 64 * 128:
        pytest.skip("the simulator runs the smaller shapes (the GPU runs all)")
    a = (rng.standard_normal((m, k)) / 4).astype(np.float16)
    w = (rng.standard_normal((k, n * parts)) / 4).astype(np.float16)
    out = target.to_device(poison((m, n), np.float32))
    target.launch_tile(gated, (-(-m // tm), n // tn), target.to_device(a), target.to_device(w),
                       out, tm, tn, 32, parts)
    prod = a.astype(np.float64) @ w.astype(np.float64)
    blocks = prod.reshape(m, n // tn, parts, tn)
    g, u = blocks[:, :, 0].reshape(m, n), blocks[:, :, -1].reshape(m, n)
    np.testing.assert_allclose(target.to_host(out), g / (1 + np.exp(-g)) * u, rtol=2e-4,
                               atol=2e-4)


@pytest.mark.parametrize(("seq", "tm"), [(128, 64), (100, 64)])
def test_fragments_over_bshd_tiles(target, rng, seq, tm):
    """A residual loaded, and a result stored, as (1, TM, 1, D) tiles of (batch, seq, heads,
    D) arrays (ones between the kept axes) move in fragments (load_fragments and
    store_fragments along array axis 1); rows past the sequence read zeros, are not written."""
    b, heads, d = 2, 3, 64
    x = (rng.standard_normal((b, seq, heads, d)) / 4).astype(np.float16)
    w = (rng.standard_normal((d, d)) / 4).astype(np.float16)
    r = rng.standard_normal((b, seq, heads, d)).astype(np.float16)
    out = target.to_device(poison((b, seq, heads, d), np.float16))
    target.launch_tile(project_bshd, (-(-seq // tm), heads, b), target.to_device(x),
                       target.to_device(w), target.to_device(r), out, tm, d)
    ref = np.einsum("bshd,de->bshe", x.astype(np.float64), w.astype(np.float64)) + r
    np.testing.assert_allclose(target.to_host(out).astype(np.float64), ref, atol=1e-2,
                               rtol=1e-2)


def test_bshd_tiles_stay_in_fragments():
    z = np.zeros
    x, o = z((1, 128, 2, 64), np.float16), z((1, 128, 2, 64), np.float16)
    src = project_bshd.cuda_source(x, z((64, 64), np.float16), x, o, 64, 64)
    assert "load_fragments<tile_f16_1x64x1x64_mma, 1>(R, " in src
    assert "tt::tile::store_fragments<1>(Out, " in src and "to_blocked" not in src
    # attention's output, divided and cast, stores from fragments too: the scratch left is
    # the diagonal tiles' mask's conversion (64 x 64 bools), not the 128 x 128 float32 output
    src = attention_bshd.cuda_source(*_attention_args(), 128, 64)
    assert "tt::tile::store_fragments<1>(Out, " in src
    scratch = int(src.split("#define TT_SCRATCH_BYTES ")[1].split()[0])
    operands = int(src.split("#define TT_OPERAND_BYTES ")[1].split()[0])
    assert scratch - operands <= 128 * 64


def _attention_args(b=1, seq=256, heads=8, kv=2, d=128):
    z = np.zeros((b, seq, heads + 2 * kv, d), np.float16)
    o = np.zeros((b, seq, heads, d), np.float16)
    return (z[:, :, :heads], z[:, :, heads:heads + kv], z[:, :, heads + kv:], o, 0.1,
            heads // kv, d)


def test_bshd_operands_go_to_shared_memory():
    src = attention_bshd.cuda_source(*_attention_args(), 128, 64)
    body = src[src.index("for (int32_t j"):]
    # K (its rows the dim axis, stepping along seq: array axis 1) and V, laid out for wgmma
    # (on sm_90a builds without the portable loops by TMA, each through its own tensor map
    # and mbarrier: load_operand_tma); K's copy for the next iteration right after the
    # scores' product (ir/prefetch.py: the loop's bound has a min in it), its first before
    # the loop
    head = src[:src.index("for (int32_t j")]
    assert "k = tt::tile::load_operand_tma<tile_f16_128x64_smemtw, 0, 1, 1, true>(" \
        "tt_tmo1, K, __half(0.0f), (int64_t)b, (int64_t)0, (int64_t)kvh, 0LL)" in head
    assert "smemw v = tt::tile::load_operand_tma<tile_f16_64x128_smemw, " in body
    assert ", 1, 2, true>(tt_tmo2, V, " in body
    assert "k = tt::tile::load_operand_tma<tile_f16_128x64_smemtw, 0, 1, 3, true>(" \
        "tt_tmo3, K, " in body
    # Q once, before the loop; indices in the array's axis order (K: b, j, kvh, 0)
    assert "smemw q = tt::tile::load_operand_tma<" in head and "TT_TMA_INIT();" in head
    assert "#define TT_TMA_SITES 4" in head
    assert head.count("const __grid_constant__ tt::tile::sm90::TensorMap tt_tmo") == 4
    assert "tt::tile::load<" not in body


def test_gated_extract_stays_in_registers():
    z = np.zeros
    src = gated.cuda_source(z((256, 256), np.float16), z((256, 512), np.float16),
                            z((256, 256), np.float32), 128, 128, 64, 2)
    assert "extract_frag<tile_f32_128x128_mma, 0>(acc)" in src
    assert "extract_frag<tile_f32_128x128_mma, 1>(acc)" in src
    assert "to_blocked" not in src and "store_fragments(C" in src
    # the block the Hopper main loop needs (8 warps for a 128x256 accumulator), not 16
    assert "MmaTile<float, 256, 128, 256>" in src and "mma_loop<" in src
    # four blocks of 64 columns: the up block is the fourth, 3 x 64 columns along
    src = gated.cuda_source(z((256, 256), np.float16), z((256, 512), np.float16),
                            z((256, 256), np.float32), 128, 64, 64, 4)
    assert "extract_frag<tile_f32_128x64_mma, 3>(acc)" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_compiles(arch):
    assert compile_cubin(attention_bshd, *_attention_args(), 128, 64, arch=arch)
    assert compile_cubin(attention_bshd, *_attention_args(seq=96, d=64), 64, 32, arch=arch)
    z = np.zeros
    for tm, tn, parts in ((128, 128, 2), (64, 32, 4), (128, 64, 4)):
        assert compile_cubin(gated, z((256, 256), np.float16), z((256, 1024), np.float16),
                             z((256, 256), np.float32), tm, tn, 64, parts, arch=arch)
    x = z((1, 100, 2, 64), np.float16)
    assert compile_cubin(project_bshd, x, z((64, 64), np.float16), x, x, 64, 64, arch=arch)


@ct.kernel
def transposed_rows(K, Out, D: ConstInt, TN: ConstInt):
    """Out[b, h, :, j TN ...] = K[b, j TN ..., h, :]^T: the load's order puts K's contiguous
    last axis on the tile's third axis (tile/memory.h reads it by memory rows)."""
    j, h, b = ct.bid(0), ct.bid(1), ct.bid(2)
    k = ct.load(K, index=(b, h, 0, j), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                padding_mode=ct.PaddingMode.NEG_INF)
    ct.store(Out, index=(b, h, 0, j), tile=k * 2)


@pytest.mark.parametrize(("seq", "d", "tn"), [(256, 128, 64), (100, 64, 32), (40, 16, 16)])
def test_load_by_memory_rows(target, rng, seq, d, tn):
    """Edge tiles (seq not a multiple of TN) pad with -inf, stores past the edge are dropped."""
    b, kv = 2, 3
    k = rng.standard_normal((b, seq, kv, d)).astype(np.float32)
    out = target.to_device(poison((b, kv, d, seq), np.float32))
    target.launch_tile(transposed_rows, (-(-seq // tn), kv, b), target.to_device(k), out, d, tn)
    np.testing.assert_array_equal(target.to_host(out), 2 * k.transpose(0, 2, 3, 1))


def test_load_by_memory_rows_reserves_its_scratch():
    src = transposed_rows.cuda_source(np.zeros((2, 256, 3, 128), np.float32),
                                      np.zeros((2, 3, 128, 256), np.float32), 128, 64)
    # 128 x 64 float32 and one element of padding in 32
    assert f"#define TT_SCRATCH_BYTES {(8192 + 256) * 4}" in src


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_load_by_memory_rows_compiles(arch):
    assert compile_cubin(transposed_rows, np.zeros((2, 256, 3, 128), np.float32),
                         np.zeros((2, 3, 128, 256), np.float32), 128, 64, arch=arch)


@ct.kernel
def heads_first(X, Out, TN: ConstInt, D: ConstInt):
    """Out (batch, heads, seq, D) from X (batch, seq, heads, D): tiles (1, TN, 1, D) and
    (1, 1, TN, D) with ones between their kept axes; rows past seq pad with zeros and are not
    stored."""
    j, h, b = ct.bid(0), ct.bid(1), ct.bid(2)
    x = ct.load(X, index=(b, j, h, 0), shape=(1, TN, 1, D), padding_mode=ct.PaddingMode.ZERO)
    y = (x + 1).reshape((1, 1, TN, D))
    ct.store(Out, index=(b, h, j, 0), tile=y)


@pytest.mark.parametrize(("seq", "d", "tn"), [(256, 128, 64), (100, 64, 32), (10, 16, 16)])
def test_squeezed_loads_and_stores(target, rng, seq, d, tn):
    b, heads = 2, 3
    packed = rng.standard_normal((b, seq, heads + 1, d)).astype(np.float16)
    dev = target.to_device(packed)
    out = target.to_device(poison((b, heads, seq, d), np.float16))
    target.launch_tile(heads_first, (-(-seq // tn), heads, b), dev[:, :, 1:], out, tn, d)
    np.testing.assert_array_equal(target.to_host(out),
                                  packed[:, :, 1:].transpose(0, 2, 1, 3) + np.float16(1))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_squeezed_compiles(arch):
    x = np.zeros((2, 100, 4, 64), np.float16)[:, :, 1:]
    assert compile_cubin(heads_first, x, np.zeros((2, 3, 100, 64), np.float16), 32, 64,
                         arch=arch)


@ct.kernel
def attention_neg_inf_pad(Q, K, V, Out, D: ConstInt, TN: ConstInt):
    """One product pair whose K tiles read -inf past the array's edges (no TMA: TMA fills
    zeros) and whose Q and V read zeros."""
    i, h = ct.bid(0), ct.bid(1)
    q = ct.load(Q, index=(0, i, h, 0), shape=(1, 64, 1, D), padding_mode=ZERO).reshape((64, D))
    acc = ct.zeros((64, D), dtype=ct.float32)
    for j in range(ct.cdiv(K.shape[1], TN)):
        k = ct.load(K, index=(0, h, 0, j), shape=(1, 1, D, TN), order=(0, 2, 3, 1),
                    padding_mode=ct.PaddingMode.NEG_INF).reshape((D, TN))
        s = ct.mma(q, k, ct.zeros((64, TN), dtype=ct.float32))
        v = ct.load(V, index=(0, j, h, 0), shape=(1, TN, 1, D), padding_mode=ZERO)
        acc = ct.mma(s.astype(V.dtype), v.reshape((TN, D)), acc)
    ct.store(Out, index=(0, i, h, 0), tile=acc.reshape((1, 64, 1, D)).astype(Out.dtype))


def test_tma_copies_only_zero_padded_parameters():
    """backends/cuda/tiles.py operand_maps: K's -inf padding keeps its cp.async copies (TMA
    reads zeros past the edges); Q and V go through TMA, each map a box over all 4 axes."""
    from threadtile.backends.cuda import tiles  # noqa: PLC0415

    z = np.zeros((1, 128, 2, 64), np.float16)
    src = attention_neg_inf_pad.cuda_source(z, z, z, z, 64, 64)
    assert "load_operand<tile_f16_64x64_smemtw" in src  # K
    assert src.count("load_operand_tma<") == 2 and "#define TT_TMA_SITES 2" in src
    spec = attention_neg_inf_pad._spec_for([z, z, z, z], {"D": 64, "TN": 64})  # noqa: SLF001
    assert [op.attrs["row_axis"] for op in tiles.operand_maps(spec.module)] == [1, 1]
    # (innermost first: 64 columns = one 128-byte chunk, 1 head, 64 rows along seq, 1 batch)
    assert [box for _, box in spec.cuda.tensormaps] == [(64, 1, 64, 1)] * 2
    assert tuple(spec.cuda.tensormap_rows) == (tiles.OPERAND,) * 2


def test_tma_build_issues_bulk_tensor_copies():
    """The sm_90a build without the portable loops (builds.target_for) copies Q, K and V by
    TMA (4-d boxes completing on mbarriers) and no operand by cp.async; its fallback build
    (``portable``) copies them by cp.async."""
    from threadtile.builds import TMA_ONLY, target_for  # noqa: PLC0415
    from threadtile.runtime import nvrtc  # noqa: PLC0415

    args = _attention_args()
    spec = attention_bshd._spec_for([*args, 128, 64], {})  # noqa: SLF001
    t = target_for(spec, "sm_90a", attention_bshd.options)
    assert TMA_ONLY in t.options and not any("PRODUCER" in o for o in t.options)
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=t.options)
    # two 64-column chunks of Q, V and K (K's before the loop and an iteration ahead)
    assert ptx.count("cp.async.bulk.tensor.4d") == 8
    assert "mbarrier.try_wait.shared::cta.b64" in ptx and "cp.async.cg.shared" not in ptx
    portable = target_for(spec, "sm_90a", attention_bshd.options, portable=True)
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=portable.options)
    assert "cp.async.bulk.tensor" not in ptx and "cp.async.cg.shared" in ptx
    assert spec.build(t).cubin[:4] == b"\x7fELF"


def test_two_warpgroups_refill_without_a_block_barrier():
    """backends/cuda/tiles.py refill_wait: a block of two warpgroups (128-row tiles) refills
    K's and V's buffers once every thread has arrived on the site's second mbarrier, thread 0
    alone waiting there; a block of one warpgroup keeps the block barrier."""
    from threadtile import blockfit  # noqa: PLC0415
    from threadtile.builds import target_for  # noqa: PLC0415
    from threadtile.runtime import nvrtc  # noqa: PLC0415

    wide = attention_bshd.cuda_source(*_attention_args(), 128, 64)
    assert "__launch_bounds__(256)" in wide and "#define TT_REFILL_WAIT 1" in wide
    narrow = attention_bshd.cuda_source(*_attention_args(), 64, 128)
    assert "__launch_bounds__(128)" in narrow and "TT_REFILL_WAIT" not in narrow
    spec = attention_bshd._spec_for([*_attention_args(), 128, 64], {})  # noqa: SLF001
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a",
                            options=target_for(spec, "sm_90a", attention_bshd.options).options)
    # 4 copy sites and 4 refill mbarriers initialised, each copy but Q's first arrives on
    # its refill barrier: 4 block barriers fewer than the build without the line
    plain = nvrtc.compile_ptx(blockfit.without_optional(spec.cuda.text), "sm_90a",
                              options=target_for(spec, "sm_90a",
                                                 attention_bshd.options).options)
    assert ptx.count("mbarrier.init.shared::cta.b64") == 8
    assert plain.count("mbarrier.init.shared::cta.b64") == 4
    assert ptx.count("bar.sync") == plain.count("bar.sync") - 4


def test_operand_buffers_do_not_size_the_block():
    """compiler.auto_threads counts the registers a tile holds: K's (128, 128) tile in its
    shared-memory buffer holds none, so 64-row tiles of queries against 128 keys keep one
    warpgroup (8 warps would split its 64 rows below whole strips and send the scores
    through shared memory every step)."""
    src = attention_bshd.cuda_source(*_attention_args(), 64, 128)
    assert "__launch_bounds__(128" in src
    body = src[src.index("for (int32_t j"):]
    assert "to_blocked" not in body and "to_mma(" not in body
