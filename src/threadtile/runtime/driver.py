"""The CUDA driver: devices, the context, loading cubins, kernel attributes, memory.

Contexts: we use each device's *primary* context (the one torch, CuPy and the CUDA runtime use),
made current through ``cuda.core``'s ``Device(i).set_current()``, so pointers and streams from
those libraries are valid in our launches and ours in theirs. Nothing initialises before the
first call that needs a GPU: importing threadtile, compiling, and ``gpu_available()`` on a
machine without a driver never raise.

Loading: a cubin is loaded with ``cuLibraryLoadData`` and its entry found with
``cuLibraryGetKernel``, which gives a *context-independent* ``CUkernel``: one handle serves every
device and context (the driver loads the code into a context on first use), so a kernel launched
on a torch stream of device 1 needs no per-device function table. ``cuLaunchKernel`` takes it
cast to a ``CUfunction``; through cuda-bindings 13.5 that spelling is also ~0.1 us cheaper per
launch than passing the ``CUkernel`` object (measured against a stub driver).

Every driver call is checked; a failure raises :class:`~threadtile.errors.CudaDriverError` naming
the ``CUDA_ERROR_...`` code and what was being done.
"""

from __future__ import annotations

import functools
import operator
import threading
from dataclasses import dataclass

from ..errors import CudaDriverError

__all__ = [
    "gpu_available", "device_count", "current_device", "get_device", "activate", "ensure_device",
    "DeviceInfo", "LoadedKernel", "load_function", "set_max_dynamic_shared", "func_attributes",
    "blocks_per_sm", "arch_for",
    "param_info", "synchronize", "check", "driver_version", "mem_alloc", "mem_free",
    "copy_htod", "copy_dtoh", "copy_dtod", "stream_synchronize", "pointer_device",
    "stream_handle", "mem_host_alloc", "mem_free_host", "host_device_pointer",
    "mem_alloc_managed", "mem_get_info", "stream_create", "stream_destroy", "stream_query",
    "event_create", "event_destroy", "event_record", "event_synchronize", "event_query",
    "stream_wait_event", "event_elapsed_ms", "device_attribute", "device_uuid",
]



class _ThreadState(threading.local):
    device = -1  # the device whose primary context we made current in this thread


tls = _ThreadState()
_lock = threading.Lock()


def _cu():
    from cuda.bindings import driver  # noqa: PLC0415  (~80 ms; loaded on first GPU use)

    return driver


def _error_name(err) -> str:
    name = getattr(err, "name", None)
    if name:
        return str(name)
    try:
        e, s = _cu().cuGetErrorName(err)
        if int(e) == 0 and s:
            return s.decode() if isinstance(s, bytes) else str(s)
    except Exception:  # noqa: BLE001  (naming an error must not raise a second one)
        pass
    return f"CUresult {int(err)}"


def check(result, what: str) -> tuple:
    """Unpack a cuda-bindings return ``(CUresult, *values)``; raise on failure.

    Returns the values as a tuple (empty when the call returns only a status).
    """
    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    if err:
        name = _error_name(err)
        hint = _HINTS.get(name, "")
        raise CudaDriverError(f"{what} failed: {name}{hint}", name=name, code=int(err))
    return rest


