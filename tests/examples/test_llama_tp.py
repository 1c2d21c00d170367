"""The tensor-parallel decoder layer (examples/llama/tp.py): the sharding's shapes and layout;
two processes (torch.distributed, gloo), each running its share under ``threadtile.simulate()``,
against the one-process ``DecoderLayer`` on the same weights: prefill's output and KV cache,
then one decode step; on two GPUs, the same with NCCL."""

from __future__ import annotations

import contextlib
import datetime
import socket
from pathlib import Path

import pytest
from conftest import SIMULATE
from llama.config import LLAMA3_8B, MEDIUM, SMALL, Config

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
from llama.layer import DecoderLayer, LayerWeights  # noqa: E402
from llama.tp import (  # noqa: E402
    ShardConfig,
    TPDecoderLayer,
    shard_cache,
    shard_config,
    shard_weights,
)

pytestmark = pytest.mark.skipif(SIMULATE is None, reason="simulator not built")

CONFIGS = {"SMALL": SMALL, "MEDIUM": MEDIUM}
BATCH, SEQ = 2, 40  # SEQ: an edge query tile (16-row tiles); decode at 41 > SMALL's 32-chunk
SEED = 11
REDUCE = {"bfloat16": torch.bfloat16, "float32": torch.float32}
TOLERANCE = {"bfloat16": 3e-2, "float32": 1.6e-2}  # of the output's largest value


# ---- the sharding, in one process -------------------------------------------------------------

def test_shard_config_divides_heads_kv_heads_and_mlp():
    sc = shard_config(LLAMA3_8B, 2)
    assert isinstance(sc, ShardConfig)
    assert (sc.hidden, sc.heads, sc.kv_heads, sc.mlp, sc.group, sc.world) == (
        4096, 16, 4, 7168, 4, 2)
    assert sc.qkv_width == (16 + 2 * 4) * 128 and sc.full == LLAMA3_8B
    assert shard_config(SMALL, 1).full == SMALL
    for world, what in ((3, "heads = 4"), (4, "kv_heads = 2"), (0, "positive")):
        with pytest.raises(ValueError, match=what):
            shard_config(SMALL, world)
    with pytest.raises(ValueError, match="mlp = 98"):
        shard_config(Config(hidden=64, heads=4, kv_heads=4, head_dim=16, mlp=98), 4)
    with pytest.raises(ValueError, match="already"):
        shard_config(sc, 2)


def test_shards_reassemble_the_layer():
    """Concatenating the ranks' shares gives back each whole weight, in the Q | K | V layout
    for wqkv; a rank's query heads read KV heads of the same rank."""
    cfg = Config(hidden=128, heads=8, kv_heads=4, head_dim=16, mlp=256)
    w = LayerWeights.random(cfg, torch.Generator().manual_seed(0))
    for world in (1, 2, 4):
        shards = [shard_weights(cfg, w, r, world) for r in range(world)]
        sc = shard_config(cfg, world)
        d = cfg.head_dim
        hq, hkv = sc.heads * d, sc.kv_heads * d
        parts = [torch.cat([s.wqkv[:, :hq] for s in shards], 1),
                 torch.cat([s.wqkv[:, hq:hq + hkv] for s in shards], 1),
                 torch.cat([s.wqkv[:, hq + hkv:] for s in shards], 1)]
        assert all(s.wqkv.shape == (cfg.hidden, sc.qkv_width) for s in shards)
        assert torch.equal(torch.cat(parts, 1), w.wqkv)
        assert torch.equal(torch.cat([s.wo for s in shards], 0), w.wo)
        assert torch.equal(torch.cat([s.w_gate for s in shards], 1), w.w_gate)
        assert torch.equal(torch.cat([s.w_up for s in shards], 1), w.w_up)
        assert torch.equal(torch.cat([s.w_down for s in shards], 0), w.w_down)
        assert all(torch.equal(s.attn_norm, w.attn_norm) and torch.equal(s.mlp_norm, w.mlp_norm)
                   for s in shards)
        assert all(s.wqkv.is_contiguous() and s.w_gate.is_contiguous() for s in shards)
        # rank r's local query head j is global head r H/w + j, whose KV head (h // group) is
        # global r KV/w + j // group: rank r's local KV head j // group
        for r in range(world):
            for j in range(sc.heads):
                assert (r * sc.heads + j) // cfg.group == r * sc.kv_heads + j // sc.group
        kc = torch.randn(2, 5, cfg.kv_heads, d)
        assert torch.equal(torch.cat([shard_cache(kc, r, world) for r in range(world)], -2), kc)
    with pytest.raises(ValueError, match="rank 2"):
        shard_weights(cfg, w, 2, 2)


def test_one_rank_is_the_one_gpu_layer():
    """world 1 (no all-reduce): the same kernels on the same weights, bit for bit."""
    w = LayerWeights.random(SMALL, torch.Generator().manual_seed(1))
    x = torch.randn(BATCH, SEQ, SMALL.hidden).to(torch.bfloat16)
    caches = [torch.zeros(BATCH, SEQ, SMALL.kv_heads, SMALL.head_dim, dtype=torch.bfloat16)
              for _ in range(4)]
    with SIMULATE():
        want = DecoderLayer(SMALL, w).prefill(x, caches[0], caches[1])
        got = TPDecoderLayer.from_full(SMALL, w, 0, 1).prefill(x, caches[2], caches[3])
    assert torch.equal(got, want) and torch.equal(caches[2], caches[0])
    with pytest.raises(TypeError, match="ShardConfig"):
        TPDecoderLayer(SMALL, w, 0)


