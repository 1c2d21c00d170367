"""``RawKernel``: hand-written CUDA C++, compiled in-process with NVRTC and launched like a jit
kernel (``k[grid, block](args)``).

Arguments follow CuPy's ``RawKernel``: a device array is passed as its data pointer (the
kernel declares ``float* x``), a scalar as a value. The parameter *sizes* come from the driver
(``cuKernelGetParamInfo``, CUDA >= 12.4), so a Python ``int`` fills an ``int`` (4 bytes) or a
``long long`` (8 bytes) parameter and a Python ``float`` a ``float`` or a ``double``, whichever
the kernel declares; a NumPy scalar must match its parameter's size exactly. With an older
driver that cannot tell, scalars must be NumPy scalars (``np.int32(n)``).

Each kind of argument list gets its parameter list from ``abi.raw_params`` (arrays as
pointers) and a ``CompiledKernel`` over the one loaded kernel, so a launch goes through the
same machinery as a jit kernel's: argument checks and packing, configuration checks, host-array
copies and the choice of stream.
"""

from __future__ import annotations

import numpy as np

from . import abi, driver, profiling
from .arrays import describe_all
from .launcher import CompiledKernel, normalize_dims

__all__ = ["RawKernel"]


class RawKernel:
    """A kernel written in CUDA C++: ``RawKernel(source, name, options=(), arch=None)``.

    ``name`` is the ``extern "C" __global__`` function to launch; ``options`` are NVRTC flags
    (``"-lineinfo"``, ``"--use_fast_math"``, ``"-DTILE=16"``); ``arch`` fixes the target
    (default: the current GPU's). ``compile(arch)`` works without a GPU.
    """

    def __init__(self, source: str, name: str, options: tuple = (), arch: str | None = None):
        if not isinstance(source, str) or not isinstance(name, str):
            raise TypeError("RawKernel(source, name): both are strings")
        self.source = source
        self.name = name
        self.options = tuple(str(o) for o in options)
        self.arch = arch
        self._cubins: dict[str, bytes] = {}
        self._func = None
        self._params: list[tuple[int, int]] | None = None  # the driver's (offset, size)
        # the launcher of each kind of argument list (abi.raw_params makes its parameters)
        self._kernels: dict[tuple, CompiledKernel] = {}
        self._configs: dict = {}

    def __repr__(self) -> str:
        return f"<RawKernel {self.name}>"

    # -- compiling -------------------------------------------------------------------------

    def compile(self, arch: str | None = None) -> bytes:
        """The cubin for ``arch`` (default: the ``arch`` given at construction, else the
        current GPU's), compiled through the disk cache. No GPU needed when ``arch`` is given.
        """
        arch = arch or self.arch or driver.current_device().arch
        cubin = self._cubins.get(arch)
        if cubin is None:
            from . import cache, nvrtc  # noqa: PLC0415

            tracer = profiling.tracer(f"RawKernel {self.name}")
            key = cache.make_key("raw", self.source, self.name, self.options, arch,
                                 nvrtc.compiler_id())
            cubin = cache.get(key)
            tracer.event("cubin cache", "miss" if cubin is None else "hit", None, arch)
            if cubin is None:
                with tracer.phase("nvrtc", arch):
                    cubin = nvrtc.compile_cubin(self.source, arch, name=f"{self.name}.cu",
                                                options=self.options, minimal=False)
                cache.put(key, cubin)
            self._cubins[arch] = cubin = bytes(cubin)
        return cubin

    @property
    def cubin(self) -> bytes:
        """The cubin for this kernel's arch (or the current GPU's)."""
        return self.compile()

    # -- launching -------------------------------------------------------------------------

    def _load(self):
        if self._func is None:
            cubin = self.compile()
            with profiling.tracer(f"RawKernel {self.name}").phase("load"):
                func = driver.load_function(cubin, self.name)
            self._params = driver.param_info(func)
            self._func = func
        return self._func

    def attributes(self, device: int | None = None) -> dict:
        """Registers, shared/local/constant memory and max block size (needs a GPU)."""
        dev = driver.current_index() if device is None else device
        driver.ensure_device(dev)
        return dict(driver.func_attributes(self._load(), dev))

    def __getitem__(self, config) -> _RawLaunch:
        launch = self._configs.get(config) if isinstance(config, tuple) else None
        if launch is None:
            launch = _RawLaunch(self, config)
            if isinstance(config, tuple) and len(self._configs) < 256:
                try:
                    self._configs[config] = launch
                except TypeError:  # an unhashable config (a list)
                    pass
        return launch

    def __call__(self, *args, **kwargs):
        raise TypeError(f"launch a RawKernel with {self.name}[grid, block](...) (or [grid, "
                        "block, stream] / [grid, block, stream, shared_bytes])")

    def _kernel_for(self, infos) -> CompiledKernel:
        """The launcher for arguments of these kinds, made once per kind of argument list."""
        # Python numbers adapt to their parameter's size, NumPy scalars must match it: the key
        # tells them apart (both describe as int64/float64)
        sig = tuple([i.key if i.kind == "array" else (i.key, type(i.value)) for i in infos])
        k = self._kernels.get(sig)
        if k is None:
            func = self._load()
            params, at = abi.raw_params(self.name, self._params, infos)
            k = CompiledKernel(func.cubin, self.name, params, at=at, loaded=func)
            if all(type(i.value) is int and _int_param(p) for i, p in zip(infos, params)):
                # Python ints for pointers and integers (threadtile.compute's launches): the
                # launcher's inline check may take them as they are, their values packed at
                # the parameters' sizes (one out of range is struct's error, reported as
                # abi.pack_error says), rather than converting each one at every launch
                k.accept_keys(tuple([i.key for i in infos]))
            if len(self._kernels) < 256:
                self._kernels[sig] = k
        return k

    def _launch(self, grid, block, stream, shared_bytes, args) -> None:
        infos = describe_all(args)
        self._kernel_for(infos).launch(grid, block, stream, shared_bytes, infos)


class _RawLaunch:
    """``kernel[grid, block(, stream(, shared_bytes))]``, ready to be called with arguments."""

    __slots__ = ("kernel", "grid", "block", "stream", "shared_bytes")

    def __init__(self, kernel: RawKernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch with kernel[grid, block], kernel[grid, block, stream] or "
                            "kernel[grid, block, stream, shared_bytes]")
        self.kernel = kernel
        self.grid = normalize_dims(config[0], "grid")
        self.block = normalize_dims(config[1], "block")
        self.stream = config[2] if len(config) > 2 else None
        shared = config[3] if len(config) > 3 else 0
        if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)) or shared < 0:
            raise ValueError(f"shared_bytes must be an int >= 0, got {shared!r}")
        self.shared_bytes = int(shared)

    def __call__(self, *args) -> None:
        self.kernel._launch(self.grid, self.block, self.stream, self.shared_bytes, args)


def _int_param(p) -> bool:
    """Whether a hand-written kernel's parameter takes a Python int packed as it is."""
    return p is abi.POINTER or (isinstance(p, abi.Scalar) and p.kind in "iu")
