"""Where a Llama-3-8B layer's time goes, kernel by kernel: threadtile's kernels and torch
eager's, from torch.profiler (CUDA activity), for the prefill (1 x 4096 tokens) and the decode
(batch 32 against a 4096-token cache) of bench/llama.py. Per call: the sum of its kernels'
device time and the largest kernels, each with its share. A kernel far below its peers in the
same layer is where the compiler has a gap (this is how matmul_add's residual, loaded blocked
and forcing 16 warps, showed: 3.16 of 5.44 ms).

Writes bench/results/llama_profile.json. ``--top`` sets how many kernels each row lists.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from _common import write


def _bench_llama():
    """bench/llama.py as a module (``llama`` itself is the example package)."""
    spec = importlib.util.spec_from_file_location("bench_llama", Path(__file__).with_name(
        "llama.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernels(fn, reps: int = 5) -> dict[str, float]:
    """Microseconds of device time per call of ``fn``, by kernel name."""
    import torch  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out: dict[str, float] = {}
    for e in p.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t and str(getattr(e, "device_type", "")).endswith("CUDA"):
            out[e.key[:90]] = out.get(e.key[:90], 0.0) + t / reps
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    import torch  # noqa: PLC0415
    from llama.config import Config  # noqa: PLC0415
    from llama.layer import DecoderLayer, LayerWeights  # noqa: PLC0415

    cfg = Config()
    w = LayerWeights.random(cfg, torch.Generator().manual_seed(0), "cuda")
    layer, eager = DecoderLayer(cfg, w), _bench_llama().EagerLayer(cfg, w)
    kv = (cfg.kv_heads, cfg.head_dim)
    x = torch.randn(1, 4096, cfg.hidden, device="cuda").to(torch.bfloat16)
    caches = [torch.zeros(1, 4096, *kv, dtype=torch.bfloat16, device="cuda") for _ in range(4)]
    b = 32
    xd = torch.randn(b, cfg.hidden, device="cuda").to(torch.bfloat16)
    kc, vc = (torch.randn(b, 4096, *kv, device="cuda").to(torch.bfloat16) for _ in range(2))
    kc2, vc2 = kc.clone(), vc.clone()
    lens = torch.full((b,), 4095, dtype=torch.int32, device="cuda")
    runs = {
        "prefill_threadtile": lambda: layer.prefill(x, caches[0], caches[1]),
        "prefill_eager": lambda: eager(x, caches[2], caches[3], 0),
        "decode_threadtile": lambda: layer.decode(xd, kc, vc, lens, 4095),
        "decode_eager": lambda: eager(xd[:, None], kc2, vc2, 4095),
    }
    results = {}
    for name, fn in runs.items():
        ks = kernels(fn)
        total = sum(ks.values())
        top = sorted(ks.items(), key=lambda kv: -kv[1])[:args.top]
        results[name] = {"kernels_ms": round(total / 1000, 4),
                         "top": [{"kernel": k, "ms": round(v / 1000, 4),
                                  "share": round(v / total, 3)} for k, v in top]}
        print(f"== {name}: {total / 1000:.3f} ms of kernels a call")
        for k, v in top:
            print(f"  {v / 1000:7.3f} ms  {v / total:5.1%}  {k}")
    path = write("llama_profile", results, notes="torch.profiler CUDA activity, 5 calls "
                 "after 3 warm-up calls; device time per call by kernel name")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
