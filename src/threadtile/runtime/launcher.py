"""Launching a compiled kernel: validate the arguments, pack them, ``cuLaunchKernel``.

The kernel ABI (what ``backends/cuda/emit.py`` generates): ``extern "C" __global__`` with one
parameter per runtime argument. An array is passed *by value* as
``{T* data; int64_t shape[N]; int64_t strides[N];}`` (strides in elements; 8-byte aligned,
8 + 16*N bytes), a scalar as its C type with natural size and alignment (bool 1 byte, (b)float16
2, 32-bit types 4, 64-bit types 8).

Packing: each :class:`CompiledKernel` precompiles one ``struct.Struct`` for its parameter list
(alignment padding included, as ``x`` bytes) and owns one ``ctypes`` buffer it packs into, plus an
array of pointers to each parameter's offset in that buffer, made once. ``cuLaunchKernel`` gets
that pointer array as ``kernelParams``: the driver reads each parameter's size from the kernel
image, so nothing about sizes or the buffer's length is left to the ``extra``/
``CU_LAUNCH_PARAM_BUFFER_SIZE`` convention, and the per-launch cost is the same single
``pack_into`` either way. On first load the layout is checked against the driver's own
(``cuKernelGetParamInfo``), so an ABI drift between the code generator and this packer is an
error at load instead of garbage in a kernel.

The steady state (:meth:`CompiledKernel.direct`, once a launch configuration has launched with
torch tensors and Python numbers): a launcher bound to the argument kinds it saw checks each
argument (exact type, dtype, device, rank, contiguity) and packs it without describing it. It is
``_fastlaunch.Launcher``, an optional C extension (``setup.py``; built by ``pip install`` where a
C compiler exists, or ``python setup.py build_ext --inplace`` in a checkout), which does those
checks through the CPython API into a parameter buffer of its own and calls libcuda's
``cuLaunchKernel`` through its address (found with ctypes), skipping the cuda-bindings wrapper.
Without the extension, or with ``THREADTILE_NO_CEXT=1`` set when this module is imported, it is
a Python function generated per configuration (:data:`FAST_LAUNCH` says which). Both decline
(return False, launching nothing) anything that is not exactly of the recorded kinds; the
general path below then checks and raises.

Per-launch host overhead of the general path, measured with ``timeit`` (best of 5) on this
project's CI container (2 vCPU AMD EPYC, Python 3.11; ``len(list)`` takes 17 ns there; a
current desktop or an H100 host is likely faster, not measured yet):

- ``describe`` of three objects exposing torch's tensor API (``get_device()``, ``shape``,
  ``dtype``, ``is_contiguous()``, ``data_ptr()``, ``stride()``): 2.7-2.9 us for the three
  (0.6 us of it is the fake tensor's own Python methods; torch's are C);
- ``CompiledKernel.launch`` for them, up to the ``cuLaunchKernel`` call (fast-path checks,
  device and configuration checks, stream, lock, ``pack_into`` of 9 fields): 1.5 us;
- the cuda-bindings ``cuLaunchKernel`` wrapper itself: 0.65 us (measured against a stub
  libcuda that returns at once; the real driver adds its own ~2 us).

The steady-state launcher there, for three 1-d fake tensors and an int, launching through a C
stub that returns at once: with fakes whose methods are Python (0.53 us of each figure), the C
launcher takes 0.92 us and the generated Python one 1.6 us plus the cuda-bindings wrapper; with
fakes whose methods are C builtins, as torch's are, the C launcher takes 0.57 us, most of it
those five attribute reads and calls per tensor (``dtype``, ``get_device()``, ``shape``,
``is_contiguous()``, ``data_ptr()``). Not yet measured with torch on a GPU host.
"""

from __future__ import annotations

import ctypes
import operator
import os
import struct
import sys
import threading
import warnings
from typing import NamedTuple

from ..errors import LaunchError, ThreadtileError
from ..lang.types import ArrayType, Scalar
from . import arrays, driver, tensormaps
from .arrays import HOST, type_key
from .driver import _tls

# the optional C launcher (setup.py builds it; THREADTILE_NO_CEXT=1 ignores it)
if os.environ.get("THREADTILE_NO_CEXT", "") not in ("", "0"):
    _fastlaunch = None
else:
    try:
        from . import _fastlaunch
    except ImportError:
        _fastlaunch = None
