"""Device arrays: numba's ``DeviceNDArray``, in GPU memory or in the simulator's.

:class:`DeviceArray` is an n-d view of an :class:`~threadtile.runtime.memory.Allocation` with
numba's host-side surface: ``shape``, ``strides`` (bytes), ``dtype``, ``size``, ``ndim``,
``nbytes``, ``alloc_size``, ``flags``, ``stream``, ``gpu_data``; ``copy_to_host``,
``copy_to_device``, indexing and slicing (views; an element is copied to the host), assignment
(``d[1:] = 0``, ``d[:] = other``), ``reshape``, ``ravel``, ``view``, ``squeeze``, ``split``,
``T``/``transpose`` (a transposed *copy*, as numba's), ``bind``, ``__array__`` (a copy) and
``__cuda_array_interface__``.

Where it lives is decided when it is made (``hostarrays.py``: ``to_device``, ``device_array``...):

- outside simulation, a :class:`DeviceArray` in GPU memory: copies go through the driver
  (``runtime/driver.py``); an assignment to a strided view reads the bytes it spans, assigns on
  the host and writes them back (synchronously, as numba's assignment kernel on the default
  stream does);
- under ``simulate()`` or ``THREADTILE_SIMULATE``, a :class:`SimDeviceArray` in the
  simulator's device memory, which is host memory: the same methods, on NumPy views; the
  simulator's kernels read and write it in place (``host_view()``).

Mixing the two: a simulated array keeps working on the host after ``simulate()`` ends
(``copy_to_host``, slicing...), but a GPU launch refuses it with a ``TypeError`` that says how to
move it (``to_device(d.copy_to_host())``); a GPU array used by a simulated launch is copied to the
host and back around it, like a CUDA torch tensor. ``to_device`` and ``copy_to_device`` move data
between the two kinds in either direction.
"""

from __future__ import annotations

import operator

import numpy as np

from ..lang.records import record_of
from ..lang.types import scalar_of
from . import driver, mode, streams
from .arrays import ArgInfo, _describe_dlpack, _where, array_type, register_handler
from .memory import (
    Allocation,
    c_strides,
    contiguous,
    extent,
    f_strides,
    find_simulated,
    host_array,
    index_geometry,
)

__all__ = ["DeviceArray", "SimDeviceArray", "DeviceNDArray", "array_class", "auto_device",
           "from_array_like", "is_cuda_ndarray"]

_new = tuple.__new__

CONTIGUOUS_ERROR = ("Array contains non-contiguous buffer and cannot be transferred as a single "
                    "memory region. Please ensure contiguous buffer with numpy "
                    ".ascontiguousarray()")


