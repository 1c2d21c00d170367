"""A stand-in GPU for the compile tests: the algorithms' GPU host code runs as it would on a
device (arrays described, grids and temporary storage computed, kernels picked), but each
launch only records the program and checks the argument count against the kernel's C++
parameter list; no driver is touched. The recorded programs are then compiled with NVRTC."""

from __future__ import annotations

import contextlib
import re

import numpy as np

from threadtile.compute import _common, device


class FakeArray:
    """A device array nobody can read: a dtype, a shape and an address."""

    _next = [1 << 32]

    def __init__(self, n: int, dtype):
        self.dtype = np.dtype(dtype)
        self.shape = (n,)
        self.size = n
        self.ptr = self._next[0]
        self._next[0] += max(n * self.dtype.itemsize, 1) + 256


_PARAMS = re.compile(
    r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s*(\w+)\(([^)]*)\)', re.S)


def kernel_params(source: str) -> dict[str, int]:
    """The number of parameters of each ``extern "C"`` kernel of a program."""
    out = {}
    for name, params in _PARAMS.findall(source):
        out[name] = len([p for p in params.split(",") if p.strip()])
    return out


class _Launch:
    def __init__(self, rec, prog, name, config):
        self.rec, self.prog, self.name, self.config = rec, prog, name, config

    def __call__(self, *args):
        params = kernel_params(self.prog.source)
        assert self.name in params, f"no kernel {self.name} in the program"
        assert len(args) == params[self.name], (
            f"{self.name}: {len(args)} arguments for {params[self.name]} parameters")
        grid, block = self.config[0], self.config[1]
        assert 1 <= int(np.prod(np.atleast_1d(grid))) < 2**31 and 1 <= block <= 1024
        for a in args:
            assert isinstance(a, (int, np.integer, float)), f"{self.name}: argument {a!r}"
        self.rec.launches.append((self.name, self.config, args))


class _Kernel:
    def __init__(self, rec, prog, name):
        self.rec, self.prog, self.name = rec, prog, name

    def __getitem__(self, config):
        return _Launch(self.rec, self.prog, self.name, config)


class _Program:
    def __init__(self, rec, source):
        self.rec, self.source = rec, source

    def kernel(self, name):
        return _Kernel(self.rec, self, name)


class Recorder:
    def __init__(self):
        self.sources: dict[tuple, str] = {}
        self.launches: list = []


@contextlib.contextmanager
def fake_gpu(monkeypatch):
    rec = Recorder()

    def program(key, build, label):
        src = rec.sources.get(key)
        if src is None:
            src = rec.sources[key] = build()
        return _Program(rec, src)

    def info(a, what):
        if not isinstance(a, FakeArray):
            raise TypeError(f"{what}: the fake GPU takes FakeArrays, not {type(a).__name__}")
        return a.ptr, a.dtype, a.size, None

    monkeypatch.setattr(device, "program", program)
    monkeypatch.setattr(device, "device_array_info", info)
    monkeypatch.setattr(device, "resolve_stream", lambda s, fw: 0)
    monkeypatch.setattr(device, "sm_count", lambda: 132)
    monkeypatch.setattr(device, "temp_storage", lambda n, s: 1 << 40)
    monkeypatch.setattr(device, "copy", lambda d, s, n, st: rec.launches.append(("copy", n)))
    monkeypatch.setattr(_common, "requested", lambda: False)
    yield rec
