"""The packages the AOT tests share, exported once per session (NVRTC takes seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aot_support import KERNELS, export


@pytest.fixture(scope="session")
def package(tmp_path_factory) -> Path:
    """A thread-level kernel and two tile kernels (one with the sm_90a sections), for sm_80,
    sm_90 and sm_90a."""
    out = tmp_path_factory.mktemp("package")
    k = f"{KERNELS}:"
    assert export(out, k + "saxpy", "float32", "float32[:]", "float32[:]", "float32[:]",
                  k + "vector_add", "float32[::1]", "float32[::1]", "float32[::1]", "tile=256",
                  k + "matmul", "float32[:, ::1]", "float32[:, ::1]", "float32[:, ::1]",
                  "tm=64", "tn=64", "tk=32") == 0
    return out


@pytest.fixture(scope="session")
def hopper(tmp_path_factory) -> Path:
    """The float16 tile matmul, whose sm_90a main loop reads two hidden tensor maps, and a
    thread-level kernel with a scalar of every kind, for sm_80 and sm_90a."""
    out = tmp_path_factory.mktemp("hopper")
    assert export(out, f"{KERNELS}:matmul", "float16[:, ::1]", "float16[:, ::1]",
                  "float16[:, ::1]", "tm=128", "tn=128", "tk=64", f"{KERNELS}:mixed",
                  "float64[:]", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
                  "float32", "float64", "bool", "complex64", "complex128",
                  arch="sm_80,sm_90a") == 0
    return out
