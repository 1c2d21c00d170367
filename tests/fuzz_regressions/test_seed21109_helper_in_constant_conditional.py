# ruff: noqa
"""Fuzzer regression, seed 21109: a helper function called in a branch of a conditional expression whose condition folds to a constant was refused ("a call of dev_mix() inside `and`/`or`, a conditional expression...", reported at the helper's line offsets); the branch taken now lowers with its statements, the other is dropped."""

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
def kernel(in_int32, in_uint8, in_float32, out_int32, out_uint8, out_float32, cnt_int32, cnt_uint32, cnt_int64):
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
    sh_int32 = cuda.shared.array(64, np.int32)
    v_uint8_0 = in_uint8[gid, 0]
    v_uint8_1 = in_uint8[gid, 1]
    v_uint8_2 = in_uint8[gid, 2]
    w_uint8 = in_uint8[gid, 0]
    loc_uint8 = cuda.local.array(4, np.uint8)
    loc_uint8[0] = in_uint8[gid, 0]
    loc_uint8[1] = in_uint8[gid, 1]
    loc_uint8[2] = in_uint8[gid, 2]
    loc_uint8[3] = in_uint8[gid, 0]
    sh_uint8 = cuda.shared.array(64, np.uint8)
    v_float32_0 = in_float32[gid, 0]
    v_float32_1 = in_float32[gid, 1]
    v_float32_2 = in_float32[gid, 2]
    w_float32 = in_float32[gid, 0]
    loc_float32 = cuda.local.array(4, np.float32)
    loc_float32[0] = in_float32[gid, 0]
    loc_float32[1] = in_float32[gid, 1]
    loc_float32[2] = in_float32[gid, 2]
    loc_float32[3] = in_float32[gid, 0]
    sh_float32 = cuda.shared.array(64, np.float32)
    v_uint8_1 -= (np.uint8(np.float32(dev_mix(np.float32(3.0), np.float32(0.5)))) if 0 <= np.float32(dev_mix(np.float32(3.0), np.float32(0.5))) < 200 else np.uint8(7))
    out_int32[gid, 0] = v_int32_0
    out_int32[gid, 1] = v_int32_1
    out_int32[gid, 2] = v_int32_2
    out_int32[gid, 3] = loc_int32[0]
    out_int32[gid, 4] = loc_int32[1]
    out_int32[gid, 5] = loc_int32[2]
    out_int32[gid, 6] = loc_int32[3]
    out_int32[gid, 7] = w_int32
    out_uint8[gid, 0] = v_uint8_0
    out_uint8[gid, 1] = v_uint8_1
    out_uint8[gid, 2] = v_uint8_2
    out_uint8[gid, 3] = loc_uint8[0]
    out_uint8[gid, 4] = loc_uint8[1]
    out_uint8[gid, 5] = loc_uint8[2]
    out_uint8[gid, 6] = loc_uint8[3]
    out_uint8[gid, 7] = w_uint8
    out_float32[gid, 0] = v_float32_0
    out_float32[gid, 1] = v_float32_1
    out_float32[gid, 2] = v_float32_2
    out_float32[gid, 3] = loc_float32[0]
    out_float32[gid, 4] = loc_float32[1]
    out_float32[gid, 5] = loc_float32[2]
    out_float32[gid, 6] = loc_float32[3]
    out_float32[gid, 7] = w_float32


# ---- the regression: found by tools/fuzz (seed 21109), minimized -----------------------

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fuzz.gen import Program  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402

SEED, DTYPES, BLOCK, GRID = 21109, ('int32', 'uint8', 'float32'), 64, 1


def test_lockstep_and_python_modes_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])  # the inputs come from the seed
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK)
    assert out.ok, out.mismatches or out.errors


@pytest.mark.gpu
@pytest.mark.skipif(not __import__('conftest').HAVE_GPU, reason='no GPU')
def test_the_gpu_and_lockstep_mode_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK,
                       targets=('gpu', 'lockstep'))
    assert out.ok, out.mismatches or out.errors

