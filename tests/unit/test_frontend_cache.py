"""The C++ source cache: a warm start skips lowering, and a changed global is never missed."""

import importlib
import sys

import numpy as np
import pytest

import threadtile

MODULE = '''
import threadtile as cuda
import numpy as np

SCALE = {scale}
TABLE = np.array({table}, dtype=np.float32)

@cuda.jit(device=True)
def helper(x):
    return x * SCALE

@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = helper(a[i]) + TABLE[1]
'''


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))

    def load(scale, table):
        (tmp_path / "cached_kernels.py").write_text(MODULE.format(scale=scale, table=table))
        sys.modules.pop("cached_kernels", None)
        importlib.invalidate_caches()
        return importlib.import_module("cached_kernels")

    yield load
    sys.modules.pop("cached_kernels", None)


def fresh(kernel):
    """The same function as a new Kernel: an empty in-memory cache, as in a new process."""
    return threadtile.jit(kernel.py_func)


def test_second_process_reuses_source_without_lowering(kernel_module):
    mod = kernel_module(3, [1.0, 2.0])
    a = np.zeros(4, np.float32)
    first = mod.k.cuda_source(a)
    again = fresh(mod.k)
    spec = again._spec_for((a,), {})
    assert spec.source == first
    assert spec._module is None  # served from the cache: nothing was lowered


def test_changed_global_is_not_served_stale(kernel_module):
    mod = kernel_module(3, [1.0, 2.0])
    a = np.zeros(4, np.float32)
    assert "x * 3.0f" in mod.k.cuda_source(a)
    mod.SCALE = 5  # the device function reads it
    k2 = fresh(mod.k)
    src = k2.cuda_source(a)
    assert k2._spec_for((a,), {})._module is not None  # lowered again
    assert "x * 5.0f" in src and "3.0f" not in src


def test_changed_constant_array_is_not_served_stale(kernel_module):
    mod = kernel_module(3, [1.0, 2.0])
    a = np.zeros(4, np.float32)
    first = mod.k.cuda_source(a)
    mod.TABLE = np.array([1.0, 7.0], dtype=np.float32)
    src = fresh(mod.k).cuda_source(a)
    assert src != first and "7.0f" in src
