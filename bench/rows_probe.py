"""Diagnostic, not a benchmark of record: the softmax and layer norm row kernels of
tests/kernels/tiles.py under several block sizes, chunk sizes and tile-layout vector widths
(THREADTILE_TILE_VEC, one subprocess each), as fractions of a device-to-device copy of the
same bytes, all on one GPU in one call. bench/tile_bench.py takes its choices from here.

    python bench/rows_probe.py [vector widths...]     # default: 4
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def variants(n: int):
    """(name, kernel maker, extra constants) for rows of n."""
    import threadtile.tile as ct
    from tests.kernels import tiles

    def k(fn, w):
        return ct.kernel(num_warps=w)(fn.py_func)

    for w in ((4, 8, 16) if n == 4096 else (8, 16, 32)):
        yield f"softmax w{w}", k(tiles.softmax_rows, w), (n,)
    for w in ((4, 8, 16) if n == 4096 else (16, 32)):
        yield f"layer_norm_rows w{w}", k(tiles.layer_norm_rows, w), (n,)
    if n > 4096:
        for w in (16, 32):
            for chunk in (8192, 16384):
                yield f"layer_norm_wide w{w} c{chunk}", k(tiles.layer_norm_wide, w), (n, chunk)


def child() -> None:
    import torch
    from _common import cuda_time_ms

    import threadtile.tile as ct

    for n in (4096, 32768):
        for dt in (torch.float32, torch.bfloat16):
            x = torch.randn(4096, n, device="cuda").to(dt)
            y = torch.empty_like(x)
            w = torch.randn(n, device="cuda").to(dt)
            b = torch.randn(n, device="cuda").to(dt)
            mean = torch.empty(4096, device="cuda")
            rstd = torch.empty(4096, device="cuda")
            gb = 2 * x.numel() * x.element_size() / 1e9
            copy = gb / cuda_time_ms(functools.partial(y.copy_, x)) * 1e3
            row = {"n": n, "dtype": str(dt)[6:], "vec": os.environ.get("THREADTILE_TILE_VEC")}
            for name, kern, consts in variants(n):
                args = (x, y, *consts) if name.startswith("softmax") else (
                    x, w, b, y, mean, rstd, 1e-5, *consts)
                try:
                    ms = cuda_time_ms(functools.partial(ct.launch, 0, (4096,), kern, args))
                    row[name] = round(gb / ms * 1e3 / copy, 3)
                except Exception as e:  # noqa: BLE001
                    row[name] = f"{type(e).__name__}: {e}"[:120]
            print(json.dumps(row), flush=True)


def main() -> None:
    if os.environ.get("ROWS_PROBE_CHILD"):
        return child()
    for vec in sys.argv[1:] or ["4"]:
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, ROWS_PROBE_CHILD="1", THREADTILE_TILE_VEC=vec,
                       THREADTILE_CACHE_DIR=d)
            subprocess.run([sys.executable, __file__], env=env, check=False,
                           cwd=Path(__file__).parent)


if __name__ == "__main__":
    main()