_HINTS = {
    "CUDA_ERROR_NO_BINARY_FOR_GPU": " (the cubin was compiled for another architecture than "
                                    "this GPU's)",
    "CUDA_ERROR_INVALID_PTX": " (the PTX needs a newer driver: compile to cubin instead)",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": " (the PTX needs a newer driver: compile to cubin)",
    "CUDA_ERROR_ILLEGAL_ADDRESS": " (a kernel accessed memory out of bounds; run it under "
                                  "threadtile.simulate() to find where)",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": " (too many registers or threads for one block: "
                                          "use fewer threads per block or max_registers=)",
    "CUDA_ERROR_OUT_OF_MEMORY": " (the GPU is out of memory)",
}


# ----------------------------------------------------------------------------------------------
# Devices
# ----------------------------------------------------------------------------------------------

@functools.cache
def _init() -> int:
    """cuInit once; returns the device count. Raises when there is no usable driver."""
    try:
        cu = _cu()
        err = cu.cuInit(0)
    except Exception as e:  # noqa: BLE001  (no libcuda: pathfinder and bindings raise various)
        raise CudaDriverError(
            f"no CUDA driver: {e}. Kernels still compile without a GPU (pass arch=, e.g. "
            "kernel.compile(arch='sm_90')) and run under threadtile.simulate()",
            name="CUDA_ERROR_NO_DEVICE") from None
    check(err, "cuInit")
    (n,) = check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
    return int(n)


def gpu_available() -> bool:
    """True when a CUDA driver and at least one GPU are present. Never raises."""
    try:
        return _init() > 0
    except Exception:  # noqa: BLE001  (no libcuda, no device, a broken install: all "no")
        return False


def device_count() -> int:
    """The number of CUDA devices (0 without a driver)."""
    try:
        return _init()
    except Exception:  # noqa: BLE001
        return 0


@functools.cache
def driver_version() -> tuple[int, int]:
    """The driver's CUDA version, e.g. ``(13, 0)``."""
    (v,) = check(_cu().cuDriverGetVersion(), "cuDriverGetVersion")
    v = int(v)
    return v // 1000, (v % 1000) // 10


@dataclass(frozen=True)
class DeviceInfo:
    """Facts about one GPU, read once (launch checks compare against these)."""

    index: int
    name: str
    compute_capability: tuple[int, int]
    max_threads_per_block: int
    max_block_dims: tuple[int, int, int]
    max_grid_dims: tuple[int, int, int]
    max_shared_per_block: int  # without opting in (48 KiB)
    max_shared_per_block_optin: int  # with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
    multiprocessor_count: int
    warp_size: int
    total_memory: int
    driver_version: tuple[int, int]

    @property
    def arch(self) -> str:
        """The NVRTC target for this device (:func:`arch_for`)."""
        return arch_for(self.compute_capability)

    @property
    def max_dynamic_shared(self) -> int:
        return self.max_shared_per_block_optin


def arch_for(compute_capability: tuple[int, int]) -> str:
    """The NVRTC target threadtile builds for a device of ``compute_capability``, e.g.
    ``"sm_80"``. Compute capability 9.0 gets ``"sm_90a"``: its cubins run on exactly that
    capability, which is the device's, and only that target has wgmma (the tile matrix
    multiply's Hopper path, tile/kloop_sm90.h)."""
    major, minor = compute_capability
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


@functools.cache
def get_device(index: int) -> DeviceInfo:
    """The :class:`DeviceInfo` of device ``index`` (cached)."""
    n = _init()
    if not 0 <= index < n:
        raise CudaDriverError(f"no CUDA device {index}: this machine has {n}",
                              name="CUDA_ERROR_INVALID_DEVICE")
    cu = _cu()
    (dev,) = check(cu.cuDeviceGet(index), f"cuDeviceGet({index})")
    A = cu.CUdevice_attribute

    def attr(name: str) -> int:
        (v,) = check(cu.cuDeviceGetAttribute(getattr(A, name), dev), f"reading {name}")
        return int(v)

    (raw,) = check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = raw.split(b"\0", 1)[0].decode(errors="replace").strip()
    try:
        (mem,) = check(cu.cuDeviceTotalMem(dev), "cuDeviceTotalMem")
    except Exception:  # noqa: BLE001  (informational only)
        mem = 0
    p = "CU_DEVICE_ATTRIBUTE_"
    return DeviceInfo(
        index=index,
        name=name,
        compute_capability=(attr(p + "COMPUTE_CAPABILITY_MAJOR"),
                            attr(p + "COMPUTE_CAPABILITY_MINOR")),
        max_threads_per_block=attr(p + "MAX_THREADS_PER_BLOCK"),
        max_block_dims=(attr(p + "MAX_BLOCK_DIM_X"), attr(p + "MAX_BLOCK_DIM_Y"),
                        attr(p + "MAX_BLOCK_DIM_Z")),
        max_grid_dims=(attr(p + "MAX_GRID_DIM_X"), attr(p + "MAX_GRID_DIM_Y"),
                       attr(p + "MAX_GRID_DIM_Z")),
        max_shared_per_block=attr(p + "MAX_SHARED_MEMORY_PER_BLOCK") or 48 * 1024,
        max_shared_per_block_optin=attr(p + "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
        or 48 * 1024,
        multiprocessor_count=attr(p + "MULTIPROCESSOR_COUNT"),
        warp_size=attr(p + "WARP_SIZE") or 32,
        total_memory=int(mem),
        driver_version=driver_version(),
    )


def activate(index: int) -> None:
    """Make device ``index``'s primary context current in this thread."""
    _init()
    try:
        try:
            from cuda.core import Device  # noqa: PLC0415
        except ImportError:  # cuda-core < 0.5 kept it under .experimental
            from cuda.core.experimental import Device  # noqa: PLC0415
        Device(index).set_current()
    except ImportError:
        cu = _cu()
        (dev,) = check(cu.cuDeviceGet(index), f"cuDeviceGet({index})")
        (ctx,) = check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    tls.device = index


def ensure_device(index: int) -> None:
    """Cheap per-launch guard: make ``index`` current unless we already did in this thread."""
    if tls.device != index:
        activate(index)


def _context_device() -> int:
    """The device of this thread's current context, or -1 when none is current."""
    cu = _cu()
    (ctx,) = check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is None or int(ctx) == 0:
        return -1
    (dev,) = check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
    return int(dev)


def current_index() -> int:
    """The device launches go to by default: the one whose context is current in this thread
    (torch.cuda.set_device and CuPy's ``with Device(i)`` set it), else device 0."""
    _init()
    d = _context_device()
    if d < 0:
        activate(0)
        return 0
    tls.device = d
    return d


def current_device() -> DeviceInfo:
    """The :class:`DeviceInfo` of :func:`current_index`'s device (initialises CUDA)."""
    return get_device(current_index())


def synchronize() -> None:
    """Wait for all work on the current device (``cuCtxSynchronize``); no-op before any GPU
    use in this thread."""
    if not gpu_available():
        return
    if _context_device() < 0:
        return
    check(_cu().cuCtxSynchronize(), "cuCtxSynchronize")


def stream_synchronize(stream: int) -> None:
    """Wait for the work queued on ``stream`` (an int handle; 0 = the legacy default stream)."""
    cu = _cu()
    check(cu.cuStreamSynchronize(cu.CUstream(int(stream))), "cuStreamSynchronize")


# ----------------------------------------------------------------------------------------------
# Modules and kernels
# ----------------------------------------------------------------------------------------------

class LoadedKernel:
    """A kernel entry point loaded from a cubin: ``handle`` goes to ``cuLaunchKernel``.

    Keeps the cubin bytes and the library alive (the driver may read the image again when it
    lazily loads the code into another context). Libraries are never unloaded: unloading while
    a launch is still queued is undefined, and kernels normally live as long as the process.
    """

    __slots__ = ("name", "kernel", "handle", "library", "cubin", "_shared_set")

    def __init__(self, name: str, kernel, library, cubin: bytes):
        cu = _cu()
        self.name = name
        self.kernel = kernel  # the CUkernel (attributes are per device)
        self.handle = cu.CUfunction(int(kernel))  # the same handle, typed for cuLaunchKernel
        self.library = library
        self.cubin = cubin
        self._shared_set: dict[int, int] = {}  # device -> MAX_DYNAMIC_SHARED_SIZE_BYTES set

    def __repr__(self) -> str:
        return f"<LoadedKernel {self.name}>"


def load_function(cubin: bytes, name: str) -> LoadedKernel:
    """Load ``cubin`` and find its ``extern "C"`` kernel ``name``.

    Raises :class:`~threadtile.errors.CudaDriverError` with name ``CUDA_ERROR_NOT_FOUND`` when
    the cubin has no such (unmangled) symbol.
    """
    _init()
    cu = _cu()
    data = bytes(cubin)
    (library,) = check(cu.cuLibraryLoadData(data, None, None, 0, None, None, 0),
                       f"loading the cubin of {name!r} (cuLibraryLoadData)")
    try:
        (kernel,) = check(cu.cuLibraryGetKernel(library, name.encode()),
                          f"finding kernel {name!r} in its cubin")
    except CudaDriverError as e:
        if e.name == "CUDA_ERROR_NOT_FOUND":
            raise CudaDriverError(
                f"the cubin has no kernel named {name!r}: a kernel must be declared "
                f'extern "C" __global__ so that its name is not C++-mangled',
                name=e.name, code=e.code) from None
        raise
    return LoadedKernel(name, kernel, library, data)


def library_global(func: LoadedKernel, name: str) -> tuple[int, int]:
    """``(device pointer, bytes)`` of the ``__device__`` variable ``name`` of the library
    ``func`` was loaded from, in the current context (``cuLibraryGetGlobal``)."""
    cu = _cu()
    ptr, size = check(cu.cuLibraryGetGlobal(func.library, name.encode()),
                      f"finding {name!r} in the module of {func.name!r} (cuLibraryGetGlobal)")
    return int(ptr), int(size)


def _device_handle(index: int | None):
    cu = _cu()
    idx = current_index() if index is None else index
    (dev,) = check(cu.cuDeviceGet(idx), f"cuDeviceGet({idx})")
    return dev


def set_max_dynamic_shared(func: LoadedKernel, nbytes: int, device: int | None = None) -> None:
    """Allow ``nbytes`` of dynamic shared memory per block (needed above 48 KiB)."""
    cu = _cu()
    attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    dev = _device_handle(device)
    check(cu.cuKernelSetAttribute(attr, int(nbytes), func.kernel, dev),
          f"allowing {nbytes} bytes of dynamic shared memory for {func.name!r}")
    func._shared_set[int(dev)] = int(nbytes)


def set_shared_carveout(func: LoadedKernel, percent: int, device: int | None = None) -> None:
    """Prefer ``percent`` of the unified L1/shared memory as shared memory for ``func``
    (-1: the driver's default); a hint the driver may round (jit(shared_memory_carveout=))."""
    cu = _cu()
    attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    dev = _device_handle(device)
    check(cu.cuKernelSetAttribute(attr, int(percent), func.kernel, dev),
          f"setting the shared memory carveout of {func.name!r} to {percent}%")


def func_attributes(func: LoadedKernel, device: int | None = None) -> dict:
    """Resources of a loaded kernel on a device: registers per thread, static shared, local
    (spill) and constant memory in bytes, and the largest block it can launch."""
    cu = _cu()
    F = cu.CUfunction_attribute
    dev = _device_handle(device)

    def get(name: str) -> int:
        (v,) = check(cu.cuKernelGetAttribute(getattr(F, name), func.kernel, dev),
                     f"reading {name} of {func.name!r}")
        return int(v)

    p = "CU_FUNC_ATTRIBUTE_"
    return {
        "num_regs": get(p + "NUM_REGS"),
        "shared_size_bytes": get(p + "SHARED_SIZE_BYTES"),
        "local_size_bytes": get(p + "LOCAL_SIZE_BYTES"),
        "const_size_bytes": get(p + "CONST_SIZE_BYTES"),
        "max_threads_per_block": get(p + "MAX_THREADS_PER_BLOCK"),
        "max_dynamic_shared_size_bytes": get(p + "MAX_DYNAMIC_SHARED_SIZE_BYTES"),
        "binary_version": get(p + "BINARY_VERSION"),
    }


def blocks_per_sm(func: LoadedKernel, threads: int, shared_bytes: int = 0) -> int:
    """How many blocks of ``threads`` threads with ``shared_bytes`` of dynamic shared memory
    one multiprocessor of the current device holds at once (the driver's occupancy
    calculator, cuOccupancyMaxActiveBlocksPerMultiprocessor)."""
    cu = _cu()
    (per_sm,) = check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        func.handle, int(threads), int(shared_bytes)),
        f"reading the occupancy of {func.name!r}")
    return int(per_sm)


