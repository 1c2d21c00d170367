"""The Llama decoder example (examples/llama): each kernel in the simulator, every check on,
against NumPy in float64 on small shapes; every kernel compiled to cubin for sm_80 and sm_90
at Llama-3-8B's shapes; a small decoder layer and model (prefill, decode, generate) in the
simulator against the float32 torch reference (examples/llama/reference.py); on a GPU, a
layer at a medium shape against the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import HAVE_GPU, SIMULATE, compile_cubin
from llama import kernels as K
from llama.config import LLAMA3_8B, SMALL, split_for, tiles_for

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
U_BF16 = 2.0 ** -8  # bfloat16's unit roundoff

pytestmark = pytest.mark.skipif(SIMULATE is None, reason="simulator not built")


def sim():
    import threadtile  # noqa: PLC0415

    return threadtile.simulate()


def bf16(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(BF16)


def f64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def rel_err(got, want) -> float:
    return float(np.abs(f64(got) - f64(want)).max() / max(np.abs(f64(want)).max(), 1e-30))


# ---- kernels against NumPy float64 ---------------------------------------------------------------

@pytest.mark.parametrize(("rows", "n"), [(8, 64), (5, 100)])
def test_rms_norm(rows, n):
    rng = np.random.default_rng()
    x, w = bf16(rng.standard_normal((rows, n))), bf16(rng.standard_normal(n))
    y = np.full((rows, n), np.nan, BF16)
    with sim():
        K.rms_norm[(rows,)](x, w, y, 1e-5, 1 << (n - 1).bit_length())
    want = f64(x) / np.sqrt((f64(x) ** 2).mean(1, keepdims=True) + 1e-5) * f64(w)
    # float32 math, one bfloat16 rounding of the output
    np.testing.assert_allclose(f64(y), want, rtol=U_BF16 * 1.01, atol=1e-6)


def _mm_operands(rng, m, k, n):
    a = bf16(rng.standard_normal((m, k)))
    b = bf16(rng.standard_normal((k, n)) / math.sqrt(k))
    return a, b, f64(a) @ f64(b)


@pytest.mark.parametrize(("m", "k", "n"), [(64, 64, 96), (40, 72, 50)])
def test_matmul_and_matmul_add(m, k, n):
    rng = np.random.default_rng()
    a, b, want = _mm_operands(rng, m, k, n)
    r = bf16(rng.standard_normal((m, n)))
    c, d = np.full((m, n), np.nan, BF16), np.full((m, n), np.nan, BF16)
    tm, tn, tk = 32, 32, 16
    with sim():
        K.matmul[(math.ceil(m / tm), math.ceil(n / tn))](a, b, c, tm, tn, tk)
        K.matmul_add[(math.ceil(m / tm), math.ceil(n / tn))](a, b, r, d, tm, tn, tk)
    # float32 accumulation of exact products, then one bfloat16 rounding
    np.testing.assert_allclose(f64(c), want, rtol=U_BF16 * 1.01, atol=1e-5 * k)
    np.testing.assert_allclose(f64(d), want + f64(r), rtol=U_BF16 * 1.01, atol=1e-5 * k)


@pytest.mark.parametrize(("m", "k", "f", "tn"), [(48, 64, 64, 32), (32, 32, 128, 16)])
def test_matmul_swiglu(m, k, f, tn):
    rng = np.random.default_rng()
    a, wg, g = _mm_operands(rng, m, k, f)
    wu = bf16(rng.standard_normal((k, f)) / math.sqrt(k))
    u = f64(a) @ f64(wu)
    gu = K.pack_gate_up(wg, wu, tn)
    c, c2 = np.full((m, f), np.nan, BF16), np.full((m, f), np.nan, BF16)
    with sim():
        K.matmul_swiglu[(math.ceil(m / 16), f // tn)](a, gu, c, 16, tn, 16)
        K.matmul_swiglu_two[(math.ceil(m / 16), f // tn)](a, wg, wu, c2, 16, tn, 16)
    want = g / (1 + np.exp(-g)) * u
    np.testing.assert_allclose(f64(c), want, rtol=U_BF16 * 1.01, atol=1e-5)
    np.testing.assert_allclose(f64(c2), want, rtol=U_BF16 * 1.01, atol=1e-5)


@pytest.mark.parametrize(("m", "k", "n", "splits", "tk"), [
    (16, 128, 64, 4, 16),   # even splits
    (12, 100, 40, 4, 16),   # edges in m, n and K; the last split short
    (12, 40, 40, 4, 16),    # a split past K: zeros
])
def test_split_k_matmul_and_combine(m, k, n, splits, tk):
    """matmul_part's splits of K (the last one short, or past K: zeros), then combine's sum
    with and without the residual: float32 partials, one bfloat16 rounding."""
    rng = np.random.default_rng()
    a, b, want = _mm_operands(rng, m, k, n)
    r = bf16(rng.standard_normal((m, n)))
    tm, tn = 16, 32
    steps = math.ceil(math.ceil(k / tk) / splits)
    part = np.full((splits, m, n), np.nan, np.float32)
    c, d = np.full((m, n), np.nan, BF16), np.full((m, n), np.nan, BF16)
    grid = (math.ceil(m / tm), math.ceil(n / tn))
    with sim():
        K.matmul_part[(*grid, splits)](a, b, part, tm, tn, tk, steps)
        K.combine[grid](part, r, c, splits, tm, tn, False)
        K.combine[grid](part, r, d, splits, tm, tn, True)
    for s in range(splits):  # each split: its own range of K
        ks = slice(s * steps * tk, min((s + 1) * steps * tk, k))
        np.testing.assert_allclose(part[s], f64(a[:, ks]) @ f64(b[ks]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f64(c), want, rtol=U_BF16 * 1.01, atol=1e-5 * k)
    np.testing.assert_allclose(f64(d), want + f64(r), rtol=U_BF16 * 1.01, atol=1e-5 * k)


def test_layer_matmul_takes_the_split_in_the_simulator(monkeypatch):
    """DecoderLayer.matmul's split path (the rule's thresholds lowered to small shapes):
    matmul_part then combine, with and without the residual, against float64."""
    torch = pytest.importorskip("torch")
    from llama import config  # noqa: PLC0415
    from llama.layer import DecoderLayer  # noqa: PLC0415

    small = {"SPLIT_TN": 32, "SPLIT_TK": 16, "SPLIT_BLOCKS": 4, "SPLIT_MIN_STEPS": 2}
    for name, v in small.items():
        monkeypatch.setattr(config, name, v)
    m, k, n = 12, 128, 64
    assert config.split_for(m, k, n) == (16, 32, 16, 2)
    rng = np.random.default_rng()
    a, b, want = _mm_operands(rng, m, k, n)
    r = bf16(rng.standard_normal((m, n)))
    t = lambda x: torch.from_numpy(f64(x)).to(torch.bfloat16)  # noqa: E731
    with sim():
        c = DecoderLayer.matmul(t(a), t(b))
        d = DecoderLayer.matmul(t(a), t(b), residual=t(r))
    np.testing.assert_allclose(c.double().numpy(), want, rtol=U_BF16 * 1.01, atol=1e-5 * k)
    np.testing.assert_allclose(d.double().numpy(), want + f64(r), rtol=U_BF16 * 1.01,
                               atol=1e-5 * k)


def test_split_rule_at_8b_shapes():
    """config.split_for: of decode's 32-row products only the down projection (K 14336)
    splits, into 8 (32 x 8 blocks of 128 columns, 28 k steps each); the others' K of 4096
    would make splits of 8 steps, and more rows keep the plain tiles."""
    c = LLAMA3_8B
    qkv = (c.heads + 2 * c.kv_heads) * c.head_dim
    assert split_for(32, c.mlp, c.hidden) == (32, 128, 64, 8)
    assert split_for(16, c.mlp, c.hidden) == (16, 128, 64, 8)
    assert split_for(32, c.hidden, qkv) is None
    assert split_for(32, c.hidden, c.hidden) is None
    assert split_for(64, c.mlp, c.hidden) is None
    assert split_for(8, SMALL.mlp, SMALL.hidden) is None  # the tests' small model: plain


def test_pack_gate_up_refuses_mismatched_weights():
    with pytest.raises(ValueError, match="multiple of 32"):
        K.pack_gate_up(np.zeros((4, 48)), np.zeros((4, 48)), 32)


def rope_ref(x: np.ndarray, pos: np.ndarray, theta: float) -> np.ndarray:
    """Rotate-half RoPE in float64: x (tokens, heads, D)."""
    d = x.shape[-1]
    inv = theta ** (-np.arange(0, d, 2) / d)
    ang = pos[:, None, None].astype(np.float64) * inv
    x1, x2 = f64(x[..., : d // 2]), f64(x[..., d // 2:])
    return np.concatenate([x1 * np.cos(ang) - x2 * np.sin(ang),
                           x2 * np.cos(ang) + x1 * np.sin(ang)], axis=-1)


def test_rope_in_place_on_a_strided_view():
    """Q's heads inside a fused QKV row (a strided view), positions per token."""
    rng = np.random.default_rng()
    t, nh, d, theta = 6, 4, 16, 500000.0
    qkv = bf16(rng.standard_normal((t, 2 * nh * d)))
    q = qkv[:, : nh * d].reshape(t, nh, d)
    before, rest = q.copy(), qkv[:, nh * d:].copy()
    pos = rng.integers(0, 4000, t).astype(np.int32)
    with sim():
        K.rope[(t,)](q, pos, math.log2(theta), nh, d)
    # angles up to 4000 rad in float32: a few 1e-4 off, below bfloat16's rounding
    np.testing.assert_allclose(f64(qkv[:, : nh * d].reshape(t, nh, d)),
                               rope_ref(before, pos, theta),
                               rtol=0, atol=2 * U_BF16 * np.abs(f64(before)).max())
    assert np.array_equal(qkv[:, nh * d:], rest)  # K and V's columns untouched


