"""The decoder layer tensor-parallel over the ranks of a ``torch.distributed`` group
(Megatron-style): each rank holds a 1/world share of the heads and of the MLP and runs the same
threadtile kernels as ``layer.DecoderLayer`` on its share; two all-reduces (sums) per layer make
every rank's output the whole layer's.

What each of the ``world`` ranks holds (rank r, ``shard_weights``):

- attention: query heads ``r H/w ... (r + 1) H/w - 1`` and KV heads ``r KV/w ...`` (H query and
  KV key/value heads; a query head's KV head, ``h // group``, lands on the same rank). ``wqkv``
  is column-sharded part by part: this rank's Q columns, then its K columns, then its V
  columns, the Q | K | V layout ``layer.py`` reads. ``wo`` is row-sharded: the rows of this
  rank's query heads. The KV cache holds this rank's KV heads only (``shard_cache``).
- MLP: ``w_gate`` and ``w_up`` column-sharded (columns ``r F/w ... (r + 1) F/w - 1`` of each),
  ``w_down`` row-sharded (the same rows). The gate and up shards are packed for the SwiGLU
  kernel on the rank (``DecoderLayer._gate_up`` packs whatever it holds), never cut from the
  whole layer's packed weight, whose tile blocks would straddle the ranks.
- the two RMSNorm weights: replicated.

The forward (``TPDecoderLayer``) is ``DecoderLayer``'s, prefill and decode alike, on the
rank's shapes (``ShardConfig``: hidden stays the model's, heads, KV heads and MLP width are
divided by world). Its two projections that end a residual branch, ``Wo`` and ``Wdown``, give a
partial product on each rank (a sum over this rank's heads, or MLP columns); these are summed
with ``torch.distributed.all_reduce``. The residual is added exactly once: on rank 0, in the
projection's epilogue (``matmul_add``, as the one-GPU layer adds it), the other ranks computing
the bare product (``matmul``), so the all-reduce's sum is ``x + sum_r partial_r``.

``reduce_dtype`` is what the partial products are stored and summed in: bfloat16 (default,
Megatron's choice, half the bytes on the wire) or float32 (one rounding to bfloat16 after the
sum, as the one-GPU layer rounds once; twice the bytes).

Each rank uses the ``torch.distributed`` process group it is given (default: the world), with
its rank ``rank`` in it; NCCL on GPUs (one device per rank), gloo on CPU tensors under
``threadtile.simulate()`` (the tests).
"""

from __future__ import annotations

import dataclasses

import torch

from .config import Config
from .layer import DecoderLayer, LayerWeights

__all__ = ["ShardConfig", "TPDecoderLayer", "shard_cache", "shard_config", "shard_weights"]


@dataclasses.dataclass(frozen=True)
class ShardConfig(Config):
    """One rank's shapes of a layer split over ``world`` ranks: ``heads``, ``kv_heads`` and
    ``mlp`` are the rank's share; ``hidden`` (the layer's input and output width) is the
    whole model's, so ``hidden == heads * head_dim * world``. ``full`` is the whole layer's
    ``Config``. Made by ``shard_config``."""

    world: int = 1

    def __post_init__(self) -> None:
        if self.world < 1:
            raise ValueError(f"ShardConfig: world must be at least 1, not {self.world}")
        self.full  # noqa: B018  (the whole layer's Config: its checks, hidden's included)

    @property
    def full(self) -> Config:
        """The whole layer's shapes (this rank's times world)."""
        return _split(Config, self, lambda n: n * self.world)


_SPLIT = ("heads", "kv_heads", "mlp")  # what the ranks share out


def _split(cls, cfg: Config, share, **extra) -> Config:
    """A ``cls`` with ``cfg``'s fields, ``share`` applied to the heads, KV heads and MLP
    width."""
    fields = {k: getattr(cfg, k) for k in Config.__dataclass_fields__}
    return cls(**{**fields, **{k: share(fields[k]) for k in _SPLIT}}, **extra)


