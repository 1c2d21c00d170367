"""Kernel arguments: what each launch argument is (``describe``).

``describe`` runs once per argument per launch, so it is the hot path of a launch. It finds a
handler by the argument's *exact* type in a dict (one lookup, no isinstance chain); the first
object of a new type goes through the slow classification below and registers its handler:

1. ``torch.Tensor`` (torch is never imported unless an argument's type comes from torch),
2. CuPy ``ndarray``, 3. our device arrays (``devicearray.py`` registers their handlers),
4. Python ``int`` / ``float`` / ``bool`` (-> int64 / float64 / bool, as in ``jit``'s typing),
5. NumPy scalars (their own dtype),
6. anything with ``__cuda_array_interface__`` (v2/v3; numba, PyTorch, JAX, CuPy...; the stream
   it names is synchronized first, numba's rule),
7. anything with ``__dlpack__`` + ``__dlpack_device__`` on a CUDA device (read through
   ``cuda.core``'s ``StridedMemoryView``, which parses the capsule and keeps it alive),
8. NumPy ``ndarray`` on the host: described here without touching the GPU; the launcher copies it
   to the device before the launch and back after it (and warns, once per call site).

Host-only arrays that are not NumPy (a CPU torch tensor, a CPU DLPack array) are a ``TypeError``
saying how to move them.

Cost: one dict lookup plus the handler; a torch tensor costs six attribute reads and one tuple
(numbers in ``launcher.py``'s docstring). A ``DeviceArray`` carries its ``ArgInfo``
ready-made. ``describe_all`` describes a whole argument list without a call per argument.
"""

from __future__ import annotations

import collections
import sys
import threading

import numpy as np

from ..lang.records import record_of
from ..lang.types import (
    ArrayType,
    Scalar,
    TupleType,
    Type,
    bool_,
    complex128,
    float64,
    int64,
    scalar_of,
)
from . import driver

__all__ = ["ArgInfo", "HOST", "describe", "describe_all", "describe_host", "type_key",
           "array_type", "HostArrayWarning", "register_handler", "kernel_type"]


class HostArrayWarning(UserWarning):
    """A NumPy (host) array was passed to a kernel: it is copied to the GPU and back around the
    launch, which costs far more than the kernel. Move it once with ``to_device``."""


ArgInfo = collections.namedtuple(
    "ArgInfo",
    "kind dtype ndim layout ptr shape strides value writeback device key type flat framework")
ArgInfo.__doc__ = """What the launcher needs to know about one kernel argument.

kind: ``'array'`` or ``'scalar'``. dtype: a threadtile :class:`Scalar`. ndim: rank (0 for
scalars). layout: ``'C'`` when C-contiguous, else ``'A'`` (scalars: ``''``). ptr: device
address (0 for a host array until the launcher copies it). shape, strides: tuples of ints,
strides in *elements*. value: the scalar value (None for arrays). writeback: the host NumPy array
to copy back after the launch, else None. device: CUDA device ordinal, -1 when unknown (and for
scalars), ``HOST`` (-2) for a host NumPy array.
key: a small int identifying ``type`` (cheap to hash: the jit's dispatch key). type: the kernel
type, an :class:`ArrayType` (global, writable) or a :class:`Scalar`. flat: the values the
launcher packs, ``(ptr, *shape, *strides)`` or ``(value,)``. framework: ``'torch'``, ``'cupy'``
or None (the launcher asks that framework for its current stream when none is given).
"""
_new = tuple.__new__
HOST = -2  # ArgInfo.device of a host NumPy array: the launcher copies it to the GPU and back

# -- type keys -----------------------------------------------------------------------------------

_KEYS: dict = {}
_KEYS_LOCK = threading.Lock()
_ARRAY_TYPES: dict = {}


def type_key(t) -> int:
    """A small int standing for kernel type ``t`` (equal types, equal keys), for fast dispatch
    keys: hashing a tuple of ints is much cheaper than hashing dataclasses."""
    k = _KEYS.get(t)
    if k is None:
        with _KEYS_LOCK:  # two threads must not give two new types the same number
            k = _KEYS.setdefault(t, len(_KEYS))
    return k


