"""Kernels compiled ahead of time by ``threadtile export``, launched through ``cuda.bindings``.

This module is copied into every exported package (as ``<name>.py``, beside ``<name>.json``,
the cubins and the CUDA C++). At run time it needs the Python standard library and
``cuda-bindings`` (the CUDA driver API), imported at the first launch: no compiler, no NVRTC,
no threadtile. NumPy is needed only by :func:`to_device` and :meth:`DeviceArray.copy_to_host`.

    import kernels                                    # the package's folder on sys.path
    kernels.vector_add[n // 256](a, b, c)             # a tile kernel: its block is fixed
    kernels.launch(stream, (n // 256,), kernels.vector_add, (a, b, c))
    kernels.matmul[(16, 16), (16, 16)](a, b, c)       # a thread-level kernel: grid, block
    kernels.matmul[grid, block, stream, shared_bytes](a, b, c)

Arrays are torch tensors on the GPU, or any object with ``__cuda_array_interface__`` (CuPy,
numba, :class:`DeviceArray`); scalars are Python or NumPy numbers. Each argument is checked
against the parameter it was exported for (dtype, rank, C-contiguity where the kernel was
compiled for it) with the errors threadtile's launcher raises. ``Constant`` parameters were
fixed at export: a kernel takes its runtime arguments only.

The cubin for the current device is chosen from the package's architectures: ``sm_XYa`` runs
on compute capability X.Y alone, ``sm_XY`` (and ``sm_XYf``) on X.Y and later minor versions of
major X; the best match is loaded once per architecture (``cuLibraryLoadData``, usable in
every context). A tile kernel's hidden tensor-map parameters (TMA descriptors for its sm_90a
main loop) are encoded with ``cuTensorMapEncodeTiled`` when the loaded cubin is an sm_90a one,
and passed as zeros otherwise (those cubins never read them) or for an array TMA cannot copy
(the kernel then takes its portable path), by the rules of threadtile's launcher.
"""

from __future__ import annotations

import ctypes
import json
import re
import struct
import sys
import threading
from pathlib import Path

FORMAT = 1  # the manifest's format, written by threadtile export

# the struct code of each scalar parameter: what threadtile's runtime/abi.py packs
CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
         "uint32": "I", "int64": "q", "uint64": "Q", "float16": "e", "bfloat16": "H",
         "float32": "f", "float64": "d", "complex64": "2f", "complex128": "2d"}
ALIGN = {"complex64": 8, "complex128": 16}
TENSORMAP_SIZE, TENSORMAP_ALIGN = 128, 64
# __cuda_array_interface__ type strings (without the byte order) -> dtype names
TYPESTR = {"b1": "bool", "i1": "int8", "u1": "uint8", "i2": "int16", "u2": "uint16",
           "i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64", "f2": "float16",
           "f4": "float32", "f8": "float64", "c8": "complex64", "c16": "complex128"}
# the element type of each dtype for cuTensorMapEncodeTiled
TMA_DTYPES = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32",
              "int8": "UINT8", "uint8": "UINT8", "int32": "INT32", "uint32": "UINT32",
              "float64": "FLOAT64", "int64": "INT64", "uint64": "UINT64", "uint16": "UINT16",
              "int16": "UINT16", "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8"}
ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
            "int16": 2, "uint16": 2, "float16": 2,
            "bfloat16": 2, "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8,
            "float64": 8, "complex64": 8, "complex128": 16}
DYNAMIC_SHARED_DEFAULT = 48 * 1024  # above this a kernel must opt in
INVALID_VALUE = 1  # CUDA_ERROR_INVALID_VALUE


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""


class LaunchError(ValueError):
    """A launch configuration the kernel cannot take (its fixed block, a bad grid)."""


# ----------------------------------------------------------------------------------------------
# Parameters: layout and packing (no GPU needed)
# ----------------------------------------------------------------------------------------------

def param_format(p: dict) -> tuple[str, int, int]:
    """(``struct`` format, size, alignment) of one manifest parameter: an array is its data
    pointer, then its extents and its strides in elements (int64 each); a scalar its C type;
    a tensor map 128 bytes."""
    kind = p["kind"]
    if kind == "array":
        return "Q" + "q" * (2 * p["ndim"]), 8 + 16 * p["ndim"], 8
    if kind == "tensormap":
        return f"{TENSORMAP_SIZE}s", TENSORMAP_SIZE, TENSORMAP_ALIGN
    code = CODES[p["dtype"]]
    size = struct.calcsize("<" + code)
    return code, size, ALIGN.get(p["dtype"], size)


