"""A Llama-3-8B decoder layer in threadtile kernels (examples/llama) against torch eager.

bfloat16, random weights, Llama-3-8B's layer shapes (``--small``: the tests' tiny config, a
smoke run). Each time is a CUDA-event median (``_common.cuda_time_ms``):

- ``layer``: one decoder layer, prefill (batch 1 x 4096 tokens, causal) and decode (batch 32,
  one token each against a 4096-token cache): threadtile's ``DecoderLayer`` beside the same
  layer in torch eager (cuBLAS matmuls, ``scaled_dot_product_attention`` with GQA, torch's
  RMSNorm, RoPE and SwiGLU in tensor operations). The outputs are compared (largest
  difference over the output's largest value). Each side is timed again as a CUDA-graph
  replay (``graphed``): a layer of many small kernels launched from Python can leave the GPU
  waiting on the host, so the plain figures depend on the host's speed; the graphed ones are
  device time alone.
- ``attention``: the attention alone. Prefill: ``attention_prefill`` against SDPA (causal,
  GQA), TFLOP/s counting 4 B H S^2 D / 2. Decode: ``attention_decode`` + ``attention_combine``
  against SDPA over the cache, GB/s of the KV cache read (2 B S KV D 2 bytes) against the
  device's HBM bandwidth.
- ``mlp``: the SwiGLU projection alone (prefill's 4096 rows): ``matmul_swiglu`` (gate and up
  packed, one accumulator: the pipelined k loop) against ``matmul_swiglu_two`` (two
  accumulators, as first written) and torch (``silu(n @ Wg) * (n @ Wu)``), TFLOP/s.
- ``generate``: tokens/s of a 4-layer model's greedy loop (batch 32, a 128-token prompt, 64
  new tokens; prefill included, and the decode steps alone).

    python bench/llama.py            # Llama-3-8B shapes, on a GPU
    python bench/llama.py --small    # the tiny config: a smoke run

Writes results/llama.json (``--small``: llama_small.json).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

from _common import RESULTS, commit, cuda_time_ms, graphed_time_ms, write

HBM_GBS = {"H100": 3350.0, "H200": 4800.0, "A100": 2039.0}  # the SXM parts' datasheet figures


def hbm_bound(name: str) -> float | None:
    for key, gbs in HBM_GBS.items():
        if key in name:
            return gbs
    return None


class EagerLayer:
    """The same layer (same weights) in torch operations, bfloat16, as a torch user writes it."""

    def __init__(self, cfg, w):
        import torch  # noqa: PLC0415

        self.cfg, self.w, self.torch = cfg, w, torch

    def norm(self, x, w):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg.eps)).to(
            x.dtype) * w

    def rope(self, x, pos):  # x (b, s, h, d), pos (b, s)
        d = x.shape[-1]
        inv = self.cfg.rope_theta ** (-self.torch.arange(0, d, 2, device=x.device).float() / d)
        ang = (pos.float()[..., None] * inv)[:, :, None, :]
        cos, sin = ang.cos(), ang.sin()
        x1, x2 = x[..., : d // 2].float(), x[..., d // 2:].float()
        return self.torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).to(x.dtype)

    def __call__(self, x, kc, vc, start):
        """x (b, s, hidden) at positions start..., the caches (b, max_seq, kv, d) filled to
        ``start``: the output; K and V written to the caches."""
        from torch.nn.functional import scaled_dot_product_attention as sdpa  # noqa: PLC0415

        c, w, torch = self.cfg, self.w, self.torch
        b, s, _ = x.shape
        qkv = (self.norm(x, w.attn_norm) @ w.wqkv).view(b, s, -1, c.head_dim)
        pos = (start + torch.arange(s, device=x.device)).expand(b, s)
        q = self.rope(qkv[:, :, :c.heads], pos)
        kc[:, start:start + s] = self.rope(qkv[:, :, c.heads:c.heads + c.kv_heads], pos)
        vc[:, start:start + s] = qkv[:, :, c.heads + c.kv_heads:]
        k, v = kc[:, :start + s].transpose(1, 2), vc[:, :start + s].transpose(1, 2)
        o = sdpa(q.transpose(1, 2), k, v, is_causal=s > 1, enable_gqa=True)
        h = x + self.reduce(o.transpose(1, 2).reshape(b, s, -1) @ w.wo)
        n = self.norm(h, w.mlp_norm)
        return h + self.reduce((torch.nn.functional.silu(n @ w.w_gate) * (n @ w.w_up)) @ w.w_down)

    def reduce(self, p):
        """A residual branch's output before it is added (bench/llama_tp.py all-reduces the
        ranks' partial products here)."""
        return p


