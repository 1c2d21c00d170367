"""A float converted to an 8- or 16-bit integer as the GPU converts it: the 32-bit conversion of
the same signedness (PTX ``cvt.rzi.s32``/``u32``: truncated, clamped, NaN 0), wrapped to the
width. The generated C++ spells every float-to-int conversion with ``tt::f2i`` (the ``cvt.rzi``
intrinsics; a C++ cast out of range is undefined), at thread and tile level."""

import numpy as np
import pytest

import threadtile as cuda
import threadtile.tile as ct
from threadtile.runtime import nvrtc


@cuda.jit
def convert(x, o8, o16, ou8, o32):
    i = cuda.threadIdx.x
    o8[i] = np.int8(x[i])
    o16[i] = np.int16(x[i])
    ou8[i] = np.uint8(x[i])
    o32[i] = np.int32(x[i])


@ct.kernel
def tile_convert(X, A, B):
    x = ct.load(X, index=(0,), shape=(8,))
    ct.store(A, index=(0,), tile=x.astype(ct.int8))
    ct.store(B, index=(0,), tile=x.astype(ct.uint8))


X = [300.5, -300.5, float("nan"), 1e10, -1e10, 100.7, -5.5, 255.9]
# the 32-bit conversion: 300, -300, 0 (NaN), 2**31 - 1, -2**31, 100, -5, 255 (unsigned: 0 for
# the negatives, 2**32 - 1 for 1e10), wrapped
INT8 = [44, -44, 0, -1, 0, 100, -5, -1]
INT16 = [300, -300, 0, -1, 0, 100, -5, 255]
UINT8 = [44, 0, 0, 255, 0, 100, 0, 255]


@pytest.mark.parametrize("src", [np.float32, np.float64], ids=["float32", "float64"])
def test_thread_level(src):
    x = np.array(X, src)
    outs = [np.zeros(8, d) for d in (np.int8, np.int16, np.uint8, np.int32)]
    with cuda.simulate():
        convert[1, 8](x, *outs)
    assert outs[0].tolist() == INT8 and outs[1].tolist() == INT16 and outs[2].tolist() == UINT8
    assert outs[3].tolist()[:2] == [300, -300] and outs[3].tolist()[3:5] == [2**31 - 1, -2**31]
    cu = convert.cuda_source(x, *outs)
    assert "tt::f2i<int8_t>(" in cu and "(int8_t)" not in cu
    for arch in ("sm_80", "sm_90"):
        nvrtc.compile_cubin(cu, arch, options=tuple(f"-I{d}" for d in nvrtc.include_dirs()))


def test_tile_level():
    x = np.array(X, np.float32)
    a, b = np.zeros(8, np.int8), np.zeros(8, np.uint8)
    with cuda.simulate():
        ct.launch(None, (1,), tile_convert, (x, a, b))
    assert a.tolist() == INT8 and b.tolist() == UINT8
    cu = tile_convert.cuda_source(x, a, b)
    for arch in ("sm_80", "sm_90"):
        nvrtc.compile_cubin(cu, arch, options=tuple(f"-I{d}" for d in nvrtc.include_dirs()))