# ---- two ranks against one ---------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _inputs(cfg: Config) -> dict:
    g = torch.Generator().manual_seed(SEED + 1)
    return {"x": torch.randn(BATCH, SEQ, cfg.hidden, generator=g).to(torch.bfloat16),
            "x_dec": torch.randn(BATCH, cfg.hidden, generator=g).to(torch.bfloat16)}


def _run_layer(layer: DecoderLayer, cfg: Config, inp: dict, device: str) -> dict:
    """Prefill of ``inp['x']`` into fresh caches, then one decode step: outputs and caches."""
    kc, vc = (torch.zeros(BATCH, SEQ + 4, cfg.kv_heads, cfg.head_dim, dtype=torch.bfloat16,
                          device=device) for _ in range(2))
    lens = torch.full((BATCH,), SEQ, dtype=torch.int32, device=device)
    ctx = contextlib.nullcontext() if device.startswith("cuda") else SIMULATE()
    with ctx:
        y = layer.prefill(inp["x"].to(device), kc, vc)
        y_dec = layer.decode(inp["x_dec"].to(device), kc, vc, lens, SEQ)
    return {"prefill": y.cpu(), "decode": y_dec.cpu(), "k": kc.cpu(), "v": vc.cpu()}


def _rank_main(rank: int, world: int, backend: str, port: int, tmp: str, cfg_name: str) -> None:
    """One rank: its share of the layer (built from the seed, as the reference's), prefill and
    a decode step with each reduce dtype; writes rank<r>.pt."""
    torch.set_num_threads(1)
    device = "cpu" if backend == "gloo" else f"cuda:{rank}"
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    try:
        cfg = CONFIGS[cfg_name]
        w = LayerWeights.random(cfg, torch.Generator().manual_seed(SEED))
        inp = torch.load(Path(tmp, "inputs.pt"))
        out = {}
        for name, dt in REDUCE.items():
            layer = TPDecoderLayer.from_full(cfg, w, rank, world, device=device, reduce_dtype=dt)
            out[name] = _run_layer(layer, layer.cfg, inp, device)
        torch.save(out, Path(tmp, f"rank{rank}.pt"))
        dist.barrier(device_ids=[rank]) if backend == "nccl" else dist.barrier()
    finally:
        dist.destroy_process_group()


def _check_two_ranks(tmp_path: Path, backend: str, cfg: Config, cfg_name: str) -> None:
    import torch.multiprocessing as mp  # noqa: PLC0415

    world = 2
    device = "cuda:0" if backend == "nccl" else "cpu"
    inp = _inputs(cfg)
    torch.save(inp, tmp_path / "inputs.pt")
    w = LayerWeights.random(cfg, torch.Generator().manual_seed(SEED), device)
    want = _run_layer(DecoderLayer(cfg, w), cfg, inp, device)
    mp.spawn(_rank_main, args=(world, backend, _free_port(), str(tmp_path), cfg_name),
             nprocs=world, join=True)
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(world)]
    for name in REDUCE:
        got = [rk[name] for rk in ranks]
        for mode in ("prefill", "decode"):
            # the all-reduce gives every rank the same output
            assert torch.equal(got[0][mode], got[1][mode]), f"{name} {mode}: ranks differ"
            ref, out = want[mode].float(), got[0][mode].float()
            assert out.shape == ref.shape
            err = ((out - ref).abs().max() / ref.abs().max()).item()
            # the partial products summed in another order and, in bfloat16, rounded twice
            # more: a few bfloat16 roundings (2^-8) of the output's scale at most; in float32,
            # one rounding as on one GPU (the simulator: equal; a GPU: an ulp here and there).
            # An ulp of the largest value is up to 2^-7 of it: 1.6e-2 allows two
            tol = TOLERANCE[name]
            assert err < tol, f"{name} {mode}: TP output off by {err:.2e} of its scale"
        for kv in ("k", "v"):  # each rank's cache: its KV heads of the one-process cache
            cache = torch.cat([g[kv] for g in got], dim=-2).float()
            err = ((cache - want[kv].float()).abs().max() / want[kv].float().abs().max()).item()
            assert err < 2e-2, f"{name} {kv} cache off by {err:.2e}"


def test_two_ranks_gloo_match_one_process(tmp_path):
    """Two processes on the CPU (gloo), each its share under the simulator; bfloat16 and float32
    all-reduces."""
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo not available")
    _check_two_ranks(tmp_path, "gloo", SMALL, "SMALL")


@pytest.mark.gpu
@pytest.mark.parametrize("cfg_name", ["SMALL", "MEDIUM"])
def test_two_gpus_nccl_match_one_gpu(tmp_path, cfg_name):
    """Two GPUs (NCCL), each rank its share; the reference on cuda:0. MEDIUM: the large tiles
    (head dim 128, per-rank MLP 1408)."""
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("torch.distributed with NCCL not available")
    _check_two_ranks(tmp_path, "nccl", CONFIGS[cfg_name], cfg_name)