def layout(params: list[dict]) -> tuple[struct.Struct, tuple[int, ...]]:
    """The little-endian ``struct`` of a parameter list (each parameter at its natural
    alignment) and each parameter's offset. ``cuLaunchKernel`` gets a pointer to each
    parameter and reads its size from the kernel image, so these offsets are the buffer's own
    and need not be the driver's."""
    fmt, offsets, off = ["<"], [], 0
    for p in params:
        f, size, align = param_format(p)
        pad = -off % align
        if pad:
            fmt.append(f"{pad}x")
            off += pad
        offsets.append(off)
        fmt.append(f)
        off += size
    return struct.Struct("".join(fmt)), tuple(offsets)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _c_contiguous(shape: tuple, strides: tuple) -> bool:
    """NumPy's rule: axes of length 1 may have any stride; an empty array qualifies."""
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def describe_array(a) -> tuple[str, int, tuple, tuple, str | None]:
    """(dtype name, device pointer, shape, strides in elements, framework) of a GPU array: a
    torch tensor, or an object with ``__cuda_array_interface__``. TypeError for anything
    else, saying how to move a host array."""
    if type(a).__module__.startswith("torch") and hasattr(a, "data_ptr"):
        if not a.is_cuda:
            raise TypeError("is a torch tensor on the host; move it to the GPU (.cuda())")
        return (str(a.dtype).removeprefix("torch."), int(a.data_ptr()), tuple(a.shape),
                tuple(a.stride()), "torch")
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is None:
        if hasattr(a, "__array_interface__") or hasattr(a, "__array__"):
            raise TypeError(f"is a host array ({type(a).__name__}); copy it to the GPU first "
                            "(this module's to_device(), torch's .cuda(), cupy.asarray())")
        raise TypeError(f"is a {type(a).__name__}, not an array on the GPU")
    if cai.get("mask") is not None:
        raise TypeError("is a masked array; kernels take plain arrays")
    stream = cai.get("stream")
    if stream:  # the producer may still be writing it on that stream (numba's rule)
        _check(_cu().cuStreamSynchronize(_cu().CUstream(int(stream))), "cuStreamSynchronize")
    typestr = cai["typestr"]
    dtype = TYPESTR.get(typestr[1:])
    if dtype is None or typestr[0] == ">":
        raise TypeError(f"has elements of type {typestr!r}, which kernels do not take")
    shape = tuple(int(n) for n in cai["shape"])
    item = ITEMSIZE[dtype]
    bstrides = cai.get("strides")
    if bstrides is None:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        strides = tuple(reversed(strides))
    else:
        if any(int(b) % item for b in bstrides):
            raise TypeError(f"has strides {tuple(bstrides)} that are not a multiple of its "
                            f"item size {item}")
        strides = tuple(int(b) // item for b in bstrides)
    return dtype, int(cai["data"][0] or 0), shape, strides, None


_KINDS = ("b", "i", "u", "f", "c")


def _kind_of(v) -> str | None:
    """'b', 'i' (or 'u'), 'f' or 'c' for a Python or NumPy number, else None."""
    if isinstance(v, bool):
        return "b"
    if isinstance(v, int):
        return "i"
    if isinstance(v, float):
        return "f"
    if isinstance(v, complex):
        return "c"
    dt = getattr(v, "dtype", None)
    if dt is not None and getattr(v, "ndim", 1) == 0 and getattr(dt, "kind", "") in _KINDS:
        return dt.kind
    return None


def bf16_bits(x: float) -> int:
    """The 16 bits of ``x`` as a bfloat16, rounded to nearest even (NaN stays NaN)."""
    bits = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


_KIND = {"bool": "b", "float16": "f", "bfloat16": "f", "float32": "f", "float64": "f",
         "complex64": "c", "complex128": "c"}
_TAKES = {"b": "b", "i": "biu", "f": "biuf", "c": "biufc"}


def scalar_values(v, dtype: str, where: str) -> tuple:
    """The packed values of number ``v`` for a ``dtype`` parameter: a bool parameter takes a
    bool, an integer one an int or bool, a float one any real number, a complex one any
    number; TypeError otherwise (a float does not convert to an int without losing it)."""
    src = _kind_of(v)
    want = _KIND.get(dtype, "i")
    if src is None:
        raise TypeError(f"{where} must be a {dtype} scalar, got {type(v).__name__} {v!r}")
    if src not in _TAKES[want]:
        raise TypeError(f"{where} must be a {dtype} scalar, got {v!r}: it does not convert to "
                        f"{dtype} without losing its meaning")
    if hasattr(v, "item"):
        v = v.item()
    if dtype == "bfloat16":
        return (bf16_bits(v),)
    if want == "c":
        v = complex(v)
        return v.real, v.imag
    return (float(v),) if want == "f" else (bool(v),) if want == "b" else (int(v),)


# ----------------------------------------------------------------------------------------------
# Tensor maps (the same rules as threadtile's runtime/tensormaps.py)
# ----------------------------------------------------------------------------------------------

def tma_usable(box: tuple, itemsize: int, ptr: int, shape: tuple, strides: tuple) -> bool:
    """Whether TMA can copy ``box`` tiles of this 2-d array with the 128-byte swizzle."""
    if len(shape) != 2 or ptr % 16 or min(shape) < 1:
        return False
    rows, cols = shape
    if strides[1] != 1 and cols > 1:
        return False
    pitch = strides[0] * itemsize
    if rows > 1 and (strides[0] < cols or pitch % 16 or pitch >= 1 << 40):
        return False
    w, h = box
    return 0 < w <= 256 and 0 < h <= 256 and w * itemsize <= 128 and max(rows, cols) <= 1 << 31


def tma_flat2d(shape: tuple, strides: tuple) -> tuple[tuple, tuple] | None:
    """A 3-d array whose batches lie one after another as the 2-d array of its rows."""
    if len(shape) != 3:
        return (shape, strides) if len(shape) == 2 else None
    b, m, _k = shape
    if b > 1 and m > 1 and strides[0] != m * strides[1]:
        return None
    return (b * m, shape[2]), (strides[1], strides[2])


def encode_tensormap(box: tuple, dtype: str, ptr: int, shape: tuple, strides: tuple) -> bytes:
    """The 128 bytes of the tensor map of an array for ``box`` tiles, or zeros where TMA
    cannot copy it (the kernel's portable path)."""
    zero = bytes(TENSORMAP_SIZE)
    flat = tma_flat2d(shape, strides)
    if flat is None or dtype not in TMA_DTYPES:
        return zero
    (rows, cols), strides = flat
    item = ITEMSIZE[dtype]
    if not tma_usable(box, item, ptr, (rows, cols), strides):
        return zero
    cu = _cu()
    pitch = strides[0] * item if rows > 1 else -(-cols * item // 16) * 16
    err, m = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + TMA_DTYPES[dtype]), 2, ptr,
        [cu.cuuint64_t(cols), cu.cuuint64_t(rows)], [cu.cuuint64_t(pitch)],
        [cu.cuuint32_t(box[0]), cu.cuuint32_t(box[1])], [cu.cuuint32_t(1)] * 2,
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B if box[0] * item == 64
        else cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if int(err) != 0:
        return zero
    return ctypes.string_at(m.getPtr(), TENSORMAP_SIZE)


# ----------------------------------------------------------------------------------------------
# Architectures
# ----------------------------------------------------------------------------------------------

_ARCH = re.compile(r"^sm_(\d+)([af]?)$")


def pick_arch(archs, capability: tuple[int, int]) -> str | None:
    """The package architecture whose cubin runs best on a device of compute ``capability``
    (major, minor): ``sm_XYa`` only on X.Y; ``sm_XY`` and ``sm_XYf`` on X.Y and later minors
    of X; the newest that runs, an ``a`` cubin before the others of its version. None when
    none runs there."""
    major, minor = capability
    best, rank = None, None
    for a in archs:
        m = _ARCH.match(a)
        if not m:
            continue
        num, suffix = int(m.group(1)), m.group(2)
        am, an = num // 10, num % 10
        if am != major or an > minor or (suffix == "a" and an != minor):
            continue
        r = (an, {"a": 2, "f": 1, "": 0}[suffix])
        if rank is None or r > rank:
            best, rank = a, r
    return best


# ----------------------------------------------------------------------------------------------
# The CUDA driver, imported at the first launch
# ----------------------------------------------------------------------------------------------

_state = {"cu": None}
_lock = threading.Lock()


def _cu():
    cu = _state["cu"]
    if cu is None:
        try:
            from cuda.bindings import driver as cu  # noqa: PLC0415  (only when launching)

            err = cu.cuInit(0)
        except ImportError as e:
            raise CudaError(f"launching needs cuda-bindings (pip install cuda-bindings): "
                            f"{e}") from None
        except Exception as e:  # noqa: BLE001  (no libcuda: the bindings raise various)
            raise CudaError(f"no CUDA driver: {e}") from None
        _check(err, "cuInit")
        _state["cu"] = cu
    return cu


def _check(result, what: str) -> tuple:
    err, rest = (result[0], result[1:]) if isinstance(result, tuple) else (result, ())
    if int(err) != 0:
        name = getattr(err, "name", None) or f"CUresult {int(err)}"
        raise CudaError(f"{what} failed: {name}")
    return rest


def _device(ptr: int) -> int:
    """The ordinal of the device holding ``ptr`` (else of this thread's context, else 0),
    whose context is made current when it is not: its primary context, the one torch and
    CuPy use."""
    cu = _cu()
    want = -1
    if ptr:
        attr = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        err, v = cu.cuPointerGetAttribute(attr, cu.CUdeviceptr(ptr))
        want = int(v) if int(err) == 0 else -1
    (ctx,) = _check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    current = -1
    if ctx is not None and int(ctx) != 0:
        (d,) = _check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
        current = int(d)
    if want < 0:
        want = max(current, 0)
    if want != current:
        (dev,) = _check(cu.cuDeviceGet(want), "cuDeviceGet")
        (ctx,) = _check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        _check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return want


def _capability(dev: int) -> tuple[int, int]:
    cu = _cu()
    a = cu.CUdevice_attribute
    (d,) = _check(cu.cuDeviceGet(dev), "cuDeviceGet")
    (major,) = _check(cu.cuDeviceGetAttribute(
        a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d), "cuDeviceGetAttribute")
    (minor,) = _check(cu.cuDeviceGetAttribute(
        a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d), "cuDeviceGetAttribute")
    return int(major), int(minor)


def _stream(stream, framework: str | None, dev: int) -> int:
    """The handle of ``stream``: an int, an object with ``cuda_stream`` (torch), ``ptr``
    (CuPy) or ``__cuda_stream__`` (cuda.core), or None: the current stream of the first
    array's framework, else the legacy default stream."""
    if stream is None:
        if framework == "torch":
            return int(sys.modules["torch"].cuda.current_stream(dev).cuda_stream)
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"stream must be an int handle or a stream object, got {stream!r}")