FAST_LAUNCH = _fastlaunch is not None  # direct() builds C launchers (where libcuda is found)

__all__ = ["dim3", "cdiv", "normalize_dims", "stream_handle", "make_param_struct",
           "ParamLayout", "CompiledKernel", "struct_code"]

class dim3(NamedTuple):
    """Grid or block dimensions, as in CUDA: ``dim3(x, y=1, z=1)``."""

    x: int
    y: int = 1
    z: int = 1


def cdiv(a: int, b: int) -> int:
    """Ceiling division for positive ``b``: how many blocks of ``b`` cover ``a`` items."""
    return -(-a // b)


def normalize_dims(v, what: str = "dims") -> tuple[int, int, int]:
    """``v`` (an int, a 1-3 tuple/list, or anything with ``x, y, z``) as a 3-tuple of ints >= 1.

    Raises ``TypeError`` for something that is not a dimension and ``ValueError`` for a
    dimension below 1.
    """
    if type(v) is int:
        dims = (v, 1, 1)
    elif isinstance(v, bool):
        raise TypeError(f"{what} must be an int, a tuple of 1 to 3 ints or a dim3, got {v!r}")
    elif isinstance(v, (tuple, list)):
        if not 1 <= len(v) <= 3:
            raise TypeError(f"{what} must have 1 to 3 dimensions, got {len(v)}: {tuple(v)!r}")
        dims = tuple(v) + (1,) * (3 - len(v))
    elif all(hasattr(v, a) for a in "xyz"):
        dims = (v.x, v.y, v.z)
    else:
        try:
            dims = (operator.index(v), 1, 1)
        except TypeError:
            raise TypeError(f"{what} must be an int, a tuple of 1 to 3 ints or a dim3, got "
                            f"{type(v).__name__}") from None
    out = []
    for d in dims:
        if isinstance(d, bool):
            raise TypeError(f"{what} dimensions must be ints, got {d!r}")
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(f"{what} dimensions must be ints, got {type(d).__name__} "
                            f"({d!r})") from None
        if d < 1:
            raise ValueError(f"{what} dimensions must be >= 1, got {tuple(dims)!r}")
        out.append(d)
    return out[0], out[1], out[2]


def stream_handle(stream) -> int:
    """The raw ``CUstream`` value of ``stream`` as an int (0: the legacy default stream).

    Accepts an int, or an object with ``__cuda_stream__()`` (the CUDA stream protocol),
    ``.cuda_stream`` (torch), ``.ptr`` (CuPy) or ``.handle`` (cuda.core, numba).
    """
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        v = proto() if callable(proto) else proto
        return int(v[1]) if isinstance(v, tuple) else int(v)
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if v is not None:
            v = getattr(v, "value", v)  # a ctypes c_void_p handle
            return int(v or 0)
    try:
        return operator.index(stream)
    except TypeError:
        pass
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise TypeError(f"cannot use a {type(stream).__name__} as a CUDA stream: pass an int "
                        "handle, a torch/CuPy/cuda.core stream, or None") from None


# ----------------------------------------------------------------------------------------------
# Parameter layout
# ----------------------------------------------------------------------------------------------

_CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
          "uint32": "I", "int64": "q", "uint64": "Q", "float16": "e",
          "bfloat16": "H",  # the raw bits; the launcher converts values to them
          "float32": "f", "float64": "d"}


def struct_code(t: Scalar) -> str:
    """The ``struct`` format character for scalar type ``t``."""
    try:
        return _CODES[t.name]
    except KeyError:
        raise TypeError(f"kernels cannot take a {t} parameter") from None


class ParamLayout(NamedTuple):
    """A parameter list's packing: the ``struct.Struct`` (little-endian, explicit padding) and
    each parameter's byte offset and size."""

    struct: struct.Struct
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return self.struct.size


def _param_shape(p) -> tuple[str, int, int]:
    """(format, size, alignment) of one parameter."""
    if isinstance(p, ArrayType):
        return "Q" + "q" * (2 * p.ndim), 8 + 16 * p.ndim, 8
    if isinstance(p, tensormaps.TensorMapParam):
        return f"{tensormaps.SIZE}s", tensormaps.SIZE, tensormaps.ALIGN
    if isinstance(p, Scalar):
        c = struct_code(p)
        n = struct.calcsize("<" + c)
        return c, n, n
    raise TypeError(f"kernel parameters are ArrayType or Scalar, got {p!r}")