def test_kv_store_at_positions_per_sequence():
    rng = np.random.default_rng()
    b, s, kv, d, smax = 3, 2, 2, 16, 8
    kc, vc = np.zeros((b, smax, kv, d), BF16), np.zeros((b, smax, kv, d), BF16)
    k, v = bf16(rng.standard_normal((b, s, kv, d))), bf16(rng.standard_normal((b, s, kv, d)))
    start = np.array([0, 3, 6], np.int32)
    with sim():
        K.kv_store[(s, b)](kc, vc, k, v, start, kv, d)
    for i in range(b):
        assert np.array_equal(kc[i, start[i]:start[i] + s], k[i])
        assert np.array_equal(vc[i, start[i]:start[i] + s], v[i])
        assert not np.any(f64(kc[i, : start[i]])) and not np.any(f64(kc[i, start[i] + s:]))


def attention_ref(q, k, v, causal: bool, lens=None) -> np.ndarray:
    """Softmax attention in float64: q (b, sq, h, d), k and v (b, sk, kv, d); query i of a
    causal call sees keys up to i; ``lens[b]`` keys of sequence b when given."""
    q, k, v = f64(q), f64(k), f64(v)
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, axis=2), np.repeat(v, g, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    sq, sk = s.shape[-2:]
    mask = np.zeros((q.shape[0], 1, sq, sk), bool)
    if causal:
        mask |= np.triu(np.ones((sq, sk), bool), 1)
    if lens is not None:
        mask |= np.arange(sk)[None, None, None, :] >= np.asarray(lens)[:, None, None, None]
    s = np.where(mask, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bkhd->bqhd", p / p.sum(-1, keepdims=True), v)


@pytest.mark.parametrize(("b", "s", "h", "kv", "tm", "tn"), [
    (1, 32, 4, 2, 16, 16), (2, 40, 4, 2, 16, 16), (1, 48, 2, 1, 32, 16)])
def test_attention_prefill_causal_gqa(b, s, h, kv, tm, tn):
    rng = np.random.default_rng()
    d = 16
    qkv = bf16(rng.standard_normal((b, s, h + 2 * kv, d)))
    q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kv], qkv[:, :, h + kv:]
    o = np.full((b, s, h, d), np.nan, BF16)
    with sim():
        K.attention_prefill[(h, math.ceil(s / tm), b)](q, k, v, o, 1 / math.sqrt(d), h // kv,
                                                       d, tm, tn)
    # P rounded to bfloat16 before P @ V: a few bfloat16 roundings of values of size ~1
    np.testing.assert_allclose(f64(o), attention_ref(q, k, v, True), rtol=0, atol=4 * U_BF16)


@pytest.mark.parametrize(("lens", "chunk", "tn"), [([32, 5, 17], 16, 8), ([1, 64, 40], 32, 16)])
def test_attention_decode_and_combine(lens, chunk, tn):
    rng = np.random.default_rng()
    b, h, kv, d, smax = len(lens), 4, 2, 16, 64
    g = h // kv
    q = bf16(rng.standard_normal((b, h, d)))
    kc = bf16(rng.standard_normal((b, smax, kv, d)))
    vc = bf16(rng.standard_normal((b, smax, kv, d)))
    lens_a = np.array(lens, np.int32)
    splits = smax // chunk
    sp = 1 << (splits - 1).bit_length()
    opart = np.full((b, kv, splits, g, d), np.nan, np.float32)
    lse = np.full((b, kv, splits, g), np.nan, np.float32)
    o = np.full((b, h, d), np.nan, BF16)
    with sim():
        K.attention_decode[(splits, kv, b)](q, kc, vc, lens_a, opart, lse, 1 / math.sqrt(d), g, d,
                                            tn, chunk)
        K.attention_combine[(kv, b)](opart, lse, o, g, d, sp)
    want = attention_ref(q[:, None], kc, vc, False, lens_a)[:, 0]
    np.testing.assert_allclose(f64(o), want, rtol=0, atol=4 * U_BF16)
    for i, n in enumerate(lens):  # splits past a sequence's end: lse -inf, output 0
        past = np.arange(splits) * chunk >= n
        assert np.all(np.isneginf(lse[i, :, past])) and not np.any(opart[i, :, past])


# ---- every kernel compiles for sm_80 and sm_90 at Llama-3-8B's shapes ---------------------------

def _compile_cases():
    c = LLAMA3_8B
    hd, h, kv, d, f = c.hidden, c.heads, c.kv_heads, c.head_dim, c.mlp
    z = lambda *shape, dt=BF16: np.zeros(shape, dt)  # noqa: E731  (shapes: dtypes and ranks matter)
    t = 256
    tm, tn, tk = tiles_for(t, hd, (h + 2 * kv) * d)
    stm, stn, stk = tiles_for(t, hd, f, swiglu=True)
    g = h // kv
    return [
        ("rms_norm", (z(t, hd), z(hd), z(t, hd), 1e-5), {"N": hd}),
        ("matmul", (z(t, hd), z(hd, (h + 2 * kv) * d), z(t, (h + 2 * kv) * d)),
         {"tm": tm, "tn": tn, "tk": tk}),
        ("matmul_add", (z(t, f), z(f, hd), z(t, hd), z(t, hd)), {"tm": tm, "tn": tn, "tk": tk}),
        ("matmul_swiglu", (z(t, hd), z(hd, 2 * f), z(t, f)), {"tm": stm, "tn": stn, "tk": stk}),
        # decode's projections: 32 rows (the staged loop, five or six buffers)
        ("matmul_add", (z(32, f), z(f, hd), z(32, hd), z(32, hd)),
         dict(zip(("tm", "tn", "tk"), tiles_for(32, f, hd)))),
        ("matmul_swiglu", (z(32, hd), z(hd, 2 * f), z(32, f)),
         dict(zip(("tm", "tn", "tk"), tiles_for(32, hd, f, swiglu=True)))),
        # decode's projections split along K (config.split_for), then their sums
        ("matmul_part", (z(32, f), z(f, hd), z(8, 32, hd, dt=np.float32)),
         {"tm": 32, "tn": 128, "tk": 64, "steps": 28}),
        ("combine", (z(8, 32, hd, dt=np.float32), z(32, hd), z(32, hd)),
         {"S": 8, "tm": 32, "tn": 128, "residual": True}),
        ("matmul_swiglu_two", (z(t, hd), z(hd, f), z(hd, f), z(t, f)),
         {"tm": stm, "tn": stn, "tk": stk}),
        ("rope", (z(t, h, d), z(t, dt=np.int32), math.log2(c.rope_theta)), {"NH": h, "D": d}),
        ("kv_store", (z(1, 64, kv, d), z(1, 64, kv, d), z(1, 4, kv, d), z(1, 4, kv, d),
                      z(1, dt=np.int32)), {"KV": kv, "D": d}),
        ("attention_prefill", (z(1, t, h, d), z(1, t, kv, d), z(1, t, kv, d), z(1, t, h, d), 0.1),
         {"G": g, "D": d, "TM": c.attn_tm, "TN": c.attn_tn}),
        ("attention_decode", (z(2, h, d), z(2, t, kv, d), z(2, t, kv, d), z(2, dt=np.int32),
                              z(2, kv, 8, g, d, dt=np.float32), z(2, kv, 8, g, dt=np.float32), 0.1),
         {"G": g, "D": d, "TN": c.decode_tn, "chunk": c.decode_chunk}),
        ("attention_combine", (z(2, kv, 8, g, d, dt=np.float32), z(2, kv, 8, g, dt=np.float32),
                               z(2, h, d)), {"G": g, "D": d, "SP": 8}),
    ]


def test_tile_rule_at_8b_shapes():
    """config.tiles_for: 128 x 256 x 64 for prefill's projections; for decode's 32 rows, tn
    halved to one block a multiprocessor (128 blocks) and tk doubled while a step would copy
    under 8 KiB of the weight; the packed SwiGLU's tn is half its accumulator's width."""
    c = LLAMA3_8B
    qkv = (c.heads + 2 * c.kv_heads) * c.head_dim
    assert tiles_for(4096, c.hidden, qkv) == (128, 256, 64)
    assert tiles_for(4096, c.hidden, c.mlp, swiglu=True) == (128, 128, 64)
    assert tiles_for(32, c.hidden, qkv) == (32, 32, 128)       # 192 blocks
    assert tiles_for(32, c.mlp, c.hidden) == (32, 32, 128)     # 128 blocks
    assert tiles_for(32, c.hidden, c.mlp, swiglu=True) == (32, 64, 64)  # 224 blocks, 16 KiB
    assert tiles_for(8, 64, 128) == (16, 32, 64)               # small: tk no deeper than K


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(("name", "args", "consts"), _compile_cases(),
                         ids=[f"{c[0]}-{c[1][0].shape[0]}" for c in _compile_cases()])
def test_kernels_compile_to_cubin_at_8b_shapes(name, args, consts, arch):
    cubin = compile_cubin(getattr(K, name), *args, arch=arch, **consts)
    assert cubin[:4] == b"\x7fELF"


# ---- the layer and the model against the float32 torch reference -------------------------------

def _model_and_ref(cfg, layers, seed, device="cpu"):
    torch = pytest.importorskip("torch")
    from llama.layer import Model  # noqa: PLC0415
    from llama.reference import RefModel  # noqa: PLC0415

    m = Model(cfg, layers=layers, seed=seed, device=device)
    return torch, m, RefModel(m)


def _check_model(torch, m, ref, batch, prompt, device):
    """Prefill logits, then two decode steps, against the reference run on the same tokens."""
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, m.cfg.vocab, (batch, prompt), generator=g)
    cache = m.new_cache(batch, prompt + 4)
    got = [m.prefill(ids.to(device), cache).cpu()]
    toks = [ids]
    for _ in range(2):
        nxt = got[-1][:, -1].argmax(-1)
        toks.append(nxt[:, None])
        got.append(m.decode(nxt.to(device), cache).cpu()[:, None])
    want = ref.forward(torch.cat(toks, 1))
    got = torch.cat(got, 1)
    scale = want.abs().max().item()
    # bfloat16 activations through a few layers: errors of a few bfloat16 roundings of the
    # logits' scale (float32 accumulation throughout)
    err = (got - want).abs().max().item() / scale
    assert err < 3e-2, f"logits off by {err:.2e} of their scale"
    assert int(cache.lens[0]) == prompt + 2 and cache.length == prompt + 2


