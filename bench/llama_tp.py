"""The Llama-3-8B decoder layer tensor-parallel over 2 GPUs (examples/llama/tp.py) against one.

bfloat16, seeded random weights, Llama-3-8B's layer shapes (``--small``: the tests' tiny
config, a smoke run). Two modes, as bench/llama.py's ``layer`` part: prefill (batch 1 x 4096
tokens, causal) and decode (batch 32, one token each against a 4096-token cache).

1. One GPU (cuda:0): threadtile's ``DecoderLayer`` (and the same layer in torch eager,
   bench/llama.py's ``EagerLayer``), timed with ``_common.cuda_time_ms`` (CUDA-event medians)
   and as a CUDA graph's replay (``graphed_time_ms``); its inputs and outputs go to a
   temporary folder.
2. ``--world`` ranks (``torch.multiprocessing.spawn``, NCCL, rank r on cuda:r): each builds
   the whole layer's weights from the same seed and keeps its share (``TPDecoderLayer``:
   column-parallel Wqkv and gate/up, row-parallel Wo and Wdown, a bfloat16 all-reduce after
   each of those two), runs prefill and decode on the same inputs (its KV heads of the same
   cache) and compares the output with the one-GPU layer's. Times: each repetition starts
   after a barrier, CUDA events on each rank around the layer; a repetition's time is the
   slowest rank's, and the median of those is reported; again with each rank's layer, its
   all-reduces included, captured into a CUDA graph (``tp_graphed_ms``: device time without
   the host's launch gaps, which a decode step's small kernels can leave). The eager layer
   the same way, torch matmuls and SDPA on the same shards with the same all-reduces.

Rank 0 writes results/llama_tp.json (``--small``: llama_tp_small.json): per mode the one-GPU
and TP times (launched and graphed), the speedups and the largest difference from the
one-GPU output.

    python bench/llama_tp.py             # 2 GPUs, Llama-3-8B shapes
    python bench/llama_tp.py --small     # the tiny config: a smoke run

Without ``--world`` GPUs it says so and exits 0.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import socket
import statistics
import sys
import tempfile
from pathlib import Path

from _common import capture, cuda_time_ms, cuda_times_ms, graphed_time_ms, write

HERE = Path(__file__).resolve().parent
MODES = ("prefill", "decode")
SEED = 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: shapes, world size, repetitions."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the tests' tiny config (smoke run)")
    ap.add_argument("--world", type=int, default=2, help="GPUs (ranks), default 2")
    ap.add_argument("--seq", type=int, default=None, help="prefill tokens (default 4096)")
    ap.add_argument("--batch", type=int, default=None, help="decode batch (default 32)")
    ap.add_argument("--ctx", type=int, default=None, help="decode cache length (default 4096)")
    ap.add_argument("--reps", type=int, default=30, help="timed repetitions per measurement")
    ap.add_argument("--no-eager", action="store_true", help="skip torch eager's layer")
    o = ap.parse_args(argv)
    small = (64, 4, 64)
    full = (4096, 32, 4096)
    for name, s, f in zip(("seq", "batch", "ctx"), small, full):
        if getattr(o, name) is None:
            setattr(o, name, s if o.small else f)
    if o.world < 2:
        ap.error("--world must be at least 2")
    if min(o.seq, o.batch, o.ctx, o.reps) < 1:
        ap.error("--seq, --batch, --ctx and --reps must be positive")
    return o


def config(o: argparse.Namespace):
    """The layer's shapes; ``shard_config`` checks that ``--world`` divides them."""
    from llama.config import LLAMA3_8B, SMALL  # noqa: PLC0415
    from llama.tp import shard_config  # noqa: PLC0415

    cfg = SMALL if o.small else LLAMA3_8B
    shard_config(cfg, o.world)
    return cfg


