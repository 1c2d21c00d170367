"""Where a threadtile.compute test runs: ``numpy`` (NumPy arrays: the host path),
``sim`` (inside ``threadtile.simulate()``, NumPy arrays) or ``gpu`` (torch CUDA tensors, or
threadtile device arrays for record dtypes; marked ``gpu``, skipped without one)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from conftest import GPU_PARAM

import threadtile


class Where:
    def __init__(self, name: str):
        self.name = name

    def context(self):
        return threadtile.simulate() if self.name == "sim" else contextlib.nullcontext()

    def dev(self, a: np.ndarray):
        """``a`` where the algorithm runs."""
        a = np.ascontiguousarray(a)
        if self.name != "gpu":
            return a.copy()
        if a.dtype.names is None and a.dtype != np.uint32 and a.dtype != np.uint64:
            try:
                import torch  # noqa: PLC0415
            except ImportError:
                torch = None
            if torch is not None and a.dtype != np.uint16:
                return torch.from_numpy(a.copy()).cuda()
        return threadtile.to_device(a)

    def empty(self, n: int, dtype):
        return self.dev(np.zeros(n, dtype))

    def host(self, d) -> np.ndarray:
        if self.name != "gpu":
            return np.asarray(d)
        threadtile.synchronize()
        if hasattr(d, "copy_to_host"):
            return d.copy_to_host()
        return d.cpu().numpy()


@pytest.fixture(params=["numpy", "sim", GPU_PARAM])
def where(request) -> Where:
    w = Where(request.param)
    with w.context():
        yield w


@pytest.fixture
def rng():
    return np.random.default_rng()
