"""Static shared memory past the 48 KiB a block may declare is a compile error at the
declaration that crosses the limit, with how to get more (dynamic shared memory)."""

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.errors import KernelCompileError


@cuda.jit
def just_48k(a):
    s = cuda.shared.array(12288, np.float32)
    s[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    a[0] = s[0]


def stage(x):
    t = cuda.shared.array(64, np.int32)  # over the limit with the kernel's own 48 KiB
    t[0] = x
    return t[0]


@cuda.jit
def over_by_a_device_function(a):
    s = cuda.shared.array((96, 128), np.float32)
    s[0, 0] = stage(1)
    a[0] = s[0, 0]


@cuda.jit
def dynamic_instead(a):
    s = cuda.shared.array(0, np.float32)
    s[20000 + cuda.threadIdx.x] = 2.0
    cuda.syncthreads()
    a[0] = s[20031]


def test_over_the_limit_points_at_the_declaration():
    with cuda.simulate(), pytest.raises(KernelCompileError) as e:
        over_by_a_device_function[1, 1](np.zeros(1, np.float32))
    text = str(e.value)
    assert "t = cuda.shared.array(64, np.int32)" in text
    assert e.value.loc.function == "stage"
    assert "49408 bytes of static shared memory" in text
    assert "cuda.shared.array(0, dtype)" in text and "227 KiB on sm_90" in text


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_exactly_48k_compiles(arch):
    assert compile_cubin(just_48k, np.zeros(1, np.float32), arch=arch)[:4] == b"\x7fELF"


def test_dynamic_shared_memory_past_48k_runs_in_the_simulator():
    a = np.zeros(1, np.float32)
    with cuda.simulate():
        dynamic_instead[1, 32, 0, 100 * 1024](a)
    assert a[0] == 2.0