class DeviceArray:
    """An n-d array in GPU memory (numba's ``DeviceNDArray``); see the module docstring.

    ``DeviceArray(shape, dtype, strides=None, order="C")`` allocates; ``ptr=`` wraps memory
    that ``owner`` (kept alive) owns instead. ``strides`` are in bytes, as NumPy's.
    """

    __slots__ = ("shape", "strides", "dtype", "size", "ndim", "nbytes", "ptr", "device",
                 "stream", "gpu_data", "_arginfo", "_host", "__weakref__")

    __cuda_memory__ = True  # numba's marks of its device arrays (is_device_memory)
    __cuda_ndarray__ = True
    simulated = False  # True for the simulator's device memory

    def __init__(self, shape, dtype=np.float64, strides=None, *, order: str = "C",
                 ptr: int | None = None, owner=None, device: int | None = None, stream=0):
        shape = _shape(shape)
        dtype = np.dtype(dtype)
        if strides is None:
            if order not in ("C", "F"):
                raise ValueError(f"order must be 'C' or 'F', got {order!r}")
            strides = (c_strides if order == "C" else f_strides)(shape, dtype.itemsize)
        else:
            strides = (int(strides),) if np.isscalar(strides) else tuple(int(s) for s in strides)
            if len(strides) != len(shape):
                raise ValueError(f"strides {strides} do not match the {len(shape)} dimensions "
                                 f"of shape {shape}")
        lo, hi = extent(shape, strides, dtype.itemsize)
        if ptr is None:
            mem = self._allocate(hi - lo, device)
            ptr = mem.ptr - lo if mem.ptr else 0
        else:
            mem = self._wrap_memory(int(ptr), lo, hi, owner, device)
        self._init(mem, int(ptr), shape, strides, dtype, stream)

    # -- where the memory is: the parts a SimDeviceArray replaces ---------------------------------

    @classmethod
    def _allocate(cls, nbytes: int, device) -> Allocation:
        return Allocation.gpu(nbytes, device)

    @classmethod
    def _wrap_memory(cls, ptr: int, lo: int, hi: int, owner, device) -> Allocation:
        dev = (driver.pointer_device(ptr) if ptr else -1) if device is None else int(device)
        return Allocation(ptr + lo if ptr else 0, hi - lo, dev, owner=owner)

    def _init(self, mem: Allocation, ptr: int, shape, strides, dtype, stream) -> None:
        self.gpu_data = mem
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        self.nbytes = self.size * dtype.itemsize
        self.device = mem.device
        self.stream = stream
        self._host = None
        self._arginfo = self._describe()

    def _describe(self) -> ArgInfo | None:
        """The launch description of a GPU array (None: kernels cannot take it)."""
        s = scalar_of(self.dtype) or record_of(self.dtype)
        item = self.dtype.itemsize
        if s is None or any(b % item for b in self.strides):
            return None
        el = tuple(b // item for b in self.strides)
        layout = "C" if contiguous(self.shape, self.strides, item) else "A"
        t, key = array_type(s, self.ndim, layout)
        return _new(ArgInfo, ("array", s, self.ndim, layout, self.ptr, self.shape, el, None,
                              None, self.device, key, t, (self.ptr, *self.shape, *el), None))

    def _read(self, lo: int, n: int, stream=0) -> np.ndarray:
        """A host copy of ``n`` bytes from ``ptr + lo``, once they are there."""
        buf = np.empty(n, np.uint8)
        if n:
            self._activate()
            driver.copy_dtoh(buf.ctypes.data, self.ptr + lo, n, driver.stream_handle(
                self._stream_for(stream)))
        return buf

    def _write(self, lo: int, buf: np.ndarray, stream=0) -> None:
        """Write the bytes of contiguous ``buf`` at ``ptr + lo``."""
        if buf.nbytes:
            self._activate()
            h = driver.stream_handle(self._stream_for(stream))
            driver.copy_htod(self.ptr + lo, buf.ctypes.data, buf.nbytes, h)
            if h:  # an async copy from pageable memory: `buf` may be freed on return
                driver.stream_synchronize(h)

    def _activate(self) -> None:
        driver.ensure_device(self.device if self.device >= 0 else driver.current_index())

    def _update(self, fn, overwrite: bool, stream=0) -> None:
        """Apply ``fn`` to a host view of this array and keep what it wrote. ``overwrite``: fn
        writes every element (then a dense array is not read first)."""
        lo, hi = extent(self.shape, self.strides, self.dtype.itemsize)
        if hi == lo:
            return
        dense = self.nbytes == hi - lo or 0 in self.strides
        buf = np.empty(hi - lo, np.uint8) if overwrite and dense else \
            self._read(lo, hi - lo, stream)
        fn(np.ndarray(self.shape, self.dtype, buffer=buf, offset=-lo, strides=self.strides))
        self._write(lo, buf, stream)

    def host_view(self) -> np.ndarray:
        """The NumPy view of a simulated array's memory; a GPU array has none."""
        raise TypeError("a DeviceArray in GPU memory has no host view: copy_to_host() it")

    # -- numba's surface -------------------------------------------------------------------------

    def _stream_for(self, stream):
        return stream if stream else self.stream

    def _derive(self, off: int, shape: tuple, strides: tuple, dtype=None,
                stream=None) -> DeviceArray:
        """A view of the same memory at byte offset ``off``."""
        out = object.__new__(type(self))
        out._init(self.gpu_data, self.ptr + off if self.ptr else 0, shape, strides,
                  self.dtype if dtype is None else np.dtype(dtype),
                  self.stream if stream is None else stream)
        return out

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def alloc_size(self) -> int:
        """The bytes this array's elements span (numba's ``alloc_size``)."""
        lo, hi = extent(self.shape, self.strides, self.dtype.itemsize)
        return hi - lo

    @property
    def device_ctypes_pointer(self):
        """The first element's address as a ``ctypes.c_void_p``."""
        import ctypes  # noqa: PLC0415

        return ctypes.c_void_p(self.ptr or None)

    def is_c_contiguous(self) -> bool:
        return contiguous(self.shape, self.strides, self.dtype.itemsize, "C")

    def is_f_contiguous(self) -> bool:
        return contiguous(self.shape, self.strides, self.dtype.itemsize, "F")

    @property
    def flags(self) -> dict:
        """``{"C_CONTIGUOUS": ..., "F_CONTIGUOUS": ...}`` (a dict, as numba's)."""
        return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        where = "simulated" if self.simulated else f"device={self.device}"
        return (f"<{type(self).__name__} shape={self.shape} dtype={self.dtype} {where} "
                f"ptr=0x{self.ptr:x}>")

    @property
    def __cuda_array_interface__(self) -> dict:
        stream = self.stream
        handle = driver.stream_handle(stream) if stream else 0
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": self.dtype.str,
            **({"descr": self.dtype.descr} if self.dtype.names is not None else {}),
            "data": (self.ptr if self.size else 0, False),
            "version": 3,
            "stream": handle or None,  # copies here are synchronous: nothing to wait for
        }

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if copy is False:
            raise ValueError("`copy=False` is not supported: a device array is always copied "
                             "to the host")
        out = self.copy_to_host()
        return out if dtype is None else out.astype(dtype)

    def _snapshot(self, stream=0) -> np.ndarray:
        """A host copy with this array's strides (over the bytes they span)."""
        lo, hi = extent(self.shape, self.strides, self.dtype.itemsize)
        if hi == lo:
            return np.empty(self.shape, self.dtype)
        return np.ndarray(self.shape, self.dtype, buffer=self._read(lo, hi - lo, stream),
                          offset=-lo, strides=self.strides)

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """Copy to a new NumPy array (with this array's strides) or into ``ary`` (same dtype
        and shape, axes of length 1 aside), and return it once the data is there."""
        if any(s < 0 for s in self.strides):
            raise NotImplementedError(f"D->H copy not implemented for negative strides: "
                                      f"{self.strides}")
        if ary is None:
            return self._snapshot(stream)
        _check_compatible(self, ary)
        np.copyto(ary, self._snapshot(stream).reshape(ary.shape))
        return ary

    def copy_to_device(self, ary, stream=0) -> None:
        """Overwrite this (contiguous) array with ``ary``: a host array of the same dtype and
        shape, or a device array (of either kind) of the same dtype, shape and layout."""
        if getattr(ary, "size", None) == 0:
            return
        core = _core(self)
        if not (core.is_c_contiguous() or core.is_f_contiguous()):
            raise ValueError(CONTIGUOUS_ERROR)
        other = device_source(ary)
        if other is not None:
            other_core = _core(other)
            if not (other_core.is_c_contiguous() or other_core.is_f_contiguous()):
                raise ValueError(CONTIGUOUS_ERROR)
            _check_compatible(core, other_core, strides=True)
            if not self.simulated and not other.simulated and core.nbytes:
                self._activate()
                driver.copy_dtod(core.ptr, other_core.ptr, core.nbytes,
                                 driver.stream_handle(self._stream_for(stream)))
                return
            src = other_core.host_view() if other.simulated else other_core._snapshot()
        else:
            src = np.asarray(_core(np.asarray(ary)),
                             order="C" if core.is_c_contiguous() else "F")
            _check_compatible(core, src)
            if not self.simulated and core.nbytes == core.alloc_size and \
                    src.strides == core.strides:  # the host bytes are the device bytes
                core._write(core._first_byte(), src.ravel(order="K").view(np.uint8), stream)
                return
        core._update(lambda v: np.copyto(v, src.reshape(v.shape)), True, stream)

    def __getitem__(self, item):
        return self.getitem(item)

    def getitem(self, item, stream=0):
        """``self[item]``: a view for slices, the element (a NumPy scalar) for integers."""
        off, shape, strides, element = index_geometry(self.shape, self.strides, item)
        view = self._derive(off, shape, strides, stream=self._stream_for(stream))
        return view._snapshot()[()] if element else view

    def __setitem__(self, key, value) -> None:
        self.setitem(key, value)

    def setitem(self, key, value, stream=0) -> None:
        """``self[key] = value``: a number, a host array or a device array, broadcast as
        NumPy broadcasts (``value`` has at most as many dimensions as ``self[key]``)."""
        off, shape, strides, _ = index_geometry(self.shape, self.strides, key)
        lhs = self._derive(off, shape, strides)
        other = device_source(value)
        if other is not None:
            rhs = other.host_view() if other.simulated else other._snapshot()
        else:
            rhs = np.asarray(value)
        if rhs.ndim > lhs.ndim:
            raise ValueError(f"Can't assign {rhs.ndim}-D array to {lhs.ndim}-D self")
        rshape = (1,) * (lhs.ndim - rhs.ndim) + rhs.shape
        for i, (n, r) in enumerate(zip(lhs.shape, rshape)):
            if r != 1 and r != n:
                raise ValueError(f"Can't copy sequence with size {r} to array axis {i} with "
                                 f"dimension {n}")
        lhs._update(lambda v: np.copyto(v, rhs.reshape(rshape), casting="unsafe"), True,
                    stream)

    def bind(self, stream=0) -> DeviceArray:
        """The same array with ``stream`` as the default of its copies."""
        return self._derive(0, self.shape, self.strides, stream=stream)

    def reshape(self, *newshape, order: str = "C") -> DeviceArray:
        """A view with another shape (one ``-1`` is inferred); the array must be contiguous in
        ``order`` ("C", "F", or "A": the array's own), else ``NotImplementedError``."""
        if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)):
            newshape = newshape[0]
        newshape = tuple(operator.index(n) for n in newshape)
        if order not in ("C", "F", "A"):
            raise ValueError("order not C|F|A")
        if newshape == self.shape:
            return self._derive(0, self.shape, self.strides)
        unknown = [i for i, n in enumerate(newshape) if n < 0]
        if len(unknown) > 1:
            raise ValueError("can only specify one unknown dimension")
        if unknown:
            known = int(np.prod([n for n in newshape if n >= 0], dtype=np.int64))
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape "
                                 f"{newshape}")
            i = unknown[0]
            newshape = newshape[:i] + (self.size // known,) + newshape[i + 1:]
        if int(np.prod(newshape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {newshape}")
        if order == "A":
            order = "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        if not contiguous(self.shape, self.strides, self.itemsize, order):
            raise NotImplementedError("operation requires copying")
        make = c_strides if order == "C" else f_strides
        return self._derive(self._first_byte(), newshape, make(newshape, self.itemsize))

    def _first_byte(self) -> int:
        return extent(self.shape, self.strides, self.itemsize)[0]

    def ravel(self, order: str = "C", stream=0) -> DeviceArray:
        """The contiguous array as one dimension (a view), else ``NotImplementedError``."""
        if order not in ("C", "F", "A"):
            raise ValueError("order not C|F|A")
        if (order in "CA" and self.is_c_contiguous()) or (order in "FA" and
                                                          self.is_f_contiguous()):
            return self._derive(self._first_byte(), (self.size,), (self.itemsize,),
                                stream=self._stream_for(stream))
        raise NotImplementedError("ravel on non-contiguous array")

    def view(self, dtype) -> DeviceArray:
        """The same memory as ``dtype`` (a different item size needs a C-contiguous array and
        changes the last dimension)."""
        dtype = np.dtype(dtype)
        shape, strides = list(self.shape), list(self.strides)
        if dtype.itemsize != self.itemsize:
            if not self.is_c_contiguous():
                raise ValueError("To change to a dtype of a different size, the array must be "
                                 "C-contiguous")
            if not shape:
                raise ValueError("Changing the dtype of a 0d array is only supported if the "
                                 "itemsize is unchanged")
            shape[-1], rem = divmod(shape[-1] * self.itemsize, dtype.itemsize)
            if rem:
                raise ValueError("When changing to a larger dtype, its size must be a divisor "
                                 "of the total size in bytes of the last axis of the array.")
            strides[-1] = dtype.itemsize
        return self._derive(0, tuple(shape), tuple(strides), dtype=dtype)

    def squeeze(self, axis=None, stream=0) -> DeviceArray:
        """A view without the axes of length 1 (or the given ones, which must have length 1)."""
        if axis is None:
            keep = [i for i, n in enumerate(self.shape) if n != 1]
        else:
            axes = {a % self.ndim for a in ((axis,) if np.isscalar(axis) else axis)}
            if any(self.shape[a] != 1 for a in axes):
                raise ValueError("cannot select an axis to squeeze out which has size not equal "
                                 "to one")
            keep = [i for i in range(self.ndim) if i not in axes]
        return self._derive(0, tuple(self.shape[i] for i in keep),
                            tuple(self.strides[i] for i in keep),
                            stream=self._stream_for(stream))

    def split(self, section: int, stream=0) -> list:
        """Views of consecutive pieces of ``section`` elements (the last may be shorter) of a
        1-d array of unit stride."""
        if self.ndim != 1:
            raise ValueError("only support 1d array")
        if self.strides[0] != self.itemsize:
            raise ValueError("only support unit stride")
        return [self._derive(b * self.itemsize, (min(b + section, self.size) - b,),
                             self.strides, stream=self._stream_for(stream))
                for b in range(0, self.size, section)]

    @property
    def T(self) -> DeviceArray:
        return self.transpose()

    def transpose(self, axes=None) -> DeviceArray:
        """The transpose of a 2-d array as a new C-contiguous array (numba's device arrays copy
        here rather than return a strided view)."""
        if axes is not None and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != {0, 1}:
            raise ValueError(f"invalid axes list {axes!r}")
        out = type(self)(self.shape[::-1], self.dtype, stream=self.stream)
        src = self.host_view() if self.simulated else self._snapshot()
        out._update(lambda v: np.copyto(v, src.T), True)
        return out


class SimDeviceArray(DeviceArray):
    """A :class:`DeviceArray` in the simulator's device memory (host memory): made by the
    host API under ``simulate()``. Every method works outside simulation too; a GPU launch
    refuses it."""

    __slots__ = ()
    simulated = True

    @classmethod
    def _allocate(cls, nbytes: int, device) -> Allocation:
        return Allocation.simulated(nbytes)

    @classmethod
    def _wrap_memory(cls, ptr: int, lo: int, hi: int, owner, device) -> Allocation:
        if not ptr:
            return Allocation.simulated(0)
        mem = find_simulated(ptr + lo) if hi > lo else find_simulated(ptr)
        if mem is None:
            raise ValueError(f"0x{ptr:x} is not in the simulator's device memory")
        return mem

    def _describe(self) -> None:
        return None

    def host_view(self) -> np.ndarray:
        """The NumPy view of this array's memory: writes go to the array."""
        h = self._host
        if h is None:
            h = self._host = host_array(self.gpu_data, self.ptr, self.shape, self.strides,
                                        self.dtype)
        return h

    def _read(self, lo: int, n: int, stream=0) -> np.ndarray:
        off = self.ptr + lo - self.gpu_data.ptr
        return self.gpu_data.host[off:off + n].copy()

    def _update(self, fn, overwrite: bool, stream=0) -> None:
        if self.size:
            fn(self.host_view())


DeviceNDArray = DeviceArray  # numba's name, for isinstance checks


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    out = []
    for n in shape:
        if not isinstance(n, (int, np.integer)):
            raise TypeError(f"shape elements must be integers, got {type(n).__name__}")
        if n < 0:
            raise ValueError(f"negative dimensions are not allowed: {tuple(shape)}")
        out.append(int(n))
    return tuple(out)


def _core(a):
    """``a`` with its broadcast (stride 0) axes cut to length 1: the memory a copy really
    moves (an array still, so that a 1-d broadcast array stays one)."""
    if not a.strides or not a.size or 0 not in a.strides:
        return a
    return a[tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)]


def _check_compatible(a, b, strides: bool = False) -> None:
    """numba's check before a copy: same dtype, same shape once axes of length 1 are gone
    (and the same strides between device arrays)."""
    if a.dtype != b.dtype:
        raise TypeError(f"incompatible dtype: {a.dtype} vs. {b.dtype}")
    sa = tuple(n for n in a.shape if n != 1)
    sb = tuple(n for n in b.shape if n != 1)
    if sa != sb:
        raise ValueError(f"incompatible shape: {a.shape} vs. {b.shape}")
    if strides and a.size:
        ta = tuple(s for n, s in zip(a.shape, a.strides) if n != 1)
        tb = tuple(s for n, s in zip(b.shape, b.strides) if n != 1)
        if ta != tb:
            raise ValueError(f"incompatible strides: {a.strides} vs. {b.strides}")


def device_source(obj) -> DeviceArray | None:
    """``obj`` as a device array when it is device memory (ours, or anything with
    ``__cuda_array_interface__``), else None (host data)."""
    if isinstance(obj, DeviceArray):
        return obj
    if isinstance(obj, np.ndarray) or not _has_cai(obj):
        return None
    return as_cuda_array(obj)


def _has_cai(obj) -> bool:
    try:
        return hasattr(obj, "__cuda_array_interface__")
    except Exception:  # noqa: BLE001  (a property that raises)
        return False


def array_class() -> type:
    """The class of the device arrays made now: :class:`SimDeviceArray` under simulation, else
    :class:`DeviceArray`."""
    return SimDeviceArray if mode.requested() else DeviceArray


def _is_device_memory(obj) -> bool:
    return bool(getattr(obj, "__cuda_memory__", False))


def auto_device(obj, stream=0, copy: bool = True, user_explicit: bool = False
                ) -> tuple[DeviceArray, bool]:
    """``(device array, whether it is new)``: device memory as it is (an object with only a
    ``__cuda_array_interface__`` wrapped), anything else (a NumPy array, a list, a number)
    copied to a new device array with its strides when ``copy``."""
    if isinstance(obj, DeviceArray) or (_is_device_memory(obj) and not isinstance(obj,
                                                                                  np.ndarray)):
        return obj, False
    if _is_device_memory(obj) or (not isinstance(obj, np.ndarray) and _has_cai(obj)):
        # a mapped or managed array, or another library's device array: its interface
        return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj), False
    a = np.asarray(obj)
    core = _core(a)
    if not (core.flags.c_contiguous or core.flags.f_contiguous):
        raise ValueError(CONTIGUOUS_ERROR)
    dev = array_class()(a.shape, a.dtype, a.strides, stream=stream)
    if copy:
        dev.copy_to_device(a, stream=stream)
    return dev, True


# -- the CUDA array interface -----------------------------------------------------------------

def is_cuda_array(obj) -> bool:
    """Whether ``obj`` has a ``__cuda_array_interface__`` (device arrays of either kind do)."""
    return _has_cai(obj)


def from_cuda_array_interface(desc: dict, owner=None, sync: bool = True) -> DeviceArray:
    """A device array viewing the memory a ``__cuda_array_interface__`` dict describes; it
    keeps ``owner`` alive. The interface's stream becomes the array's (an external stream),
    and is synchronized first when ``sync``. Memory of the simulator gives a simulated array."""
    if desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    shape = tuple(int(n) for n in desc["shape"])
    dtype = np.dtype(desc["typestr"])
    strides = desc.get("strides")
    strides = tuple(int(s) for s in strides) if strides is not None else None
    ptr = int(desc["data"][0] or 0)
    handle = desc.get("stream")
    stream = streams.external_stream(handle) if handle else 0
    if sync and stream:
        stream.synchronize()
    if ptr and find_simulated(ptr) is not None:
        return SimDeviceArray(shape, dtype, strides, ptr=ptr, owner=owner, stream=stream)
    if not ptr:
        return array_class()(shape, dtype, strides, stream=stream)
    return DeviceArray(shape, dtype, strides, ptr=ptr, owner=owner, stream=stream)


def as_cuda_array(obj, sync: bool = True) -> DeviceArray:
    """A device array sharing ``obj``'s memory (``__cuda_array_interface__``, or DLPack on a
    CUDA device); it keeps ``obj`` alive. A threadtile device array comes back as it is."""
    if isinstance(obj, DeviceArray):
        return obj
    if _has_cai(obj):
        return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj, sync=sync)
    if _has(obj, "__dlpack__") and _has(obj, "__dlpack_device__"):
        info = _describe_dlpack(obj, None, None)
        item = info.dtype.numpy.itemsize
        return DeviceArray(info.shape, info.dtype.numpy, tuple(s * item for s in info.strides),
                           ptr=info.ptr, owner=obj,
                           device=info.device if info.device >= 0 else None)
    raise TypeError(f"{type(obj).__name__} is not a device array (it has neither "
                    "__cuda_array_interface__ nor __dlpack__)")