def rel(a, b) -> float:
    return round(((a.float() - b.float()).abs().max() / b.float().abs().max()).item(), 5)


def bench_layer(cfg, seq: int, batch: int, ctx: int, out: dict) -> None:
    import torch  # noqa: PLC0415
    from llama.layer import DecoderLayer, LayerWeights  # noqa: PLC0415

    g = torch.Generator().manual_seed(0)
    w = LayerWeights.random(cfg, g, "cuda")
    layer, eager = DecoderLayer(cfg, w), EagerLayer(cfg, w)
    kv = (cfg.kv_heads, cfg.head_dim)

    # prefill: batch 1 x seq
    x = torch.randn(1, seq, cfg.hidden, device="cuda").to(torch.bfloat16)
    caches = [torch.zeros(1, seq, *kv, dtype=torch.bfloat16, device="cuda") for _ in range(4)]
    t0 = time.perf_counter()
    y = layer.prefill(x, caches[0], caches[1])
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    y_ref = eager(x, caches[2], caches[3], 0)
    t_tt = cuda_time_ms(lambda: layer.prefill(x, caches[0], caches[1]))
    t_eager = cuda_time_ms(lambda: eager(x, caches[2], caches[3], 0))
    out["layer_prefill"] = {"batch": 1, "seq": seq, "threadtile_ms": round(t_tt, 4),
                            "eager_ms": round(t_eager, 4), "vs_eager": round(t_eager / t_tt, 3),
                            "max_rel_diff": rel(y, y_ref), "first_call_s": round(first, 2)}
    print(f"layer prefill 1x{seq}: threadtile {t_tt:.3f} ms, eager {t_eager:.3f} ms "
          f"({t_eager / t_tt:.2f}x), diff {out['layer_prefill']['max_rel_diff']}", flush=True)
    out["layer_prefill"]["graphed"] = _graphed(
        lambda: layer.prefill(x, caches[0], caches[1]), lambda: eager(x, caches[2], caches[3], 0))

    # decode: batch x 1 token against ctx - 1 cached positions (ctx after the append)
    kc, vc = (torch.randn(batch, ctx, *kv, device="cuda").to(torch.bfloat16) for _ in range(2))
    kc2, vc2 = kc.clone(), vc.clone()
    x = torch.randn(batch, cfg.hidden, device="cuda").to(torch.bfloat16)
    lens = torch.full((batch,), ctx - 1, dtype=torch.int32, device="cuda")
    y = layer.decode(x, kc, vc, lens, ctx - 1)
    y_ref = eager(x[:, None], kc2, vc2, ctx - 1)[:, 0]
    t_tt = cuda_time_ms(lambda: layer.decode(x, kc, vc, lens, ctx - 1))
    t_eager = cuda_time_ms(lambda: eager(x[:, None], kc2, vc2, ctx - 1))
    out["layer_decode"] = {"batch": batch, "cache": ctx, "threadtile_ms": round(t_tt, 4),
                           "eager_ms": round(t_eager, 4), "vs_eager": round(t_eager / t_tt, 3),
                           "max_rel_diff": rel(y, y_ref)}
    print(f"layer decode {batch}x1, cache {ctx}: threadtile {t_tt:.3f} ms, eager "
          f"{t_eager:.3f} ms ({t_eager / t_tt:.2f}x), diff "
          f"{out['layer_decode']['max_rel_diff']}", flush=True)
    out["layer_decode"]["graphed"] = _graphed(
        lambda: layer.decode(x, kc, vc, lens, ctx - 1),
        lambda: eager(x[:, None], kc2, vc2, ctx - 1))


def _graphed(tt, ref) -> dict:
    """Both sides of a layer timed as CUDA-graph replays (device time, no host launch gaps:
    ``_common.graphed_time_ms``), beside the plain launches above."""
    (t_tt, why_tt), (t_ref, why_ref) = graphed_time_ms(tt), graphed_time_ms(ref)
    r = {"threadtile_ms": t_tt and round(t_tt, 4), "eager_ms": t_ref and round(t_ref, 4)}
    if t_tt and t_ref:
        r["vs_eager"] = round(t_ref / t_tt, 3)
        print(f"  as CUDA graphs: threadtile {t_tt:.3f} ms, eager {t_ref:.3f} ms "
              f"({t_ref / t_tt:.2f}x)", flush=True)
    for side, why in (("threadtile", why_tt), ("eager", why_ref)):
        if why:
            r[f"{side}_not_captured"] = why
            print(f"  {side} not captured: {why}", flush=True)
    return r