def test_small_model_prefill_and_decode_in_the_simulator():
    """Two small layers (hidden 64, 4 heads, 2 KV heads, head dim 16), a 24-token prompt (an
    edge query tile) and two decode steps, every kernel in the simulator."""
    torch, m, ref = _model_and_ref(SMALL, 2, seed=int(np.random.default_rng().integers(1 << 30)))
    with sim():
        _check_model(torch, m, ref, batch=2, prompt=24, device="cpu")


def test_small_layer_against_the_reference_in_the_simulator():
    torch, m, ref = _model_and_ref(SMALL, 1, seed=int(np.random.default_rng().integers(1 << 30)))
    x = (torch.randn(2, 32, SMALL.hidden)).to(torch.bfloat16)
    kc, vc = (torch.zeros(2, 32, SMALL.kv_heads, SMALL.head_dim, dtype=torch.bfloat16)
              for _ in range(2))
    with sim():
        got = m.layers[0].prefill(x, kc, vc).float()
    cache = [None, None]
    want = ref.layers[0](x.float(), cache, 0)
    err = ((got - want).abs().max() / want.abs().max()).item()
    assert err < 2e-2, f"layer output off by {err:.2e} of its scale"
    # the cache holds the rotated keys and the values, as the reference's
    k_err = (kc.float() - cache[0]).abs().max().item() / cache[0].abs().max().item()
    assert k_err < 2e-2 and torch.allclose(vc.float(), cache[1], atol=0.05, rtol=0.02)


