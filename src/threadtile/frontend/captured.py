"""Global device arrays a kernel reads by name: captured in place (numba-cuda's rule).

A global (or closure variable) holding a NumPy array is frozen into constant memory when the
kernel compiles; one holding a device array, or any object with a ``__cuda_array_interface__``
(a CuPy array, a torch CUDA tensor, numba's ``ForeignArray``), is the array itself: the kernel
reads and writes its memory, at the address, shape and strides it had at compile time. The
address is baked into the generated code (the C++ declares the array at the top of each
function that uses it; the simulator binds the host view of that memory at each launch), and
it is part of the cache key (``deps.fingerprint``), so a kernel compiled for one array is never
served for another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import ArrayType, scalar_of

if TYPE_CHECKING:
    from .lower import Lowerer


def interface(obj) -> dict | None:
    """``obj.__cuda_array_interface__``, or None for an object without one (a NumPy array,
    a CPU tensor whose property raises)."""
    if isinstance(obj, (np.ndarray, type)):
        return None
    try:
        cai = obj.__cuda_array_interface__
    except Exception:  # noqa: BLE001  (no interface, or a property that raises)
        return None
    return cai if isinstance(cai, dict) else None


def refuse_in_tile_kernel(lw: Lowerer, obj, node) -> None:
    """cuTile's rule: a tile kernel takes its arrays as arguments; a global or closure array
    (NumPy, a device array, a tensor) is no constant it can capture (a TileTypeError)."""
    if isinstance(obj, type) or not (isinstance(obj, np.ndarray) or interface(obj) is not None
                                     or hasattr(type(obj), "__dlpack__")):
        return
    cls = type(obj)
    raise lw.error(node, f"Cannot create constant from value of type {cls.__module__}."
                         f"{cls.__qualname__}: a tile kernel reads arrays passed as arguments",
                   "pass the array to the kernel as an argument", cls=TileCodeTypeError)


def geometry(cai: dict) -> tuple[int, np.dtype, tuple, tuple]:
    """(address, dtype, shape, byte strides) of an interface."""
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        acc, out = dtype.itemsize, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        strides = tuple(reversed(out))
    return int(cai["data"][0] or 0), dtype, shape, tuple(int(s) for s in strides)


def captured_array(lw: Lowerer, obj, cai: dict, node) -> ir.Expr:
    """The captured array ``obj`` as a variable of the module (one per array geometry)."""
    ptr, dtype, shape, strides = geometry(cai)
    st = scalar_of(dtype)
    if st is None:
        raise lw.error(node, f"a global device array of dtype {dtype} cannot be used in a "
                             "kernel")
    if any(s % dtype.itemsize for s in strides):
        raise lw.error(node, f"a global device array with strides {strides} that are not a "
                             f"multiple of its {dtype.itemsize}-byte items cannot be used in "
                             "a kernel", "pass a contiguous copy")
    spec = lw.spec
    key = (ptr, dtype.str, shape, strides)
    decl = spec.captured.get(key)
    if decl is None:
        elems = tuple(s // dtype.itemsize for s in strides)
        c = elems == tuple(int(np.prod(shape[k + 1:])) for k in range(len(shape)))
        readonly = bool(cai["data"][1])
        at = ArrayType(st, len(shape), "C" if c else "A", "global", readonly=readonly)
        decl = ir.ArrayDecl(lw.loc(node), f"captured_{len(spec.captured)}", at, shape, False,
                            ir.Captured(ptr, elems, obj))
        spec.captured[key] = decl
    return ir.Var(decl.type, lw.loc(node), decl.name)
