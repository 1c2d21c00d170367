"""``cuda.syncthreads()`` compiles to the unaligned barrier (PTX ``barrier.sync 0``), never
``bar.sync 0`` (``barrier.sync.aligned``): ptxas may assume an aligned barrier is reached by
converged warps, and has been seen to let a split warp through it (fuzz seed 45196,
tests/fuzz_regressions/test_seed45196_gpu_shared_read_after_barrier.py)."""

import re

import numpy as np

import threadtile as cuda
from threadtile.runtime import nvrtc


@cuda.jit
def _shift(a, out):
    sh = cuda.shared.array(32, np.float64)
    t = cuda.threadIdx.x
    v = a[t]
    if v > 1e6:
        v = np.float64(np.cos(v))  # a divergent call (cos's slow path) before the barrier
    sh[t] = v
    cuda.syncthreads()
    out[t] = sh[(t + 4) % 32]


def test_syncthreads_is_the_unaligned_barrier_in_cpp_and_ptx():
    a, out = np.zeros(32), np.zeros(32)
    cu = _shift.cuda_source(a, out)
    assert "tt::syncthreads();" in cu and "__syncthreads" not in cu
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    for arch in ("sm_80", "sm_90"):
        ptx = nvrtc.compile_ptx(cu, arch, options=inc)
        assert re.search(r"\bbarrier\.sync\s+0;", ptx), arch
        assert not re.search(r"\bbar\.sync\b|barrier\.sync\.aligned", ptx), arch
