# ruff: noqa: B023  (every lambda here is timed at once, inside its loop iteration)
"""Tile kernels on the GPU against torch (cuBLAS) and Triton, in one run (issue 4's list).

- matmul fp16 and bf16 at 4096^3 and 8192^3, float32 inputs through tf32, plain float32:
  TFLOP/s and the ratio to cuBLAS (torch.matmul), Triton's matmul alongside;
- softmax and layer norm forward over 4096 rows of 4096 and 32768 (float32, bfloat16): GB/s
  against a device-to-device copy of the same bytes and against torch;
- compile time of the matmul kernel, cold (empty cache) and warm (in-process cache miss on a
  fresh Kernel, disk cache hit).

Next to each headline kernel (written and tuned for this benchmark: fixed warps, the
packed and wide layer norms), the plain version a user would write, with the compiler's own
choices: ``plain_*`` is cuTile's own sample kernel launched by the sample's own host function
where a checkout of cuTile is given (``CUTILE_SRC``: MatMul.py's ``cutile_matmul``, which
picks 32x32x32 tiles for float32; LayerNorm.py's forward kernel), else
examples/tile_kernels.py's ``matmul`` (no fixed warps, the headline's tiles) and
``layer_norm_fwd`` (three passes); softmax's plain version is ``softmax_rows`` with no fixed
warps.

Each case that fails (compile error, launch limit) is recorded with its error instead of a
time. Writes bench/results/tile_bench.json (naming parts on the command line, e.g.
``python tile_bench.py rows``, runs only those and writes nothing). Kernels:
examples/tile_kernels.py.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from _common import cuda_time_ms, write


def triton_matmul():
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
            y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))

    def run(a, b, c):
        n = a.shape[0]
        mm[(n // 128, n // 128)](a, b, c, n, n, n, BM=128, BN=128, BK=64, num_warps=8,
                                 num_stages=3)

    return run


# the layer norm kernel and warps per block of the one-row-per-block kernels, by row length
# and dtype, and the chunk of layer_norm_wide: the best of a sweep of warps, chunks and
# kernels on an H100 (docs/performance.md)
WARPS = {("softmax", 4096, "fp32"): 4, ("softmax", 4096, "bf16"): 4,
         ("softmax", 32768, "fp32"): 16, ("softmax", 32768, "bf16"): 16,
         ("layer_norm", 4096, "fp32"): 8, ("layer_norm", 4096, "bf16"): 4,
         ("layer_norm", 32768, "fp32"): 16, ("layer_norm", 32768, "bf16"): 32}
LAYER_NORM = {(4096, "fp32"): "layer_norm_rows", (4096, "bf16"): "layer_norm_packed",
              (32768, "fp32"): "layer_norm_wide", (32768, "bf16"): "layer_norm_packed"}
WIDE_CHUNK = 8192


def cutile_sample(name: str):
    """cuTile's sample ``name`` (a module) with the import swapped, from CUTILE_SRC; None
    without a checkout."""
    src = os.environ.get("CUTILE_SRC")
    if not src:
        return None
    from pathlib import Path

    from attention import load_sample  # noqa: PLC0415  (bench/attention.py: the same loader)

    return load_sample(Path(src), "threadtile", name)


def main() -> None:
    import tile_kernels as tiles
    import torch

    import threadtile.tile as ct

    parts = set(sys.argv[1:]) or {"matmul", "rows", "compile"}
    res: dict = {"matmul": {}, "softmax": {}, "layer_norm": {}, "compile": {}}
    tri = triton_matmul()
    for n in (4096, 8192) if "matmul" in parts else ():
        for name, dt in (("fp16", torch.float16), ("bf16", torch.bfloat16),
                         ("fp32_tf32", torch.float32)):
            a = torch.randn(n, n, device="cuda").to(dt)
            b = torch.randn(n, n, device="cuda").to(dt)
            c = torch.empty(n, n, device="cuda", dtype=dt)
            flop = 2 * n ** 3
            row: dict = {}
            try:
                # 16-bit: 128x256x64 tiles on 8 warps (the Hopper path: TMA + wgmma);
                # float32 through tfloat32: 128x256x32 on 8 warps (tile.h's staged loop,
                # mma.sync; the best of a sweep of tile shapes, docs/performance.md)
                kern, (tm, tn, tk) = ((tiles.matmul_8warps, (128, 256, 32))
                                      if dt == torch.float32
                                      else (tiles.matmul_8warps, (128, 256, 64)))
                run = lambda: ct.launch(0, (n // tm, n // tn), kern,  # noqa: E731
                                        (a, b, c, tm, tn, tk))
                c.fill_(float("nan"))
                run()
                ref = a.double() @ b.double() if n == 4096 else None
                if ref is not None:
                    row["rel_err"] = ((c.double() - ref).norm() / ref.norm()).item()
                row["threadtile_tflops"] = flop / cuda_time_ms(run, 2, 10) / 1e9
            except Exception as e:  # noqa: BLE001  (recorded, the run goes on)
                row["threadtile_error"] = f"{type(e).__name__}: {e}"[:300]
            if dt == torch.float32:
                torch.backends.cuda.matmul.allow_tf32 = True
            row["cublas_tflops"] = flop / cuda_time_ms(lambda: torch.matmul(a, b, out=c), 2,
                                                       10) / 1e9
            torch.backends.cuda.matmul.allow_tf32 = False
            try:
                row["triton_tflops"] = flop / cuda_time_ms(lambda: tri(a, b, c), 2, 10) / 1e9
            except Exception as e:  # noqa: BLE001
                row["triton_error"] = f"{type(e).__name__}: {e}"[:300]
            try:  # the plain version: cuTile's sample as its host launches it, else ours
                mm = cutile_sample("MatMul.py")
                if mm is not None:
                    row["plain_kernel"] = "cuTile MatMul.py cutile_matmul"
                    plain = lambda: mm.cutile_matmul(a, b)  # noqa: E731
                else:
                    row["plain_kernel"] = f"tile_kernels.matmul {tm}x{tn}x{tk}"
                    plain = lambda: ct.launch(0, (n // tm, n // tn), tiles.matmul,  # noqa: E731
                                              (a, b, c, tm, tn, tk))
                plain()
                row["plain_tflops"] = flop / cuda_time_ms(plain, 2, 10) / 1e9
                row["plain_ratio_to_cublas"] = row["plain_tflops"] / row["cublas_tflops"]
            except Exception as e:  # noqa: BLE001
                row["plain_error"] = f"{type(e).__name__}: {e}"[:300]
            if "threadtile_tflops" in row:
                row["ratio_to_cublas"] = row["threadtile_tflops"] / row["cublas_tflops"]
            res["matmul"][f"{name}_{n}"] = row
            print(f"matmul {name} {n}^3: {row}", flush=True)
        if n == 4096:  # plain float32 (FMA) once
            a = torch.randn(n, n, device="cuda")
            b = torch.randn(n, n, device="cuda")
            c = torch.empty(n, n, device="cuda")
            row = {}
            try:
                run = lambda: ct.launch(0, (n // 64, n // 64), tiles.matmul_fp32,  # noqa: E731
                                        (a, b, c, 64, 64, 16))
                row["threadtile_tflops"] = 2 * n ** 3 / cuda_time_ms(run, 2, 5) / 1e9
            except Exception as e:  # noqa: BLE001
                row["threadtile_error"] = f"{type(e).__name__}: {e}"[:300]
            row["cublas_fp32_tflops"] = 2 * n ** 3 / cuda_time_ms(
                lambda: torch.matmul(a, b, out=c), 2, 10) / 1e9
            res["matmul"][f"fp32_{n}"] = row
            print(f"matmul fp32 {n}^3: {row}", flush=True)

    for n in (4096, 32768) if "rows" in parts else ():
        for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            x = torch.randn(4096, n, device="cuda").to(dt)
            y = torch.empty_like(x)
            gb = 2 * x.numel() * x.element_size() / 1e9
            copy = gb / cuda_time_ms(lambda: y.copy_(x)) * 1e3
            row = {"copy_gbs": copy}
            try:
                kern = ct.kernel(num_warps=WARPS["softmax", n, name])(
                    tiles.softmax_rows.py_func)
                ms = cuda_time_ms(lambda: ct.launch(0, (4096,), kern, (x, y, n)))
                err = (y.double() - torch.softmax(x.double(), 1)).abs().max().item()
                row.update(threadtile_gbs=gb / ms * 1e3, max_err=err)
                row["fraction_of_copy"] = row["threadtile_gbs"] / copy
            except Exception as e:  # noqa: BLE001
                row["threadtile_error"] = f"{type(e).__name__}: {e}"[:300]
            try:  # the plain version: the same kernel, the compiler's warps
                plain = ct.kernel(tiles.softmax_rows.py_func)
                ms = cuda_time_ms(lambda: ct.launch(0, (4096,), plain, (x, y, n)))
                row["plain_gbs"] = gb / ms * 1e3
                row["plain_fraction_of_copy"] = row["plain_gbs"] / copy
            except Exception as e:  # noqa: BLE001
                row["plain_error"] = f"{type(e).__name__}: {e}"[:300]
            row["torch_gbs"] = gb / cuda_time_ms(lambda: torch.softmax(x, dim=1)) * 1e3
            res["softmax"][f"{name}_4096x{n}"] = row
            print(f"softmax {name} 4096x{n}: {row}", flush=True)
            w = torch.randn(n, device="cuda").to(dt)
            b = torch.randn(n, device="cuda").to(dt)
            mean = torch.empty(4096, device="cuda")
            rstd = torch.empty(4096, device="cuda")
            row = {"copy_gbs": copy}
            try:  # one row per block in registers: X read once from memory
                warps = WARPS["layer_norm", n, name]
                kname = LAYER_NORM[n, name]
                kern = ct.kernel(num_warps=warps)(getattr(tiles, kname).py_func)
                consts = (n, WIDE_CHUNK) if kname == "layer_norm_wide" else (n,)
                row["kernel"] = f"{kname}, {warps} warps"
                ms = cuda_time_ms(lambda: ct.launch(0, (4096,), kern, (
                    x, w, b, y, mean, rstd, 1e-5, *consts)))
                ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double())
                row.update(threadtile_gbs=gb / ms * 1e3,
                           max_err=(y.double() - ref).abs().max().item())
                row["fraction_of_copy"] = row["threadtile_gbs"] / copy
            except Exception as e:  # noqa: BLE001
                row["threadtile_error"] = f"{type(e).__name__}: {e}"[:300]
            try:  # the plain version: cuTile's sample kernel (three passes over X), else ours
                ln = cutile_sample("LayerNorm.py")
                fwd = ln.layer_norm_fwd if ln is not None else tiles.layer_norm_fwd
                row["plain_kernel"] = ("cuTile LayerNorm.py layer_norm_fwd" if ln is not None
                                       else "tile_kernels.layer_norm_fwd") + ", TILE_N 1024"
                ms = cuda_time_ms(lambda: ct.launch(0, (4096,), fwd, (
                    x, w, b, y, mean, rstd, 1e-5, 1024)))
                row["plain_gbs"] = gb / ms * 1e3
                row["plain_fraction_of_copy"] = row["plain_gbs"] / copy
            except Exception as e:  # noqa: BLE001
                row["plain_error"] = f"{type(e).__name__}: {e}"[:300]
            row["torch_gbs"] = gb / cuda_time_ms(lambda: torch.nn.functional.layer_norm(
                x, (n,), w, b)) * 1e3
            res["layer_norm"][f"{name}_4096x{n}"] = row
            print(f"layer_norm {name} 4096x{n}: {row}", flush=True)

    from threadtile.jit import Kernel

    a = torch.randn(256, 256, device="cuda").half()
    with tempfile.TemporaryDirectory() as d:
        os.environ["THREADTILE_CACHE_DIR"] = d
        for kind in ("cold", "warm"):  # a fresh Kernel each time: no in-memory cache
            k = Kernel(tiles.matmul.py_func, tile=True, num_warps=8)
            t0 = time.perf_counter()
            k.compile(a, a, a, arch="sm_90a", tm=128, tn=256, tk=64)
            res["compile"][f"{kind}_s"] = time.perf_counter() - t0
        print(f"compile: {res['compile']}", flush=True)
    if len(parts) < 3:
        return  # a partial run (tile_bench.py matmul|rows|compile ...) writes no results
    write("tile_bench", res, notes="CUDA-event medians of device time (a spin "
          "kernel ahead of each timed run keeps the host's launch out); matmul "
          "float16/bfloat16 tiles 128x256x64 on 8 warps (sm_90a: TMA + wgmma main loop), "
          "float32 through tfloat32 128x256x32 on 8 warps (sm_90a: TMA + tfloat32 wgmma "
          "on the transposed product); softmax and layer norm one row per block in "
          "registers (layer "
          f"norm kernels: { {' '.join(map(str, k)): v for k, v in LAYER_NORM.items()} }, "
          f"layer_norm_wide's output in chunks of {WIDE_CHUNK}; warps: "
          f"{ {' '.join(map(str, k)): v for k, v in WARPS.items()} }), and "
          "plain_*: the plain version a user writes (module docstring); Triton matmul "
          "128x128x64, 8 warps, 3 stages, no autotuning; compile: NVRTC already loaded")


if __name__ == "__main__":
    main()