def _dims(v, what: str) -> tuple[int, int, int]:
    dims = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool)
                                          for d in dims):
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {v!r}")
    if min(dims) < 1:
        raise LaunchError(f"{what} must be >= 1 in every dimension, got {v!r}")
    return tuple(dims) + (1,) * (3 - len(dims))


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------

class Kernel:
    """One exported kernel. A thread-level kernel launches as threadtile's do:
    ``kernel[grid, block](*args)``, ``kernel[grid, block, stream]``, ``kernel[grid, block,
    stream, shared_bytes]``; a tile kernel, whose block is fixed, with its grid alone,
    ``kernel[grid](*args)`` (``kernel[2, 3]`` is the grid (2, 3)), or with
    :func:`launch` ``(stream, grid, kernel, args)``. :meth:`launch` takes everything."""

    def __init__(self, meta: dict, folder: Path):
        self.meta = meta
        self.folder = folder
        self.__name__ = meta["name"]
        self.entry = meta["entry"]
        self.params = list(meta["params"])
        self.threads = meta.get("threads")  # a fixed block's threads (tile kernels)
        self.tile = bool(meta.get("tile"))
        self.cooperative = bool(meta.get("cooperative"))
        self.archs = tuple(meta["cubins"])
        maps = [{"kind": "tensormap", **m} for m in meta.get("tensormaps", ())]
        self.tensormaps = maps
        self._struct, self._offsets = layout(self.params + maps)
        self._loaded: dict = {}  # arch -> (library, kernel handle, CUfunction)
        self._shared_set: dict = {}  # (arch, device) -> dynamic shared memory allowed
        self._arch_of: dict = {}  # device -> arch
        sig = ", ".join(f"{p['name']}: {p['type']}" for p in self.params)
        consts = ", ".join(f"{k}={v!r}" for k, v in meta.get("constants", {}).items())
        self.__doc__ = (f"{self.__name__}({sig})" + (f" with {consts}" if consts else "") +
                        (f"; blocks of {self.threads} threads" if self.threads else "") +
                        f"; cubins for {', '.join(self.archs)}")

    def __repr__(self) -> str:
        return f"<exported kernel {self.__doc__}>"

    def __getitem__(self, config):
        if self.tile:  # the subscript is the grid, as threadtile's tile kernels take it
            if isinstance(config, tuple) and any(not isinstance(c, int) for c in config):
                raise TypeError(f"{self.__name__} is a tile kernel: launch it with its grid "
                                f"alone, {self.__name__}[grid](...), or launch(stream, grid, "
                                f"kernel, args); its block is {self.threads} threads")
            return lambda *args: self.launch(config, args)
        if not isinstance(config, tuple):
            config = (config,)
        if not 1 <= len(config) <= 4:
            raise TypeError("launch with kernel[grid], kernel[grid, block], "
                            "kernel[grid, block, stream] or kernel[grid, block, stream, "
                            "shared_bytes]")
        grid, block, stream, shared = tuple(config) + (None, None, None, 0)[len(config):]
        return lambda *args: self.launch(grid, args, block, stream, shared)

    def values(self, args) -> tuple[list, str | None, int]:
        """The values to pack for ``args``, each checked against its parameter (TypeError
        naming the argument otherwise), the first array's framework and its pointer."""
        n = len(self.params)
        if len(args) != n:
            raise TypeError(f"kernel {self.__name__!r} takes {n} argument{_s(n)} "
                            f"({', '.join(p['name'] for p in self.params)}), got {len(args)}")
        vals: list = []
        framework, first = None, 0
        for i, (a, p) in enumerate(zip(args, self.params)):
            where = f"kernel {self.__name__!r} argument {i} ({p['name']})"
            if p["kind"] == "array":
                v = self._array_values(a, p, where)
                vals += v
                if not first:
                    first, framework = v[0], self._framework(a)
            else:
                if _kind_of(a) is None and (hasattr(a, "__cuda_array_interface__") or
                                            hasattr(a, "data_ptr")):
                    raise TypeError(f"{where} must be a {p['dtype']} scalar, got an array")
                vals += scalar_values(a, p["dtype"], where)
        return vals, framework, first

    def pack(self, args, maps: list[bytes] | None = None) -> bytes:
        """The packed parameters for ``args``; ``maps``: the bytes of the hidden tensor maps
        (zeros where not given). OverflowError for a number that does not fit its type."""
        return self._pack(args, self.values(args)[0], maps)

    def _pack(self, args, vals: list, maps: list[bytes] | None) -> bytes:
        maps = maps if maps is not None else [bytes(TENSORMAP_SIZE)] * len(self.tensormaps)
        try:
            return self._struct.pack(*vals, *maps)
        except struct.error:
            for i, (a, p) in enumerate(zip(args, self.params)):
                if p["kind"] != "array":
                    try:
                        struct.pack("<" + CODES[p["dtype"]], *scalar_values(a, p["dtype"], ""))
                    except struct.error:
                        raise OverflowError(f"kernel {self.__name__!r} argument {i} "
                                            f"({p['name']}): {a!r} does not fit in "
                                            f"{p['dtype']}") from None
            raise

    @staticmethod
    def _framework(a) -> str | None:
        return "torch" if type(a).__module__.startswith("torch") else None

    def _array_values(self, a, p: dict, where: str) -> tuple:
        if _kind_of(a) is not None:
            raise TypeError(f"{where} must be an array of {p['dtype']} with {p['ndim']} "
                            f"dimension{_s(p['ndim'])}, got a scalar ({a!r})")
        try:
            dtype, ptr, shape, strides, _fw = describe_array(a)
        except TypeError as e:
            raise TypeError(f"{where} {e}") from None
        if dtype != p["dtype"] or len(shape) != p["ndim"]:
            raise TypeError(f"{where} must be a {p['ndim']}-d array of {p['dtype']}, got a "
                            f"{len(shape)}-d array of {dtype}")
        if p.get("contiguous") and not _c_contiguous(shape, strides):
            raise TypeError(f"{where} must be C-contiguous (the kernel was exported for a "
                            "contiguous array); pass .contiguous() or a contiguous copy")
        return (ptr, *shape, *strides)

    # -- launching -----------------------------------------------------------------------------

    def _load(self, dev: int) -> tuple[str, tuple]:
        arch = self._arch_of.get(dev)
        if arch is None:
            cap = _capability(dev)
            arch = pick_arch(self.archs, cap)
            if arch is None:
                raise CudaError(
                    f"kernel {self.__name__!r} was exported for {', '.join(self.archs)}, none "
                    f"of which runs on this GPU (compute capability {cap[0]}.{cap[1]}, "
                    f"sm_{cap[0]}{cap[1]}); export it again with --arch sm_{cap[0]}{cap[1]}")
            self._arch_of[dev] = arch
        hit = self._loaded.get(arch)
        if hit is None:
            with _lock:
                hit = self._loaded.get(arch)
                if hit is None:
                    hit = self._loaded[arch] = self._load_arch(arch)
        return arch, hit

    def _load_arch(self, arch: str) -> tuple:
        cu = _cu()
        data = (self.folder / self.meta["cubins"][arch]["file"]).read_bytes()
        (lib,) = _check(cu.cuLibraryLoadData(data, None, None, 0, None, None, 0),
                        f"loading the {arch} cubin of {self.__name__!r} (cuLibraryLoadData)")
        (kern,) = _check(cu.cuLibraryGetKernel(lib, self.entry.encode()),
                         f"finding kernel {self.entry!r} in its cubin")
        self._check_params(cu, kern)
        return lib, kern, cu.CUfunction(int(kern)), data

    def _check_params(self, cu, kern) -> None:
        """The sizes the driver reads for each parameter (CUDA >= 12.4) against the
        manifest's: a cubin that does not match its manifest is an error here, not garbage
        in the kernel."""
        get = getattr(cu, "cuKernelGetParamInfo", None)
        if get is None:
            return
        want = [param_format(p)[1] for p in self.params + self.tensormaps]
        got = []
        for i in range(len(want) + 1):
            try:
                res = get(kern, i)
            except Exception:  # noqa: BLE001  (a driver without the call)
                return
            if int(res[0]) == INVALID_VALUE:  # past the last parameter
                break
            if int(res[0]) != 0:  # a driver that cannot tell (CUDA < 12.4)
                return
            got.append(int(res[2]))
        if got != want:
            raise CudaError(f"kernel {self.entry!r}: the cubin's parameter sizes {got} differ "
                            f"from the package's {want}; the package's files do not belong "
                            "together (export it again)")

    def launch(self, grid, args, block=None, stream=None, shared_bytes: int = 0) -> None:
        """Launch on ``grid`` (an int or 1-3 ints) x ``block`` (the same; None for a kernel
        with a fixed block) with ``shared_bytes`` of dynamic shared memory on ``stream``
        (None: the torch current stream for torch tensors, else the default stream)."""
        g = _dims(grid, "grid")
        if block is None and not self.tile:
            raise LaunchError(f"kernel {self.__name__!r} needs a block: kernel[grid, block]")
        b = (self.threads, 1, 1) if block is None else _dims(block, "block")
        if self.threads and b[0] * b[1] * b[2] != self.threads:
            raise LaunchError(f"kernel {self.__name__!r} is compiled for blocks of "
                              f"{self.threads} threads; launched with block {block!r}")
        if not isinstance(shared_bytes, int) or shared_bytes < 0:
            raise LaunchError(f"shared_bytes must be an int >= 0, got {shared_bytes!r}")
        vals, framework, first = self.values(args)
        dev = _device(first)
        arch, (_lib, kern, func, _data) = self._load(dev)
        maps = None
        if self.tensormaps and arch == "sm_90a":  # the only cubins that read them
            maps = []
            for m in self.tensormaps:
                if m.get("operand"):  # (read only by a build without portable loops)
                    maps.append(bytes(TENSORMAP_SIZE))
                    continue
                _dt, ptr, shape, strides, _fw = describe_array(args[m["arg"]])
                maps.append(encode_tensormap(tuple(m["box"]), self.params[m["arg"]]["dtype"],
                                             ptr, shape, strides))
        packed = self._pack(args, vals, maps)
        shared = shared_bytes + int(self.meta["cubins"][arch].get("scratch", 0))
        cu = _cu()
        if shared > self._shared_set.get((arch, dev), DYNAMIC_SHARED_DEFAULT):
            attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            (d,) = _check(cu.cuDeviceGet(dev), "cuDeviceGet")
            _check(cu.cuKernelSetAttribute(attr, shared, kern, d),
                   f"allowing {shared} bytes of dynamic shared memory for {self.entry!r}")
            self._shared_set[(arch, dev)] = shared
        buf = ctypes.create_string_buffer(packed, max(len(packed), 1))
        base = ctypes.addressof(buf)
        n = len(self._offsets)
        argv = (ctypes.c_void_p * max(n, 1))(*[base + o for o in self._offsets])
        st = cu.CUstream(_stream(stream, framework, dev))
        where = (f"launching {self.entry!r} with grid {g}, block {b}, {shared} bytes of "
                 "dynamic shared memory")
        if self.cooperative:
            _check(cu.cuLaunchCooperativeKernel(func, *g, *b, shared, st,
                                                ctypes.addressof(argv) if n else 0), where)
        else:
            _check(cu.cuLaunchKernel(func, *g, *b, shared, st,
                                     ctypes.addressof(argv) if n else 0, 0), where)