@pytest.mark.parametrize("lens", [(31, 5), (32, 33), (65, 64), (97, 1)])
def test_decode_attention_across_split_boundaries(lens):
    """Flash decoding's splits (about decode_chunk = 32 positions, evened out and rounded up
    to decode_tn = 16: 33 positions make one split of 48, not two of 32 and 1; 97 make 48, 48
    and 1) and their combination against attention in float64, sequences of different
    lengths."""
    torch = pytest.importorskip("torch")
    from llama.layer import DecoderLayer  # noqa: PLC0415

    c = SMALL
    g = torch.Generator().manual_seed(sum(lens))
    b, n = len(lens), max(lens)
    q = torch.randn(b, c.heads, c.head_dim, generator=g).to(torch.bfloat16)
    kc, vc = (torch.randn(b, n + 7, c.kv_heads, c.head_dim, generator=g).to(torch.bfloat16)
              for _ in range(2))
    with sim():
        got = DecoderLayer(c, None).attention_decode(
            q, kc, vc, torch.tensor(lens, dtype=torch.int32), n).double()
    for i, ln in enumerate(lens):
        k = kc[i, :ln].double().repeat_interleave(c.group, 1)  # (ln, heads, D)
        v = vc[i, :ln].double().repeat_interleave(c.group, 1)
        s = torch.einsum("hd,lhd->hl", q[i].double(), k) / math.sqrt(c.head_dim)
        want = torch.einsum("hl,lhd->hd", torch.softmax(s, -1), v)
        assert (got[i] - want).abs().max().item() < 2e-2 * want.abs().max().item(), ln


