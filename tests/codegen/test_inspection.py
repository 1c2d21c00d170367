"""numba's introspection of compiled code: ``inspect_asm`` (PTX from NVRTC, no GPU),
``inspect_types``, ``inspect_cuda``, ``inspect_llvm`` (none: a clear error), ``inspect_sass``
and the module-level ``compile_ptx``/``compile``; and that the PTX holds what the kernel's
Python asks for (fast math, fences, selp without a branch)."""

from __future__ import annotations

import io
import math
import re
import shutil

import numpy as np
import pytest

import threadtile as cuda
from threadtile import float32, float64, int32, int64


def k_cos(r, x):
    r[0] = math.cos(x)


def d_cos(x):
    return math.cos(x)


def k_div(r, x, y):
    r[0] = x / y


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_inspect_asm_is_ptx_of_the_entry(arch):
    sig = (float32[::1], float32)
    k = cuda.jit(sig)(k_cos)
    ptx = cuda.inspection.asm(k, sig, arch=arch)
    assert f".target {arch}" in ptx and re.search(r"\.visible \.entry k_cos\(", ptx)
    assert k.inspect_asm() == {sig: k.inspect_asm(sig)}  # None: a dict by argument types


def test_inspect_asm_by_argument_types_of_launches():
    k = cuda.jit(k_cos)
    with cuda.simulate():
        k[1, 1](np.zeros(1, np.float32), np.float32(1.0))
        k[1, 1](np.zeros(1, np.float64), 1.0)
    asm = k.inspect_asm()
    assert len(asm) == 2
    f64 = next(v for t, v in asm.items() if t[1] == float64)
    assert "cos.approx" not in f64 and ".f64" in f64


def test_fastmath_in_kernels_and_device_functions():
    sig = (float32[::1], float32)
    fast, prec = cuda.jit(sig, fastmath=True)(k_cos), cuda.jit(sig)(k_cos)
    assert "cos.approx.ftz.f32 " in fast.inspect_asm(sig)
    assert "cos.approx.ftz.f32 " not in prec.inspect_asm(sig)
    dfast = cuda.jit((float32,), device=True, fastmath=True)(d_cos)
    assert "cos.approx.ftz.f32 " in dfast.inspect_asm((float32,))
    ptx, resty = cuda.compile_ptx(d_cos, (float32,), device=True, fastmath=True)
    assert "cos.approx.ftz.f32 " in ptx and resty == float32
    sig3 = (float32[::1], float32, float32)
    assert "div.rn.f32" in cuda.compile_ptx(k_div, sig3)[0]
    assert "div.approx.ftz.f32 " in cuda.compile_ptx(k_div, sig3, fastmath=True)[0]


def test_compile_ptx_kernel_and_device_function():
    ptx, resty = cuda.compile_ptx(k_cos, (float32[::1], float32))
    assert resty == cuda.void and ".visible .entry k_cos(" in ptx and "func_retval" not in ptx
    ptx, resty = cuda.compile_ptx(d_cos, "float64(float64)", device=True)
    assert resty == float64 and ".visible .func" in ptx and "func_retval0" in ptx
    ptx, _ = cuda.compile_ptx(k_cos, (float32[::1], float32), cc=(8, 0))
    assert ".target sm_80" in ptx
    ptx, _ = cuda.compile_ptx(lambda_free, "void()", launch_bounds=(128, 2))
    assert re.search(r"\.maxntid 128, 1, 1\s*\n", ptx) and ".minnctapersm 2" in ptx


def lambda_free():
    pass


def test_compile_outputs():
    cubin, resty = cuda.compile(k_cos, (float32[::1], float32), device=False, output="cubin")
    assert bytes(cubin[:4]) == b"\x7fELF" and resty == cuda.void
    with pytest.raises(NotImplementedError, match="no LTO-IR"):
        cuda.compile(d_cos, (float32,), output="ltoir")
    with pytest.raises(TypeError, match="void return type"):
        cuda.compile_ptx(k_cos, "float32(float32[::1], float32)")
    ptx, _ = cuda.compile_for_current_device(d_cos, (float32,))
    assert ".visible .func" in ptx
    ptx, _ = cuda.compile_ptx_for_current_device(k_cos, (float32[::1], float32))
    assert ".entry k_cos" in ptx


def test_inspect_llvm_says_there_is_none():
    k = cuda.jit((float32[::1], float32))(k_cos)
    with pytest.raises(NotImplementedError, match="no LLVM IR.*inspect_cuda"):
        k.inspect_llvm()


def test_inspect_types_and_cuda():
    sig = (float32[::1], int32)

    @cuda.jit(sig)
    def foo(r, n):
        r[0] = n * 2

    out = io.StringIO()
    foo.inspect_types(file=out)
    text = out.getvalue()
    assert "foo (float32[::1], int32)" in text and "r[0" in text
    assert 'extern "C" __global__ void foo(' in foo.inspect_cuda(sig)


@pytest.mark.skipif(shutil.which("nvdisasm") is not None, reason="nvdisasm is installed")
def test_inspect_sass_without_nvdisasm():
    k = cuda.jit((float32[::1], float32))(k_cos)
    with pytest.raises(RuntimeError, match="nvdisasm was not found"):
        k.inspect_sass()


