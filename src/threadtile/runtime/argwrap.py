"""``In``, ``Out`` and ``InOut``: numba's wrappers that say how a host array travels around a
launch, and numba's ``kernel.extensions`` (argument handlers with ``prepare_args``).

A NumPy array passed as it is goes to the device and back (``InOut``). ``In(a)`` copies ``a``
to the device only: what the kernel writes is not copied back. ``Out(a)`` copies nothing in
(the kernel sees uninitialised memory) and copies the result back into ``a``. The same holds
in the simulator, where the copies are made in its memory. numba's own ``In``/``Out``/``InOut``
objects (``numba.cuda.In``) are taken the same way.

An extension is any object with ``prepare_args(ty, val, *, stream, retr) -> (ty, val)``, called
for each argument before the launch (``ty`` is threadtile's type of the argument, or None where
kernels take no such value, and numba passes its own type there); callables appended to
``retr`` run after the launch, in order.
"""

from __future__ import annotations

import numpy as np

from . import hostarrays

__all__ = ["In", "InOut", "Out", "has_wrapped", "prepare", "unwrap_for_launch"]


class _Wrapped:
    __slots__ = ("value",)
    copy_in = True
    copy_out = True

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class In(_Wrapped):
    """A host array the kernel reads: copied to the device, not back."""

    __slots__ = ()
    copy_out = False


class Out(_Wrapped):
    """A host array the kernel writes: not copied in, copied back after the launch."""

    __slots__ = ()
    copy_in = False


class InOut(_Wrapped):
    """A host array copied to the device and back (what a bare NumPy array does)."""

    __slots__ = ()


_KINDS = {"In": (True, False), "Out": (False, True), "InOut": (True, True)}


def _kind(a) -> tuple[bool, bool] | None:
    """(copy in, copy out) for a wrapped array, ours or numba's; None for anything else."""
    if isinstance(a, _Wrapped):
        return a.copy_in, a.copy_out
    t = type(a)
    if t.__name__ in _KINDS and (t.__module__ or "").startswith("numba") and \
            hasattr(a, "value"):
        return _KINDS[t.__name__]
    return None


def has_wrapped(args, tuples: bool = True) -> bool:
    """Whether any launch argument is an ``In``/``Out``/``InOut``, or (with ``tuples``: a
    launch on the GPU; the simulator takes host arrays anywhere) a tuple holding one or a
    NumPy array (numba copies those to the device and back, as top-level host arrays)."""
    return any(_kind(a) is not None or (tuples and isinstance(a, tuple) and _holds_host(a))
               for a in args)


def _holds_host(t: tuple) -> bool:
    return any(_kind(x) is not None or isinstance(x, np.ndarray) or
               (isinstance(x, tuple) and _holds_host(x)) for x in t)


def unwrap_for_launch(a, stream, retr: list, tuples: bool = True):
    """The device array a wrapped host array is launched with; appends its copy back (if
    any) to ``retr``. Anything else comes back as it is."""
    if tuples and isinstance(a, tuple) and _holds_host(a):  # its host arrays: as InOut's
        items = [unwrap_for_launch(InOut(x) if isinstance(x, np.ndarray) else x, stream, retr)
                 for x in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    kind = _kind(a)
    if kind is None:
        return a
    copy_in, copy_out = kind
    host = a.value
    if copy_in:
        dev = hostarrays.to_device(host, stream=stream or 0)
    else:
        dev = hostarrays.device_array_like(host, stream=stream or 0)
    if copy_out:
        retr.append(lambda: dev.copy_to_host(host, stream=stream or 0))
    return dev


def prepare(extensions, types, args, stream, tuples: bool = True) -> tuple[list, list]:
    """The arguments after the kernel's ``extensions`` and the unwrapping of ``In``/``Out``/
    ``InOut``, and the callables to run after the launch."""
    retr: list = []
    out = []
    for ty, a in zip(types, args):
        for ext in extensions:
            ty, a = ext.prepare_args(ty, a, stream=stream, retr=retr)
        out.append(unwrap_for_launch(a, stream, retr, tuples))
    return out, retr