def test_decode_splits_even_out():
    """The split rule alone (no GPU: no growth by the multiprocessor count): about
    decode_chunk positions a split, evened out and rounded up to decode_tn, never a split of
    a few positions."""
    pytest.importorskip("torch")
    from llama.layer import DecoderLayer  # noqa: PLC0415

    layer = DecoderLayer(LLAMA3_8B, None)  # decode_chunk 512, decode_tn 64
    assert layer.decode_splits(32, 4096) == (8, 512)
    assert layer.decode_splits(32, 4097) == (8, 576)  # not 8 of 512 and one of 1
    assert layer.decode_splits(1, 100) == (1, 128)
    small = DecoderLayer(SMALL, None)  # 32 and 16
    assert small.decode_splits(2, 97) == (3, 48)


def test_generate_picks_the_reference_argmax():
    """Greedy tokens: each the reference's argmax, or within bfloat16 error of it (a near tie
    may go either way), with the reference fed the same tokens."""
    torch, m, ref = _model_and_ref(SMALL, 2, seed=3)
    prompt = torch.randint(0, SMALL.vocab, (2, 8), generator=torch.Generator().manual_seed(1))
    with sim():
        new = m.generate(prompt, 4)
    assert new.shape == (2, 4)
    logits = ref.forward(torch.cat([prompt, new[:, :-1]], 1))[:, 7:]
    chosen = logits.gather(-1, new[..., None])[..., 0]
    gap = (logits.max(-1).values - chosen).max().item()
    assert gap < 3e-2 * logits.abs().max().item()