def max_active_blocks(func: LoadedKernel, threads: int, shared_bytes: int = 0) -> int:
    """How many blocks of ``threads`` threads with ``shared_bytes`` of dynamic shared memory
    can be resident on the current device at once (per multiprocessor, times their number):
    the most a cooperative launch may have."""
    return blocks_per_sm(func, threads, shared_bytes) * current_device().multiprocessor_count


def param_info(func: LoadedKernel) -> list[tuple[int, int]] | None:
    """``(offset, size)`` of each kernel parameter, from the driver (CUDA >= 12.4), or None
    when the driver or bindings cannot tell."""
    cu = _cu()
    fn = getattr(cu, "cuKernelGetParamInfo", None)
    if fn is None:
        return None
    out = []
    while True:
        try:
            res = fn(func.kernel, len(out))
        except Exception:  # noqa: BLE001  (symbol missing in an older driver)
            return None if not out else out
        err = res[0]
        if err:
            name = _error_name(err)
            if name == "CUDA_ERROR_INVALID_VALUE":  # past the last parameter
                return out
            return None
        out.append((int(res[1]), int(res[2])))
        if len(out) > 4096:  # a driver that never says "no more": do not loop forever
            return None


# ----------------------------------------------------------------------------------------------
# Memory
# ----------------------------------------------------------------------------------------------

