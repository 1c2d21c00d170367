"""A plain cuTile-style matmul over tile shapes, on threadtile and on cuTile, against cuBLAS.

One kernel source (``build`` below: the loops a user writes, with cuTile's names), compiled by
threadtile (``import threadtile.tile``) and, where installed, by NVIDIA's cuTile
(``import cuda.tile``), for every tile shape M, N in {64, 128, 256} and K in {32, 64, 128}:

- ``plain``: one block per output tile, ``for k in range(num_tiles_k): acc = ct.mma(a, b, acc)``;
- ``persistent``: a grid of one block per multiprocessor looping over output tiles;
- ``batched``: 3-d arrays, ``bid(2)`` the batch, the loads and store 3-d with a leading 1
  (reshaped to 2-d, as cuTile's BatchMatMul sample does).

float16 and bfloat16 inputs, and float32 inputs through tfloat32 (the cast in the loop), a
float32 accumulator, the output in the input's dtype. Each case checks its result against
torch in float32 once, then times (median of CUDA-event-timed runs) and reports TFLOP/s, the
ratio to ``torch.matmul`` (cuBLAS; TF32 allowed for float32) and to cuTile on the same source,
and the first call's time (compile and launch) of each. A case that fails is recorded with its
error.

    python bench/tile_sweep.py [--dtypes float16,bfloat16,float32] [--forms plain,...]
                               [--tiles 128x128x64,...] [--size 4096] [--no-cutile]

Writes bench/results/tile_sweep.json (only for the full sweep; a subset writes
tile_sweep_partial.json, or ``--name``'s file).
"""


import argparse
import itertools
import math
import time
import traceback

from _common import cuda_time_ms, write