def make_param_struct(params, at: list | None = None) -> ParamLayout:
    """The :class:`ParamLayout` of a kernel taking ``params`` (``ArrayType``/``Scalar``/
    ``TensorMapParam``); ``at`` gives the offsets the driver reports, where they are known
    to differ from the natural ones (tensor maps: 64-byte alignment of the parameter's address
    in the constant bank, which starts at an architecture-defined offset)."""
    fmt, offsets, sizes, off = ["<"], [], [], 0
    for i, p in enumerate(params):
        f, size, align = _param_shape(p)
        pad = -off % align if at is None else at[i] - off
        if pad < 0:
            raise ThreadtileError(f"parameter {i} overlaps the one before it at offset {off}")
        if pad:
            fmt.append(f"{pad}x")
            off += pad
        offsets.append(off)
        sizes.append(size)
        fmt.append(f)
        off += size
    return ParamLayout(struct.Struct("".join(fmt)), tuple(offsets), tuple(sizes))


# ----------------------------------------------------------------------------------------------
# Warnings
# ----------------------------------------------------------------------------------------------

def _user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel of the first frame outside threadtile, so a warning
    names (and is shown once per) the user's launch line."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f, level = sys._getframe(1), 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg):
        f, level = f.f_back, level + 1
    return level


# ----------------------------------------------------------------------------------------------
# CompiledKernel
# ----------------------------------------------------------------------------------------------