def mem_alloc(nbytes: int) -> int:
    """Allocate ``nbytes`` of device memory in the current context; returns the pointer."""
    if nbytes <= 0:
        return 0
    (ptr,) = check(_cu().cuMemAlloc(int(nbytes)), f"allocating {nbytes} bytes on the GPU")
    return int(ptr)


def mem_free(ptr: int) -> None:
    """Free a :func:`mem_alloc` pointer. Errors are swallowed: this runs from finalizers,
    possibly while the interpreter (and the driver library) shuts down."""
    if not ptr:
        return
    try:
        cu = _cu()
        cu.cuMemFree(cu.CUdeviceptr(int(ptr)))
    except Exception:  # noqa: BLE001
        pass


def copy_htod(dst: int, src_host: int, nbytes: int, stream: int = 0) -> None:
    """Copy ``nbytes`` from host address ``src_host`` to device pointer ``dst``."""
    if nbytes <= 0:
        return
    cu = _cu()
    if stream:
        check(cu.cuMemcpyHtoDAsync(cu.CUdeviceptr(dst), src_host, nbytes, cu.CUstream(stream)),
              "copying to the GPU")
    else:
        check(cu.cuMemcpyHtoD(cu.CUdeviceptr(dst), src_host, nbytes), "copying to the GPU")