def launch(stream, grid, kernel: Kernel, args) -> None:
    """Launch ``kernel`` on ``grid`` with the tuple ``args`` on ``stream`` (threadtile's and
    cuTile's ``ct.launch``); a thread-level kernel needs :meth:`Kernel.launch`'s block."""
    kernel.launch(grid, tuple(args), stream=stream)


# ----------------------------------------------------------------------------------------------
# Device arrays, for hosts without torch or CuPy
# ----------------------------------------------------------------------------------------------

class DeviceArray:
    """GPU memory holding a C-contiguous array, with ``__cuda_array_interface__``; made by
    :func:`to_device` or :func:`device_array`, read back with :meth:`copy_to_host`."""

    def __init__(self, shape, dtype):
        import numpy as np  # noqa: PLC0415

        self.shape = tuple(int(n) for n in (shape if isinstance(shape, tuple) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.nbytes = self.dtype.itemsize
        for n in self.shape:
            self.nbytes *= n
        cu = _cu()
        _device(0)
        (ptr,) = _check(cu.cuMemAlloc(max(self.nbytes, 1)), "cuMemAlloc")
        self.ptr = int(ptr)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": None, "version": 3}

    def copy_to_host(self):
        """A NumPy copy of the array (after the work queued before it has finished)."""
        import numpy as np  # noqa: PLC0415

        out = np.empty(self.shape, self.dtype)
        cu = _cu()
        _check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        if self.nbytes:
            _check(cu.cuMemcpyDtoH(out.ctypes.data, cu.CUdeviceptr(self.ptr), self.nbytes),
                   "cuMemcpyDtoH")
        return out

    def __del__(self):
        cu = _state["cu"]
        if cu is not None and getattr(self, "ptr", 0):
            try:  # (at interpreter exit the driver may be gone already)
                cu.cuMemFree(cu.CUdeviceptr(self.ptr))
            except Exception:  # noqa: BLE001
                pass
            self.ptr = 0


def device_array(shape, dtype) -> DeviceArray:
    """Uninitialised GPU memory for an array of ``shape`` and ``dtype``."""
    return DeviceArray(shape, dtype)


def to_device(a) -> DeviceArray:
    """A GPU copy of the NumPy array ``a`` (C-contiguous)."""
    import numpy as np  # noqa: PLC0415

    a = np.ascontiguousarray(a)
    d = DeviceArray(a.shape, a.dtype)
    if d.nbytes:
        cu = _cu()
        _check(cu.cuMemcpyHtoD(cu.CUdeviceptr(d.ptr), a.ctypes.data, d.nbytes), "cuMemcpyHtoD")
    return d


# ----------------------------------------------------------------------------------------------
# The package
# ----------------------------------------------------------------------------------------------

def bind(namespace: dict, manifest: str | Path) -> list[str]:
    """Read the package's manifest (JSON, beside this module) and put one :class:`Kernel` per
    exported kernel into ``namespace`` under its name; returns the names."""
    path = Path(manifest)
    if not path.is_absolute():
        path = Path(namespace.get("__file__", ".")).resolve().parent / path
    doc = json.loads(path.read_text())
    if doc.get("format") != FORMAT:
        raise RuntimeError(f"{path} has manifest format {doc.get('format')!r}; this loader "
                           f"reads format {FORMAT} (export the package again)")
    names = []
    for meta in doc["kernels"]:
        namespace[meta["name"]] = Kernel(meta, path.parent)
        names.append(meta["name"])
    namespace["ARCHS"] = tuple(doc["archs"])
    return names
