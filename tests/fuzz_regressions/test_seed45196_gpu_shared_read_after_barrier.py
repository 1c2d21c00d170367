# ruff: noqa
"""Fuzzer regression, seed 45196 (GPU run at 16773b5, H200): mismatch gpu vs lockstep in
out_int32[:, 2] (7 elements) and out_float64. NOT EXPLAINED YET. What is known (probe runs):
the values the 7 threads 0, 1, 3, 10, 16, 23, 25 store into ``sh_int32`` (line 79) read back
as 0 after the ``syncthreads()`` of line 80 on the GPU, although those threads' ``v_int32_0``
is right (a store of it to global memory just before agrees with the simulator). The same
kernel built with ``--fmad=false`` agrees with the simulator bit for bit; NVRTC 13.0 and 13.4
behave alike; a ``syncwarp()`` before each ``syncthreads()`` changes nothing; in the SASS the
barrier follows the reconvergence (BSYNC) of ``cos``'s slow path, and the STS before it stores
the very register (R37) the matching global store of ``v_int32_0`` wrote; the PTX has
``st.shared``, ``bar.sync 0``, ``ld.shared`` in that order. Reading 0 means those threads'
stores were not yet done when the barrier let the others through. The simulator's result is
what the Python semantics give; the test stays an expected failure on the GPU until the cause
is found."""

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
def kernel(in_int32, in_int8, in_float64, out_int32, out_int8, out_float64, cnt_int32, cnt_uint32, cnt_int64):
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
    sh_int32 = cuda.shared.array(32, np.int32)
    v_int8_0 = in_int8[gid, 0]
    v_int8_1 = in_int8[gid, 1]
    v_int8_2 = in_int8[gid, 2]
    w_int8 = in_int8[gid, 0]
    loc_int8 = cuda.local.array(4, np.int8)
    loc_int8[0] = in_int8[gid, 0]
    loc_int8[1] = in_int8[gid, 1]
    loc_int8[2] = in_int8[gid, 2]
    loc_int8[3] = in_int8[gid, 0]
    sh_int8 = cuda.shared.array(32, np.int8)
    v_float64_0 = in_float64[gid, 0]
    v_float64_1 = in_float64[gid, 1]
    v_float64_2 = in_float64[gid, 2]
    w_float64 = in_float64[gid, 0]
    loc_float64 = cuda.local.array(4, np.float64)
    loc_float64[0] = in_float64[gid, 0]
    loc_float64[1] = in_float64[gid, 1]
    loc_float64[2] = in_float64[gid, 2]
    loc_float64[3] = in_float64[gid, 0]
    sh_float64 = cuda.shared.array(32, np.float64)
    cuda.atomic.and_(cnt_int32, cuda.blockIdx.x, np.int32(v_int8_0))
    v_int8_1 = np.int8(((v_int8_0 * (np.int8(21) << (v_int8_1 & 7))) ^ max(np.int8(14), v_int8_0)))
    v_float64_1 = np.float64((((np.float64(v_int32_1) - np.float64(np.int8(15))) / v_float64_1) * (np.float64(dev_gap(v_float64_0, v_float64_1)) / (in_float64[gid, 1] * v_float64_1))))
    sh_float64[tid] = v_float64_0
    cuda.syncthreads()
    v_float64_0 = np.float64(v_float64_0 - sh_float64[(tid + 8) % 32])
    cuda.syncthreads()
    v_int32_0 ^= (np.int32(np.float64(dev_mix(np.float64(0.25), v_float64_0))) if abs(np.float64(dev_mix(np.float64(0.25), v_float64_0))) < 60000 else np.int32(7))
    cuda.atomic.add(cnt_uint32, cuda.blockIdx.x, np.uint32(v_int32_2))
    v_int32_2 = np.int32((v_int32_1 & max((v_int32_0 % (v_int32_2 % 6 + 2)), (np.int32(loc_int32[v_int8_0 % 4]) & (np.int32(v_float64_2) if abs(v_float64_2) < 60000 else np.int32(7))))))
    for i0 in range(0, t32 % 4, -1):
        cuda.atomic.xor(cnt_int64, cuda.blockIdx.x, np.int64((v_int32_1 - np.int32(85))))
        v_int32_2 = np.int32(np.int32(i0))
        loc_int32[v_int8_1 % 4] = np.int32(np.int32(dev_mix(((np.int32(v_int32_1) % ((np.int32(v_float64_1) if abs(v_float64_1) < 60000 else np.int32(7)) % 6 + 2)) * loc_int32[v_int32_1 % 4]), v_int32_2)))
    for i1 in range(4):
        v_float64_0 = np.float64(np.float64(i1))
        v_int8_1 ^= np.int8(i1)
    v_int32_1 = np.int32(v_int32_1 ^ np.int32((cuda.ballot_sync(0xFFFFFFFF, t32 % 2 == 0) & 0xFFFF)))
    if (v_int8_0 * v_int8_0) > v_int8_0:
        v_float64_2 = np.float64((-np.float64((-v_float64_0))))
        for i2 in range(t32 % 4):
            cuda.atomic.xor(cnt_int64, cuda.blockIdx.x, np.int64(v_int32_2))
    w_float64 = np.float64(math.cos(((v_float64_1 / v_float64_2) if (loc_float64[v_int32_2 % 4] * loc_float64[v_int32_0 % 4]) <= (-loc_float64[v_int32_1 % 4]) else (v_float64_1 if t32 % 5 == 0 else in_float64[gid, 0]))))
    v_float64_1 = np.float64(np.float64(v_int8_2))
    sh_int32[tid] = v_int32_0
    cuda.syncthreads()
    v_int32_2 = np.int32(v_int32_2 ^ sh_int32[(tid + 4) % 32])
    cuda.syncthreads()
    v_float64_1 = np.float64(((-(v_float64_0 + loc_float64[v_int32_2 % 4])) / np.float64(0.5)))
    cuda.atomic.and_(cnt_int32, cuda.blockIdx.x, np.int32(v_int32_1))
    out_int32[gid, 0] = v_int32_0
    out_int32[gid, 1] = v_int32_1
    out_int32[gid, 2] = v_int32_2
    out_int32[gid, 3] = loc_int32[0]
    out_int32[gid, 4] = loc_int32[1]
    out_int32[gid, 5] = loc_int32[2]
    out_int32[gid, 6] = loc_int32[3]
    out_int32[gid, 7] = w_int32
    out_int8[gid, 0] = v_int8_0
    out_int8[gid, 1] = v_int8_1
    out_int8[gid, 2] = v_int8_2
    out_int8[gid, 3] = loc_int8[0]
    out_int8[gid, 4] = loc_int8[1]
    out_int8[gid, 5] = loc_int8[2]
    out_int8[gid, 6] = loc_int8[3]
    out_int8[gid, 7] = w_int8
    out_float64[gid, 0] = v_float64_0
    out_float64[gid, 1] = v_float64_1
    out_float64[gid, 2] = v_float64_2
    out_float64[gid, 3] = loc_float64[0]
    out_float64[gid, 4] = loc_float64[1]
    out_float64[gid, 5] = loc_float64[2]
    out_float64[gid, 6] = loc_float64[3]
    out_float64[gid, 7] = w_float64


# ---- the regression: found by tools/fuzz (seed 45196), minimized -----------------------

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fuzz.gen import Program  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402

SEED, DTYPES, BLOCK, GRID = 45196, ('int32', 'int8', 'float64'), 32, 1


@pytest.mark.gpu
@pytest.mark.skipif(not __import__('conftest').HAVE_GPU, reason='no GPU')
@pytest.mark.xfail(reason='mismatch gpu vs lockstep: out_float64,gpu vs lockstep: out_int32: gpu vs lockstep: out_int32[6, 2]: np.int32(0) != np.int32(-25) (7 elements differ)', strict=True)
def test_the_gpu_and_lockstep_mode_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])  # the inputs come from the seed
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK,
                       targets=('gpu', 'lockstep'))
    assert out.ok, out.mismatches or out.errors