def _eager_module():
    """bench/llama.py (its EagerLayer), loaded by path: ``llama`` is examples/llama here."""
    spec = importlib.util.spec_from_file_location("bench_llama", HERE / "llama.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _diff(a, b) -> dict:
    """The largest absolute difference of a from b, and over b's largest magnitude."""
    d = (a.float().cpu() - b.float().cpu()).abs().max().item()
    return {"max_abs_diff": round(d, 6), "max_rel_diff": round(d / b.float().abs().max().item(), 6)}


# ---- one GPU ---------------------------------------------------------------------------------

def one_gpu(cfg, o: argparse.Namespace, tmp: Path) -> dict:
    """The one-GPU layer on cuda:0: times; inputs, caches and outputs saved in ``tmp``."""
    import torch  # noqa: PLC0415
    from llama.layer import DecoderLayer, LayerWeights  # noqa: PLC0415

    dev = "cuda:0"
    torch.cuda.set_device(0)
    w = LayerWeights.random(cfg, torch.Generator().manual_seed(SEED), dev)
    layer = DecoderLayer(cfg, w)
    g = torch.Generator(dev).manual_seed(SEED + 1)
    kv = (cfg.kv_heads, cfg.head_dim)
    bf = torch.bfloat16
    x = torch.randn(1, o.seq, cfg.hidden, device=dev, generator=g).to(bf)
    xd = torch.randn(o.batch, cfg.hidden, device=dev, generator=g).to(bf)
    kc, vc = (torch.randn(o.batch, o.ctx, *kv, device=dev, generator=g).to(bf) for _ in range(2))
    torch.save({"x": x.cpu(), "x_dec": xd.cpu(), "kc": kc.cpu(), "vc": vc.cpu()},
               tmp / "inputs.pt")
    lens = torch.full((o.batch,), o.ctx - 1, dtype=torch.int32, device=dev)
    pk, pv = (torch.zeros(1, o.seq, *kv, dtype=bf, device=dev) for _ in range(2))
    runs = {"prefill": lambda: layer.prefill(x, pk, pv),
            "decode": lambda: layer.decode(xd, kc, vc, lens, o.ctx - 1)}
    out, ref = {}, {}
    for mode, fn in runs.items():
        ref[mode] = fn().cpu()
        out[mode] = {"one_gpu_ms": cuda_time_ms(fn, reps=o.reps)}
        out[mode]["one_gpu_graphed_ms"], why = graphed_time_ms(fn, reps=o.reps)
        print(f"1 GPU {mode}: {out[mode]['one_gpu_ms']:.3f} ms, as a CUDA graph "
              f"{out[mode]['one_gpu_graphed_ms'] or why}", flush=True)
    if not o.no_eager:
        eager = _eager_module().EagerLayer(cfg, w)
        ek, ev = kc.clone(), vc.clone()
        eruns = {"prefill": lambda: eager(x, pk, pv, 0),
                 "decode": lambda: eager(xd[:, None], ek, ev, o.ctx - 1)}
        for mode, fn in eruns.items():
            out[mode]["eager_one_gpu_ms"] = cuda_time_ms(fn, reps=o.reps)
            print(f"1 GPU eager {mode}: {out[mode]['eager_one_gpu_ms']:.3f} ms", flush=True)
    torch.save(ref, tmp / "reference.pt")
    return out


# ---- the ranks --------------------------------------------------------------------------------

def tp_time_ms(fn, rank: int, reps: int, warmup: int = 5) -> float:
    """Median over ``reps`` of the slowest rank's milliseconds of ``fn``: every repetition
    after a barrier, timed as ``cuda_time_ms`` times (a spin kernel ahead of the start event:
    the events bracket the device work, not Python's launches), the ranks' times
    max-reduced."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    def barrier():
        dist.barrier(device_ids=[rank])
        torch.cuda.synchronize()

    t = torch.tensor(cuda_times_ms(fn, warmup, reps, before=barrier), device=f"cuda:{rank}")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def tp_graphed_ms(fn, rank: int, reps: int) -> tuple[float | None, str | None]:
    """``fn`` (the rank's layer, its all-reduces included: NCCL's kernels are captured like
    the rest) captured into a CUDA graph on every rank (``_common.capture``) and its replays
    timed as ``tp_time_ms`` times them: the device time without the host's launch gaps.
    (ms, None) or (None, why the capture failed)."""
    graph, why = capture(fn)
    if graph is None:
        return None, why
    return tp_time_ms(graph.replay, rank, reps), None


def _eager_tp_class(base):
    """bench/llama.py's EagerLayer on one rank's shards, its two residual branches
    all-reduced."""
    import torch.distributed as dist  # noqa: PLC0415

    class EagerTP(base):
        def reduce(self, p):
            dist.all_reduce(p)
            return p

    return EagerTP


def rank_main(rank: int, o: argparse.Namespace, tmp: str, port: int, one: dict) -> None:
    """One rank: its share from the seed, checked against the one-GPU output and timed; rank 0
    writes the results."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415
    from llama.layer import LayerWeights  # noqa: PLC0415
    from llama.tp import TPDecoderLayer, shard_cache, shard_weights  # noqa: PLC0415

    torch.cuda.set_device(rank)
    dev = f"cuda:{rank}"
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=o.world, timeout=datetime.timedelta(seconds=300))
    try:
        tmp = Path(tmp)
        cfg, world = config(o), o.world
        full = LayerWeights.random(cfg, torch.Generator().manual_seed(SEED))  # on the CPU
        layer = TPDecoderLayer.from_full(cfg, full, rank, world, device=dev)
        sc = layer.cfg
        inp = torch.load(tmp / "inputs.pt", mmap=True)
        ref = torch.load(tmp / "reference.pt")
        bf = torch.bfloat16
        x, xd = inp["x"].to(dev), inp["x_dec"].to(dev)
        kc, vc = (shard_cache(inp[n], rank, world).to(dev) for n in ("kc", "vc"))
        del inp
        lens = torch.full((o.batch,), o.ctx - 1, dtype=torch.int32, device=dev)
        pk, pv = (torch.zeros(1, o.seq, sc.kv_heads, sc.head_dim, dtype=bf, device=dev)
                  for _ in range(2))
        runs = {"prefill": lambda: layer.prefill(x, pk, pv),
                "decode": lambda: layer.decode(xd, kc, vc, lens, o.ctx - 1)}
        res = {m: dict(one[m]) for m in MODES}
        for mode, fn in runs.items():
            res[mode].update(_diff(fn(), ref[mode]))
            res[mode]["tp_ms"] = tp_time_ms(fn, rank, o.reps)
            res[mode]["tp_graphed_ms"], why = tp_graphed_ms(fn, rank, o.reps)
            if why:
                print(f"rank {rank} {mode}: no CUDA graph ({why})", flush=True)
        if not o.no_eager:
            weights = shard_weights(cfg, full, rank, world, dev)
            eager = _eager_tp_class(_eager_module().EagerLayer)(sc, weights)
            ek, ev = kc.clone(), vc.clone()
            eruns = {"prefill": lambda: eager(x, pk, pv, 0),
                     "decode": lambda: eager(xd[:, None], ek, ev, o.ctx - 1)[:, 0]}
            for mode, fn in eruns.items():
                res[mode]["eager_tp_max_abs_diff"] = _diff(fn(), ref[mode])["max_abs_diff"]
                res[mode]["eager_tp_ms"] = tp_time_ms(fn, rank, o.reps)
        if rank == 0:
            report(cfg, o, res)
        dist.barrier(device_ids=[rank])
    finally:
        dist.destroy_process_group()