def shard_config(cfg: Config, world: int) -> ShardConfig:
    """Each rank's shapes of ``cfg``'s layer over ``world`` ranks. ValueError unless ``world``
    divides the query heads, the KV heads and the MLP width."""
    if isinstance(cfg, ShardConfig):
        raise ValueError("shard_config: cfg is already one rank's share (ShardConfig)")
    if not isinstance(world, int) or world < 1:
        raise ValueError(f"shard_config: world must be a positive int, not {world!r}")
    for name in _SPLIT:
        v = getattr(cfg, name)
        if v % world:
            raise ValueError(f"shard_config: {name} = {v} is not divisible by world = {world} "
                             f"(every rank takes an equal share of the {name})")
    return _split(ShardConfig, cfg, lambda n: n // world, world=world)


def _check_rank(rank: int, world: int) -> None:
    if not 0 <= rank < world:
        raise ValueError(f"rank {rank} is not in 0...{world - 1}")


def shard_weights(cfg: Config, w: LayerWeights, rank: int, world: int,
                  device: torch.device | str | None = None) -> LayerWeights:
    """Rank ``rank``'s share of the whole layer's weights ``w`` (shapes ``cfg``), on ``device``
    (default: where ``w`` is), each a contiguous tensor: see the module's docstring."""
    sc = shard_config(cfg, world)
    _check_rank(rank, world)
    d = cfg.head_dim
    hq, hkv, f = sc.heads * d, sc.kv_heads * d, sc.mlp  # this rank's widths
    q0 = rank * hq                                       # columns in the Q | K | V layout
    k0 = cfg.heads * d + rank * hkv
    v0 = (cfg.heads + cfg.kv_heads) * d + rank * hkv
    wqkv = torch.cat([w.wqkv[:, q0:q0 + hq], w.wqkv[:, k0:k0 + hkv], w.wqkv[:, v0:v0 + hkv]],
                     dim=1)
    cols = slice(rank * f, (rank + 1) * f)

    def put(t: torch.Tensor) -> torch.Tensor:
        return t.to(device=device if device is not None else t.device).contiguous()

    return LayerWeights(attn_norm=put(w.attn_norm.clone()), wqkv=put(wqkv),
                        wo=put(w.wo[q0:q0 + hq]), mlp_norm=put(w.mlp_norm.clone()),
                        w_gate=put(w.w_gate[:, cols]), w_up=put(w.w_up[:, cols]),
                        w_down=put(w.w_down[cols]))


def shard_cache(cache: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Rank ``rank``'s KV heads of a whole layer's K or V cache (..., kv_heads, head_dim), a
    contiguous copy."""
    _check_rank(rank, world)
    kv = cache.shape[-2]
    if kv % world:
        raise ValueError(f"shard_cache: {kv} KV heads are not divisible by world = {world}")
    n = kv // world
    return cache[..., rank * n:(rank + 1) * n, :].contiguous()


class TPDecoderLayer(DecoderLayer):
    """One rank's share of a decoder layer: ``DecoderLayer``'s prefill and decode on the
    rank's shapes and weights, the output and MLP-down projections all-reduced over ``group``
    (the residual added once, on rank 0). Every rank gets the whole layer's output.

    ``cfg`` is the rank's ``ShardConfig`` and ``weights`` its ``shard_weights``
    (``from_full`` makes both from the whole layer's); ``rank`` is this rank's index in
    ``group`` (default group: the world). The caches handed to ``prefill`` and ``decode`` are
    the rank's: (batch, max_seq, kv_heads / world, head_dim) (``shard_cache``)."""

    def __init__(self, cfg: ShardConfig, weights: LayerWeights, rank: int, group=None,
                 reduce_dtype: torch.dtype = torch.bfloat16):
        if not isinstance(cfg, ShardConfig):
            raise TypeError("TPDecoderLayer: cfg must be a ShardConfig (shard_config(cfg, world))")
        if reduce_dtype not in (torch.bfloat16, torch.float32):
            raise ValueError(f"TPDecoderLayer: reduce_dtype must be bfloat16 or float32, not "
                             f"{reduce_dtype}")
        _check_rank(rank, cfg.world)
        super().__init__(cfg, weights)
        self.rank, self.group, self.reduce_dtype = rank, group, reduce_dtype

    @classmethod
    def from_full(cls, cfg: Config, weights: LayerWeights, rank: int, world: int,
                  device: torch.device | str | None = None, group=None,
                  reduce_dtype: torch.dtype = torch.bfloat16) -> TPDecoderLayer:
        """Rank ``rank``'s layer of ``world`` from the whole layer's shapes and weights."""
        return cls(shard_config(cfg, world), shard_weights(cfg, weights, rank, world, device),
                   rank, group, reduce_dtype)

    def _reduced(self, a: torch.Tensor, w: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """residual + the sum over the ranks of a @ w (each rank's a and w its share)."""
        p = self.matmul(a, w, residual=residual if self.rank == 0 else None,
                        dtype=self.reduce_dtype)
        if self.cfg.world > 1:
            torch.distributed.all_reduce(p, group=self.group)
        return p.to(residual.dtype)

    def out_proj(self, o: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """residual + o @ Wo over all ranks' heads."""
        return self._reduced(o, self.w.wo, residual)

    def down_proj(self, act: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """residual + act @ Wdown over all ranks' MLP columns."""
        return self._reduced(act, self.w.w_down, residual)