@pytest.mark.parametrize("fence,inst", [(cuda.threadfence, "membar.gl;"),
                                        (cuda.threadfence_block, "membar.cta;"),
                                        (cuda.threadfence_system, "membar.sys;")])
def test_fences(fence, inst):
    def use(a):
        a[0] = 1
        fence()
        a[1] = 2

    sig = (int32[:],)
    assert inst in cuda.jit(sig)(use).inspect_asm(sig)


def branching(a, b, c):
    i = cuda.grid(1)
    if a[i] > 4:
        a[i] = c[i] if b % 2 == 0 else 13
    else:
        a[i] = 3


def selps(a, b, c):
    i = cuda.grid(1)
    inner = cuda.selp(b % 2 == 0, c[i], 13)
    a[i] = cuda.selp(a[i] > 4, inner, 3)


def test_selp_evaluates_both_operands_without_a_branch():
    sig = (int64[:], int64, int64[:])
    assert re.findall(r"\s+bra\s+", cuda.jit(sig)(branching).inspect_asm(sig))
    ptx = cuda.jit(sig)(selps).inspect_asm(sig)
    assert not re.findall(r"\s+bra\s+", ptx) and "selp.b64" in ptx


def test_selp_numerics(target):
    k = cuda.jit(selps)
    c = np.full(32, 17, np.int64)
    for b in (6, 7):
        a = target.to_device(np.arange(32, dtype=np.int64))
        target.launch(k, 32, 1, a, b, target.to_device(c))
        expect = np.where(np.arange(32) > 4, 17 if b % 2 == 0 else 13, 3)
        np.testing.assert_array_equal(target.to_host(a), expect)


def test_selp_reads_both_operands_in_the_simulator():
    # numba's selp is a call: its operands are evaluated before it chooses, so an index past
    # the array in the operand not chosen is still a read past it
    @cuda.jit
    def k(a, out):
        i = cuda.threadIdx.x
        out[i] = cuda.selp(i < a.size, a[i], 0.0)

    with pytest.raises(cuda.OutOfBoundsError), cuda.simulate():
        k[1, 8](np.ones(4), np.zeros(8))


def test_local_and_constant_memory_and_atomics_in_ptx():
    const = np.arange(10, dtype=np.float64)

    def local(a, b):
        c = cuda.local.array(1000, int32)
        for i in range(a.shape[0]):
            c[i] = a[i]
        for i in range(a.shape[0]):
            b[i] = c[i]

    def constant(a):
        c = cuda.const.array_like(const)
        a[cuda.threadIdx.x] = c[cuda.threadIdx.x]

    def add(a, v):
        cuda.atomic.add(a, 0, v)

    assert ".local" in cuda.jit((int32[:], int32[:]))(local).inspect_asm((int32[:], int32[:]))
    assert re.search(r"ld\.const\.[bf]64", cuda.jit((float64[:],))(constant).inspect_asm(
        (float64[:],)))
    assert re.search(r"(red|atom)\.global\.add\.f64", cuda.jit((float64[:], float64))(
        add).inspect_asm((float64[:], float64)))


def k_print(val, to_print):
    if to_print:
        print("value", val)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_print_formats_are_in_constant_memory(arch):
    """numba puts print()'s format strings in constant memory (get_const_mem_size counts
    them): the PTX declares each as a .const array, the integer's as %lld."""
    k = cuda.jit(k_print)
    ptx = cuda.inspection.asm(k, (int64, cuda.boolean), arch=arch)
    fmt = re.search(r"\.const \.align \d+ \.b8 tt_fmt0\[(\d+)\]", ptx)
    assert fmt and int(fmt[1]) == len(b"value %lld\n\0"), ptx[:2000]


CONSTS = np.arange(32, dtype=np.int64)


def k_resources(x, n, to_print):
    lm = cuda.local.array(1000, float32)
    sm = cuda.shared.array(100, float32)
    c = cuda.const.array_like(CONSTS)
    i = cuda.grid(1)
    for j in range(1000):
        lm[j] = j * x[j]
    sm[i] = 2
    cuda.syncthreads()
    if i < n:
        x[i] = lm[i] + sm[i] + c[i]
    if to_print:
        print(i)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_resources_without_a_gpu(arch):
    """numba's get_* questions answered from ptxas's report and the PTX, with no GPU."""
    sig = (float32[::1], int64, cuda.boolean)
    got = cuda.inspection.attributes(cuda.jit(sig)(k_resources).specialization(list(sig), {}),
                                     arch, ())
    assert got["shared_size_bytes"] == 400
    assert got["local_size_bytes"] >= 4000
    assert got["const_size_bytes"] == CONSTS.nbytes + len(b"%lld\n\0")
    assert 0 < got["num_regs"] <= 255 and got["max_threads_per_block"] == 1024
    bounded = cuda.jit(sig, launch_bounds=128)(k_resources)
    assert cuda.inspection.attributes(bounded.specialization(list(sig), {}), arch, ())[
        "max_threads_per_block"] == 128


def test_lto_ptx_is_the_whole_programs_ptx():
    sig = (float32[::1], float32)
    k = cuda.jit(sig)(k_cos)
    assert k.inspect_lto_ptx(sig) == k.inspect_asm(sig)
