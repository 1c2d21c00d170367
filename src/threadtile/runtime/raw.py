"""``RawKernel``: hand-written CUDA C++, compiled in-process with NVRTC and launched like a jit
kernel (``k[grid, block](args)``).

Arguments follow CuPy's ``RawKernel``: a device array is passed as its data pointer (the
kernel declares ``float* x``), a scalar as a value. The parameter *sizes* come from the driver
(``cuKernelGetParamInfo``, CUDA >= 12.4), so a Python ``int`` fills an ``int`` (4 bytes) or a
``long long`` (8 bytes) parameter and a Python ``float`` a ``float`` or a ``double``, whichever
the kernel declares; a NumPy scalar must match its parameter's size exactly. With an older
driver that cannot tell, scalars must be NumPy scalars (``np.int32(n)``).
"""

from __future__ import annotations

import ctypes
import struct

import numpy as np

from . import driver
from .arrays import HOST, describe
from .launcher import (
    _framework_stream,
    arrays_device,
    check_config,
    copy_back,
    device_copies,
    normalize_dims,
    stream_handle,
    struct_code,
)

__all__ = ["RawKernel"]

# struct codes by (kind of the argument, parameter size in bytes)
_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}
_UINT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}


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
        self._params: list[tuple[int, int]] | None = None
        self._attrs: dict[int, dict] = {}
        self._plans: dict[tuple, tuple] = {}
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

            key = cache.make_key("raw", self.source, self.name, self.options, arch,
                                 nvrtc.compiler_id())
            cubin = cache.get(key)
            if cubin is None:
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

    def _plan(self, infos) -> tuple:
        """(struct.Struct, per-argument 'ptr'/'val' kinds, offsets, struct codes) for these
        argument types, cached by their type keys."""
        # Python numbers adapt to their parameter's size, NumPy scalars must match it: the
        # cache key tells them apart (both describe as int64/float64).
        sig = tuple([i.key if i.kind == "array" else (i.key, type(i.value)) for i in infos])
        plan = self._plans.get(sig)
        if plan is not None:
            return plan
        params = self._params
        n = len(infos)
        if params is not None and len(params) != n:
            raise TypeError(f"kernel {self.name!r} takes {len(params)} argument"
                            f"{'s' if len(params) != 1 else ''}, got {n}")
        fmt, kinds, offsets, codes, off = ["<"], [], [], [], 0
        for i, info in enumerate(infos):
            where = f"kernel {self.name!r} argument {i}"
            if params is not None:
                p_off, p_size = params[i]
            else:
                p_size = 8 if info.kind == "array" else _natural_size(info, where)
                p_off = off + (-off % p_size)
            if info.kind == "array":
                if p_size != 8:
                    raise TypeError(f"{where} is an array (passed as an 8-byte pointer), but "
                                    f"the kernel's parameter {i} is {p_size} bytes")
                code, kind = "Q", "ptr"
            else:
                code, kind = _scalar_code(info, p_size, where), "val"
            if p_off < off:
                raise TypeError(f"kernel {self.name!r}: unexpected parameter layout {params}")
            if p_off > off:
                fmt.append(f"{p_off - off}x")
            fmt.append(code)
            kinds.append(kind)
            offsets.append(p_off)
            codes.append(code)
            off = p_off + p_size
        plan = (struct.Struct("".join(fmt)), tuple(kinds), tuple(offsets), tuple(codes))
        if len(self._plans) < 256:
            self._plans[sig] = plan
        return plan

    def _launch(self, grid, block, stream, shared_bytes, args) -> None:
        infos = [describe(a, i, None) for i, a in enumerate(args)]
        copies = []
        if any(i.device == HOST for i in infos):
            infos, copies = device_copies(self.name, infos, stream)
        dev, first = arrays_device(self.name, infos)
        if dev < 0:
            dev = driver.current_index()
        else:
            driver.ensure_device(dev)
        func = self._load()
        attrs = self._attrs.get(dev)
        if attrs is None:
            attrs = self._attrs[dev] = driver.func_attributes(func, dev)
        check_config(self.name, func, attrs, grid, block, shared_bytes, dev)
        st, kinds, offsets, codes = self._plan(infos)
        vals = [i.ptr if k == "ptr" else i.flat[0] for i, k in zip(infos, kinds)]
        # A buffer per launch (not one per kernel): RawKernel favours simplicity over the last
        # microsecond, and this is safe with concurrent launches from several threads.
        buf = ctypes.create_string_buffer(max(st.size, 1))
        try:
            st.pack_into(buf, 0, *vals)
        except struct.error:
            raise _pack_error(self.name, infos, vals, codes) from None
        base = ctypes.addressof(buf)
        argv = (ctypes.c_void_p * max(len(offsets), 1))(*[base + o for o in offsets])
        if stream is None:
            sh = _framework_stream(first.framework, dev) if (
                first is not None and first.framework is not None) else 0
        else:
            sh = stream_handle(stream)
        cu = driver._cu()
        driver.check(cu.cuLaunchKernel(func.handle, grid[0], grid[1], grid[2], block[0],
                                       block[1], block[2], shared_bytes, cu.CUstream(sh),
                                       ctypes.addressof(argv), 0),
                     f"launching {self.name!r} with grid {grid}, block {block}, "
                     f"{shared_bytes} bytes of dynamic shared memory")
        if copies:
            copy_back(copies, sh)


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


def _natural_size(info, where: str) -> int:
    if type(info.value) in (int, float):
        raise TypeError(f"{where}: this driver does not report kernel parameter sizes (CUDA "
                        "< 12.4), so a Python int or float is ambiguous; pass a NumPy scalar "
                        "such as np.int32(n) or np.float32(x)")
    return info.dtype.itemsize


def _scalar_code(info, size: int, where: str) -> str:
    """The struct code packing scalar ``info`` into a ``size``-byte parameter."""
    s = info.dtype
    weak = type(info.value) in (int, float, bool)  # Python numbers adapt to the parameter
    if weak:
        if s.kind == "b" and size == 1:
            return "?"
        if s.kind in "bi" and size in _INT_CODES:
            return _INT_CODES[size]
        if s.kind == "f" and size in (4, 8):
            return _FLOAT_CODES[size]
        kind = {"b": "a bool", "i": "an int", "f": "a float"}[s.kind]
        raise TypeError(f"{where} is {kind} ({info.value!r}), but the kernel's parameter is "
                        f"{size} bytes; pass a NumPy scalar of the parameter's type")
    if s.itemsize != size:
        raise TypeError(f"{where} is a {s} ({s.itemsize} bytes), but the kernel's parameter is "
                        f"{size} bytes")
    if s.name == "bfloat16":
        return "H"
    return struct_code(s)


def _pack_error(name: str, infos, vals, codes) -> Exception:
    for i, (v, c) in enumerate(zip(vals, codes)):
        try:
            struct.pack("<" + c, v)
        except struct.error:
            return OverflowError(f"kernel {name!r} argument {i}: {infos[i].value!r} does not "
                                 f"fit its {struct.calcsize(c)}-byte parameter")
    return TypeError(f"kernel {name!r}: could not pack the arguments")