def report(cfg, o: argparse.Namespace, res: dict) -> None:
    """Speedups, a printed summary and the results file."""
    shapes = {"prefill": {"batch": 1, "seq": o.seq}, "decode": {"batch": o.batch, "cache": o.ctx}}
    out: dict = {"config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
                 "world": o.world, "reduce_dtype": "bfloat16", "reps": o.reps}
    for mode in MODES:
        r = res[mode]
        row = {**shapes[mode], "one_gpu_ms": round(r["one_gpu_ms"], 4),
               "tp_ms": round(r["tp_ms"], 4), "speedup": round(r["one_gpu_ms"] / r["tp_ms"], 3),
               "max_abs_diff": r["max_abs_diff"], "max_rel_diff": r["max_rel_diff"],
               "matches_one_gpu": r["max_rel_diff"] < 3e-2}
        if r.get("one_gpu_graphed_ms") and r.get("tp_graphed_ms"):
            row.update(one_gpu_graphed_ms=round(r["one_gpu_graphed_ms"], 4),
                       tp_graphed_ms=round(r["tp_graphed_ms"], 4),
                       graphed_speedup=round(r["one_gpu_graphed_ms"] / r["tp_graphed_ms"], 3))
        if "eager_tp_ms" in r:
            row.update(eager_one_gpu_ms=round(r["eager_one_gpu_ms"], 4),
                       eager_tp_ms=round(r["eager_tp_ms"], 4),
                       eager_speedup=round(r["eager_one_gpu_ms"] / r["eager_tp_ms"], 3),
                       eager_tp_max_abs_diff=r["eager_tp_max_abs_diff"])
        out[mode] = row
        eager = (f"; eager {row['eager_one_gpu_ms']:.3f} -> {row['eager_tp_ms']:.3f} ms "
                 f"({row['eager_speedup']:.2f}x)" if "eager_tp_ms" in row else "")
        graphed = (f"; as CUDA graphs {row['one_gpu_graphed_ms']:.3f} -> "
                   f"{row['tp_graphed_ms']:.3f} ms ({row['graphed_speedup']:.2f}x)"
                   if "tp_graphed_ms" in row else "")
        print(f"{mode}: 1 GPU {row['one_gpu_ms']:.3f} ms, {o.world} GPUs {row['tp_ms']:.3f} ms "
              f"({row['speedup']:.2f}x), max abs diff {row['max_abs_diff']} "
              f"(rel {row['max_rel_diff']}){graphed}{eager}", flush=True)
        if not row["matches_one_gpu"]:
            print(f"{mode}: the TP output does NOT match one GPU's", flush=True)
    path = write("llama_tp_small" if o.small else "llama_tp", out,
                 notes=f"Llama-3-8B layer shapes, bfloat16, seeded random weights; tensor "
                       f"parallel over {o.world} GPUs (NCCL, bfloat16 all-reduces after Wo "
                       f"and Wdown) against one GPU; times are CUDA-event medians, each "
                       f"repetition's the slowest rank's; graphed: the layer (NCCL's "
                       f"all-reduces included) captured into a CUDA graph on each rank and "
                       f"replayed; eager: torch matmuls and SDPA on the same shards")
    print(f"wrote {path}", flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 0 also where there are too few GPUs (nothing measured)."""
    o = parse_args(argv)
    try:
        import torch  # noqa: PLC0415
        import torch.distributed as dist  # noqa: PLC0415
        import torch.multiprocessing as mp  # noqa: PLC0415
    except ImportError:
        print("bench/llama_tp.py: needs torch (with CUDA and NCCL); nothing measured")
        return 0
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < o.world:
        print(f"bench/llama_tp.py: needs {o.world} GPUs, this machine has {n}; nothing measured")
        return 0
    if not dist.is_available() or not dist.is_nccl_available():
        print("bench/llama_tp.py: torch.distributed has no NCCL here; nothing measured")
        return 0
    cfg = config(o)
    with tempfile.TemporaryDirectory(prefix="llama_tp_") as tmp:
        one = one_gpu(cfg, o, Path(tmp))
        torch.cuda.empty_cache()
        mp.spawn(rank_main, args=(o, tmp, _free_port(), one), nprocs=o.world, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