def test_decode_refuses_a_full_cache():
    torch, m, _ = _model_and_ref(SMALL, 1, seed=0)
    cache = m.new_cache(1, 4)
    cache.length = 4
    with pytest.raises(ValueError, match="cache is full"):
        m.decode(torch.zeros(1, dtype=torch.long), cache)


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
def test_medium_model_on_the_gpu():
    """Two layers at hidden 1024 (8 heads of 128, 2 KV heads, MLP 2816): the large tiles of
    every kernel, a 200-token prompt (edge tiles), batch 3, against the reference."""
    from llama.config import MEDIUM  # noqa: PLC0415

    torch, m, ref = _model_and_ref(MEDIUM, 2, seed=5, device="cuda")
    _check_model(torch, m, ref, batch=3, prompt=200, device="cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
@pytest.mark.parametrize("m", [32, 5])
def test_split_down_projection_on_the_gpu(m):
    """Decode's down projection at Llama-3-8B's shape through DecoderLayer.matmul, which
    splits K there (config.split_for: 8 splits of 128-wide tiles; 5 rows: a 16-row tile
    with rows past the array), against float64: one bfloat16 rounding of the float32 sum."""
    torch = pytest.importorskip("torch")
    from llama.layer import DecoderLayer  # noqa: PLC0415

    c = LLAMA3_8B
    assert split_for(m, c.mlp, c.hidden) is not None
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(m, c.mlp, device="cuda", generator=g).to(torch.bfloat16)
    w = (torch.randn(c.mlp, c.hidden, device="cuda", generator=g) / c.mlp ** 0.5).to(
        torch.bfloat16)
    r = torch.randn(m, c.hidden, device="cuda", generator=g).to(torch.bfloat16)
    out = DecoderLayer.matmul(a, w, residual=r)
    want = a.double() @ w.double() + r.double()
    err = (out.double() - want).abs() / want.abs().clamp_min(1.0)
    assert out.shape == (m, c.hidden) and float(err.max()) <= 2 * U_BF16


def test_command_line_generates_in_the_simulator(capsys):
    pytest.importorskip("torch")
    from llama import run  # noqa: PLC0415

    run.main(["--small", "--simulate", "--layers", "1", "--batch", "1", "--prompt", "4",
              "--new", "3", "--check"])
    out = capsys.readouterr().out
    assert "1 x 3 tokens" in out and "gap to the reference" in out
    gap = float(out.split("argmax logit: ")[1].split()[0])
    assert gap < 3e-2
