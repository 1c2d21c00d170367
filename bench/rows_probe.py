"""Diagnostic, not a benchmark of record: softmax and layer norm rows (tests/kernels/tiles.py)
under variants of the tile layout's vector width (THREADTILE_TILE_VEC, one subprocess each),
block size and occupancy hint, against a device-to-device copy, all on one GPU in one call.

    python bench/rows_probe.py            # every variant; prints one line per case
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


def child() -> None:
    import torch
    from _common import cuda_time_ms

    import threadtile.tile as ct
    from tests.kernels import tiles

    out = []
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
            for warps in ((4, 8, 16) if n == 4096 else (8, 16, 32)):
                for occ in (None,):
                    sm = ct.kernel(num_warps=warps, occupancy=occ)(tiles.softmax_rows.py_func)
                    ln = ct.kernel(num_warps=warps, occupancy=occ)(tiles.layer_norm_rows.py_func)
                    row = {"n": n, "dtype": str(dt)[6:], "warps": warps, "occ": occ,
                           "vec": os.environ.get("THREADTILE_TILE_VEC", "4")}
                    for name, kern, args in (
                            ("softmax", sm, (x, y, n)),
                            ("layernorm", ln, (x, w, b, y, mean, rstd, 1e-5, n))):
                        try:
                            ms = cuda_time_ms(functools.partial(ct.launch, 0, (4096,), kern,
                                                                args))
                            row[name] = round(gb / ms * 1e3 / copy, 3)
                        except Exception as e:  # noqa: BLE001
                            row[name] = f"{type(e).__name__}: {e}"[:120]
                    out.append(row)
                    print(json.dumps(row), flush=True)


def main() -> None:
    if os.environ.get("ROWS_PROBE_CHILD"):
        return child()
    for vec in ("2", "4", "8"):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, ROWS_PROBE_CHILD="1", THREADTILE_TILE_VEC=vec,
                       THREADTILE_CACHE_DIR=d)
            subprocess.run([sys.executable, __file__], env=env, check=False,
                           cwd=Path(__file__).parent)


if __name__ == "__main__":
    main()