def bench_attention(cfg, seq: int, batch: int, ctx: int, out: dict) -> None:
    import torch  # noqa: PLC0415
    from llama import kernels as K  # noqa: PLC0415
    from llama.layer import DecoderLayer  # noqa: PLC0415
    from torch.nn.functional import scaled_dot_product_attention as sdpa  # noqa: PLC0415

    from threadtile.tile import cdiv  # noqa: PLC0415

    h, kvh, d = cfg.heads, cfg.kv_heads, cfg.head_dim
    scale = 1 / math.sqrt(d)
    qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
    q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
    o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")

    def tt():
        K.attention_prefill[(h, cdiv(seq, cfg.attn_tm), 1)](q, k, v, o, scale, cfg.group, d,
                                                             cfg.attn_tm, cfg.attn_tn)

    def ref():
        return sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
                    enable_gqa=True)

    tt()
    diff = rel(o, ref().transpose(1, 2))
    t_tt, t_sdpa = cuda_time_ms(tt), cuda_time_ms(ref)
    flops = 4 * h * seq * seq * d / 2
    out["attention_prefill"] = {
        "seq": seq, "tile": [cfg.attn_tm, cfg.attn_tn], "threadtile_ms": round(t_tt, 4),
        "sdpa_ms": round(t_sdpa, 4), "threadtile_tflops": round(flops / t_tt / 1e9, 1),
        "sdpa_tflops": round(flops / t_sdpa / 1e9, 1), "vs_sdpa": round(t_sdpa / t_tt, 3),
        "max_rel_diff": diff}
    print(f"attention prefill {seq}: threadtile {flops / t_tt / 1e9:.1f} TFLOP/s, SDPA "
          f"{flops / t_sdpa / 1e9:.1f} TFLOP/s, diff {diff}", flush=True)

    layer = DecoderLayer(cfg, None)
    qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
    kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16)
              for _ in range(2))
    lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")

    def tt_dec():
        return layer.attention_decode(qd, kc, vc, lens, ctx)

    def ref_dec():
        return sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)

    diff = rel(tt_dec(), ref_dec()[:, :, 0])
    t_tt, t_sdpa = cuda_time_ms(tt_dec), cuda_time_ms(ref_dec)
    nbytes = 2 * batch * ctx * kvh * d * 2
    bound = hbm_bound(torch.cuda.get_device_name())
    splits, chunk = layer.decode_splits(batch, ctx, qd.device)
    row = {"batch": batch, "cache": ctx, "splits": splits, "chunk": chunk, "tn": cfg.decode_tn,
           "threadtile_ms": round(t_tt, 4), "sdpa_ms": round(t_sdpa, 4),
           "threadtile_gbs": round(nbytes / t_tt / 1e6, 1),
           "sdpa_gbs": round(nbytes / t_sdpa / 1e6, 1), "vs_sdpa": round(t_sdpa / t_tt, 3),
           "hbm_gbs": bound, "max_rel_diff": diff}
    if bound:
        row["threadtile_of_hbm"] = round(nbytes / t_tt / 1e6 / bound, 3)
        row["sdpa_of_hbm"] = round(nbytes / t_sdpa / 1e6 / bound, 3)
    out["attention_decode"] = row
    print(f"attention decode {batch}x{ctx}: threadtile {row['threadtile_gbs']} GB/s, SDPA "
          f"{row['sdpa_gbs']} GB/s (HBM {bound}), diff {diff}", flush=True)


