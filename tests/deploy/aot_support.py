"""What the AOT package tests share: exporting, reading a package, stand-ins for GPU arrays
and for cuda.bindings' driver module."""

from __future__ import annotations

import ctypes
import json
import types
from pathlib import Path

import numpy as np

from threadtile import cli
from threadtile.aot import loader
from threadtile.export import parse_type
from threadtile.runtime import nvrtc

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "aot_kernels.py"
ARCHS = ["sm_80", "sm_90", "sm_90a"]


def export(out: Path, *items: str, arch: str = ",".join(ARCHS), name: str = "kernels") -> int:
    return cli.main(["export", *items, "-o", str(out), "--arch", arch, "--name", name])


def manifest(folder: Path, name: str = "kernels") -> dict:
    return json.loads((folder / f"{name}.json").read_text())


class FakeDeviceArray:
    """An array on the GPU as far as a launcher can tell (it never touches the memory)."""

    def __init__(self, shape, dtype, strides=None, ptr=0x7F0000001000):
        dt = np.dtype(dtype)
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": dt.str, "data": (ptr, False), "version": 3,
            "strides": None if strides is None else tuple(s * dt.itemsize for s in strides)}


def bound(folder: Path) -> dict:
    """The package's kernels, bound by the loader of this threadtile (as its copy binds them)."""
    ns: dict = {"__file__": str(folder / "kernels.py")}
    loader.bind(ns, "kernels.json")
    return ns


def param_type(p: dict):
    return parse_type(p["type"])


class FakeDriver:
    """cuda.bindings.driver as far as the loader uses it, on a device of ``capability``:
    records each launch with the bytes each kernel parameter pointer points at."""

    def __init__(self, capability=(9, 0)):
        self.capability = capability
        self.launches, self.attributes, self.maps = [], [], []

    def __getattr__(self, name):  # enums: CUdevice_attribute.X -> "X"
        if name.startswith("CU"):
            return _Enum()
        raise AttributeError(name)

    CUdeviceptr = CUstream = CUfunction = cuuint64_t = cuuint32_t = staticmethod(lambda x: x)

    def cuPointerGetAttribute(self, attr, ptr):
        return 0, 0

    def cuCtxGetCurrent(self):
        return 0, 1

    def cuCtxGetDevice(self):
        return 0, 0

    def cuDeviceGet(self, i):
        return 0, i

    def cuDeviceGetAttribute(self, attr, dev):
        return 0, self.capability[0 if attr.endswith("MAJOR") else 1]

    def cuLibraryLoadData(self, data, *rest):
        assert data[:4] == b"\x7fELF" and rest == (None, None, 0, None, None, 0)
        return 0, "library"

    def cuLibraryGetKernel(self, lib, name):
        return 0, 1000 + len(name)

    def cuKernelGetParamInfo(self, kern, i):
        sizes = self.param_sizes
        return (0, 0, sizes[i]) if i < len(sizes) else (1, 0, 0)

    def cuKernelSetAttribute(self, attr, value, kern, dev):
        self.attributes.append((attr, value, dev))
        return (0,)

    def cuTensorMapEncodeTiled(self, dtype, rank, ptr, dims, pitches, box, *rest):
        self.maps.append((dtype, ptr, dims, pitches, box, rank, rest))
        buf = ctypes.create_string_buffer(bytes([len(self.maps)]) * 128, 128)
        self._keep = getattr(self, "_keep", []) + [buf]
        return 0, types.SimpleNamespace(getPtr=lambda: ctypes.addressof(buf))

    def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        ptrs = (ctypes.c_void_p * len(self.param_sizes)).from_address(argv)
        params = [ctypes.string_at(p, n) for p, n in zip(ptrs, self.param_sizes)]
        self.launches.append(((gx, gy, gz), (bx, by, bz), shared, stream, params))
        return (0,)


class _Enum:
    def __getattr__(self, name):
        return name


def split(packed: bytes, kernel) -> list[bytes]:
    return [packed[o:o + loader.param_format(p)[1]]
            for o, p in zip(kernel._offsets, kernel.params + kernel.tensormaps)]  # noqa: SLF001


def cuda_h() -> Path | None:
    for d in nvrtc.include_dirs()[1:]:
        if (Path(d) / "cuda.h").is_file():
            return Path(d)
    return None
