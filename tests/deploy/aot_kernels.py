"""Kernels the AOT package tests export (module level: ``threadtile export`` imports the file).

``saxpy`` and ``mixed`` are thread-level kernels (any block; ``mixed`` takes a scalar of each
kind a package packs); ``vector_add`` and the ``matmul`` pair are tile kernels (a fixed block;
the float16 ``matmul`` has the sm_90a main loop, with two hidden tensor-map parameters).
"""

import threadtile as cuda
import threadtile.tile as ct


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def mixed(out, i8, u16, i32, i64, f16, bf16, f32, f64, flag, c64, c128):
    if cuda.grid(1) == 0:
        out[0] = i64 + i32 + u16 + i8  # (int64 first: every sum stays int64)
        out[1] = float(f16) + float(bf16) + f32 + f64
        out[2] = 1.0 if flag else 0.0
        out[3] = c64.real + c128.imag


@ct.kernel
def vector_add(a, b, c, tile: ct.Constant[int]):
    bid = ct.bid(0)
    ta = ct.load(a, index=(bid,), shape=(tile,))
    tb = ct.load(b, index=(bid,), shape=(tile,))
    ct.store(c, index=(bid,), tile=ta + tb)


@ct.kernel
def matmul(a, b, c, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    i = ct.bid(0)
    j = ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], tk)):
        ta = ct.load(a, index=(i, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        tb = ct.load(b, index=(k, j), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(ta, tb, acc)
    ct.store(c, index=(i, j), tile=acc.astype(c.dtype))