class CompiledKernel:
    """A cubin's kernel ``entry`` taking ``params`` (``ArrayType``/``Scalar``, the C++ ABI in
    this module's docstring), loaded on first launch.

    ``launch(grid, block, stream, shared_bytes, infos)`` with 3-tuples ``grid``/``block`` (see
    :func:`normalize_dims`), ``stream`` None/int/stream object, and ``infos`` from
    :func:`threadtile.runtime.arrays.describe`.
    """

    def __init__(self, cubin: bytes, entry: str, params: list, maps: list = ()):
        self.cubin = bytes(cubin)
        self.entry = entry
        self.params = list(params)
        # hidden parameters after the arguments: tensor maps of array arguments (tensormaps.py)
        self.tensormaps = list(maps)
        self.layout = make_param_struct(self.params + self.tensormaps)
        self._n = len(self.params)
        self._nall = self._n + len(self.tensormaps)
        self._keys = tuple(type_key(p) for p in self.params)
        self._pack = self.layout.struct.pack_into
        self._buf, self._argv = self._new_buffers()
        self._argv_addr = ctypes.addressof(self._argv) if self._nall else 0
        self._lock = threading.Lock()
        self._func = None  # driver.LoadedKernel
        self._handle = None
        self._attrs: dict[int, dict] = {}  # device -> func_attributes
        # the last launch configuration that passed validation (grid and block by identity:
        # jit caches its 3-tuples per launch configuration)
        self._cfg = (None, None, -1, -2)
        self._cu_launch = None
        self._stream = (None, None)  # (int handle, CUstream): one attribute, read at once
        self._fast = _make_fast_path(self.params, self._keys)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.entry}({', '.join(map(repr, self.params))})>"

    def _new_buffers(self):
        buf = ctypes.create_string_buffer(max(self.layout.nbytes, 1))
        base = ctypes.addressof(buf)
        argv = (ctypes.c_void_p * max(self._nall, 1))(*[base + o for o in self.layout.offsets])
        return buf, argv

    # -- loading -------------------------------------------------------------------------------

    def _load(self):
        func = driver.load_function(self.cubin, self.entry)
        info = driver.param_info(func)
        if info is not None:
            mine = list(zip(self.layout.offsets, self.layout.sizes))
            if info != mine and self.tensormaps and len(info) == self._nall and \
                    info[:self._n] == mine[:self._n] and \
                    [n for _o, n in info] == list(self.layout.sizes):
                # the compiler aligns a tensor map's address in the constant bank (64 bytes
                # from a bank base of its own), not its offset: adopt the driver's offsets
                self.layout = make_param_struct(self.params + self.tensormaps,
                                                [o for o, _n in info])
                self._pack = self.layout.struct.pack_into
                self._buf, self._argv = self._new_buffers()
                self._argv_addr = ctypes.addressof(self._argv)
                mine = info
            if info != mine:
                raise ThreadtileError(
                    f"kernel {self.entry!r}: the driver's parameter layout {info} (offset, "
                    f"size) differs from the one threadtile packs {mine} for {self.params}; "
                    "this is a threadtile bug (generated code and launcher disagree)")
        self._func = func
        self._handle = func.handle
        self._cu_launch = driver._cu().cuLaunchKernel
        return func

    def load(self):
        """Load the cubin now (normally done by the first launch); returns the loaded kernel."""
        return self._func if self._func is not None else self._load()

    def attributes(self, device: int | None = None) -> dict:
        """Registers per thread, static shared/local/constant memory and the largest block of
        this kernel on ``device`` (default: the current one). Needs a GPU."""
        dev = driver.current_index() if device is None else device
        driver.ensure_device(dev)
        func = self.load()
        return dict(driver.func_attributes(func, dev))

    def _attributes(self, dev: int) -> dict:
        a = self._attrs.get(dev)
        if a is None:
            a = self._attrs[dev] = driver.func_attributes(self._func, dev)
        return a

    # -- launching -----------------------------------------------------------------------------

    def launch(self, grid, block, stream, shared_bytes: int, infos) -> None:
        """Launch on ``grid`` x ``block`` (3-tuples) with ``shared_bytes`` of dynamic shared
        memory on ``stream`` (None: the current stream of the arguments' framework, else the
        legacy default stream). Raises before submitting anything when arguments or limits are
        wrong."""
        r = self._fast(infos)
        if r is None:
            r = self._slow(infos)
            if r is None:
                return self._launch_host(grid, block, stream, shared_bytes, infos)
        vals, dev, first = r
        if self.tensormaps:
            vals = (*vals, *tensormaps.values(self.tensormaps, infos))
        if dev < 0:
            dev = driver.current_index()
        elif _tls.device != dev:
            driver.activate(dev)
        cfg = self._cfg
        if grid is not cfg[0] or block is not cfg[1] or shared_bytes != cfg[2] or dev != cfg[3]:
            self._configure(grid, block, shared_bytes, dev)
        if stream is None:
            sh = _framework_stream(first.framework, dev) if (
                first is not None and first.framework is not None) else 0
        elif type(stream) is int:
            sh = stream
        else:
            sh = stream_handle(stream)
        st = self._stream
        if sh != st[0]:
            st = self._stream = (sh, driver._cu().CUstream(sh))
        if self._lock.acquire(False):
            try:
                self._pack(self._buf, 0, *vals)
                err = self._cu_launch(self._handle, grid[0], grid[1], grid[2], block[0],
                                      block[1], block[2], shared_bytes, st[1], self._argv_addr,
                                      0)[0]
            except struct.error as e:
                raise self._pack_error(infos, e) from None
            finally:
                self._lock.release()
        else:  # another thread is between its pack and its launch with our buffer
            buf, argv = self._new_buffers()
            try:
                self.layout.struct.pack_into(buf, 0, *vals)
            except struct.error as e:
                raise self._pack_error(infos, e) from None
            err = self._cu_launch(self._handle, grid[0], grid[1], grid[2], block[0], block[1],
                                  block[2], shared_bytes, st[1],
                                  ctypes.addressof(argv) if self._nall else 0, 0)[0]
        if err:
            driver.check((err,), f"launching {self.entry!r} with grid {tuple(grid)}, block "
                                 f"{tuple(block)}, {shared_bytes} bytes of dynamic shared memory")

    __call__ = launch

    def direct(self, grid, block, stream, shared_bytes: int, args, infos):
        """A launcher for the common steady state, or None: after ``launch`` has accepted
        ``args`` (torch CUDA tensors and Python numbers) under this configuration, the
        returned ``go(args) -> bool`` launches later calls whose arguments are of exactly the
        same kinds (tensor type, dtype, rank, contiguity, device) without describing them
        first, and returns False, launching nothing, for anything else. It reads each tensor
        once into the packed buffer, which is what the general path does after building its
        ArgInfo records; those records were most of a launch's Python time.

        ``go`` is a ``_fastlaunch.Launcher`` (C: the same checks, a buffer of its own,
        ``cuLaunchKernel`` called through its address in libcuda) when that extension is built
        (:data:`FAST_LAUNCH`), else a generated Python function named ``go``."""
        if stream is not None and type(stream) is not int or self._handle is None or \
                self.tensormaps:
            return None
        if len(args) != self._n or not args:
            return None
        dev = infos[0].device if infos[0].kind == "array" else -1
        specs = []  # the C launcher's parameter specs (_c_launcher)
        ns = {"lock": self._lock, "pack": self._pack, "buf": self._buf, "K": self,
              "argv": self._argv_addr, "tls": _tls, "error": struct.error,
              "cu": self._cu_launch, "h": self._handle, "CUstream": driver._cu().CUstream}
        checks, packed = [], []
        for i, (a, info, p) in enumerate(zip(args, infos, self.params)):
            if isinstance(p, ArrayType):
                if info.framework != "torch" or type(a).__name__ != "Tensor" or (
                        info.device != dev):
                    return None
                ns[f"T{i}"], ns[f"D{i}"] = type(a), a.dtype
                contiguous = "not " if p.layout == "C" else ""  # refuse the other layout
                checks.append(f"type(a{i}) is not T{i} or a{i}.dtype is not D{i} or "
                              f"a{i}.get_device() != {dev} or len(s{i} := a{i}.shape) != "
                              f"{p.ndim} or {contiguous}a{i}.is_contiguous()")
                packed.append(f"a{i}.data_ptr(), *s{i}, {_strides_expr(p, i)}")
                specs.append(("array", self.layout.offsets[i], p.ndim, p.layout == "C",
                              type(a), a.dtype))
            else:
                py = {"int64": "int", "float64": "float", "bool": "bool"}.get(p.name)
                if py is None or type(a).__name__ != py:
                    return None
                checks.append(f"type(a{i}) is not {py}")
                packed.append(f"a{i}")
                specs.append((struct_code(p), self.layout.offsets[i]))
        if dev < 0:
            return None
        if stream is None:
            ns["getstream"] = _stream_getter("torch")
            sh = f"getstream({dev})"
        else:
            sh = str(stream)
        go = self._c_launcher(grid, block, ns.get("getstream", stream), shared_bytes, dev,
                              specs)
        if go is not None:
            return go
        names = ", ".join(f"a{i}" for i in range(self._n)) + ("," if self._n == 1 else "")
        g, b = tuple(grid), tuple(block)
        lines = [
            "def go(args):",
            f"    if len(args) != {self._n} or tls.device != {dev}:",
            "        return False",
            f"    {names} = args",
            *[f"    if {c}:\n        return False" for c in checks],
            "    if not lock.acquire(False):",
            "        return False",
            "    try:",
            f"        pack(buf, 0, {', '.join(packed)})",
            f"        sh = {sh}",
            "        st = K._stream",
            "        if sh != st[0]:",
            "            st = K._stream = (sh, CUstream(sh))",
            f"        err = cu(h, {g[0]}, {g[1]}, {g[2]}, {b[0]}, {b[1]}, {b[2]}, "
            f"{int(shared_bytes)}, st[1], argv, 0)[0]",
            "    except error:",
            "        return False",
            "    finally:",
            "        lock.release()",
            "    if err:",
            f"        K._launch_failed(err, {g}, {b}, {int(shared_bytes)})",
            "    return True",
        ]
        exec("\n".join(lines), ns)  # noqa: S102  (generated from ints and type names only)
        return ns["go"]

    def _c_launcher(self, grid, block, stream, shared_bytes: int, dev: int, specs):
        """``direct``'s launcher in C (``_fastlaunch.Launcher``: the same checks, its own
        parameter buffer, ``cuLaunchKernel`` through a function pointer), or None when the
        extension is not built or disabled, libcuda's ``cuLaunchKernel`` cannot be found, or
        a parameter is of a kind it does not pack. ``stream``: an int handle or
        ``getstream(dev)``."""
        if _fastlaunch is None or any(s[0] not in _C_CODES for s in specs):
            return None
        addr = _cu_launch_address()
        if not addr:
            return None
        g, b, sh = tuple(grid), tuple(block), int(shared_bytes)
        cu = driver._cu()

        def failed(err):
            try:
                err = cu.CUresult(err)  # the enum, as the Python launcher reports it
            except ValueError:
                pass
            self._launch_failed(err, g, b, sh)

        # with one device, a tensor's is_cuda says it is on it (cheaper than get_device())
        return _fastlaunch.Launcher(addr, int(self._handle), g, b, sh, stream, dev, _tls,
                                    tuple(specs), self.layout.nbytes, failed,
                                    one_device=driver.device_count() == 1)

    def _launch_failed(self, err, grid, block, shared_bytes: int) -> None:
        driver.check((err,), f"launching {self.entry!r} with grid {tuple(grid)}, block "
                             f"{tuple(block)}, {shared_bytes} bytes of dynamic shared memory")

    # -- the slow paths ------------------------------------------------------------------------

    def _configure(self, grid, block, shared_bytes: int, dev: int) -> None:
        """Validate a launch configuration (once per distinct one), loading on first use."""
        if self._func is None:
            self._load()
        check_config(self.entry, self._func, self._attributes(dev), grid, block, shared_bytes,
                     dev)
        self._cfg = (grid, block, shared_bytes, dev)

    def _slow(self, infos):
        """Everything the generated fast path declines: a wrong argument count, argument types
        that differ from the parameters (converted when safe, else TypeError), arrays whose
        device is unknown or differs, host arrays (returns None: copy around the launch)."""
        if len(infos) != self._n:
            raise TypeError(f"kernel {self.entry!r} takes {self._n} argument"
                            f"{'s' if self._n != 1 else ''}, got {len(infos)}")
        vals = self._adapt(infos)
        if any(info.device == HOST for info in infos):
            return None
        dev, first = arrays_device(self.entry, infos)
        return vals, dev, first

    def _adapt(self, infos) -> list:
        """Check every argument against its parameter and build the packed values, converting
        what converts safely (a Python int to an int32 parameter, a C-contiguous array to a
        strided parameter). Raises TypeError naming the argument otherwise."""
        vals = []
        for i, (info, p) in enumerate(zip(infos, self.params)):
            where = f"kernel {self.entry!r} argument {i}"
            if isinstance(p, ArrayType):
                if info.kind != "array":
                    raise TypeError(f"{where} must be an array of {p.dtype} with {p.ndim} "
                                    f"dimension{'s' if p.ndim != 1 else ''}, got a scalar "
                                    f"({info.dtype})")
                if info.dtype != p.dtype or info.ndim != p.ndim:
                    raise TypeError(f"{where} must be a {p.ndim}-d array of {p.dtype}, got a "
                                    f"{info.ndim}-d array of {info.dtype}")
                if p.layout == "C" and info.layout != "C":
                    raise TypeError(f"{where} must be C-contiguous (the kernel was compiled "
                                    "for a contiguous array); pass .contiguous() / "
                                    "np.ascontiguousarray(), or compile for strided arrays")
                vals += info.flat
            else:
                if info.kind != "scalar":
                    raise TypeError(f"{where} must be a {p} scalar, got a {info.ndim}-d array "
                                    f"of {info.dtype}")
                vals.append(_convert_scalar(info, p, where))
        return vals

    def _pack_error(self, infos, e) -> Exception:
        for i, (info, p) in enumerate(zip(infos, self.params)):
            if info.kind == "scalar":
                try:
                    struct.pack("<" + struct_code(p), *info.flat)
                except struct.error:
                    return OverflowError(f"kernel {self.entry!r} argument {i}: {info.value!r} "
                                         f"does not fit in {p}")
        return TypeError(f"kernel {self.entry!r}: could not pack the arguments ({e})")

    def _launch_host(self, grid, block, stream, shared_bytes, infos) -> None:
        """Copy host NumPy arrays to the GPU, launch, synchronize, copy them back."""
        new_infos, copies = device_copies(self.entry, infos, stream)
        self.launch(grid, block, stream, shared_bytes, new_infos)
        copy_back(copies, stream_handle(stream) if stream is not None else 0)


