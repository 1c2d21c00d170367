"""The same decoder in plain torch operations, float32: what the tests compare the kernels with.

``RefModel(model)`` takes a ``layer.Model``'s weights (their bfloat16 values in float32) and
computes in float32 without threadtile: RMSNorm, rotate-half RoPE, grouped-query attention with
an explicit causal mask, SwiGLU, a float32 KV cache.
"""

from __future__ import annotations

import math

import torch


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rope(x: torch.Tensor, pos: torch.Tensor, theta: float) -> torch.Tensor:
    """x (..., tokens, heads, D) rotated by the positions ``pos`` (..., tokens)."""
    d = x.shape[-1]
    inv = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = (pos.to(torch.float64)[..., None] * inv)[..., None, :]  # (..., tokens, 1, D/2)
    cos, sin = torch.cos(ang).float(), torch.sin(ang).float()
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attention(q, k, v, start: int) -> torch.Tensor:
    """q (b, s, h, d) at positions start..start+s-1 against k, v (b, start+s, kv, d), causal."""
    g = q.shape[2] // k.shape[2]
    k, v = k.repeat_interleave(g, dim=2), v.repeat_interleave(g, dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    qpos = start + torch.arange(q.shape[1])
    mask = torch.arange(k.shape[1])[None, :] > qpos[:, None]
    p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", p, v)


class RefLayer:
    def __init__(self, cfg, w):
        self.cfg = cfg
        f = lambda t: t.detach().to("cpu", torch.float32)  # noqa: E731
        self.attn_norm, self.wqkv, self.wo = f(w.attn_norm), f(w.wqkv), f(w.wo)
        self.mlp_norm, self.w_gate, self.w_up, self.w_down = (
            f(w.mlp_norm), f(w.w_gate), f(w.w_up), f(w.w_down))

    def __call__(self, x: torch.Tensor, cache: list, start: int) -> torch.Tensor:
        """x (b, s, hidden) at positions start...; ``cache`` [k, v] (b, start, kv, d) or
        [None, None], extended in place."""
        c = self.cfg
        b, s, _ = x.shape
        qkv = rms_norm(x, self.attn_norm, c.eps) @ self.wqkv
        qkv = qkv.view(b, s, c.heads + 2 * c.kv_heads, c.head_dim)
        pos = (start + torch.arange(s)).expand(b, s)
        q = rope(qkv[:, :, :c.heads], pos, c.rope_theta)
        k = rope(qkv[:, :, c.heads:c.heads + c.kv_heads], pos, c.rope_theta)
        v = qkv[:, :, c.heads + c.kv_heads:]
        if cache[0] is not None:
            k, v = torch.cat([cache[0], k], 1), torch.cat([cache[1], v], 1)
        cache[0], cache[1] = k, v
        h = x + attention(q, k, v, start).reshape(b, s, -1) @ self.wo
        n = rms_norm(h, self.mlp_norm, c.eps)
        return h + (torch.nn.functional.silu(n @ self.w_gate) * (n @ self.w_up)) @ self.w_down


class RefModel:
    """The float32 reference of a ``layer.Model`` (same weights)."""

    def __init__(self, model):
        self.cfg = model.cfg
        self.layers = [RefLayer(model.cfg, layer.w) for layer in model.layers]
        f = lambda t: t.detach().to("cpu", torch.float32)  # noqa: E731
        self.embed, self.norm, self.lm_head = f(model.embed), f(model.norm), f(model.lm_head)

    def forward(self, ids: torch.Tensor, caches: list | None = None, start: int = 0):
        """Logits (b, s, vocab) of ids (b, s) at positions start...; ``caches`` one [k, v]
        per layer (``None``: fresh)."""
        caches = caches if caches is not None else [[None, None] for _ in self.layers]
        x = self.embed[ids.cpu()]
        for layer, cache in zip(self.layers, caches):
            x = layer(x, cache, start)
        return rms_norm(x, self.norm, self.cfg.eps) @ self.lm_head

    def generate(self, prompt_ids: torch.Tensor, n_new: int) -> torch.Tensor:
        caches = [[None, None] for _ in self.layers]
        nxt = self.forward(prompt_ids, caches)[:, -1].argmax(-1)
        out, pos = [nxt], prompt_ids.shape[1]
        for _ in range(n_new - 1):
            nxt = self.forward(nxt[:, None], caches, pos)[:, -1].argmax(-1)
            out.append(nxt)
            pos += 1
        return torch.stack(out, dim=1)
