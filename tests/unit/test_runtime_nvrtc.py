"""NVRTC compiles CUDA C++ to cubin without a GPU; its errors map back to #line files."""

import pytest

from threadtile.errors import NvrtcError
from threadtile.runtime import nvrtc

ELF = b"\x7fELF"

ADD = r"""
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_to_a_cubin_for_an_explicit_arch(arch):
    cubin = nvrtc.compile_cubin(ADD, arch)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == ELF
    assert b"add" in cubin


def test_the_threadtile_header_and_half_types_are_found():
    src = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define TT_HALF 1
#include "threadtile.h"
extern "C" __global__ void k(tt::CArray<__half, 1> a, tt::Array<float, 2> b) {
  a(threadIdx.x) = __float2half(b(0, threadIdx.x));
}
"""
    assert nvrtc.compile_cubin(src, "sm_90")[:4] == ELF


def test_cub_compiles_without_minimal():
    src = r"""
#include <cub/block/block_reduce.cuh>
extern "C" __global__ void k(float* a) {
  using R = cub::BlockReduce<float, 128>;
  __shared__ typename R::TempStorage t;
  float s = R(t).Sum(a[threadIdx.x]);
  if (threadIdx.x == 0) a[0] = s;
}
"""
    assert not nvrtc._wants_minimal(src)
    assert nvrtc.compile_cubin(src, "sm_90")[:4] == ELF


def test_minimal_only_for_known_headers():
    assert nvrtc._wants_minimal('#include "threadtile.h"\n#include <cuda_fp16.h>\n')
    assert nvrtc._wants_minimal("extern \"C\" __global__ void k() {}")
    assert not nvrtc._wants_minimal("#include <mma.h>\n")


def test_options_pass_through():
    assert nvrtc.compile_cubin(ADD, "sm_90", options=("-lineinfo", "--use_fast_math",
                                                      "--maxrregcount=32"))[:4] == ELF
    with pytest.raises(NvrtcError, match="bogus"):
        nvrtc.compile_cubin(ADD, "sm_90", options=("--bogus",))


def test_compile_error_maps_to_the_line_directive():
    src = ('#line 7 "mykernel.py"\n'
           'extern "C" __global__ void k(float* a) {\n'  # line 7
           "  int unused;\n"  # line 8
           "  a[0] = undefined_name;\n"  # line 9
           "}\n")
    with pytest.raises(NvrtcError) as info:
        nvrtc.compile_cubin(src, "sm_90")
    e = info.value
    assert "undefined_name" in e.log
    diags = nvrtc.parse_log(e.log)
    assert diags[0] == ("mykernel.py", 9, 'identifier "undefined_name" is undefined')
    assert ("mykernel.py", 8) in [(f, n) for f, n, m in diags if m.startswith("warning")]
    assert e.diagnostics == diags
    assert "undefined_name" in str(e)


def test_warnings_come_back_with_the_cubin():
    src = 'extern "C" __global__ void k(float* a) { int unused; a[0] = 1.0f; }'
    cubin = nvrtc.compile_cubin(src, "sm_90")
    assert "unused" in cubin.log


def test_parse_log_orders_errors_first_and_handles_odd_file_names():
    log = "\n".join([
        'dir (v2)/k.py(3): warning #177-D: variable "x" was declared but never referenced',
        "   int x;",
        "       ^",
        "",
        "dir (v2)/k.py(5): error: expected a \";\"",
        "kernel.cu(40): catastrophic error: cannot open source file \"nope.h\"",
        "2 errors detected in the compilation of \"kernel.cu\".",
    ])
    assert nvrtc.parse_log(log) == [
        ("dir (v2)/k.py", 5, 'expected a ";"'),
        ("kernel.cu", 40, 'cannot open source file "nope.h"'),
        ("dir (v2)/k.py", 3,
         'warning #177-D: variable "x" was declared but never referenced'),
    ]
    assert nvrtc.parse_log("") == []


def test_version_and_archs():
    major, minor = nvrtc.nvrtc_version()
    assert major >= 12 and minor >= 0
    archs = nvrtc.supported_archs()
    assert "sm_90" in archs and "sm_80" in archs


def test_bad_arch_is_a_value_error():
    with pytest.raises(ValueError, match="sm_90"):
        nvrtc.compile_cubin(ADD, "hopper")
    with pytest.raises(ValueError, match="real architecture"):
        nvrtc.compile_cubin(ADD, "compute_90")
    assert nvrtc.compile_cubin(ADD, "90")[:4] == ELF


def test_ptx_for_reading():
    ptx = nvrtc.compile_ptx(ADD, "compute_90")
    assert ".entry add" in ptx


def test_include_dirs_start_with_ours():
    dirs = nvrtc.include_dirs()
    assert dirs[0].endswith("backends/cuda/include")
    assert len(dirs) >= 2