def _has(obj, attr: str) -> bool:
    try:
        return hasattr(obj, attr)
    except Exception:  # noqa: BLE001
        return False


def from_array_like(ary, stream=0) -> DeviceArray:
    """An uninitialised device array with ``ary``'s shape, strides and dtype."""
    return array_class()(tuple(ary.shape), ary.dtype, tuple(ary.strides), stream=stream)


def is_cuda_ndarray(obj) -> bool:
    """Whether ``obj`` is a device array of this kind (numba's ``is_cuda_ndarray``)."""
    return bool(getattr(obj, "__cuda_ndarray__", False))


# -- kernel arguments ---------------------------------------------------------------------------

def _describe_gpu(a: DeviceArray, index, name) -> ArgInfo:
    info = a._arginfo
    if info is None:
        raise TypeError(f"{_where(index, name)} has dtype {a.dtype} or strides {a.strides} "
                        "that kernels do not take (supported: bool, int8-64, uint8-64, float16, "
                        "bfloat16, float32, float64, strides a multiple of the item size)")
    return info


def _describe_simulated(a: SimDeviceArray, index, name) -> ArgInfo:
    raise TypeError(f"{_where(index, name)} is a device array of the simulator (made under "
                    "threadtile.simulate() or THREADTILE_SIMULATE): it lives in host memory, and "
                    "this launch runs on the GPU. Launch it under simulate(), or copy it to the "
                    "GPU: threadtile.to_device(a.copy_to_host())")


register_handler(DeviceArray, _describe_gpu)
register_handler(SimDeviceArray, _describe_simulated)
