"""The decoder composed from the kernels: ``DecoderLayer``, ``Model`` (embedding and LM head in
torch), ``KVCache`` and a greedy ``generate``.

Tensors are torch tensors: CUDA tensors on the GPU, CPU tensors under ``threadtile.simulate()``
(the simulator runs each kernel on them in place). Activations and weights are bfloat16;
the kernels compute in float32.

Weights are stored as the kernels read them, (in, out): ``y = x @ w`` (``torch.nn.Linear``'s
weight transposed). The MLP's gate and up weights are packed side by side in blocks of the
SwiGLU kernel's tile width (``kernels.pack_gate_up``).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import torch

from threadtile.tile import cdiv

from . import kernels as K
from .config import Config, split_for, tiles_for


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


@dataclasses.dataclass
class LayerWeights:
    """One layer's weights (bfloat16, (in, out) for the projections)."""

    attn_norm: torch.Tensor  # (hidden,)
    wqkv: torch.Tensor       # (hidden, (heads + 2 kv_heads) head_dim): Q, K, V columns
    wo: torch.Tensor         # (heads head_dim, hidden)
    mlp_norm: torch.Tensor   # (hidden,)
    w_gate: torch.Tensor     # (hidden, mlp)
    w_up: torch.Tensor       # (hidden, mlp)
    w_down: torch.Tensor     # (mlp, hidden)

    @staticmethod
    def random(cfg: Config, generator: torch.Generator, device="cpu") -> LayerWeights:
        """Random weights scaled so that activations keep their size: N(0, 1/fan_in) entries,
        norm weights near 1."""
        def w(rows, cols):
            return (torch.randn(rows, cols, generator=generator) / math.sqrt(rows)).to(
                device=device, dtype=torch.bfloat16)

        def norm():
            return (1 + 0.1 * torch.randn(cfg.hidden, generator=generator)).to(
                device=device, dtype=torch.bfloat16)

        return LayerWeights(norm(), w(cfg.hidden, cfg.qkv_width),
                            w(cfg.heads * cfg.head_dim, cfg.hidden), norm(),
                            w(cfg.hidden, cfg.mlp), w(cfg.hidden, cfg.mlp),
                            w(cfg.mlp, cfg.hidden))


@dataclasses.dataclass
class KVCache:
    """Contiguous K and V caches of every layer, (layers, batch, max_seq, kv_heads, head_dim),
    with ``length`` positions filled in every sequence (``lens`` on the device, int32)."""

    k: torch.Tensor
    v: torch.Tensor
    lens: torch.Tensor
    length: int = 0

    @staticmethod
    def empty(cfg: Config, layers: int, batch: int, max_seq: int, device) -> KVCache:
        shape = (layers, batch, max_seq, cfg.kv_heads, cfg.head_dim)
        return KVCache(torch.zeros(shape, dtype=torch.bfloat16, device=device),
                       torch.zeros(shape, dtype=torch.bfloat16, device=device),
                       torch.zeros(batch, dtype=torch.int32, device=device))


