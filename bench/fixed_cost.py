"""A tile matmul's time split into its k loop and what each block does outside it.

The plain cuTile-style kernel of bench/tile_sweep.py (``build``) at M = N = ``--size`` over
several K, on threadtile, on cuTile where installed (the same source) and on cuBLAS
(``torch.matmul``). Each system's median times are fitted to ``ms = a + b K`` by least
squares: ``b`` is the k loop's own cost (ns per unit of K, the whole grid), ``a`` what does not
grow with K (launch, each block's start, the pipeline's fill and drain, the epilogue's store),
reported per wave of one block a multiprocessor (``a`` over tiles / multiprocessors). A
system whose fixed cost is high loses most where K is short (batched loops) and where each
block holds its multiprocessor alone (nothing hides its epilogue). float16 inputs, a float32
accumulator, a float16 output; each result checked against torch once.

    python bench/fixed_cost.py [--tiles 128x128x64,64x256x64] [--ks 1024,2048,4096,8192]
                               [--size 4096] [--no-cutile] [--name fixed_cost]

Writes bench/results/NAME.json (fixed_cost.json by default).
"""

import argparse

from _common import cuda_time_ms, write
from tile_sweep import build


def fit(ks: list[int], ms: list[float]) -> tuple[float, float]:
    """Least squares ``ms = a + b k``: (a, b)."""
    n = len(ks)
    mk, mm = sum(ks) / n, sum(ms) / n
    b = sum((k - mk) * (m - mm) for k, m in zip(ks, ms)) / sum((k - mk) ** 2 for k in ks)
    return mm - b * mk, b


def main() -> None:
    import torch

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tiles", default="128x128x64,64x256x64,128x256x64")
    p.add_argument("--ks", default="1024,2048,4096,8192")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--no-cutile", action="store_true")
    p.add_argument("--name", default="fixed_cost",
                   help="the results file (bench/results/NAME.json)")
    o = p.parse_args()
    import threadtile.tile as tt_ct

    systems = {"threadtile": (tt_ct, build(tt_ct)["plain"])}
    if not o.no_cutile:
        try:
            import cuda.tile as cu_ct

            systems["cutile"] = (cu_ct, build(cu_ct)["plain"])
        except Exception as e:  # noqa: BLE001  (absent: threadtile and cuBLAS only)
            print("cuTile not available:", e)
    ks = [int(k) for k in o.ks.split(",")]
    s = o.size
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    stream = torch.cuda.current_stream()
    rows = []
    for tiles in o.tiles.split(","):
        tm, tn, tk = (int(x) for x in tiles.split("x"))
        grid = (-(-s // tm), -(-s // tn), 1)
        times: dict[str, list[float]] = {"cublas": []}
        errors: dict[str, float] = {}
        for k in ks:
            a = torch.randn(s, k, device="cuda", dtype=torch.float16)
            b = torch.randn(k, s, device="cuda", dtype=torch.float16)
            times["cublas"].append(cuda_time_ms(lambda a=a, b=b: torch.matmul(a, b)))
            ref = torch.matmul(a.float(), b.float())
            for name, (ct, kern) in systems.items():
                out = torch.full((s, s), float("nan"), device="cuda", dtype=torch.float16)
                args = (a, b, out, tm, tn, tk, 0)
                ct.launch(stream, grid, kern, args)
                torch.cuda.synchronize()
                err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
                errors[name] = max(errors.get(name, 0.0), err)
                times.setdefault(name, []).append(
                    cuda_time_ms(lambda ct=ct, kern=kern, args=args, grid=grid:
                                 ct.launch(stream, grid, kern, args)))
        waves = grid[0] * grid[1] / sms
        row = {"tiles": tiles, "size": s, "ks": ks, "waves": round(waves, 2)}
        for name, ms in times.items():
            a0, b0 = fit(ks, ms)
            row[name] = {"ms": [round(m, 4) for m in ms], "fixed_us": round(a0 * 1e3, 1),
                         "fixed_us_a_wave": round(a0 * 1e3 / waves, 2),
                         "ns_a_k": round(b0 * 1e6, 2),
                         **({"rel_err": float(f"{errors[name]:.3g}")} if name in errors else {})}
        rows.append(row)
        print(tiles, {k: v for k, v in row.items() if isinstance(v, dict)}, flush=True)
    path = write(o.name, {"cases": rows, "args": vars(o)},
                 notes="plain cuTile-style matmul (bench/tile_sweep.py build) over K; ms = a + "
                       "b K fitted per system: fixed cost a (per wave of blocks) and the k "
                       "loop's b")
    print("wrote", path)


if __name__ == "__main__":
    main()