def device_copies(entry: str, infos, stream) -> tuple[list, list]:
    """Warn (once per call site) and replace each host NumPy argument by a C-contiguous device
    copy. Returns the new infos and ``[(host_array, device_array)]`` for :func:`copy_back`."""
    import numpy as np  # noqa: PLC0415

    warnings.warn(
        f"kernel {entry!r} was given a NumPy array: it is copied to the GPU and back around "
        "the launch (and the launch waits for the kernel). Copy it once with "
        "threadtile.to_device(), or pass torch/CuPy arrays, to avoid the copies",
        arrays.HostArrayWarning, stacklevel=_user_stacklevel())
    dev, _ = arrays_device(entry, infos)
    driver.ensure_device(dev if dev >= 0 else driver.current_index())
    sh = stream_handle(stream) if stream is not None else 0
    out, copies = [], []
    for info in infos:
        if info.device == HOST:
            host = info.writeback
            d = arrays.DeviceArray(host.shape, host.dtype)
            d.copy_to_device(np.ascontiguousarray(host), stream=sh)
            copies.append((host, d))
            out.append(d._arginfo)
        else:
            out.append(info)
    return out, copies


def copy_back(copies, stream: int) -> None:
    """After a launch with host arrays: wait for it, then copy each device copy back into its
    (writable) host array."""
    if stream:
        driver.stream_synchronize(stream)
    else:
        driver.synchronize()
    for host, d in copies:
        if not host.flags.writeable:
            continue
        if host.flags.c_contiguous:
            d.copy_to_host(host)
        else:
            host[...] = d.copy_to_host()


