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
sys.path.insert(0, str(ROOT / "src"))

import threadtile.tile as ct  # noqa: E402


def softmax_rows_approx(x, y, N: ct.Constant[int]):
    """softmax_rows with the fast exponential (RoundingMode.APPROX)."""
    row = ct.load(x, index=(ct.bid(0), 0), shape=(1, N),
                  padding_mode=ct.PaddingMode.NEG_INF).astype(ct.float32)
    e = ct.exp(row - ct.max(row), rounding_mode=ct.RoundingMode.APPROX)
    ct.store(y, index=(ct.bid(0), 0), tile=(e * (1.0 / ct.sum(e))).astype(y.dtype))


def layer_norm_nowb(X, W, B, Y, Mean, Rstd, eps, N: ct.Constant[int], CHUNK: ct.Constant[int]):
    """layer_norm_wide without W and B (a bound: what the L2 re-reads of W and B cost)."""
    bid = ct.bid(0)
    n = X.shape[1]
    x = ct.load(X, index=(bid, 0), shape=(1, N), padding_mode=ct.PaddingMode.ZERO).astype(
        ct.float32)
    mean = ct.sum(x) / n
    centered = x - mean
    rstd = 1.0 / ct.sqrt((ct.sum(centered * centered) - (N - n) * mean * mean) / n + eps)
    ct.store(Mean, index=(bid,), tile=ct.reshape(mean, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))
    for j in range(ct.cdiv(n, CHUNK)):
        xj = ct.load(X, index=(bid, j), shape=(1, CHUNK), padding_mode=ct.PaddingMode.ZERO)
        ct.store(Y, index=(bid, j), tile=((xj.astype(ct.float32) - mean) * rstd).astype(Y.dtype))


def layer_norm_late(X, W, B, Y, Mean, Rstd, eps, N: ct.Constant[int]):
    """layer_norm_rows with W and B loaded after the statistics, the row's float32 copy kept
    for both statistics and converted again only for the output (tests/kernels/tiles.py's
    layer_norm_packed converts it afresh in each pass)."""
    bid = ct.bid(0)
    n = X.shape[1]
    xr = ct.load(X, index=(bid, 0), shape=(1, N), padding_mode=ct.PaddingMode.ZERO)
    x = xr.astype(ct.float32)
    mean = ct.sum(x) / n
    centered = x - mean
    rstd = 1.0 / ct.sqrt((ct.sum(centered * centered) - (N - n) * mean * mean) / n + eps)
    w = ct.load(W, index=(0,), shape=(N,), padding_mode=ct.PaddingMode.ZERO)
    b = ct.load(B, index=(0,), shape=(N,), padding_mode=ct.PaddingMode.ZERO)
    y = (xr.astype(ct.float32) - mean) * rstd * w.astype(ct.float32) + b.astype(ct.float32)
    ct.store(Y, index=(bid, 0), tile=y.astype(Y.dtype))
    ct.store(Mean, index=(bid,), tile=ct.reshape(mean, (1,)))
    ct.store(Rstd, index=(bid,), tile=ct.reshape(rstd, (1,)))


def variants(n: int):
    """(name, kernel maker, extra constants) for rows of n."""
    import threadtile.tile as ct
    from tests.kernels import tiles

    def k(fn, w):
        return ct.kernel(num_warps=w)(fn.py_func)

    only = os.environ.get("ROWS_PROBE_ONLY", "")
    if not only or "rows" in only:
        for w in ((4, 8, 16) if n == 4096 else (16, 32)):
            yield f"softmax w{w}", k(tiles.softmax_rows, w), (n,)
            yield (f"softmax_approx w{w}", ct.kernel(num_warps=w)(softmax_rows_approx), (n,))
        for w in ((4, 8) if n == 4096 else (32,)):
            yield f"layer_norm_rows w{w}", k(tiles.layer_norm_rows, w), (n,)
            yield f"layer_norm_late w{w}", ct.kernel(num_warps=w)(layer_norm_late), (n,)
            yield f"layer_norm_packed w{w}", k(tiles.layer_norm_packed, w), (n,)
        if n == 4096:
            for w, occ in ((2, 4), (2, 8), (4, 2), (4, 4), (8, 2)):
                yield (f"layer_norm_rows w{w} occ{occ}",
                       ct.kernel(num_warps=w, occupancy=occ)(tiles.layer_norm_rows.py_func),
                       (n,))
        if n > 4096:
            for w in (16, 32):
                yield f"layer_norm_wide w{w} c8192", k(tiles.layer_norm_wide, w), (n, 8192)
            for w in (16, 32):
                yield (f"layer_norm_nowb w{w}", ct.kernel(num_warps=w)(layer_norm_nowb),
                       (n, 8192))
    if not only or "chunked" in only:
        for w in (4, 8, 16):
            for chunk in (1024, 2048, 4096, 8192):
                if 1 <= chunk // (32 * w) <= 16 and chunk <= n:
                    yield (f"softmax_chunked w{w} c{chunk}", k(tiles.softmax_chunked, w),
                           (chunk,))
                    yield (f"layer_norm_chunked w{w} c{chunk}",
                           k(tiles.layer_norm_chunked, w), (chunk,))


def child() -> None:
    import torch
    from _common import cuda_time_ms

    import threadtile.tile as ct

    sizes = [int(v) for v in os.environ.get("ROWS_PROBE_N", "4096 32768").split()]
    for n in sizes:
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
                    go = functools.partial(ct.launch, 0, (4096,), kern, args)
                    y.fill_(float("nan"))
                    go()
                    if name.startswith("layer_norm") and "nowb" not in name:
                        ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(),
                                                             b.double())
                        err = (y.double() - ref).abs().max().item()
                        if not err < 0.1:
                            row[name] = f"wrong: {err}"
                            continue
                    ms = cuda_time_ms(go)
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
