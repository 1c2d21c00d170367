# ruff: noqa
"""Fuzzer regression, seed 10664: mismatch gpu vs lockstep: out_float32[0, 1]: np.float32(0.0)
!= np.float32(-919.39526) (47 elements differ). Explained (session 16, H200): the cause of seed
45196 (test_seed45196_gpu_shared_read_after_barrier.py). ``syncthreads()`` was the aligned
``bar.sync 0``, and after the divergent ``math.sin`` ptxas let the warp reach it split:
compute-sanitizer's synccheck reports "Divergent thread(s) in warp" at the barrier of line 61,
and the kernel fails with ``__syncthreads()`` and agrees with the simulator with the unaligned
``barrier.sync 0`` that ``syncthreads()`` now is."""

import math

import numpy as np

import threadtile as cuda

def dev_mix(a, b):
    return a * b + a


def dev_gap(a, b):
    if a < b:
        return b - a
    return a - b


@cuda.jit
def kernel(in_int32, in_float32, in_float64, out_int32, out_float32, out_float64, cnt_int32, cnt_uint32, cnt_int64):
    gid = cuda.grid(1)
    tid = cuda.threadIdx.x
    t32 = np.int32(in_int32[gid, 0] & 0) + np.int32(cuda.threadIdx.x)
    v_int32_0 = in_int32[gid, 0]
    v_int32_1 = in_int32[gid, 1]
    v_int32_2 = in_int32[gid, 2]
    w_int32 = in_int32[gid, 0]
    loc_int32 = cuda.local.array(4, np.int32)
    loc_int32[0] = in_int32[gid, 0]
    loc_int32[1] = in_int32[gid, 1]
    loc_int32[2] = in_int32[gid, 2]
    loc_int32[3] = in_int32[gid, 0]
    sh_int32 = cuda.shared.array(48, np.int32)
    v_float32_0 = in_float32[gid, 0]
    v_float32_1 = in_float32[gid, 1]
    v_float32_2 = in_float32[gid, 2]
    w_float32 = in_float32[gid, 0]
    loc_float32 = cuda.local.array(4, np.float32)
    loc_float32[0] = in_float32[gid, 0]
    loc_float32[1] = in_float32[gid, 1]
    loc_float32[2] = in_float32[gid, 2]
    loc_float32[3] = in_float32[gid, 0]
    sh_float32 = cuda.shared.array(48, np.float32)
    v_float64_0 = in_float64[gid, 0]
    v_float64_1 = in_float64[gid, 1]
    v_float64_2 = in_float64[gid, 2]
    w_float64 = in_float64[gid, 0]
    loc_float64 = cuda.local.array(4, np.float64)
    loc_float64[0] = in_float64[gid, 0]
    loc_float64[1] = in_float64[gid, 1]
    loc_float64[2] = in_float64[gid, 2]
    loc_float64[3] = in_float64[gid, 0]
    sh_float64 = cuda.shared.array(48, np.float64)
    for i0 in range(t32 % 4):
        if v_int32_1 <= (in_int32[gid, 1] >> (in_int32[gid, 1] & 31)):
            cuda.atomic.add(cnt_int64, cuda.blockIdx.x, np.int64(v_int32_2))
    w_float64 = np.float64(math.sin((-(np.float64(0.25) - loc_float64[v_int32_1 % 4]))))
    v_float32_1 = cuda.shfl_xor_sync(0xFFFFFFFF, v_float32_2, 2)
    sh_float64[tid] = v_float64_2
    cuda.syncthreads()
    v_float64_2 = np.float64(v_float64_2 - sh_float64[(tid + 12) % 48])
    cuda.syncthreads()
    out_int32[gid, 0] = v_int32_0
    out_int32[gid, 1] = v_int32_1
    out_int32[gid, 2] = v_int32_2
    out_int32[gid, 3] = loc_int32[0]
    out_int32[gid, 4] = loc_int32[1]
    out_int32[gid, 5] = loc_int32[2]
    out_int32[gid, 6] = loc_int32[3]
    out_int32[gid, 7] = w_int32
    out_float32[gid, 0] = v_float32_0
    out_float32[gid, 1] = v_float32_1
    out_float32[gid, 2] = v_float32_2
    out_float32[gid, 3] = loc_float32[0]
    out_float32[gid, 4] = loc_float32[1]
    out_float32[gid, 5] = loc_float32[2]
    out_float32[gid, 6] = loc_float32[3]
    out_float32[gid, 7] = w_float32
    out_float64[gid, 0] = v_float64_0
    out_float64[gid, 1] = v_float64_1
    out_float64[gid, 2] = v_float64_2
    out_float64[gid, 3] = loc_float64[0]
    out_float64[gid, 4] = loc_float64[1]
    out_float64[gid, 5] = loc_float64[2]
    out_float64[gid, 6] = loc_float64[3]
    out_float64[gid, 7] = w_float64


# ---- the regression: found by tools/fuzz (seed 10664), minimized -----------------------

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fuzz.gen import Program  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402

SEED, DTYPES, BLOCK, GRID = 10664, ('int32', 'float32', 'float64'), 48, 1


@pytest.mark.gpu
@pytest.mark.skipif(not __import__('conftest').HAVE_GPU, reason='no GPU')
def test_the_gpu_and_lockstep_mode_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])  # the inputs come from the seed
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK,
                       targets=('gpu', 'lockstep'))
    assert out.ok, out.mismatches or out.errors
