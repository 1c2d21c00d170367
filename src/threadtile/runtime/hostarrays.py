"""numba's array API: ``to_device``, ``device_array(_like)``, ``pinned_array(_like)``,
``mapped_array(_like)``, ``managed_array``, ``as_cuda_array``, ``is_cuda_array``,
``from_cuda_array_interface``, ``auto_device``, ``pinned``, ``defer_cleanup``.

Each asks ``runtime/mode.py`` whether it runs in the simulator when it makes an array: then a
device array is a :class:`~threadtile.runtime.devicearray.SimDeviceArray` in the simulator's
(host) memory, else a :class:`~threadtile.runtime.devicearray.DeviceArray` in GPU memory (see
``devicearray.py`` for the two kinds and what happens when they meet).

Pinned, mapped and managed arrays are host NumPy arrays. On the GPU they are page-locked
(``cuMemHostAlloc``), mapped into the device's address space, or managed memory
(``cuMemAllocManaged``); a mapped or managed array is a :class:`MappedArray`, a NumPy array with
a ``__cuda_array_interface__`` that a kernel takes without a copy. In the simulator they are
ordinary host memory (the mapped and managed ones in the simulator's device memory, so that
their interface resolves there); a GPU launch refuses a simulated mapped array.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from . import driver, mode
from .arrays import _describe_cai, _where, register_handler
from .devicearray import (
    DeviceArray,
    array_class,
    as_cuda_array,
    auto_device,
    from_cuda_array_interface,
    is_cuda_array,
)
from .memory import Allocation, c_strides, contiguous, f_strides

__all__ = ["to_device", "device_array", "device_array_like", "pinned_array",
           "pinned_array_like", "mapped_array", "mapped_array_like", "managed_array",
           "MappedArray", "as_cuda_array", "is_cuda_array", "from_cuda_array_interface",
           "auto_device", "pinned", "defer_cleanup"]


# -- device arrays --------------------------------------------------------------------------------

def device_array(shape, dtype=np.float64, strides=None, order: str = "C",
                 stream=0) -> DeviceArray:
    """An uninitialised device array (``strides`` in bytes, else ``order``'s)."""
    return array_class()(shape, dtype, strides, order=order, stream=stream)


def _like(ary) -> tuple[tuple | None, str]:
    """The strides (None: the order's own) and order of a contiguous array like ``ary``: C or
    F as ``ary`` is, else the order of ``ary``'s strides (NumPy's ``empty_like`` rule)."""
    flags = ary.flags
    c, f = bool(flags["C_CONTIGUOUS"]), bool(flags["F_CONTIGUOUS"])
    order = "F" if f and not c else "C"
    if c or f or ary.ndim <= 1:
        return None, order
    strides = [0] * ary.ndim
    acc = np.dtype(ary.dtype).itemsize
    for axis in sorted(range(ary.ndim), key=lambda i: ary.strides[i]):
        strides[axis] = acc
        acc *= ary.shape[axis]
    return tuple(strides), order


def device_array_like(ary, stream=0) -> DeviceArray:
    """An uninitialised device array with ``ary``'s shape and dtype, contiguous in ``ary``'s
    order."""
    strides, order = _like(ary)
    return device_array(tuple(ary.shape), ary.dtype, strides, order, stream)


def to_device(obj, stream=0, copy: bool = True, to: DeviceArray | None = None) -> DeviceArray:
    """``obj`` on the device: a host array (or list, or number) copied to a new device array
    with the same strides (C- or F-contiguous, else ``ValueError``), or into ``to``. Device
    memory comes back as it is, except that an array of the simulator outside simulation is
    copied to the GPU, and a GPU array under simulation to the simulator's memory."""
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    dev, _ = auto_device(obj, stream=stream, copy=copy, user_explicit=True)
    if isinstance(dev, DeviceArray) and dev.simulated != mode.requested():
        moved = array_class()(dev.shape, dev.dtype, dev.strides if _dense(dev) else None,
                        stream=stream)
        if copy and dev.size:
            src = dev.host_view() if dev.simulated else dev.copy_to_host()
            moved.copy_to_device(np.asarray(src), stream=stream)
        return moved
    return dev


def _dense(a: DeviceArray) -> bool:
    return a.is_c_contiguous() or a.is_f_contiguous()


# -- host arrays: pinned, mapped, managed ---------------------------------------------------------

class MappedArray(np.ndarray):
    """A NumPy array in host memory that the device reads and writes too (numba's
    ``MappedNDArray`` and ``ManagedNDArray``): mapped or managed memory on the GPU, the
    simulator's device memory under simulation. Its ``__cuda_array_interface__`` gives its
    device address, so a kernel takes it without a copy."""

    __cuda_memory__ = True

    def __array_finalize__(self, obj) -> None:
        self._delta = getattr(obj, "_delta", 0)  # device address - host address
        self._owner = getattr(obj, "_owner", None)
        self.simulated = getattr(obj, "simulated", False)
        self.stream = getattr(obj, "stream", 0)

    @property
    def device_ctypes_pointer(self):
        import ctypes  # noqa: PLC0415

        return ctypes.c_void_p(self.ctypes.data + self._delta or None)

    @property
    def __cuda_array_interface__(self) -> dict:
        item = self.dtype.itemsize
        c = contiguous(self.shape, self.strides, item, "C")
        handle = getattr(self.stream, "handle", self.stream) or 0
        return {"shape": self.shape, "strides": None if c else self.strides,
                "typestr": self.dtype.str, "version": 3, "stream": int(handle) or None,
                "data": (self.ctypes.data + self._delta if self.size else 0, False)}

    def copy_to_host(self, ary=None, stream=0) -> np.ndarray:
        """A host copy (the memory is the host's already)."""
        if ary is None:
            return np.array(self, copy=True, subok=False)
        np.copyto(ary, self)
        return ary


class _Buffer:
    """Host memory from the driver, as a NumPy array's base: freed with its last array."""

    def __init__(self, ptr: int, nbytes: int, free):
        self.__array_interface__ = {"data": (ptr, False), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}
        weakref.finalize(self, free, ptr)


def _host_array(shape, dtype, strides, order, alloc, cls=np.ndarray) -> np.ndarray:
    """A NumPy array of this geometry in memory from ``alloc(nbytes) -> 1-d uint8 array``."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
    if strides is None:
        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {order!r}")
        strides = (c_strides if order == "C" else f_strides)(shape, dtype.itemsize)
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0 and n) + dtype.itemsize
    buf = alloc(hi - lo)
    return np.ndarray.__new__(cls, shape, dtype, buffer=buf, offset=-lo, strides=strides)


def _driver_buffer(alloc, free):
    def make(nbytes: int) -> np.ndarray:
        driver.ensure_device(driver.current_index())
        return np.asarray(_Buffer(alloc(nbytes), nbytes, free))
    return make


def pinned_array(shape, dtype=np.float64, strides=None, order: str = "C") -> np.ndarray:
    """An uninitialised NumPy array in page-locked host memory (ordinary memory under
    simulation)."""
    if mode.requested():
        return _host_array(shape, dtype, strides, order, lambda n: np.empty(n, np.uint8))
    return _host_array(shape, dtype, strides, order,
                       _driver_buffer(driver.mem_host_alloc, driver.mem_free_host))


def pinned_array_like(ary) -> np.ndarray:
    """:func:`pinned_array` with ``ary``'s shape and dtype, contiguous in its order."""
    strides, order = _like(ary)
    return pinned_array(tuple(ary.shape), ary.dtype, strides, order)


def _mapped(shape, dtype, strides, order, stream, alloc, free) -> MappedArray:
    if mode.requested():
        keep = []

        def simulated(nbytes: int) -> np.ndarray:
            keep.append(Allocation.simulated(nbytes))
            return keep[0].host

        out = _host_array(shape, dtype, strides, order, simulated, MappedArray)
        out.simulated = True
        out._owner = keep[0]  # listed while it lives, so that its interface resolves
    else:
        out = _host_array(shape, dtype, strides, order, _driver_buffer(alloc, free),
                          MappedArray)
    out.stream = stream
    return out


def mapped_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0,
                 portable: bool = False, wc: bool = False) -> MappedArray:
    """An uninitialised :class:`MappedArray` in page-locked host memory mapped into the
    device's address space (``portable``: for every context; ``wc``: write-combined)."""
    flags = driver.CU_MEMHOSTALLOC_DEVICEMAP | (driver.CU_MEMHOSTALLOC_PORTABLE if portable
                                                else 0) | (driver.CU_MEMHOSTALLOC_WRITECOMBINED
                                                           if wc else 0)
    out = _mapped(shape, dtype, strides, order, stream,
                  lambda n: driver.mem_host_alloc(n, flags), driver.mem_free_host)
    if not out.simulated and out.size:
        base = out.ctypes.data
        out._delta = driver.host_device_pointer(base) - base
    return out