def bench_mlp(cfg, rows: int, out: dict) -> None:
    import torch  # noqa: PLC0415
    from llama import kernels as K  # noqa: PLC0415
    from llama.config import tiles_for  # noqa: PLC0415

    from threadtile.tile import cdiv  # noqa: PLC0415

    g = torch.Generator().manual_seed(0)
    wg, wu = ((torch.randn(cfg.hidden, cfg.mlp, generator=g) / math.sqrt(cfg.hidden)).to(
        "cuda", torch.bfloat16) for _ in range(2))
    n = torch.randn(rows, cfg.hidden, device="cuda").to(torch.bfloat16)
    tm, tn, tk = tiles_for(rows, cfg.hidden, cfg.mlp, swiglu=True)
    gu = K.pack_gate_up(wg, wu, tn).contiguous()
    a, b = (torch.empty(rows, cfg.mlp, dtype=torch.bfloat16, device="cuda") for _ in range(2))
    grid = (cdiv(rows, tm), cfg.mlp // tn)
    runs = {"packed": lambda: K.matmul_swiglu[grid](n, gu, a, tm, tn, tk),
            "two_accumulators": lambda: K.matmul_swiglu_two[grid](n, wg, wu, b, tm, tn, tk),
            "torch": lambda: torch.nn.functional.silu(n @ wg) * (n @ wu)}
    flops = 2 * 2 * rows * cfg.hidden * cfg.mlp
    want = runs["torch"]()
    row = {"rows": rows, "tile": [tm, tn, tk]}
    for name, fn in runs.items():
        try:
            fn()
            got = {"packed": a, "two_accumulators": b}.get(name, want)
            t = cuda_time_ms(fn)
            row[name] = {"ms": round(t, 4), "tflops": round(flops / t / 1e9, 1),
                         "max_rel_diff": rel(got, want)}
        except Exception as e:  # noqa: BLE001  (recorded: a finding for the compiler)
            row[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    out["mlp_swiglu"] = row
    print("mlp swiglu: " + "; ".join(f"{k} {v.get('tflops', v.get('error'))} TFLOP/s"
                                     for k, v in row.items() if isinstance(v, dict)), flush=True)


def bench_generate(cfg, layers: int, batch: int, prompt: int, new: int, out: dict) -> None:
    import torch  # noqa: PLC0415
    from llama.layer import Model  # noqa: PLC0415

    m = Model(cfg, layers=layers, device="cuda")
    ids = torch.randint(0, cfg.vocab, (batch, prompt), device="cuda")
    m.generate(ids, 2)  # compiles every kernel
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    toks = m.generate(ids, new)
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    cache = m.new_cache(batch, prompt + new)
    nxt = m.prefill(ids, cache)[:, -1].argmax(-1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(new - 1):
        nxt = m.decode(nxt, cache).argmax(-1)
    torch.cuda.synchronize()
    dec = time.perf_counter() - t0
    out["generate"] = {"layers": layers, "batch": batch, "prompt": prompt, "new": new,
                       "total_s": round(total, 4),
                       "tokens_per_s": round(batch * new / total, 1),
                       "decode_tokens_per_s": round(batch * (new - 1) / dec, 1),
                       "decode_step_ms": round(dec / (new - 1) * 1e3, 3),
                       "tokens_shape": list(toks.shape)}
    print(f"generate ({layers} layers, batch {batch}, prompt {prompt}, {new} new): "
          f"{out['generate']['tokens_per_s']} tokens/s, decode alone "
          f"{out['generate']['decode_tokens_per_s']} tokens/s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the tests' tiny config")
    ap.add_argument("--parts", default="layer,attention,mlp,generate")
    o = ap.parse_args()
    from llama.config import LLAMA3_8B, SMALL  # noqa: PLC0415

    cfg = SMALL if o.small else LLAMA3_8B
    seq, batch, ctx = (64, 4, 64) if o.small else (4096, 32, 4096)
    out: dict = {"config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}}
    parts = o.parts.split(",")
    if "layer" in parts:
        bench_layer(cfg, seq, batch, ctx, out)
    if "attention" in parts:
        bench_attention(cfg, seq, batch, ctx, out)
    if "mlp" in parts:
        bench_mlp(cfg, seq, out)
    if "generate" in parts:
        bench_generate(cfg, 4, batch, 16 if o.small else 128, 8 if o.small else 64, out)
    name = "llama_small" if o.small else "llama"
    _keep_unmeasured(name, out)
    write(name, out,
          notes="Llama-3-8B layer shapes, bfloat16, random weights; torch eager peer: cuBLAS "
                "matmuls and SDPA (GQA); times are CUDA-event medians")


_PARTS = {"layer": ("layer_prefill", "layer_decode"),
          "attention": ("attention_prefill", "attention_decode"), "mlp": ("mlp_swiglu",),
          "generate": ("generate",)}


def _keep_unmeasured(name: str, out: dict) -> None:
    """The results file's parts this run did not measure (``--parts``), kept with the commit
    they were measured at (``parts_measured_at``), so that a partial run does not drop them."""
    path = RESULTS / f"{name}.json"
    here = os.environ.get("THREADTILE_COMMIT") or commit()
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        old = None
    at = dict(old["results"].get("parts_measured_at", {})) if old else {}
    for keys in _PARTS.values():
        for key in keys:
            if key in out:
                at[key] = here
            elif old and key in old["results"]:
                out[key] = old["results"][key]
                at.setdefault(key, old["commit"])
    out["parts_measured_at"] = at


if __name__ == "__main__":
    main()
