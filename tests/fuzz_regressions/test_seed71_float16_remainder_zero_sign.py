# ruff: noqa
"""Fuzzer regression, seed 71: a float % whose result is zero: lockstep mode (and the CUDA backend) gave the dividend's sign (C's fmod), python mode the divisor's (Python's and numba's %), so x / (y % z) was inf in one and -inf in the other; both give the divisor's sign now (tt::pymod, ops.pymod_f)."""

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
def kernel(in_int32, in_int8, in_float16, in_float64, out_int32, out_int8, out_float16, out_float64, cnt_int32, cnt_uint32, cnt_int64):
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
    v_int8_0 = in_int8[gid, 0]
    v_int8_1 = in_int8[gid, 1]
    v_int8_2 = in_int8[gid, 2]
    w_int8 = in_int8[gid, 0]
    loc_int8 = cuda.local.array(4, np.int8)
    loc_int8[0] = in_int8[gid, 0]
    loc_int8[1] = in_int8[gid, 1]
    loc_int8[2] = in_int8[gid, 2]
    loc_int8[3] = in_int8[gid, 0]
    sh_int8 = cuda.shared.array(64, np.int8)
    v_float16_0 = in_float16[gid, 0]
    v_float16_1 = in_float16[gid, 1]
    v_float16_2 = in_float16[gid, 2]
    w_float16 = in_float16[gid, 0]
    loc_float16 = cuda.local.array(4, np.float16)
    loc_float16[0] = in_float16[gid, 0]
    loc_float16[1] = in_float16[gid, 1]
    loc_float16[2] = in_float16[gid, 2]
    loc_float16[3] = in_float16[gid, 0]
    sh_float16 = cuda.shared.array(64, np.float16)
    v_float64_0 = in_float64[gid, 0]
    v_float64_1 = in_float64[gid, 1]
    v_float64_2 = in_float64[gid, 2]
    w_float64 = in_float64[gid, 0]
    loc_float64 = cuda.local.array(4, np.float64)
    loc_float64[0] = in_float64[gid, 0]
    loc_float64[1] = in_float64[gid, 1]
    loc_float64[2] = in_float64[gid, 2]
    loc_float64[3] = in_float64[gid, 0]
    sh_float64 = cuda.shared.array(64, np.float64)
    if loc_float64[v_int32_0 % 4] != (v_float64_0 * np.float64(1.5)):
        v_float16_0 = np.float16(((np.float16(v_float64_0) % (abs(v_float16_2) + np.float16(1))) / (v_float16_2 % (abs(v_float16_1) + np.float16(1)))))
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
    out_float16[gid, 0] = v_float16_0
    out_float16[gid, 1] = v_float16_1
    out_float16[gid, 2] = v_float16_2
    out_float16[gid, 3] = loc_float16[0]
    out_float16[gid, 4] = loc_float16[1]
    out_float16[gid, 5] = loc_float16[2]
    out_float16[gid, 6] = loc_float16[3]
    out_float16[gid, 7] = w_float16
    out_float64[gid, 0] = v_float64_0
    out_float64[gid, 1] = v_float64_1
    out_float64[gid, 2] = v_float64_2
    out_float64[gid, 3] = loc_float64[0]
    out_float64[gid, 4] = loc_float64[1]
    out_float64[gid, 5] = loc_float64[2]
    out_float64[gid, 6] = loc_float64[3]
    out_float64[gid, 7] = w_float64


# ---- the regression: found by tools/fuzz (seed 71), minimized -----------------------

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fuzz.gen import Program  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402

SEED, DTYPES, BLOCK, GRID = 71, ('int32', 'int8', 'float16', 'float64'), 64, 1



def test_lockstep_and_python_modes_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])  # the inputs come from the seed
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK)
    assert out.ok, out.mismatches or out.errors
