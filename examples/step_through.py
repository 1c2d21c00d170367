"""Stepping through a kernel with pdb: simulate(mode="python") runs the kernel's own Python
function once per thread, so print(), breakpoint() and any Python work inside it.

    python examples/step_through.py          # prints what thread (1, 0) of block 0 sees
    STEP=1 python examples/step_through.py   # stops in pdb inside that thread
"""

import os

import numpy as np

import threadtile as cuda

STEP = bool(os.environ.get("STEP"))  # a global: frozen at compile time, so a compiled kernel
# drops the `if STEP:` branch below, and the same kernel still runs on the GPU


@cuda.jit
def block_sum(a, out):
    sh = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = 4
    while stride > 0:
        if t < stride:
            sh[t] += sh[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 1 and cuda.blockIdx.x == 0:
        if STEP:
            breakpoint()  # noqa: T100  (stops in python mode; type `p sh`, `n`, `c`)
        print("thread 1 of block 0 sees sh[:4] =", sh[0], sh[1], sh[2], sh[3])
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def main() -> None:
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(2, np.float32)
    with cuda.simulate(mode="python"):
        block_sum[2, 8](a, out)
    print("block sums:", out, "expected:", a.reshape(2, 8).sum(axis=1))


if __name__ == "__main__":
    main()