def array_type(dtype: Scalar, ndim: int, layout: str, readonly: bool = False
               ) -> tuple[ArrayType, int]:
    """The interned ``(ArrayType, key)`` for a global array (writable unless ``readonly``: a
    NumPy array whose ``flags.writeable`` is False, which kernels may read only)."""
    ent = _ARRAY_TYPES.get((dtype, ndim, layout, readonly))
    if ent is None:
        t = ArrayType(dtype, ndim, layout, readonly=readonly)
        ent = _ARRAY_TYPES.setdefault((dtype, ndim, layout, readonly), (t, type_key(t)))
    return ent


_INT_KEY = type_key(int64)
_FLOAT_KEY = type_key(float64)
_BOOL_KEY = type_key(bool_)
_COMPLEX_KEY = type_key(complex128)


def _c_strides(shape: tuple) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def _is_c_contiguous(shape: tuple, strides: tuple) -> bool:
    """NumPy's (relaxed) rule: axes of length 1 may have any stride; empty arrays qualify."""
    acc = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


def _where(index, name) -> str:
    if name is None and index is None:
        return "an argument"
    if name is None:
        return f"argument {index}"
    return f"argument {name!r}" + (f" (position {index})" if index is not None else "")


def _unsupported_dtype(dt, index, name) -> TypeError:
    if isinstance(dt, np.dtype) and not dt.isnative and scalar_of(dt.newbyteorder("=")):
        return TypeError(f"{_where(index, name)} has dtype {dt.str}, in non-native byte order, "
                         "which kernels do not read: convert it first, "
                         "a.astype(a.dtype.newbyteorder('='))")
    return TypeError(f"{_where(index, name)} has dtype {dt}, which kernels do not support "
                     "(supported: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, "
                     "complex64, complex128)")


def _scalar_for(dt, index, name) -> Scalar:
    s = _DTYPE_SCALARS.get(dt)
    if s is None:
        if getattr(dt, "names", None) is not None:
            # not cached: NumPy's dtypes call an aligned record and its packed twin equal
            s = record_of(dt)
            if s is None:
                raise _unsupported_dtype(dt, index, name)
            return s
        s = scalar_of(dt)
        if s is None:
            raise _unsupported_dtype(dt, index, name)
        _DTYPE_SCALARS[dt] = s
    return s


_DTYPE_SCALARS: dict = {}


# -- handlers ------------------------------------------------------------------------------------
# Each takes (obj, index, name) and returns an ArgInfo.

# torch dtype -> list indexed by ndim -> [entry for layout 'A', entry for layout 'C'], where an
# entry is (Scalar, ArrayType, key, layout). Nested lookups beat hashing a (dtype, ndim, bool)
# tuple per argument.
_TORCH: dict = {}


def _torch_entry(t, ndim: int, index, name):
    dt = t.dtype
    s = scalar_of(dt) or scalar_of(str(dt).removeprefix("torch."))
    if s is None:
        raise _unsupported_dtype(dt, index, name)
    by_ndim = _TORCH.setdefault(dt, [])
    while len(by_ndim) <= ndim:
        by_ndim.append(None)
    if by_ndim[ndim] is None:
        by_ndim[ndim] = [(s, *array_type(s, ndim, "A"), "A"), (s, *array_type(s, ndim, "C"), "C")]
    return by_ndim[ndim][bool(t.is_contiguous())]


def _describe_torch(t, index, name):
    # get_device() is -1 for CPU (and meta) tensors. A tensor on another accelerator type
    # (xpu, mps) would pass; checking t.is_cuda too costs ~5% of a launch for a case that a
    # CUDA machine does not have.
    dev = t.get_device()
    if dev < 0:
        kind = t.device.type
        raise _host_error(t, "a CPU torch.Tensor" if kind == "cpu" else
                          f"a torch.Tensor on {kind!r}", ".cuda()", index, name)
    shape = t.shape
    ndim = len(shape)
    try:
        ent = _TORCH[t.dtype][ndim][t.is_contiguous()]
    except (KeyError, IndexError, TypeError):
        ent = _torch_entry(t, ndim, index, name)
    ptr = t.data_ptr()
    strides = t.stride()
    return _new(ArgInfo, ("array", ent[0], ndim, ent[3], ptr, shape, strides, None, None, dev,
                          ent[2], ent[1], (ptr,) + shape + strides, "torch"))


