"""Device memory: one allocation on the GPU, or in the simulator's host memory.

A device array (``devicearray.py``) is a view of an :class:`Allocation`. Made outside
simulation, an allocation is GPU memory (``cuMemAlloc``, freed with its last array) or memory
another library owns (wrapped by ``as_cuda_array``, which keeps the owner alive). Made under
``simulate()`` (or with ``THREADTILE_SIMULATE`` set), it is a NumPy buffer on the host: the
*simulated device memory*, which the simulator's kernels read and write in place.

Simulated allocations are listed by address, so that a ``__cuda_array_interface__`` that points
into one (a device array of the simulator seen through another object, as numba's
``ForeignArray`` does) can be resolved back to its host memory: :func:`simulated_view`.
Their addresses are real host addresses, aligned to 256 bytes as ``cuMemAlloc``'s are.
"""

from __future__ import annotations

import bisect
import ctypes
import operator
import threading
import weakref

import numpy as np

from . import driver

__all__ = ["Allocation", "ALIGN", "extent", "find_simulated", "simulated_view", "host_array",
           "c_strides", "f_strides", "contiguous", "index_geometry"]

ALIGN = 256  # cuMemAlloc's alignment; the simulated memory keeps it (vectorised loads rely on it)


class Allocation:
    """One block of device memory that device arrays view (numba's ``gpu_data``).

    ``ptr``: its address (0 for an empty one); ``nbytes``; ``device``: the CUDA ordinal (-1
    unknown, 0 for simulated memory); ``host``: for simulated memory the NumPy ``uint8`` array
    that holds it, else None; ``owner``: the object whose memory this is when another library
    allocated it (kept alive here).
    """

    __slots__ = ("ptr", "nbytes", "device", "host", "owner", "_finalizer", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, device: int, host=None, owner=None):
        self.ptr = int(ptr)
        self.nbytes = int(nbytes)
        self.device = int(device)
        self.host = host
        self.owner = owner
        self._finalizer = None

    @classmethod
    def gpu(cls, nbytes: int, device: int | None = None) -> Allocation:
        """``nbytes`` of GPU memory on ``device`` (the current one when None), freed when the
        allocation is garbage-collected."""
        dev = driver.current_index() if device is None else int(device)
        driver.ensure_device(dev)
        ptr = driver.mem_alloc(nbytes)
        out = cls(ptr, nbytes, dev)
        if ptr:
            out._finalizer = weakref.finalize(out, driver.mem_free, ptr)
        return out

    @classmethod
    def simulated(cls, nbytes: int) -> Allocation:
        """``nbytes`` of the simulator's device memory (host memory, uninitialised like
        ``cuMemAlloc``'s), listed for :func:`find_simulated`."""
        nbytes = int(nbytes)
        if nbytes <= 0:
            return cls(0, 0, 0, host=np.empty(0, np.uint8))
        raw = np.empty(nbytes + ALIGN, np.uint8)
        skip = -raw.ctypes.data % ALIGN
        host = raw[skip:skip + nbytes]
        out = cls(host.ctypes.data, nbytes, 0, host=host)
        _register(out)
        return out

    @property
    def is_simulated(self) -> bool:
        """Whether this is the simulator's (host) memory."""
        return self.host is not None

    @property
    def device_pointer(self) -> int:
        """The address, as numba's ``MemoryPointer.device_pointer``."""
        return self.ptr

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        """The address as a ``ctypes.c_void_p`` (None for an empty allocation, as numba's)."""
        return ctypes.c_void_p(self.ptr or None)

    def __repr__(self) -> str:
        kind = "simulated" if self.is_simulated else f"device {self.device}"
        return f"<Allocation {self.nbytes} bytes at 0x{self.ptr:x}, {kind}>"


# -- the simulated allocations, by address ---------------------------------------------------------

_lock = threading.Lock()
_starts: list[int] = []  # sorted addresses of the live simulated allocations
_live: dict[int, weakref.ref] = {}


def _register(a: Allocation) -> None:
    with _lock:
        bisect.insort(_starts, a.ptr)
        _live[a.ptr] = weakref.ref(a)
    weakref.finalize(a, _unregister, a.ptr)


def _unregister(ptr: int) -> None:
    with _lock:
        ref = _live.get(ptr)
        if ref is not None and ref() is None:
            del _live[ptr]
            i = bisect.bisect_left(_starts, ptr)
            if i < len(_starts) and _starts[i] == ptr:
                del _starts[i]