def _convert_scalar(info, p: Scalar, where: str):
    """The packable value of scalar argument ``info`` for parameter type ``p``."""
    src = info.dtype
    ok = (p.kind == "b" and src.kind == "b") or (
        p.kind in "iu" and src.kind in "biu") or (p.kind == "f" and src.kind in "biuf")
    if not ok:
        raise TypeError(f"{where} must be a {p} scalar, got {info.value!r} ({src}): "
                        f"a {src} does not convert to {p} without losing its meaning")
    v = info.value
    if p.name == "bfloat16":
        return arrays._bf16_bits(float(v))
    if p.kind == "f":
        return float(v)
    if p.kind == "b":
        return bool(v)
    return int(v)


# the struct codes of the scalars the C launcher packs (direct takes no other scalars), and the
# array parameter it packs as pointer, shape and strides
_C_CODES = frozenset(("q", "d", "?", "array"))
_CU_LAUNCH_ADDR: int | None = None


def _cu_launch_address() -> int:
    """The address of libcuda's ``cuLaunchKernel`` for the C launcher (0 when not found), found
    once. It is the entry point cuda-bindings launches through: the legacy default stream's,
    or the per-thread default stream's (``_ptsz``) when CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM
    asks cuda-bindings for that."""
    global _CU_LAUNCH_ADDR
    if _CU_LAUNCH_ADDR is None:
        try:
            lib = ctypes.CDLL("nvcuda.dll" if os.name == "nt" else "libcuda.so.1")
            ptds = int(os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM") or 0)
            f = getattr(lib, "cuLaunchKernel_ptsz" if ptds else "cuLaunchKernel")
            _CU_LAUNCH_ADDR = ctypes.cast(f, ctypes.c_void_p).value or 0
        except (OSError, AttributeError, ValueError):
            _CU_LAUNCH_ADDR = 0
    return _CU_LAUNCH_ADDR


def _strides_expr(p: ArrayType, i: int) -> str:
    """The packed strides of tensor ``a{i}`` in ``direct``'s generated code: a C-contiguous
    parameter's strides follow from its shape (``s{i}``), which is cheaper to index than
    ``Tensor.stride()`` is to call (and is what the layout means when size-1 axes carry odd
    strides)."""
    if p.layout != "C" or not 1 <= p.ndim <= 3:
        return f"*a{i}.stride()"
    s = f"s{i}"
    return {1: "1", 2: f"{s}[1], 1", 3: f"{s}[1] * {s}[2], {s}[2], 1"}[p.ndim]


def _make_fast_path(params, keys):
    """A function ``fast(infos) -> (values, device, first_array_info) | None`` unrolled for
    this parameter list: it accepts only the common case (every argument exactly of its
    parameter's type, all arrays on one known device) and returns None for anything else,
    which :meth:`CompiledKernel._slow` then checks in full. Unrolling (rather than a loop over
    the parameters) halves the Python work per launch; namedtuple builds its accessors the
    same way."""
    n = len(params)
    arr = [i for i, p in enumerate(params) if isinstance(p, ArrayType)]
    lines = ["def fast(infos):",
             f"    if len(infos) != {n}:",
             "        return None"]
    if n:
        lines.append("    " + ", ".join(f"a{i}" for i in range(n)) + (", = infos" if n == 1
                                                                       else " = infos"))
        lines.append("    if " + " or ".join(f"a{i}.key != {keys[i]}" for i in range(n)) + ":")
        lines.append("        return None")
    if arr:
        first = arr[0]
        lines.append(f"    d = a{first}.device")
        cond = ["d < 0"] + [f"a{i}.device != d" for i in arr[1:]]
        lines.append("    if " + " or ".join(cond) + ":")
        lines.append("        return None")
        first_ref = f"a{first}"
    else:
        lines.append("    d = -1")
        first_ref = "None"
    flat = ", ".join(f"*a{i}.flat" for i in range(n))
    lines.append(f"    return ({flat}{',' if n == 1 else ''}), d, {first_ref}")
    ns: dict = {}
    exec("\n".join(lines), ns)  # noqa: S102  (generated from ints and indices only)
    return ns["fast"]


def _framework_stream(framework: str, device: int) -> int:
    get = _STREAM_GETTERS.get(framework)
    if get is None:
        get = _STREAM_GETTERS[framework] = _stream_getter(framework)
    return get(device)


_STREAM_GETTERS: dict = {}


def _stream_getter(framework: str):
    """The fastest way to ask ``framework`` for its current stream on a device."""
    if framework == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:  # ~0.1 us; torch.cuda.current_stream() builds a Stream object
            return raw
        return lambda dev: torch.cuda.current_stream(dev).cuda_stream
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        return lambda dev: cupy.cuda.get_current_stream().ptr
    return lambda dev: 0


def arrays_device(entry: str, infos) -> tuple[int, object]:
    """The device every array argument is on (-1 when none says) and the first such argument
    (whose framework gives the default stream). Arrays on two devices are a LaunchError."""
    dev, first = -1, None
    for info in infos:
        d = info.device
        if d >= 0:
            if dev < 0:
                dev, first = d, info
            elif d != dev:
                where = ", ".join(f"argument {i} on cuda:{x.device}"
                                  for i, x in enumerate(infos) if x.device >= 0)
                raise LaunchError(f"kernel {entry!r}: arrays on different devices ({where}); "
                                  "all arrays of one launch must be on one GPU")
    return dev, first


def check_config(entry: str, func, attrs: dict, grid, block, shared_bytes: int,
                 dev: int) -> None:
    """Check grid, block and dynamic shared memory against device ``dev`` and the kernel's
    attributes ``attrs`` (:func:`driver.func_attributes`); raise :class:`LaunchError` with the
    numbers, and raise the kernel's dynamic shared memory limit when more than the default
    48 KiB is asked for and the device allows it."""
    g = normalize_dims(grid, "grid")
    b = normalize_dims(block, "block")
    if len(grid) != 3 or len(block) != 3 or tuple(grid) != g or tuple(block) != b:
        raise TypeError("launch() takes grid and block as 3-tuples of ints; use "
                        "normalize_dims() first")
    info = driver.get_device(dev)
    threads = b[0] * b[1] * b[2]
    if threads > info.max_threads_per_block:
        raise LaunchError(f"block {b} has {threads} threads; {info.name} allows at most "
                          f"{info.max_threads_per_block} threads per block")
    for axis, n, lim in zip("xyz", b, info.max_block_dims):
        if n > lim:
            raise LaunchError(f"block {b}: the {axis} dimension can be at most {lim}")
    for axis, n, lim in zip("xyz", g, info.max_grid_dims):
        if n > lim:
            raise LaunchError(f"grid {g}: the {axis} dimension can be at most {lim} blocks")
    if type(shared_bytes) is not int or shared_bytes < 0:
        raise LaunchError(f"shared_bytes must be an int >= 0, got {shared_bytes!r}")
    if threads > attrs["max_threads_per_block"]:
        raise LaunchError(
            f"block {b} has {threads} threads, but kernel {entry!r} can run at most "
            f"{attrs['max_threads_per_block']} per block (it uses {attrs['num_regs']} registers "
            "per thread): use smaller blocks, or fewer registers (jit(max_registers=...))")
    static = attrs["shared_size_bytes"]
    limit = info.max_shared_per_block_optin
    if static + shared_bytes > limit:
        raise LaunchError(
            f"kernel {entry!r} needs {static + shared_bytes} bytes of shared memory per block "
            f"({static} static + {shared_bytes} dynamic); {info.name} allows at most {limit}")
    allowed = func._shared_set.get(dev, attrs["max_dynamic_shared_size_bytes"])
    if shared_bytes > allowed:
        driver.set_max_dynamic_shared(func, shared_bytes, dev)