def copy_dtoh(dst_host: int, src: int, nbytes: int, stream: int = 0) -> None:
    """Copy ``nbytes`` from device pointer ``src`` to host address ``dst_host``; returns when
    the data is on the host (a stream copy is followed by a stream synchronize)."""
    if nbytes <= 0:
        return
    cu = _cu()
    if stream:
        check(cu.cuMemcpyDtoHAsync(dst_host, cu.CUdeviceptr(src), nbytes, cu.CUstream(stream)),
              "copying from the GPU")
        stream_synchronize(stream)
    else:
        check(cu.cuMemcpyDtoH(dst_host, cu.CUdeviceptr(src), nbytes), "copying from the GPU")


def copy_dtod(dst: int, src: int, nbytes: int, stream: int = 0) -> None:
    """Copy ``nbytes`` between device pointers."""
    if nbytes <= 0:
        return
    cu = _cu()
    if stream:
        check(cu.cuMemcpyDtoDAsync(cu.CUdeviceptr(dst), cu.CUdeviceptr(src), nbytes,
                                   cu.CUstream(stream)), "copying on the GPU")
    else:
        check(cu.cuMemcpyDtoD(cu.CUdeviceptr(dst), cu.CUdeviceptr(src), nbytes),
              "copying on the GPU")


def pointer_device(ptr: int) -> int:
    """The device ordinal owning device pointer ``ptr``, or -1 if the driver cannot tell."""
    if not ptr:
        return -1
    cu = _cu()
    try:
        attr = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        err, value = cu.cuPointerGetAttribute(attr, cu.CUdeviceptr(int(ptr)))
    except Exception:  # noqa: BLE001
        return -1
    return -1 if err else int(value)


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
# Host memory, streams and events (the numba-style host API: hostarrays.py, streams.py)
# ----------------------------------------------------------------------------------------------

CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_WRITECOMBINED = 1, 2, 4
CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST = 1, 2


def mem_host_alloc(nbytes: int, flags: int = 0) -> int:
    """Page-locked host memory (``cuMemHostAlloc``); ``flags``: ``CU_MEMHOSTALLOC_*``."""
    (ptr,) = check(_cu().cuMemHostAlloc(max(int(nbytes), 1), int(flags)),
                   f"allocating {nbytes} bytes of page-locked host memory")
    return int(ptr)


def mem_free_host(ptr: int) -> None:
    """Free :func:`mem_host_alloc` memory; errors swallowed, as :func:`mem_free`'s."""
    try:
        _cu().cuMemFreeHost(int(ptr))
    except Exception:  # noqa: BLE001
        pass


def host_device_pointer(host_ptr: int) -> int:
    """The device address of mapped host memory (``cuMemHostGetDevicePointer``)."""
    (ptr,) = check(_cu().cuMemHostGetDevicePointer(int(host_ptr), 0),
                   "finding the device address of mapped host memory")
    return int(ptr)


