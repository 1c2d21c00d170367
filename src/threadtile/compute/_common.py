"""What every algorithm does first: decide where it runs, bind its inputs (arrays to pointers
on the GPU, to NumPy views on the host), check sizes and types, and handle the temporary
storage convention of cuda.compute's ``make_*`` objects."""

from __future__ import annotations

import numpy as np

from ..runtime.mode import requested
from . import device
from .host import HostArray, host_array
from .iterators import ArrayInput, IteratorBase, TransformIterator, as_input
from .operators import type_of

__all__ = ["Call", "QUERY"]

#: ``temp_storage`` value asking an algorithm for the bytes it needs instead of running
QUERY = object()


def _arrays_of(x) -> list:
    if isinstance(x, TransformIterator):
        return _arrays_of(x.base)
    if isinstance(x, ArrayInput):
        return [x.array]
    if isinstance(x, IteratorBase):
        return []
    return [x]


class Call:
    """One algorithm call: on the host or the GPU, its stream, its arrays' copy-backs."""

    def __init__(self, name: str, args: list, stream, temp_storage=None):
        self.name = name
        arrays = [a for x in args if x is not None for a in _arrays_of(x)]
        self.host = requested() or (bool(arrays) and all(isinstance(a, np.ndarray)
                                                         for a in arrays))
        self.temp_storage = temp_storage
        self._backs: list[HostArray] = []
        self.frameworks: list = []
        self._stream_arg = stream
        self.stream = 0

    def start(self) -> None:
        if not self.host:
            self.stream = device.resolve_stream(self._stream_arg, self.frameworks)

    # -- arrays --------------------------------------------------------------------------------

    def output(self, a, what: str):
        """An output array: ``(HostArray, dtype)`` on the host, ``(pointer, dtype, size)`` on
        the GPU."""
        if isinstance(a, IteratorBase):
            raise TypeError(f"{self.name}: {what} must be an array (output iterators are not "
                            "supported)")
        if self.host:
            h = host_array(a, what)
            self._backs.append(h)
            return h, h.view.dtype, h.view.size
        ptr, dt, size, fw = device.device_array_info(a, what)
        self.frameworks.append(fw)
        return ptr, dt, size

    def input(self, x, what: str) -> IteratorBase:
        """An input (array or iterator) bound for where the call runs."""
        inp = as_input(x)
        self._bind(inp, what)
        return inp

    def _bind(self, inp: IteratorBase, what: str) -> None:
        if isinstance(inp, TransformIterator):
            self._bind(inp.base, what)
        elif isinstance(inp, ArrayInput):
            if self.host:
                h = host_array(inp.array, what)
                inp.host_view = h.view
                inp.dtype = h.view.dtype
                inp.size = h.view.size
            else:
                ptr, dt, size, fw = device.device_array_info(inp.array, what)
                self.frameworks.append(fw)
                inp.ptr, inp.dtype, inp.size = ptr, dt, size

    def finish(self) -> None:
        for h in self._backs:
            h.done()

    # -- checks --------------------------------------------------------------------------------

    def count(self, num_items, *sized) -> int:
        """``num_items``, or the length of the first array among ``sized`` when None; each
        array must hold at least that many."""
        n = num_items
        if n is None:
            for _what, x in sized:
                size = getattr(x, "size", None) if isinstance(x, ArrayInput) else None
                if size is not None:
                    n = size
                    break
            if n is None:
                raise TypeError(f"{self.name}: num_items is needed when no input is an array")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"{self.name}: num_items must be an int >= 0, got {num_items!r}")
        n = int(n)
        for what, x in sized:
            size = x.size if isinstance(x, ArrayInput) else (
                x if isinstance(x, int) else None)
            if size is not None and size < n:
                raise ValueError(f"{self.name}: {what} holds {size} items, fewer than "
                                 f"num_items={n}")
        return n

    def temp(self, nbytes: int) -> int:
        """A pointer to ``nbytes`` of scratch: the caller's ``temp_storage`` where given."""
        ts = self.temp_storage
        if ts is None:
            return device.temp_storage(nbytes, self.stream)
        ptr, _dt, size, _fw = device.device_array_info(ts, "temp_storage")
        if size * _dt.itemsize < nbytes:
            raise ValueError(f"{self.name}: temp_storage holds {size * _dt.itemsize} bytes, "
                             f"this call needs {nbytes}")
        return ptr


def scalar_value(v, dtype: np.dtype, what: str):
    """``v`` (a NumPy array of one item, a NumPy scalar, a number) as a ``dtype`` scalar."""
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"{what} must hold one value, got {v.size}")
        v = v.reshape(-1)[0]
    if dtype.names is not None:
        if not (isinstance(v, np.void) and v.dtype == dtype):
            raise TypeError(f"{what} must be a record of dtype {dtype}, got {v!r}")
        return v
    type_of(dtype)
    return dtype.type(v)


class Builder:
    """cuda.compute's ``make_<algorithm>(...)`` object: ``obj(temp_storage, *args)`` runs the
    algorithm in the caller's ``temp_storage`` (a device array of bytes); with
    ``temp_storage=None`` it returns the bytes needed instead."""

    def __init__(self, fn, name: str):
        self.fn = fn
        self.name = name

    def __call__(self, temp_storage, *args, **kwargs):
        return self.fn(*args, temp_storage=QUERY if temp_storage is None else temp_storage,
                       **kwargs)

    def __repr__(self) -> str:
        return f"<threadtile.compute {self.name}>"
