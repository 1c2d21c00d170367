"""The lecture's shared-memory tiled matmul, from the CPU simulator to the GPU.

    python examples/tiled_matmul.py            # simulate on small matrices, check vs NumPy
    python examples/tiled_matmul.py --source   # also print the CUDA C++ it compiles to

On a machine with a GPU it then runs the same kernel there, on torch tensors if torch is
installed (else NumPy arrays, copied to the device and back), and compares with float64.
"""

import math
import sys

import numpy as np

import threadtile as cuda
from threadtile import Constant


@cuda.jit
def matmul_tiled(m, n, out, tw: Constant[int]):
    sh = cuda.shared.array(0, np.float32)  # dynamic shared memory, sized at launch
    ms = sh[:tw * tw]  # tile of m
    ns = sh[tw * tw:2 * tw * tw]  # tile of n
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
        cuda.syncthreads()  # the tiles are complete before anyone reads them
        for i in range(tw):
            p += ms[tr * tw + i] * ns[i * tw + tc]
        cuda.syncthreads()  # everyone is done reading before the next tiles overwrite them
    if r < h and c < w:
        out[r, c] = p


def launch(m, n, out, tw=16):
    h, w = out.shape
    grid = (cuda.cdiv(w, tw), cuda.cdiv(h, tw))
    matmul_tiled[grid, (tw, tw), 0, 2 * tw * tw * 4](m, n, out, tw)


def main() -> None:
    rng = np.random.default_rng()
    m = rng.standard_normal((50, 40), dtype=np.float32)
    n = rng.standard_normal((40, 30), dtype=np.float32)
    ref = m.astype(np.float64) @ n.astype(np.float64)

    out = np.full((50, 30), np.nan, np.float32)
    with cuda.simulate():  # every check on: races, bounds, barriers, uninitialized reads
        launch(m, n, out)
    print("simulator: max error", np.abs(out - ref).max())

    if "--source" in sys.argv:
        print(matmul_tiled.cuda_source(m, n, out, tw=16))

    from threadtile.runtime.driver import gpu_available

    if gpu_available():
        out = np.full((50, 30), np.nan, np.float32)
        launch(m, n, out)  # NumPy arrays: copied to the device and back
        print("GPU:       max error", np.abs(out - ref).max())


if __name__ == "__main__":
    main()
