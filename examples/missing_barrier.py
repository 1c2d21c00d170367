"""The lecture's bug: the tiled matmul without its second syncthreads.

On a GPU this kernel usually gives the right answer, and sometimes not: a fast thread of the
block starts loading the next tiles while a slow one is still reading the current ones. The
simulator turns that into an error at the line that races, naming both threads.

    python examples/missing_barrier.py
"""

import math

import numpy as np

import threadtile as cuda
from threadtile import Constant


@cuda.jit
def matmul_racy(m, n, out, tw: Constant[int]):
    sh = cuda.shared.array(0, np.float32)
    ms = sh[:tw * tw]
    ns = sh[tw * tw:2 * tw * tw]
    tr, tc = cuda.threadIdx.y, cuda.threadIdx.x
    r = cuda.blockIdx.y * cuda.blockDim.y + tr
    c = cuda.blockIdx.x * cuda.blockDim.x + tc
    h, k = m.shape
    w = n.shape[1]
    p = 0.0
    for ph in range(math.ceil(k / tw)):
        idx = ph * tw
        ms[tr * tw + tc] = m[r, tc + idx] if r < h and idx + tc < k else 0.0
        ns[tr * tw + tc] = n[tr + idx, c] if c < w and idx + tr < k else 0.0
        cuda.syncthreads()
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        # the second cuda.syncthreads() is missing here
    if r < h and c < w:
        out[r, c] = p


def main() -> None:
    rng = np.random.default_rng()
    m = rng.standard_normal((32, 32), dtype=np.float32)
    n = rng.standard_normal((32, 32), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    try:
        with cuda.simulate():
            matmul_racy[(2, 2), (16, 16), 0, 2 * 16 * 16 * 4](m, n, out, 16)
    except cuda.RaceError as e:
        print("caught:", type(e).__name__)
        print(e)
    else:
        raise SystemExit("the race was not caught")


if __name__ == "__main__":
    main()
