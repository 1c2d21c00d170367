"""Tile matmul on the GPU: correctness of the k-loop paths (Hopper TMA + wgmma, and the
portable one where TMA cannot copy) and TFLOP/s against cuBLAS, one run. A diagnostic, not a
results file: bench/tile_bench.py records the numbers."""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import cuda_time_ms  # noqa: E402


def main() -> None:
    import torch

    import threadtile.tile as ct
    from tests.kernels import tiles

    torch.manual_seed(0)
    cases = [  # kernel, (tm, tn, tk), (m, n, k)
        (tiles.matmul_8warps, (128, 256, 64), (512, 768, 256)),
        (tiles.matmul_8warps, (128, 256, 64), (1000, 1030, 520)),
        (tiles.matmul_8warps, (128, 128, 64), (384, 256, 1024)),
        (tiles.matmul, (64, 256, 64), (320, 512, 192)),
        (tiles.matmul, (64, 64, 32), (256, 256, 256)),
        (tiles.matmul_8warps, (128, 256, 64), (512, 512, 1001)),  # K odd: no TMA for A
    ]
    for dt in (torch.float16, torch.bfloat16):
        for kern, (tm, tn, tk), (m, n, k) in cases:
            a = torch.randn(m, k, device="cuda").to(dt)
            b = torch.randn(k, n, device="cuda").to(dt)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            try:
                t0 = time.perf_counter()
                ct.launch(0, (ct.cdiv(m, tm), ct.cdiv(n, tn)), kern, (a, b, c, tm, tn, tk))
                torch.cuda.synchronize()
                ref = a.double() @ b.double()
                err = ((c.double() - ref).norm() / ref.norm()).item()
                print(f"{dt} {kern.block_threads // 32} warps, tile {tm}x{tn}x{tk}, "
                      f"{m}x{n}x{k}: rel err {err:.2e} "
                      f"({time.perf_counter() - t0:.2f} s) {'OK' if err < 1e-2 else 'WRONG'}",
                      flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{dt} tile {tm}x{tn}x{tk} {m}x{n}x{k}: {type(e).__name__}: {e}"[:2000],
                      flush=True)
    for n in (4096, 8192):
        for dt in (torch.float16, torch.bfloat16):
            a = torch.randn(n, n, device="cuda").to(dt)
            b = torch.randn(n, n, device="cuda").to(dt)
            c = torch.empty(n, n, device="cuda", dtype=dt)
            flop = 2 * n ** 3
            cub = flop / cuda_time_ms(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), 3,
                                      10) / 1e9
            for kern, (tm, tn, tk) in ((tiles.matmul_8warps, (128, 256, 64)),
                                       (tiles.matmul_8warps, (128, 128, 64)),
                                       (tiles.matmul, (64, 256, 64))):
                try:
                    def run(a=a, b=b, c=c, kern=kern, g=(n // tm, n // tn), t=(tm, tn, tk)):
                        ct.launch(0, g, kern, (a, b, c, *t))

                    tf = flop / cuda_time_ms(run, 2, 10) / 1e9
                    print(f"{n}^3 {dt} tile {tm}x{tn}x{tk}: {tf:.0f} TFLOP/s, cuBLAS {cub:.0f}"
                          f" ({tf / cub:.0%})", flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"{n}^3 {dt} {tm}x{tn}x{tk}: {type(e).__name__}: {e}"[:1500],
                          flush=True)


if __name__ == "__main__":
    main()
