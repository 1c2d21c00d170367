"""cuTile's AllGatherMatmul sample through threadtile, on two GPUs (torch.distributed, NCCL,
symmetric memory).

Given the sample's file (``--sample``, from a checkout of NVIDIA's cutile-python; nothing of it
is copied into this repository), a temporary copy with ``import cuda.tile as ct`` swapped for
``import threadtile.tile as ct`` (tests/compat/cutile_suite.py ``swap_imports``):

1. runs as its own program, ``python AllGatherMatmul.py --correctness-check``: the sample
   spawns one process per GPU, each gathers its peers' inputs through symmetric memory inside
   one tile kernel and checks the product against torch (``all_gather_into_tensor`` then
   ``@``); it passes when every rank says so and it exits 0;
2. is imported by this script's own two ranks, which call the sample's host function
   (``cutile_gather_matmul``: its kernel, tiles and launch as written) on the sample's shapes
   and on larger ones, check it against the sample's reference, and time both (CUDA events,
   median; the reference with and without TF32 matmuls, since the kernel multiplies in TF32).

Writes bench/results/allgather_matmul.json. Needs two GPUs; with fewer it says so and exits.

    python bench/allgather_matmul.py --sample /path/to/cutile-python/samples/AllGatherMatmul.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZES = [(256, 1024, 512), (1024, 4096, 4096), (4096, 4096, 4096)]  # (rows per rank, K, N)


def swapped(sample: Path) -> Path:
    """The sample with threadtile's import, in a temporary folder."""
    sys.path.insert(0, str(ROOT / "tests" / "compat"))
    from cutile_suite import swap_imports  # noqa: PLC0415

    work = Path(tempfile.mkdtemp(prefix="tt-allgather-"))
    dst = work / sample.name
    dst.write_text(swap_imports(sample.read_text()))
    return dst


def run_unchanged(copy: Path) -> dict:
    """The sample's own __main__ with --correctness-check, in a process of its own."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, str(copy), "--correctness-check"], capture_output=True,
                       text=True, timeout=300, cwd=str(copy.parent), env=env)
    out = (p.stdout + p.stderr).strip().splitlines()
    passed = sum("Correctness check passed" in line for line in out)
    return {"exit_code": p.returncode, "ranks_passed": passed, "output_tail": out[-6:]}


def _worker(rank: int, world: int, copy: str, port: int, result: str) -> None:
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    sys.path.insert(0, str(HERE))
    from _common import cuda_time_ms

    device = torch.device(f"cuda:{rank}")
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method=f"tcp://localhost:{port}", rank=rank,
                            world_size=world, device_id=device)
    group = dist.group.WORLD
    spec = importlib.util.spec_from_file_location("allgather_sample", copy)
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)  # its __main__ block does not run
    rows = []
    for m, k, n in SIZES:
        torch.manual_seed(rank + 52)
        ref_inp = torch.rand((m, k), device=device)
        inp = symm_mem.empty(m, k, device=device).copy_(ref_inp)
        w = torch.rand((k, n), device=device)
        dist.barrier(group)
        out = sample.cutile_gather_matmul(inp, w, group)
        torch.backends.cuda.matmul.allow_tf32 = False
        want = sample.ref_gather_matmul(ref_inp, w, group)
        err = ((out - want).abs().max() / want.abs().max()).item()
        dist.barrier(group)
        t_tt = cuda_time_ms(lambda a=inp, b=w: sample.cutile_gather_matmul(a, b, group), 3, 20)
        dist.barrier(group)
        t_ref = cuda_time_ms(lambda a=ref_inp, b=w: sample.ref_gather_matmul(a, b, group), 3, 20)
        torch.backends.cuda.matmul.allow_tf32 = True
        dist.barrier(group)
        t_ref32 = cuda_time_ms(lambda a=ref_inp, b=w: sample.ref_gather_matmul(a, b, group), 3,
                               20)
        torch.backends.cuda.matmul.allow_tf32 = False
        flops = 2.0 * world * m * k * n
        rows.append({"rows_per_rank": m, "k": k, "n": n, "max_rel_err": err,
                     "threadtile_ms": round(t_tt, 4), "torch_ms": round(t_ref, 4),
                     "torch_tf32_ms": round(t_ref32, 4),
                     "threadtile_tflops": round(flops / t_tt / 1e9, 1),
                     "torch_tf32_tflops": round(flops / t_ref32 / 1e9, 1)})
        print(f"rank {rank}: {m}x{k} per rank @ {k}x{n}: threadtile {t_tt:.3f} ms, "
              f"all_gather + matmul {t_ref:.3f} ms (tf32 {t_ref32:.3f} ms), max rel err "
              f"{err:.2e}", flush=True)
    if rank == 0:
        Path(result).write_text(json.dumps(rows))
    dist.barrier(group)
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", required=True, type=Path,
                    help="cutile-python's samples/AllGatherMatmul.py")
    args = ap.parse_args()
    import torch
    import torch.multiprocessing as mp

    world = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if world < 2:
        print(f"allgather_matmul.py needs two GPUs; this machine has {world}")
        return
    copy = swapped(args.sample)
    unchanged = run_unchanged(copy)
    print(f"the sample as written: exit {unchanged['exit_code']}, "
          f"{unchanged['ranks_passed']} of {world} ranks passed its check", flush=True)
    result = copy.parent / "timing.json"
    mp.spawn(_worker, args=(world, str(copy), random.randint(30000, 60000), str(result)),
             nprocs=world, join=True)
    sys.path.insert(0, str(HERE))
    from _common import write  # noqa: PLC0415

    path = write("allgather_matmul", {"world_size": world, "sample_run": unchanged,
                                      "sizes": json.loads(result.read_text())},
                 notes="cuTile's samples/AllGatherMatmul.py with its import swapped for "
                       "threadtile.tile: its own __main__ (--correctness-check), then its "
                       "cutile_gather_matmul timed against its ref_gather_matmul "
                       "(all_gather_into_tensor + torch matmul, FP32 and TF32), both ranks; "
                       "rank 0's times.")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