def mapped_array_like(ary, stream=0, portable: bool = False, wc: bool = False) -> MappedArray:
    """:func:`mapped_array` with ``ary``'s shape and dtype, contiguous in its order."""
    strides, order = _like(ary)
    return mapped_array(tuple(ary.shape), ary.dtype, strides, order, stream, portable, wc)


def managed_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0,
                  attach_global: bool = True) -> MappedArray:
    """An uninitialised :class:`MappedArray` in managed memory, which host and device address
    alike (``attach_global``: any stream may use it)."""
    return _mapped(shape, dtype, strides, order, stream,
                   lambda n: driver.mem_alloc_managed(n, attach_global), driver.mem_free)


def _describe_mapped(a: MappedArray, index, name):
    if a.simulated:
        raise TypeError(f"{_where(index, name)} is a mapped array of the simulator (made "
                        "under threadtile.simulate()), and this launch runs on the GPU: launch "
                        "it under simulate(), or make the array outside it")
    return _describe_cai(a, index, name)


register_handler(MappedArray, _describe_mapped)


@contextlib.contextmanager
def pinned(*arrays):
    """Page-lock ``arrays`` for the block (numba's ``cuda.pinned``). Page-locking only makes
    copies faster; here the block runs with the arrays as they are."""
    yield


@contextlib.contextmanager
def defer_cleanup():
    """numba's context that defers freeing device memory; memory here is freed when its last
    array goes, so the block runs as it is."""
    yield
