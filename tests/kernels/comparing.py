"""Kernels for the tests of ``threadtile.compare`` (tests/sim/test_compare.py,
tests/gpu/test_compare_gpu.py): correct ones and twins with a planted difference. Not in
``MODULES``.
"""

import threadtile
import threadtile.tile as ct


@threadtile.jit
def axpy(a, x, y, out):
    i = threadtile.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@threadtile.jit
def axpy_planted(a, x, y, out):
    i = threadtile.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
        if i == 77:
            out[i] = -1.0


@threadtile.jit
def count(bins, values, k: threadtile.Constant[int]):
    i = threadtile.grid(1)
    if i < values.size:
        bins[i] = values[i] * k


@threadtile.jit
def count_planted(bins, values, k: threadtile.Constant[int]):
    i = threadtile.grid(1)
    if i < values.size:
        bins[i] = values[i] * k + (1 if i == 5 else 0)


@ct.kernel
def double(x, out, tile: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(ct.bid(0),), tile=t * 2.0)


@ct.kernel
def double_planted(x, out, tile: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(ct.bid(0),), tile=t * 2.0 + (1.0 if ct.bid(0) == 2 else 0.0))


@threadtile.jit
def racy(out):
    out[0] = threadtile.threadIdx.x