class DecoderLayer(torch.nn.Module):
    """Llama's pre-norm decoder layer: ``h = x + Wo attn(rope(Wqkv rmsnorm(x)))``, then
    ``h + Wdown (silu(Wg n) * Wu n)`` with ``n = rmsnorm(h)``; each step a threadtile kernel."""

    def __init__(self, cfg: Config, weights: LayerWeights):
        super().__init__()
        self.cfg = cfg
        self.w = weights
        self._swiglu_tn = {}  # tn -> packed gate/up weight

    def _gate_up(self, tn: int) -> torch.Tensor:
        if tn not in self._swiglu_tn:
            self._swiglu_tn[tn] = K.pack_gate_up(self.w.w_gate, self.w.w_up, tn).contiguous()
        return self._swiglu_tn[tn]

    # -- pieces, each one or two launches ----------------------------------------------------

    def rms_norm(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        K.rms_norm[(x.shape[0],)](x, w, y, self.cfg.eps, _next_pow2(x.shape[1]))
        return y

    @staticmethod
    def matmul(a: torch.Tensor, b: torch.Tensor, residual: torch.Tensor | None = None,
               dtype: torch.dtype | None = None) -> torch.Tensor:
        """A @ B (+ residual), stored as ``dtype`` (default A's)."""
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, dtype=dtype or a.dtype, device=a.device)
        split = split_for(m, k, n)
        if split is not None:  # few rows: K split over blocks, then the sum (config.split_for)
            tm, tn, tk, splits = split
            tiles = (cdiv(m, tm), cdiv(n, tn))
            part = torch.empty(splits, m, n, dtype=torch.float32, device=a.device)
            K.matmul_part[(*tiles, splits)](a, b, part, tm, tn, tk, cdiv(cdiv(k, tk), splits))
            K.combine[tiles](part, c if residual is None else residual, c, splits, tm, tn,
                             residual is not None)
            return c
        tm, tn, tk = tiles_for(m, k, n)
        grid = (cdiv(m, tm), cdiv(n, tn))
        if residual is None:
            K.matmul[grid](a, b, c, tm, tn, tk)
        else:
            K.matmul_add[grid](a, b, residual, c, tm, tn, tk)
        return c

    def mlp(self, h: torch.Tensor) -> torch.Tensor:
        """h + Wdown (silu(Wg n) * Wu n), n = rmsnorm(h)."""
        n = self.rms_norm(h, self.w.mlp_norm)
        m, k = n.shape
        tm, tn, tk = tiles_for(m, k, self.cfg.mlp, swiglu=True)
        act = torch.empty(m, self.cfg.mlp, dtype=h.dtype, device=h.device)
        K.matmul_swiglu[(cdiv(m, tm), self.cfg.mlp // tn)](n, self._gate_up(tn), act, tm, tn,
                                                             tk)
        return self.down_proj(act, h)

    # the two projections that end in the residual: hooks where the tensor-parallel layer
    # (tp.py) sums its ranks' partial products
    def out_proj(self, o: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """residual + o @ Wo: the attention's output projection."""
        return self.matmul(o, self.w.wo, residual=residual)

    def down_proj(self, act: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """residual + act @ Wdown: the MLP's output projection."""
        return self.matmul(act, self.w.w_down, residual=residual)

    def qkv(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """(tokens, qkv_width): the projections of rmsnorm(x), Q and K rotated in place."""
        c = self.cfg
        qkv = self.matmul(self.rms_norm(x, self.w.attn_norm), self.w.wqkv)
        heads = qkv.view(qkv.shape[0], c.heads + 2 * c.kv_heads, c.head_dim)
        lt = math.log2(c.rope_theta)
        K.rope[(qkv.shape[0],)](heads[:, :c.heads], positions, lt, c.heads, c.head_dim)
        K.rope[(qkv.shape[0],)](heads[:, c.heads:c.heads + c.kv_heads], positions, lt,
                                c.kv_heads, c.head_dim)
        return qkv

    # -- the layer ----------------------------------------------------------------------------

    def prefill(self, x: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor) -> torch.Tensor:
        """x (batch, seq, hidden) of fresh sequences: the layer's output, and K and V written
        to this layer's caches ``kc``/``vc`` (batch, max_seq, kv_heads, head_dim) at 0..seq."""
        c = self.cfg
        b, s, _ = x.shape
        flat = x.reshape(b * s, c.hidden)
        pos = torch.arange(s, dtype=torch.int32, device=x.device).repeat(b)
        qkv = self.qkv(flat, pos).view(b, s, c.heads + 2 * c.kv_heads, c.head_dim)
        q, k = qkv[:, :, :c.heads], qkv[:, :, c.heads:c.heads + c.kv_heads]
        v = qkv[:, :, c.heads + c.kv_heads:]
        zero = torch.zeros(b, dtype=torch.int32, device=x.device)
        K.kv_store[(s, b)](kc, vc, k, v, zero, c.kv_heads, c.head_dim)
        o = torch.empty(b, s, c.heads, c.head_dim, dtype=x.dtype, device=x.device)
        K.attention_prefill[(c.heads, cdiv(s, c.attn_tm), b)](
            q, k, v, o, 1 / math.sqrt(c.head_dim), c.group, c.head_dim, c.attn_tm, c.attn_tn)
        h = self.out_proj(o.view(b * s, -1), flat)
        return self.mlp(h).view(b, s, c.hidden)

    def decode(self, x: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, lens: torch.Tensor,
               length: int) -> torch.Tensor:
        """x (batch, hidden), one new token per sequence at position ``lens[b]`` (``length``:
        the largest, on the host): the layer's output, K and V appended to the caches."""
        c = self.cfg
        b = x.shape[0]
        qkv = self.qkv(x, lens).view(b, 1, c.heads + 2 * c.kv_heads, c.head_dim)
        k, v = qkv[:, :, c.heads:c.heads + c.kv_heads], qkv[:, :, c.heads + c.kv_heads:]
        K.kv_store[(1, b)](kc, vc, k, v, lens, c.kv_heads, c.head_dim)
        o = self.attention_decode(qkv[:, 0, :c.heads], kc, vc, lens + 1, length + 1)
        h = self.out_proj(o.view(b, -1), x)
        return self.mlp(h)

    def decode_splits(self, batch: int, length: int, device=None) -> tuple[int, int]:
        """(splits, positions a split) of flash decoding for ``batch`` sequences of up to
        ``length`` cached positions. Splits of about decode_chunk positions, evened out: a
        length just past a multiple of decode_chunk (4097) makes no split of a few positions
        (each costs a block and the combination a wider load), its positions go to the
        others. On a GPU (``device``) the splits grow longer while their blocks still fill
        the multiprocessors twice over."""
        c = self.cfg
        base = c.decode_chunk
        if device is not None:
            sms = _multiprocessors(device.index)
            while 2 * base <= length and batch * c.kv_heads * (length // (2 * base)) >= 2 * sms:
                base *= 2
        splits = max(1, length // base)
        chunk = cdiv(cdiv(length, splits), c.decode_tn) * c.decode_tn
        return cdiv(length, chunk), chunk

    def attention_decode(self, q, kc, vc, lens, length: int) -> torch.Tensor:
        """Flash decoding: q (batch, heads, head_dim) against ``lens[b]`` cached positions
        (``length`` the largest): the splits, then their combination."""
        c = self.cfg
        b = q.shape[0]
        splits, chunk = self.decode_splits(b, length, q.device if q.is_cuda else None)
        opart = torch.empty(b, c.kv_heads, splits, c.group, c.head_dim, dtype=torch.float32,
                            device=q.device)
        lse = torch.empty(b, c.kv_heads, splits, c.group, dtype=torch.float32, device=q.device)
        o = torch.empty(b, c.heads, c.head_dim, dtype=q.dtype, device=q.device)
        K.attention_decode[(splits, c.kv_heads, b)](
            q, kc, vc, lens, opart, lse, 1 / math.sqrt(c.head_dim), c.group, c.head_dim,
            c.decode_tn, chunk)
        K.attention_combine[(c.kv_heads, b)](opart, lse, o, c.group, c.head_dim,
                                             _next_pow2(splits))
        return o


@functools.cache
def _multiprocessors(device: int | None) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


class Model(torch.nn.Module):
    """An embedding, N ``DecoderLayer``s, a final RMSNorm (a kernel) and an LM head (torch)."""

    def __init__(self, cfg: Config, layers: int | None = None, seed: int = 0, device="cpu"):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.cfg = cfg
        n = cfg.layers if layers is None else layers
        self.layers = torch.nn.ModuleList(
            DecoderLayer(cfg, LayerWeights.random(cfg, g, device)) for _ in range(n))
        self.embed = torch.randn(cfg.vocab, cfg.hidden, generator=g).to(device, torch.bfloat16)
        self.norm = (1 + 0.1 * torch.randn(cfg.hidden, generator=g)).to(device, torch.bfloat16)
        self.lm_head = (torch.randn(cfg.hidden, cfg.vocab, generator=g) /
                        math.sqrt(cfg.hidden)).to(device, torch.bfloat16)

    def new_cache(self, batch: int, max_seq: int) -> KVCache:
        return KVCache.empty(self.cfg, len(self.layers), batch, max_seq, self.embed.device)

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        return (self.layers[0].rms_norm(x, self.norm) @ self.lm_head).float()

    def prefill(self, ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """ids (batch, seq) into an empty cache: the logits (batch, seq, vocab), float32."""
        if cache.length:
            raise ValueError("Model.prefill: the cache must be empty (no chunked prefill)")
        b, s = ids.shape
        x = self.embed[ids]
        for i, layer in enumerate(self.layers):
            x = layer.prefill(x, cache.k[i], cache.v[i])
        cache.lens.fill_(s)
        cache.length = s
        return self._logits(x.reshape(b * s, -1)).view(b, s, -1)

    def decode(self, ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """ids (batch,), one token per sequence after its cached ones: logits (batch, vocab)."""
        if cache.length >= cache.k.shape[2]:
            raise ValueError(f"Model.decode: the cache is full ({cache.length} positions)")
        x = self.embed[ids]
        for i, layer in enumerate(self.layers):
            x = layer.decode(x, cache.k[i], cache.v[i], cache.lens, cache.length)
        cache.lens += 1
        cache.length += 1
        return self._logits(x)

    @torch.no_grad()
    def generate(self, prompt_ids: torch.Tensor, n_new: int) -> torch.Tensor:
        """Greedy decoding: the ``n_new`` tokens (batch, n_new) following ``prompt_ids``
        (batch, prompt)."""
        b, s = prompt_ids.shape
        cache = self.new_cache(b, s + n_new)
        nxt = self.prefill(prompt_ids, cache)[:, -1].argmax(-1)
        out = [nxt]
        for _ in range(n_new - 1):
            nxt = self.decode(nxt, cache).argmax(-1)
            out.append(nxt)
        return torch.stack(out, dim=1)