def _describe_cupy(a, index, name):
    s = _scalar_for(a.dtype, index, name)
    shape = a.shape
    item = a.itemsize
    strides = tuple(x // item for x in a.strides)
    if any(x % item for x in a.strides):
        raise TypeError(f"{_where(index, name)} has strides {a.strides} that are not a "
                        f"multiple of its item size {item}")
    layout = "C" if a.flags.c_contiguous else "A"
    t, key = array_type(s, a.ndim, layout)
    ptr = a.data.ptr
    return _new(ArgInfo, ("array", s, a.ndim, layout, ptr, shape, strides, None, None,
                          a.device.id, key, t, (ptr, *shape, *strides), "cupy"))


def _describe_int(v, index, name):
    return _new(ArgInfo, ("scalar", int64, 0, "", 0, (), (), v, None, -1, _INT_KEY, int64,
                          (v,), None))


def _describe_float(v, index, name):
    return _new(ArgInfo, ("scalar", float64, 0, "", 0, (), (), v, None, -1, _FLOAT_KEY,
                          float64, (v,), None))


def _describe_complex(v, index, name):
    return _new(ArgInfo, ("scalar", complex128, 0, "", 0, (), (), v, None, -1, _COMPLEX_KEY,
                          complex128, (v.real, v.imag), None))


def _describe_bool(v, index, name):
    return _new(ArgInfo, ("scalar", bool_, 0, "", 0, (), (), v, None, -1, _BOOL_KEY, bool_,
                          (v,), None))


def _np_scalar_handler(tp: type, index, name):
    """A handler for NumPy scalar type ``tp`` with its Scalar and key bound (hashing a Scalar
    dataclass per launch would cost more than the rest of describe)."""
    s = _scalar_for(np.dtype(tp), index, name)
    key = type_key(s)
    if s.name == "bfloat16":
        def handler(v, index, name):
            return _new(ArgInfo, ("scalar", s, 0, "", 0, (), (), v, None, -1, key, s,
                                  (bf16_bits(v),), None))
    elif s.is_complex:
        def handler(v, index, name):
            return _new(ArgInfo, ("scalar", s, 0, "", 0, (), (), v, None, -1, key, s,
                                  (v.real, v.imag), None))
    else:
        def handler(v, index, name):
            return _new(ArgInfo, ("scalar", s, 0, "", 0, (), (), v, None, -1, key, s, (v,),
                                  None))
    return handler


def record_array(rec: np.void) -> np.ndarray:
    """A record passed by itself (``np.record``/``np.void``, numba's ``Record`` argument) as the
    0-d array over its memory: the kernel reads and writes the record in place, as numba's
    copy to the device and back does. A record that owns its memory (made by hand, not taken
    from an array) is copied: what the kernel writes to it is not seen."""
    base = rec.base if isinstance(getattr(rec, "base", None), np.ndarray) else None
    if base is not None and base.flags.c_contiguous and base.flags.writeable:
        off = rec.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if 0 <= off <= base.nbytes - rec.dtype.itemsize:
            raw = base.reshape(-1).view(np.uint8)
            return raw[off:off + rec.dtype.itemsize].view(np.dtype((np.void, rec.dtype)))[0:1] \
                .reshape(())
    return np.array(rec, dtype=np.dtype((np.void, rec.dtype)))


def _describe_record(v, index, name):
    return _describe_numpy(record_array(v), index, name)


def _describe_tuple(obj, index, name, item=None):
    """A tuple (or namedtuple) argument: kind ``'tuple'``, ``value`` the ArgInfo of each item,
    ``type`` a TupleType, ``flat`` the items' values in order (the kernel takes the tuple as a
    struct of its items: runtime/abi.py). Arrays inside a tuple are on the device here: a
    launch copies a tuple's host arrays there and back first (runtime/argwrap.py)."""
    item = item or describe
    base = name if name is not None else f"argument {index}"
    items = tuple(item(x, index, f"{base}[{k}]") for k, x in enumerate(obj))
    dev, framework, flat = -1, None, ()
    for k, i in enumerate(items):
        if i.device == HOST and item is describe:
            raise TypeError(f"{_where(index, f'{base}[{k}]')} is a NumPy array inside a tuple; "
                            "arrays in tuples must be on the GPU: threadtile.to_device(a)")
        if i.device >= 0 or i.device == HOST:
            dev, framework = i.device, framework or i.framework
        flat += tuple(i.flat)
    t = TupleType(tuple(i.type for i in items), tuple(getattr(obj, "_fields", ())))
    return _new(ArgInfo, ("tuple", None, 0, "", 0, (), (), items, None, dev, type_key(t), t,
                          flat, framework))


def bf16_bits(v) -> int:
    """The 16 bits of a bfloat16 value (what the kernel's ``__nv_bfloat16`` parameter holds)."""
    a = np.asarray(v)
    if a.dtype.itemsize == 2:
        return int(a.view(np.uint16))
    # round a wider float to nearest-even bfloat16
    bits = int(np.asarray(a, np.float32).view(np.uint32))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:  # NaN stays NaN
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _record_dtype(obj, cai: dict, typestr: str) -> np.dtype:
    """The structured dtype of a ``|V<n>`` interface: the object's own dtype (a DeviceArray of
    records keeps NumPy's, alignment included), else the interface's ``descr``."""
    own = getattr(obj, "dtype", None)
    if isinstance(own, np.dtype) and own.names is not None and own.str == typestr:
        return own
    descr = cai.get("descr")
    if descr and not (len(descr) == 1 and descr[0][0] == ""):
        return np.dtype([tuple(d) for d in descr])
    return np.dtype(typestr)


def _describe_cai(obj, index, name, sync: bool = True):
    """An object with a ``__cuda_array_interface__``. ``sync``: wait for the stream the
    interface names, if any, as numba does before a launch reads the array (the producer may
    still be writing it on that stream)."""
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise TypeError(f"{_where(index, name)} is a masked array; kernels take plain arrays")
    stream = cai.get("stream") if sync else None
    if stream:
        driver.stream_synchronize(int(stream))
    typestr = cai["typestr"]
    dt = _TYPESTR.get(typestr)
    if dt is None:
        if typestr[1:2] == "V":  # records: the layout is the object's dtype, or the descr
            dt = _record_dtype(obj, cai, typestr)
        else:
            dt = _TYPESTR.setdefault(typestr, np.dtype(typestr))
    s = _scalar_for(dt, index, name)
    shape = tuple(int(n) for n in cai["shape"])
    ptr = int(cai["data"][0] or 0)
    bstrides = cai.get("strides")
    if bstrides is None:
        strides = _c_strides(shape)
        layout = "C"
    else:
        item = dt.itemsize
        if any(int(b) % item for b in bstrides):
            raise TypeError(f"{_where(index, name)} has strides {tuple(bstrides)} that are not "
                            f"a multiple of its item size {item}")
        strides = tuple(int(b) // item for b in bstrides)
        layout = "C" if _is_c_contiguous(shape, strides) else "A"
    t, key = array_type(s, len(shape), layout)
    return _new(ArgInfo, ("array", s, len(shape), layout, ptr, shape, strides, None, None, -1,
                          key, t, (ptr, *shape, *strides), None))


_TYPESTR: dict = {}

# DLPack device types (dlpack.h): where kernels can read the memory.
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


def _describe_dlpack(obj, index, name):
    dev_type, dev_id = obj.__dlpack_device__()
    if int(dev_type) not in (_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED):
        if int(dev_type) == _DL_CPU:
            raise _host_error(obj, f"a host (CPU) {type(obj).__name__}", None, index, name)
        raise TypeError(f"{_where(index, name)} lives on DLPack device type {dev_type}, "
                        "which CUDA kernels cannot access")
    try:
        from cuda.core.utils import StridedMemoryView  # noqa: PLC0415
    except ImportError:
        from cuda.core.experimental.utils import StridedMemoryView  # noqa: PLC0415
    # stream_ptr=-1: no producer/consumer stream ordering here (the launch stream is not known
    # yet); like a torch tensor, the array must be ready on the launch stream.
    view = StridedMemoryView.from_dlpack(obj, -1)
    s = _scalar_for(view.dtype, index, name)
    shape = tuple(int(n) for n in view.shape)
    strides = view.strides
    strides = _c_strides(shape) if strides is None else tuple(int(x) for x in strides)
    layout = "C" if _is_c_contiguous(shape, strides) else "A"
    t, key = array_type(s, len(shape), layout)
    ptr = int(view.ptr)
    device = int(dev_id) if int(dev_type) == _DL_CUDA else -1
    return _new(ArgInfo, ("array", s, len(shape), layout, ptr, shape, strides, None, None,
                          device, key, t, (ptr, *shape, *strides), None))


def _describe_numpy(a, index, name):
    s = _scalar_for(a.dtype, index, name)
    shape = a.shape
    # The launcher passes a C-contiguous device copy, so the kernel sees layout 'C'.
    strides = _c_strides(shape)
    t, key = array_type(s, a.ndim, "C", not a.flags.writeable)
    return _new(ArgInfo, ("array", s, a.ndim, "C", 0, shape, strides, None, a, HOST, key, t,
                          (0, *shape, *strides), None))


def _host_error(obj, what: str, fix: str | None, index, name) -> TypeError:
    how = f"move it with {fix}" if fix else "copy it to the GPU (threadtile.to_device)"
    return TypeError(f"{_where(index, name)} is {what}; a kernel needs device memory: {how} "
                     "(or run under threadtile.simulate())")


_HANDLERS: dict = {
    int: _describe_int,
    float: _describe_float,
    bool: _describe_bool,
    complex: _describe_complex,
    np.ndarray: _describe_numpy,
}


def register_handler(tp: type, handler) -> None:
    """Use ``handler(obj, index, name) -> ArgInfo`` for arguments of exact type ``tp``."""
    _HANDLERS[tp] = handler


def _classify(obj, index, name):
    """The handler for an object whose exact type has not been seen yet (then cached)."""
    tp = type(obj)
    mod = tp.__module__ or ""
    handler = None
    if mod.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj, torch.Tensor):
            handler = _describe_torch
    if handler is None and mod.startswith("cupy"):
        cupy = sys.modules.get("cupy")
        if cupy is not None and isinstance(obj, cupy.ndarray):
            handler = _describe_cupy
    if handler is None:
        if isinstance(obj, bool):
            handler = _describe_bool
        elif isinstance(obj, int):
            handler = _describe_int
        elif isinstance(obj, float):
            handler = _describe_float
        elif isinstance(obj, complex) and not isinstance(obj, np.generic):
            handler = _describe_complex
        elif isinstance(obj, np.void):
            handler = _describe_record
        elif isinstance(obj, np.generic):
            handler = _np_scalar_handler(tp, index, name)
        elif _has(obj, "__cuda_array_interface__"):
            handler = _describe_cai
        elif isinstance(obj, np.ndarray):  # a subclass (memmap, matrix): before DLPack, which
            handler = _describe_numpy      # NumPy also speaks, to get the host-copy path
        elif isinstance(obj, tuple):
            handler = _describe_tuple
        elif _has(obj, "__dlpack__") and _has(obj, "__dlpack_device__"):
            handler = _describe_dlpack
    if handler is None:
        raise TypeError(f"{_where(index, name)} is a {tp.__module__}.{tp.__qualname__}; "
                        "kernels take device arrays (torch, CuPy, DeviceArray, anything with "
                        "__cuda_array_interface__ or DLPack), NumPy arrays and numbers")
    # CAI/DLPack-ness is a property of the type for every library we know, but a class could
    # add the attribute per instance: only cache handlers chosen by type checks.
    if handler not in (_describe_cai, _describe_dlpack) or _has(tp, "__cuda_array_interface__") \
            or _has(tp, "__dlpack__"):
        _HANDLERS[tp] = handler
    return handler


def _has(obj, attr: str) -> bool:
    try:
        return hasattr(obj, attr)
    except Exception:  # noqa: BLE001  (a property that raises, e.g. CAI of a CPU tensor)
        return False


def describe(arg, index: int | None = None, name: str | None = None) -> ArgInfo:
    """Describe kernel argument ``arg`` (``index``/``name`` only feed error messages)."""
    h = _HANDLERS.get(type(arg))
    if h is None:
        h = _classify(arg, index, name)
    return h(arg, index, name)


def describe_all(args, names=None) -> list[ArgInfo]:
    """``[describe(a, i, names[i]) for i, a in enumerate(args)]`` without a function call per
    argument (~0.1 us each): the form a launch should use."""
    get = _HANDLERS.get
    out = []
    for i, a in enumerate(args):
        name = names[i] if names is not None else None
        h = get(type(a))
        if h is None:
            h = _classify(a, i, name)
        out.append(h(a, i, name))
    return out


def describe_host(arg, index: int | None = None, name: str | None = None) -> ArgInfo:
    """Describe ``arg`` for a launch that runs on the host (the simulator): as
    :func:`describe`, with the same errors for what kernels do not take, except that a host
    array is not refused nor marked for a contiguous device copy: a NumPy array, a CPU torch
    tensor or another array NumPy can view is described as it is (its own layout, device
    ``HOST``)."""
    if isinstance(arg, tuple):
        return _describe_tuple(arg, index, name, describe_host)
    try:
        info = describe(arg, index, name)
    except TypeError:
        info = _describe_host_array(arg, index, name)
        if info is None:
            raise
        return info
    if info.device == HOST:  # NumPy: described for the GPU, where it would be copied
        return _describe_host_array(info.writeback, index, name)
    return info


def _describe_host_array(a, index, name) -> ArgInfo | None:
    """The ArgInfo of host array ``a`` as it is, or None when ``a`` is no host array."""
    mod = type(a).__module__ or ""
    if mod.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(a, torch.Tensor) or a.device.type != "cpu":
            return None
        shape = tuple(a.shape)
        ndim = len(shape)
        ent = _torch_entry(a, ndim, index, name)
        strides = tuple(a.stride())
        return _new(ArgInfo, ("array", ent[0], ndim, ent[3], 0, shape, strides, None, None,
                              HOST, ent[2], ent[1], (0, *shape, *strides), "torch"))
    if not isinstance(a, np.ndarray):
        if _has(a, "__cuda_array_interface__") or not (
                _has(a, "__array_interface__") or _has(a, "__array__")):
            return None
        a = np.asarray(a)
    s = _scalar_for(a.dtype, index, name)
    item = a.itemsize
    strides = tuple(x // item for x in a.strides)
    layout = "C" if a.flags.c_contiguous else "A"
    t, key = array_type(s, a.ndim, layout, not a.flags.writeable)
    return _new(ArgInfo, ("array", s, a.ndim, layout, 0, a.shape, strides, None, a, HOST, key,
                          t, (0, *a.shape, *strides), None))


# ----------------------------------------------------------------------------------------------
# Example arguments
# ----------------------------------------------------------------------------------------------

def kernel_type(value) -> Type:
    """The kernel type of an example argument: an array (any object with dtype, ndim and
    strides), a Python or NumPy scalar, or a threadtile type given directly."""
    if isinstance(value, (ArrayType, Scalar)):
        return value
    if isinstance(value, bool):
        return scalar_of(bool)
    if isinstance(value, int):
        return scalar_of(int)
    if isinstance(value, float):
        return scalar_of(float)
    if isinstance(value, complex) and not isinstance(value, np.generic):
        return scalar_of(complex)
    if isinstance(value, np.void):
        return ArrayType(_scalar_for(value.dtype, None, None), 0, "C")
    if isinstance(value, np.generic):
        return scalar_of(value.dtype)
    if isinstance(value, TupleType):
        return value
    if isinstance(value, tuple):
        return TupleType(tuple(kernel_type(v) for v in value),
                         tuple(getattr(value, "_fields", ())))
    if hasattr(value, "dtype") and hasattr(value, "ndim"):
        st = scalar_of(value.dtype) or record_of(value.dtype)
        if st is None:
            raise TypeError(f"arrays of dtype {value.dtype} are not supported in kernels")
        return ArrayType(st, value.ndim, "C" if _c_contiguous(value) else "A")
    if _has(value, "__cuda_array_interface__"):  # another library's device array
        return _describe_cai(value, None, None, sync=False).type
    raise TypeError(f"cannot pass {type(value).__name__} to a kernel; kernels take arrays and "
                    "numbers")


def _c_contiguous(a) -> bool:
    """torch's is_contiguous(), a device array's flags (a dict), else NumPy's and CuPy's flags;
    an example array that says neither is taken as C-contiguous."""
    if hasattr(a, "is_contiguous"):
        return bool(a.is_contiguous())
    flags = getattr(a, "flags", None)
    if isinstance(flags, dict):
        return bool(flags.get("C_CONTIGUOUS", True))
    return bool(getattr(flags, "c_contiguous", True))
