"""numba's ``cuda.Reduce`` / ``cuda.reduce``: a binary function reduced over a 1-d array.

::

    sum_reduce = cuda.Reduce(lambda a, b: a + b)
    total = sum_reduce(arr)                    # a NumPy scalar of arr's dtype
    sum_reduce(arr, init=3)                    # reduce(f, arr, init), as functools does
    sum_reduce(d_arr, res=d_out)               # into d_out[0], on the device: returns None

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)

The function is compiled as a device function of a kernel threadtile generates for the
array's dtype (a ``def`` or a lambda; anything a device function may contain). It must be
associative: the kernel combines the items in a different grouping than a loop would (each
thread folds a strided run of items, then the block combines them pairwise in index order,
then one block combines the blocks' results), as numba's does. ``init`` is combined last, as
``f(partial, init)``.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .lang.thread import blockIdx, gridDim, shared, syncthreads, threadIdx
from .runtime.devicearray import DeviceArray, as_cuda_array
from .runtime.hostarrays import device_array, to_device

__all__ = ["Reduce", "reduce"]

_BLOCK = 256  # threads of a block, a power of two (the pairwise steps double)
_MAX_BLOCKS = 64  # blocks of the first pass: its partial results fit one block of the second


def _kernel(fn, dtype):
    @jit
    def reduce_blocks(arr, out, init, use_init):
        sm = shared.array(_BLOCK, dtype)
        tid = threadIdx.x
        n = arr.shape[0]
        start = blockIdx.x * _BLOCK
        stride = gridDim.x * _BLOCK
        i = start + tid
        if i < n:
            acc = arr[i]
            j = i + stride
            while j < n:
                acc = fn(acc, arr[j])
                j += stride
            sm[tid] = acc
        syncthreads()
        valid = min(_BLOCK, n - start)
        step = 1
        while step < _BLOCK:
            if tid % (2 * step) == 0 and tid + step < valid:
                sm[tid] = fn(sm[tid], sm[tid + step])
            step *= 2
            syncthreads()
        if tid == 0:
            if use_init:
                out[blockIdx.x] = fn(sm[0], init)
            else:
                out[blockIdx.x] = sm[0]

    return reduce_blocks


class Reduce:
    """A reduction by the binary function ``functor`` (numba's ``cuda.Reduce``)."""

    def __init__(self, functor) -> None:
        self._functor = functor
        self._kernels: dict = {}
        self.__name__ = getattr(functor, "__name__", "reduce")
        self.__doc__ = getattr(functor, "__doc__", None)

    def _compile(self, dtype: np.dtype):
        k = self._kernels.get(dtype)
        if k is None:
            k = self._kernels[dtype] = _kernel(self._functor, dtype.type)
        return k

    def __call__(self, arr, size: int | None = None, res=None, init=0, stream=0):
        """Reduce the 1-d array ``arr`` (a host or device array), its first ``size`` items
        where given. ``init`` (converted to ``arr``'s dtype) is the result of an empty array
        and combined with the others' last. With ``res`` (a device array) the result goes to
        ``res[0]`` and None is returned; else it is returned, a NumPy scalar."""
        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        if size is not None:
            arr = arr[:size]
        if isinstance(arr, np.ndarray):
            arr = to_device(arr, stream=stream)
        elif not isinstance(arr, DeviceArray):
            arr = as_cuda_array(arr)
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        if int(arr.shape[0]) < 1:
            if res is not None:
                res[:1].copy_to_device(np.array([init]), stream=stream)
                return None
            return init
        result = self.on_device(arr, init, True, stream)
        if res is not None:
            res[:1].copy_to_device(result, stream=stream)
            return None
        return result.copy_to_host(stream=stream)[0]

    def on_device(self, arr: DeviceArray, init, use_init: bool, stream=0) -> DeviceArray:
        """The reduction of the non-empty 1-d device array ``arr`` (with ``init`` where
        ``use_init``) as a device array of one item."""
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        n = int(arr.shape[0])
        kernel = self._compile(dtype)
        blocks = min(-(-n // _BLOCK), _MAX_BLOCKS)
        result = device_array(1, dtype, stream=stream)
        if blocks == 1:
            kernel[1, _BLOCK, stream](arr, result, init, use_init)
        else:
            partials = device_array(blocks, dtype, stream=stream)
            kernel[blocks, _BLOCK, stream](arr, partials, init, False)
            kernel[1, _BLOCK, stream](partials, result, init, use_init)
        return result


reduce = Reduce
