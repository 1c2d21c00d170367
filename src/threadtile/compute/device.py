"""The GPU side of ``threadtile.compute``: one compiled program per algorithm, types and
operators; arrays as pointers; the stream; temporary storage.

A program is one translation unit (``compute/cxx.py``) with several kernels: compiled once
per architecture through the disk cache (keyed by its text, so a changed operator or CUB
header is a new entry) and launched through ``RawKernel``, each kernel sharing that cubin.
Kernel arguments are Python ints (pointers and 8-byte words): the launcher packs them at the
parameter sizes the driver reports.

Temporary storage: each (device, stream) keeps one buffer that grows to the largest request
and is reused by the next call on that stream (stream order keeps calls from overlapping).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..runtime import cache, driver, nvrtc, profiling
from ..runtime.arrays import HOST, describe
from ..runtime.launcher import framework_stream
from ..runtime.raw import RawKernel

__all__ = ["Program", "program", "device_array_info", "resolve_stream", "temp_storage",
           "sm_count", "zeros"]

_LOCK = threading.Lock()


class Program:
    """A translation unit of several kernels sharing one cubin per architecture."""

    def __init__(self, source: str, label: str):
        self.source = source
        self.label = label
        self._cubins: dict[str, bytes] = {}
        self._kernels: dict[str, RawKernel] = {}

    def cubin(self, arch: str) -> bytes:
        """The cubin for ``arch`` (disk cache, else NVRTC). No GPU needed."""
        got = self._cubins.get(arch)
        if got is None:
            tracer = profiling.tracer(f"compute {self.label}")
            key = cache.make_key("compute", self.source, arch, nvrtc.compiler_id())
            got = cache.get(key)
            tracer.event("cubin cache", "miss" if got is None else "hit", None, arch)
            if got is None:
                with tracer.phase("nvrtc", arch):
                    got = nvrtc.compile_cubin(self.source, arch, name=f"{self.label}.cu",
                                              options=("-lineinfo",))
                cache.put(key, got)
            self._cubins[arch] = got = bytes(got)
        return got

    def kernel(self, name: str) -> RawKernel:
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = _ProgramKernel(self, name)
        return k


class _ProgramKernel(RawKernel):
    """A kernel of a :class:`Program`: its cubin is the program's."""

    def __init__(self, prog: Program, name: str):
        super().__init__(prog.source, name)
        self.program = prog

    def compile(self, arch: str | None = None) -> bytes:
        arch = arch or self.arch or driver.current_device().arch
        return self.program.cubin(arch)


_PROGRAMS: dict = {}


def program(key: tuple, build, label: str) -> Program:
    """The program for ``key``, made by ``build()`` (the C++ text) on first use."""
    p = _PROGRAMS.get(key)
    if p is None:
        text = build()
        with _LOCK:
            p = _PROGRAMS.get(key)
            if p is None:
                p = _PROGRAMS[key] = Program(text, label)
    return p


def device_array_info(a, what: str):
    """``(pointer, NumPy dtype, size, framework)`` of a C-contiguous device array; clear errors
    for anything else."""
    info = describe(a, name=what)
    if info.kind != "array":
        raise TypeError(f"{what} must be a device array, got {type(a).__name__}")
    if info.device == HOST:
        raise TypeError(f"{what} is a host (NumPy) array while the other arrays are on the GPU: "
                        "pass device arrays (torch, CuPy, threadtile.to_device) throughout, or "
                        "NumPy arrays throughout (then the algorithm runs on the host)")
    if info.layout != "C":
        raise ValueError(f"{what} must be C-contiguous (a strided view is not supported); "
                         "pass .contiguous() / cupy.ascontiguousarray(...)")
    dt = info.dtype.numpy if hasattr(info.dtype, "numpy") else np.dtype(info.dtype.name)
    size = math.prod(info.shape) if info.shape else 1
    return info.ptr, np.dtype(dt), size, info.framework


def resolve_stream(stream, frameworks) -> int:
    """The stream handle to run on: ``stream`` if given (an int or any stream object), else the
    current stream of the arrays' framework (torch's, CuPy's), else the legacy default."""
    if stream is not None:
        return driver.stream_handle(stream)
    for fw in frameworks:
        if fw == "torch":
            import torch  # noqa: PLC0415  (a torch tensor was passed: torch is loaded)

            # torch.cuda.current_stream()'s handle, without building a Stream object
            return int(framework_stream("torch", torch.cuda.current_device()))
        if fw == "cupy":
            import cupy  # noqa: PLC0415

            return int(cupy.cuda.get_current_stream().ptr)
    return 0


class _Buffer:
    __slots__ = ("ptr", "size")

    def __init__(self):
        self.ptr = 0
        self.size = 0


_TEMP: dict = {}


def temp_storage(nbytes: int, stream: int) -> int:
    """A device pointer to at least ``nbytes`` of scratch for work on ``stream`` (256-byte
    aligned), reused by later calls on the same stream."""
    if nbytes <= 0:
        return 0
    key = (driver.current_index(), stream)
    buf = _TEMP.get(key)
    if buf is None:
        buf = _TEMP[key] = _Buffer()
    if buf.size < nbytes:
        if buf.ptr:
            driver.synchronize()  # work queued on the old buffer finishes before it goes
            driver.mem_free(buf.ptr)
            buf.ptr, buf.size = 0, 0
        size = max(nbytes, 1 << 20)
        buf.ptr = driver.mem_alloc(size)
        buf.size = size
    return buf.ptr


def sm_count() -> int:
    """Multiprocessors of the current device."""
    dev = driver.current_index()
    n = _SMS.get(dev)
    if n is None:
        n = _SMS[dev] = driver.device_attribute(dev, "MULTIPROCESSOR_COUNT")
    return n


_SMS: dict = {}


def zeros(prog: Program, ptr: int, nbytes: int, stream: int) -> None:
    """Clear ``nbytes`` (a multiple of 4) at ``ptr`` with the program's ``tt_zero``."""
    words = nbytes // 4
    if words <= 0:
        return
    grid = min(-(-words // 256), 4 * sm_count())
    prog.kernel("tt_zero")[grid, 256, stream](ptr, words)


def copy(dst: int, src: int, nbytes: int, stream: int) -> None:
    driver.copy_dtod(dst, src, nbytes, stream)
