"""Autotuned kernels the GPU tests (test_autotune_gpu.py) tune in one process and read back in
another: a thread-level kernel over block sizes and items per thread, and the tile matmul of
examples/tile_kernels.py over tile shapes and warps (eight configurations that run, one that
does not compile)."""

import numpy as np
from tile_kernels import matmul

import threadtile as tt


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@tt.jit
def _scale(x, out, a, ITEMS: tt.Constant[int]):
    start = tt.blockIdx.x * tt.blockDim.x * ITEMS + tt.threadIdx.x
    for j in range(ITEMS):
        i = start + j * tt.blockDim.x
        if i < x.shape[0]:
            out[i] = a * x[i]


SCALE_CONFIGS = [tt.Config(ITEMS=i, block=b) for i in (1, 4) for b in (64, 128, 256, 1024)]
scale = tt.autotune(configs=SCALE_CONFIGS, key=["x"])(_scale)


def scale_grid(meta):
    return (cdiv(meta["x"].shape[0], meta["block"] * meta["ITEMS"]),)


MATMUL_CONFIGS = [tt.Config(tm=m, tn=n, tk=k, num_warps=w) for m, n, k, w in (
    (64, 64, 32, 4), (64, 128, 32, 4), (128, 64, 32, 4), (128, 128, 32, 4),
    (128, 128, 64, 4), (128, 128, 64, 8), (128, 256, 64, 8), (64, 64, 64, 4),
    (100, 64, 32, 4))]  # the last: not a power of two, a compile error (skipped)
tuned_matmul = tt.autotune(configs=MATMUL_CONFIGS, key=["A", "B"])(matmul)


def matmul_grid(meta):
    return (cdiv(meta["A"].shape[0], meta["tm"]), cdiv(meta["B"].shape[1], meta["tn"]))


SCALE_N = 1 << 24
MATMUL_MNK = (2048, 2048, 2048)


def scale_inputs(seed: int = 0):
    x = np.random.default_rng(seed).standard_normal(SCALE_N).astype(np.float32)
    return x, tt.to_device(x), tt.device_array(SCALE_N, np.float32)


def matmul_inputs(seed: int = 0):
    m, k, n = MATMUL_MNK
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b, tt.to_device(a), tt.to_device(b), tt.device_array((m, n), np.float16)


def run_scale() -> None:
    x, dx, dout = scale_inputs()
    scale[scale_grid](dx, dout, np.float32(2.0))
    tt.synchronize()
    np.testing.assert_array_equal(dout.copy_to_host(), 2 * x)


def run_matmul() -> None:
    a, b, da, db, dc = matmul_inputs()
    tuned_matmul[matmul_grid](da, db, dc)
    tt.synchronize()
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(dc.copy_to_host().astype(np.float32), ref, rtol=2e-2, atol=0.25)


def run_child(which: str) -> dict:
    """The child process's launch: the choice's origin, configuration and time to choose."""
    kernel = {"scale": scale, "matmul": tuned_matmul}[which]
    {"scale": run_scale, "matmul": run_matmul}[which]()
    c = kernel.last_choice
    return {"origin": c.origin, "config": c.config.to_json(), "choose_s": c.seconds}