def find_simulated(ptr: int) -> Allocation | None:
    """The live simulated allocation that holds address ``ptr``, or None."""
    with _lock:
        i = bisect.bisect_right(_starts, int(ptr)) - 1
        if i < 0:
            return None
        a = _live[_starts[i]]()
    if a is None or not a.ptr <= ptr < a.ptr + a.nbytes:
        return None
    return a


def extent(shape: tuple, strides: tuple, itemsize: int) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` that an array of this geometry touches, relative to its first
    element's address (``lo`` is negative where a stride is); ``(0, 0)`` when it is empty."""
    if any(n == 0 for n in shape):
        return 0, 0
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + itemsize
    return lo, hi


def host_array(mem: Allocation, ptr: int, shape: tuple, strides: tuple, dtype) -> np.ndarray:
    """The NumPy view of simulated allocation ``mem`` that an array at address ``ptr`` with
    this geometry is."""
    dtype = np.dtype(dtype)
    if any(n == 0 for n in shape):
        return np.empty(shape, dtype)  # no element: nothing to share
    lo, hi = extent(shape, strides, dtype.itemsize)
    off = int(ptr) - mem.ptr
    if off + lo < 0 or off + hi > mem.nbytes:
        raise ValueError(f"an array of shape {shape} and strides {strides} at 0x{ptr:x} reaches "
                         f"past its simulated allocation ({mem.nbytes} bytes at 0x{mem.ptr:x})")
    return np.ndarray(shape, dtype, buffer=mem.host, offset=off, strides=strides)


def simulated_view(obj) -> np.ndarray | None:
    """The host memory behind ``obj`` when it lives in the simulator's device memory, as a
    NumPy view that writes through; None for anything else.

    ``obj`` is a threadtile device array made under simulation, or any object whose
    ``__cuda_array_interface__`` points into a live simulated allocation (numba's
    ``ForeignArray`` around one, say). A NumPy array (mapped and managed arrays among them) is
    host memory already and gives None: it is taken as it is.
    """
    mem = getattr(obj, "gpu_data", None)
    if isinstance(mem, Allocation):  # a threadtile device array
        return obj.host_view() if mem.is_simulated else None
    if isinstance(obj, np.ndarray):
        return None
    try:
        cai = obj.__cuda_array_interface__
    except Exception:  # noqa: BLE001  (no interface, or a property that raises)
        return None
    return _view_of_interface(cai)


def _view_of_interface(cai: dict) -> np.ndarray | None:
    ptr = int(cai["data"][0] or 0)
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = c_strides(shape, dtype.itemsize)
    strides = tuple(int(s) for s in strides)
    if ptr == 0:
        return np.empty(shape, dtype) if any(n == 0 for n in shape) else None
    mem = find_simulated(ptr)
    if mem is None:
        return None
    return host_array(mem, ptr, shape, strides, dtype)


# -- geometry ------------------------------------------------------------------------------------

def c_strides(shape: tuple, itemsize: int) -> tuple:
    """The byte strides of a C-contiguous array of ``shape``."""
    out, acc = [], itemsize
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def f_strides(shape: tuple, itemsize: int) -> tuple:
    """The byte strides of a Fortran-contiguous array of ``shape``."""
    return tuple(reversed(c_strides(tuple(reversed(shape)), itemsize)))


def contiguous(shape: tuple, strides: tuple, itemsize: int, order: str = "C") -> bool:
    """NumPy's (relaxed) contiguity: axes of length 1 may have any stride; empty arrays are."""
    if any(n == 0 for n in shape):
        return True
    pairs = zip(reversed(shape), reversed(strides)) if order == "C" else zip(shape, strides)
    acc = itemsize
    for n, s in pairs:
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def index_geometry(shape: tuple, strides: tuple, key) -> tuple[int, tuple, tuple, bool]:
    """``(byte offset, shape, strides, is_element)`` of ``a[key]`` for an array of this
    geometry: integers, slices, ``...`` and ``None``, with NumPy's rules and errors."""
    key = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    ellipses = sum(1 for k in key if k is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{real} were indexed")
    fill = (slice(None),) * (ndim - real)
    if ellipses:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + fill + key[i + 1:]
    else:
        key = key + fill
    off, out_shape, out_strides, axis = 0, [], [], 0
    element = not ellipses and real == ndim
    for k in key:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            element = False
            continue
        n, s = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            off += start * s if length else 0
            out_shape.append(length)
            out_strides.append(s * step)
            element = False
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError("device arrays take integers, slices (`:`), ellipsis (`...`) "
                                 f"and None as indices, not {type(k).__name__}; copy_to_host() "
                                 "for NumPy's other indexing") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            off += (i % n) * s
        axis += 1
    return off, tuple(out_shape), tuple(out_strides), element