def mem_alloc_managed(nbytes: int, attach_global: bool = True) -> int:
    """Managed (unified) memory, addressable from the host and every device."""
    flag = CU_MEM_ATTACH_GLOBAL if attach_global else CU_MEM_ATTACH_HOST
    (ptr,) = check(_cu().cuMemAllocManaged(max(int(nbytes), 1), flag),
                   f"allocating {nbytes} bytes of managed memory")
    return int(ptr)


def mem_get_info() -> tuple[int, int]:
    """``(free, total)`` bytes of the current device's memory."""
    free, total = check(_cu().cuMemGetInfo(), "cuMemGetInfo")
    return int(free), int(total)


def stream_create() -> int:
    """A new stream (``cuStreamCreate``, default flags: it synchronizes with the legacy
    default stream)."""
    cu = _cu()
    (s,) = check(cu.cuStreamCreate(0), "creating a stream")
    return int(s)


def stream_destroy(handle: int) -> None:
    """Destroy a :func:`stream_create` stream; errors swallowed (runs from finalizers)."""
    try:
        cu = _cu()
        cu.cuStreamDestroy(cu.CUstream(int(handle)))
    except Exception:  # noqa: BLE001
        pass


def stream_query(handle: int) -> bool:
    """Whether all work queued on the stream has completed."""
    cu = _cu()
    err = cu.cuStreamQuery(cu.CUstream(int(handle)))
    err = err[0] if isinstance(err, tuple) else err
    if _error_name(err) == "CUDA_ERROR_NOT_READY":
        return False
    check(err, "cuStreamQuery")
    return True


def event_create(timing: bool = True) -> int:
    """A new event (``CU_EVENT_DISABLE_TIMING`` unless ``timing``)."""
    cu = _cu()
    flags = 0 if timing else int(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    (e,) = check(cu.cuEventCreate(flags), "creating an event")
    return int(e)


def event_destroy(handle: int) -> None:
    """Destroy an event; errors swallowed (runs from finalizers)."""
    try:
        cu = _cu()
        cu.cuEventDestroy(cu.CUevent(int(handle)))
    except Exception:  # noqa: BLE001
        pass


def event_record(event: int, stream: int) -> None:
    cu = _cu()
    check(cu.cuEventRecord(cu.CUevent(event), cu.CUstream(stream)), "recording an event")


def event_synchronize(event: int) -> None:
    cu = _cu()
    check(cu.cuEventSynchronize(cu.CUevent(event)), "waiting for an event")


def event_query(event: int) -> bool:
    """Whether the work before the event's record has completed."""
    cu = _cu()
    err = cu.cuEventQuery(cu.CUevent(event))
    err = err[0] if isinstance(err, tuple) else err
    if _error_name(err) == "CUDA_ERROR_NOT_READY":
        return False
    check(err, "cuEventQuery")
    return True


def stream_wait_event(stream: int, event: int) -> None:
    cu = _cu()
    check(cu.cuStreamWaitEvent(cu.CUstream(stream), cu.CUevent(event), 0),
          "making a stream wait for an event")


def event_elapsed_ms(start: int, end: int) -> float:
    """Milliseconds between two recorded events."""
    cu = _cu()
    (ms,) = check(cu.cuEventElapsedTime(cu.CUevent(start), cu.CUevent(end)),
                  "measuring the time between two events")
    return float(ms)


def device_attribute(index: int, name: str) -> int:
    """``CU_DEVICE_ATTRIBUTE_<name>`` of device ``index``; AttributeError for a name the driver
    does not have."""
    _init()
    cu = _cu()
    code = getattr(cu.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", None)
    if code is None:
        raise AttributeError(f"the CUDA driver has no device attribute {name!r}")
    (dev,) = check(cu.cuDeviceGet(index), f"cuDeviceGet({index})")
    (v,) = check(cu.cuDeviceGetAttribute(code, dev), f"reading {name}")
    return int(v)


def device_uuid(index: int) -> str:
    """``GPU-xxxxxxxx-xxxx-...`` of device ``index``."""
    cu = _cu()
    (dev,) = check(cu.cuDeviceGet(index), f"cuDeviceGet({index})")
    fn = getattr(cu, "cuDeviceGetUuid_v2", None) or cu.cuDeviceGetUuid
    (u,) = check(fn(dev), "cuDeviceGetUuid")
    b = bytes(u.bytes)
    h = b.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
