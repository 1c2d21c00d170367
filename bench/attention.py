"""cuTile's AttentionFMHA sample kernel as written, on threadtile and on cuTile, against torch SDPA.

The kernel is the sample's own ``fmha_kernel`` (read from a checkout of NVIDIA/cutile-python,
``--src`` or ``CUTILE_SRC``; nothing of it is copied into this repository), launched through the
sample's own ``cutile_fmha`` host function:

- ``threadtile``: the sample with ``import cuda.tile`` swapped for ``import threadtile.tile``
  (tests/compat/cutile_suite.py, ``swap_imports``);
- ``cutile``: the sample as it is, where ``cuda.tile`` imports (../shared/tools/
  cutile-on-device.sh installs it on the GPU machine).

For each shape (batch, heads, KV heads, sequence, head dim; float16), causal or not, and tile
configuration (TILE_M x TILE_N, the sample's own search space), the output is checked against
torch's ``scaled_dot_product_attention`` (in float32), then the kernel is timed (median of
CUDA-event-timed runs) against SDPA (torch picks its fastest backend: flash or cuDNN). Reports
TFLOP/s (4 B H S^2 D, halved when causal), the ratio to SDPA and to cuTile, and the first
call's time (compile and launch). Writes bench/results/attention.json; a run without cuTile
(``--no-cutile``, or cuTile not installed) keeps the previous file's cuTile figures for the
same cases, each with the commit and date it was measured at (``measured_at``).

    python bench/attention.py [--src PATH] [--quick] [--no-cutile]
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

from _common import RESULTS, ROOT, cuda_time_ms, write

sys.path.insert(0, str(ROOT / "tests" / "compat"))

SHAPES = [  # (batch, heads, kv heads, seq, head dim)
    (4, 32, 32, 4096, 128),
    (4, 32, 32, 4096, 64),
    (1, 32, 8, 4096, 128),
]
CONFIGS = [(128, 128), (128, 64), (64, 64)]


def load_sample(src: Path, system: str, name: str = "AttentionFMHA.py"):
    """The sample module ``name``, for ``system`` (threadtile: imports swapped)."""
    path = src / "samples" / name
    text = path.read_text()
    if system == "threadtile":
        from cutile_suite import swap_imports

        text = swap_imports(text)
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_loader(f"{path.stem}_{system}", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = str(path)
    exec(compile(text, str(path), "exec"), mod.__dict__)  # noqa: S102  (the sample's source)
    return mod


def flops(b, h, s, d, causal):
    f = 4 * b * h * s * s * d
    return f / 2 if causal else f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=os.environ.get("CUTILE_SRC", ""))
    ap.add_argument("--quick", action="store_true", help="the first shape only")
    ap.add_argument("--no-cutile", action="store_true")
    o = ap.parse_args()
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    src = Path(o.src)
    systems = {"threadtile": load_sample(src, "threadtile")}
    if not o.no_cutile:
        try:
            systems["cutile"] = load_sample(src, "cutile")
        except Exception as e:  # noqa: BLE001  (cuTile absent: recorded)
            print(f"cuTile not available: {e}")
    # a run without cuTile keeps the last run's cuTile figures (same shape, causality and
    # tiles), each marked with the commit and date it was measured at
    earlier = {}
    old = RESULTS / ("attention_quick.json" if o.quick else "attention.json")
    if "cutile" not in systems and old.exists():
        doc = json.loads(old.read_text())
        for r in doc["results"]["rows"]:
            if "ms" in r.get("cutile", {}):
                at = r["cutile"].get("measured_at") or {"commit": doc["commit"],
                                                        "date": doc["date"]}
                earlier[(tuple(r["shape"]), r["causal"], tuple(r["tile"]))] = dict(
                    r["cutile"], measured_at=at)
    rows = []
    shapes = SHAPES[:1] if o.quick else SHAPES
    for (b, h, kvh, s, d) in shapes:
        torch.manual_seed(0)
        q = torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
        k = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
        v = torch.randn(b, kvh, s, d, dtype=torch.float16, device="cuda")
        for causal in (False, True):
            gqa = kvh != h
            ref = sdpa(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=gqa)
            t_sdpa = cuda_time_ms(lambda q=q, k=k, v=v, c=causal, g=gqa:
                                  sdpa(q, k, v, is_causal=c, enable_gqa=g))
            f = flops(b, h, s, d, causal)
            base = {"shape": [b, h, kvh, s, d], "causal": causal, "sdpa_ms": round(t_sdpa, 4),
                    "sdpa_tflops": round(f / t_sdpa / 1e9, 1)}
            print(f"B{b} H{h} KV{kvh} S{s} D{d} causal={causal}: SDPA {t_sdpa:.3f} ms "
                  f"({base['sdpa_tflops']} TFLOP/s)", flush=True)
            for tm, tn in CONFIGS:
                row = dict(base, tile=[tm, tn])
                for name, mod in systems.items():
                    def run(mod=mod, q=q, k=k, v=v, tm=tm, tn=tn, c=causal, g=h // kvh):
                        return mod.cutile_fmha(q, k, v, tile_m=tm, tile_n=tn, causal=c,
                                               query_group_size=g)
                    try:
                        t0 = time.perf_counter()
                        out = run()
                        torch.cuda.synchronize()
                        first = time.perf_counter() - t0
                        err = (out.float() - ref).abs().max().item()
                        ok = bool(err < 2e-2)
                        t = cuda_time_ms(run)
                        row[name] = {"ok": ok, "max_err": round(err, 5), "ms": round(t, 4),
                                     "tflops": round(f / t / 1e9, 1),
                                     "vs_sdpa": round(t_sdpa / t, 3),
                                     "first_call_s": round(first, 2)}
                    except Exception as e:  # noqa: BLE001  (recorded per case)
                        row[name] = {"ok": False,
                                     "error": traceback.format_exception_only(e)[-1][:300]}
                kept = earlier.get((tuple(row["shape"]), causal, (tm, tn)))
                if kept and "cutile" not in row:
                    row["cutile"] = kept
                if "ms" in row["threadtile"] and "ms" in row.get("cutile", {}):
                    row["threadtile"]["vs_cutile"] = round(row["cutile"]["ms"] /
                                                           row["threadtile"]["ms"], 3)
                print(f"  {tm}x{tn}: " + "; ".join(
                    f"{n} {r.get('tflops', r.get('error'))} TFLOP/s ok={r.get('ok')} "
                    f"err={r.get('max_err')} first={r.get('first_call_s')} s"
                    for n, r in ((n, row[n]) for n in systems)), flush=True)
                rows.append(row)
    best = {}
    for r in rows:
        key = (tuple(r["shape"]), r["causal"])
        tt = r["threadtile"]
        if tt.get("ok") and tt.get("tflops", 0) > best.get(key, {}).get("tflops", 0):
            best[key] = dict(tt, tile=r["tile"], sdpa_tflops=r["sdpa_tflops"])
    summary = [{"shape": list(k[0]), "causal": k[1], **v} for k, v in best.items()]
    name = "attention_quick" if o.quick else "attention"
    write(name, {"rows": rows, "best_threadtile": summary},
          notes="cuTile's AttentionFMHA sample kernel as written; float16; SDPA in torch's "
                "default backend choice")
    print(math.nan if not summary else summary)


if __name__ == "__main__":
    main()