def build(ct):
    """The kernels, written once against the module ``ct`` (threadtile.tile or cuda.tile)."""
    C = ct.Constant[int]

    @ct.kernel
    def plain(A, B, Out, tm: C, tn: C, tk: C, tf32: C):
        bi, bj = ct.bid(0), ct.bid(1)
        dt = ct.tfloat32 if tf32 else A.dtype
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a.astype(dt), b.astype(dt), acc)
        ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))

    @ct.kernel
    def persistent(A, B, Out, tm: C, tn: C, tk: C, tf32: C):
        tiles_n = ct.cdiv(B.shape[1], tn)
        total = ct.cdiv(A.shape[0], tm) * tiles_n
        dt = ct.tfloat32 if tf32 else A.dtype
        for t in range(ct.bid(0), total, ct.num_blocks(0)):
            bi = t // tiles_n
            bj = t % tiles_n
            acc = ct.full((tm, tn), 0, dtype=ct.float32)
            for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
                a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
                b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
                acc = ct.mma(a.astype(dt), b.astype(dt), acc)
            ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))

    @ct.kernel
    def batched(A, B, Out, tm: C, tn: C, tk: C, tf32: C):
        bi, bj, z = ct.bid(0), ct.bid(1), ct.bid(2)
        dt = ct.tfloat32 if tf32 else A.dtype
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=2, shape=(1, tm, tk))):
            a = ct.load(A, index=(z, bi, k), shape=(1, tm, tk), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(z, k, bj), shape=(1, tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(ct.reshape(a, (tm, tk)).astype(dt), ct.reshape(b, (tk, tn)).astype(dt),
                         acc)
        ct.store(Out, index=(z, bi, bj), tile=ct.reshape(acc.astype(Out.dtype), (1, tm, tn)))

    return {"plain": plain, "persistent": persistent, "batched": batched}


def _grid(form, m, n, tm, tn, batch, sms):
    if form == "persistent":
        return (min(sms, math.ceil(m / tm) * math.ceil(n / tn)), 1, 1)
    return (math.ceil(m / tm), math.ceil(n / tn), batch if form == "batched" else 1)


def run_one(ct, kern, form, a, b, out, tiles, tf32, sms):
    """(first call seconds, median ms, max error against torch in float32)."""
    import torch

    tm, tn, tk = tiles
    batch = a.shape[0] if form == "batched" else 1
    m, n = a.shape[-2], b.shape[-1]
    grid = _grid(form, m, n, tm, tn, batch, sms)
    args = (a, b, out, tm, tn, tk, int(tf32))
    stream = torch.cuda.current_stream()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    ct.launch(stream, grid, kern, args)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    ref = torch.matmul(a.float(), b.float())
    err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
    ms = cuda_time_ms(lambda: ct.launch(stream, grid, kern, args), warmup=3, reps=20)
    return first, ms, err


def main() -> None:
    import torch

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtypes", default="float16,bfloat16,float32")
    p.add_argument("--forms", default="plain,persistent,batched")
    p.add_argument("--tiles", default="")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--no-cutile", action="store_true")
    p.add_argument("--name", default="", help="the results file's name (bench/results/NAME.json)")
    o = p.parse_args()
    import threadtile.tile as tt_ct

    systems = {"threadtile": (tt_ct, build(tt_ct))}
    if not o.no_cutile:
        try:
            import cuda.tile as cu_ct

            systems["cutile"] = (cu_ct, build(cu_ct))
        except Exception as e:  # noqa: BLE001  (absent: threadtile and cuBLAS only)
            print("cuTile not available:", e)
    tiles = ([tuple(int(x) for x in t.split("x")) for t in o.tiles.split(",")] if o.tiles else
             list(itertools.product((64, 128, 256), (64, 128, 256), (32, 64, 128))))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    torch.backends.cuda.matmul.allow_tf32 = True
    results = []
    for dname in o.dtypes.split(","):
        dt = getattr(torch, dname)
        tf32 = dname == "float32"
        for form in o.forms.split(","):
            s = o.size if form != "batched" else o.size // 2
            shape_a = (o.batch, s, s) if form == "batched" else (s, s)
            a = torch.randn(shape_a, device="cuda", dtype=dt)
            b = torch.randn(shape_a, device="cuda", dtype=dt)
            out = torch.empty(shape_a, device="cuda", dtype=dt)
            flops = 2 * s ** 3 * (o.batch if form == "batched" else 1)
            ms_blas = cuda_time_ms(lambda a=a, b=b: torch.matmul(a, b))
            for tl in tiles:
                row = {"dtype": dname, "form": form, "tiles": "x".join(map(str, tl)),
                       "size": list(shape_a), "cublas_ms": round(ms_blas, 4),
                       "cublas_tflops": round(flops / ms_blas / 1e9, 1)}
                for name, (ct, kernels) in systems.items():
                    try:
                        first, ms, err = run_one(ct, kernels[form], form, a, b, out, tl,
                                                 tf32, sms)
                        row[name] = {"first_s": round(first, 3), "ms": round(ms, 4),
                                     "tflops": round(flops / ms / 1e9, 1),
                                     "of_cublas": round(ms_blas / ms, 3),
                                     "rel_err": float(f"{err:.3g}")}
                    except Exception as e:  # noqa: BLE001  (recorded; the sweep goes on)
                        msg = "".join(traceback.format_exception_only(e)).strip()
                        row[name] = {"error": msg.splitlines()[-1][:300]}
                tt_r, cu_r = row.get("threadtile", {}), row.get("cutile", {})
                if "ms" in tt_r and "ms" in cu_r:
                    row["threadtile_of_cutile"] = round(cu_r["ms"] / tt_r["ms"], 3)
                results.append(row)
                print(dname, form, row["tiles"],
                      {k: v for k, v in row.items() if k in ("threadtile", "cutile")},
                      flush=True)
            a = b = out = None
            torch.cuda.empty_cache()
    full = not o.tiles and o.dtypes == "float16,bfloat16,float32" and \
        o.forms == "plain,persistent,batched"
    name = o.name or ("tile_sweep" if full else "tile_sweep_partial")
    path = write(name, {"cases": results, "args": vars(o)},
                 notes="plain cuTile-style matmul kernels (bench/tile_sweep.py build), same "
                       "source on threadtile and cuTile; ratios to torch.matmul (cuBLAS)")
    print("wrote", path)


if __name__ == "__main__":
    main()
