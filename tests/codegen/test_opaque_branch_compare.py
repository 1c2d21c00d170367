"""The integer ``==``/``!=`` of an ``if`` that leaves its loop compiles through inline PTX
(``tt::opaque_eq``), which ptxas does not turn into a jump table: with one, ptxas (CUDA 13.4,
13.5; sm_80 to sm_90) lets the ``break`` skip the loop body's convergence ``BREAK`` and then
emits the warp shuffle after the loop with no ``WARPSYNC``, so that it ran with the warp split
(fuzz seed 82755, tests/fuzz_regressions/test_seed82755_ptxas_jump_table_break.py). Where
nvdisasm is on PATH, the SASS is checked too: no ``BRX``, and a ``WARPSYNC`` before the
shuffle."""

import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import threadtile as cuda
from threadtile.runtime import nvrtc


@cuda.jit
def _loop_then_shuffle(a, out):
    t = cuda.threadIdx.x
    n = a[t] % 4 + 1
    r = t % 2
    v = np.int32(a[t])
    for _ in range(n):
        if r == 0:
            v = -v
        elif r == 1:
            break
    s = cuda.shfl_sync(0xFFFFFFFF, a[t] * 7 + 1, 10)
    out[t, 0] = s
    out[t, 1] = v


@cuda.jit
def _no_break(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    for _ in range(3):
        if v % 2 == 0:
            v += 1
    out[t, 0] = v


def test_the_compares_of_an_if_that_breaks_are_opaque():
    a, out = np.zeros(32, np.int32), np.zeros((32, 2), np.int32)
    cu = _loop_then_shuffle.cuda_source(a, out)
    assert cu.count("tt::opaque_eq(") == 2
    assert "r == 0" not in cu and "r == 1" not in cu
    cu = _no_break.cuda_source(a, out)
    assert "opaque_eq" not in cu  # an if that stays in its loop keeps C++'s ==


def test_it_compiles_and_ptxas_builds_no_jump_table():
    a, out = np.zeros(32, np.int32), np.zeros((32, 2), np.int32)
    cu = _loop_then_shuffle.cuda_source(a, out)
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    tool = shutil.which("nvdisasm")
    for arch in ("sm_80", "sm_90"):
        ptx = nvrtc.compile_ptx(cu, arch, options=inc)
        assert re.search(r"setp\.eq\.b(32|64) p", ptx) and "selp.u32" in ptx
        cubin = nvrtc.compile_cubin(cu, arch, options=inc)
        if tool is None:
            continue
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(bytes(cubin))
            f.flush()
            sass = subprocess.run([tool, "-c", f.name], capture_output=True, text=True,
                                  check=True).stdout
        assert "BRX" not in sass, arch
        lines = [ln for ln in sass.splitlines() if re.search(r"SHFL|WARPSYNC", ln)]
        assert lines and "WARPSYNC" in lines[0] and "SHFL" in lines[1], (arch, lines[:3])


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.int8])
def test_other_integer_types(dtype):
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        v = a[t]
        for _ in range(4):
            if v == 3:
                break
            v += 1
        out[t] = v

    a = np.arange(32).astype(dtype)
    cu = k.cuda_source(a, a.copy())
    assert "tt::opaque_eq(" in cu
    inc = tuple(f"-I{d}" for d in nvrtc.include_dirs())
    assert nvrtc.compile_cubin(cu, "sm_90", options=inc)
    # and the simulator runs it as Python does
    got = a.copy()
    with cuda.simulate():
        k[1, 32](a, got)
    want = np.array([3 if x <= 3 else x + 4 for x in range(32)]).astype(dtype)
    np.testing.assert_array_equal(got, want)
