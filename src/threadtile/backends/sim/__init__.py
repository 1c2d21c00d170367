"""The CPU simulator: run kernels on NumPy arrays and catch the bugs a GPU hides.

``with simulate(): kernel[grid, block](a, b, out)`` (or the environment variable
``THREADTILE_SIMULATE=1``, read at each launch) runs launches here instead of on the GPU.
Arrays are modified in place; the device arrays of numba's host API (``to_device``,
``device_array``...) made under simulation live in host memory, where the kernels use them
in place (``runtime/devicearray.py``). Two modes:

- ``mode="lockstep"`` (default): the kernel's IR, the one the CUDA backend compiles, translated
  to NumPy code that runs every thread of a batch of blocks at once (``lockstep.py``), with
  the checks of ``checks.py``: races, out-of-bounds indices, barrier divergence, reads of
  uninitialized shared memory.
- ``mode="python"``: the kernel's own Python function, once per thread, in OS threads
  (``pythonic.py``), so ``print``, ``breakpoint()`` and any Python work inside it.

``THREADTILE_SIMULATE=python`` selects the second mode from the environment.
See docs/simulator.md.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ...errors import KernelRuntimeError
from ...runtime.arrays import describe_host, record_array
from ...runtime.hostarrays import as_cuda_array
from ...runtime.memory import simulated_view
from . import lockstep, pythonic, switch
from .checks import ALL_CHECKS
from .switch import STATE

__all__ = ["simulate", "run", "ALL_CHECKS"]

_ENV = switch.ENV
_DEBUG_ENV = "THREADTILE_SIM_TRACEBACK"  # set to see the simulator's own frames in errors


class _Options:
    def __init__(self, checks: frozenset, mode: str):
        self.checks = checks
        self.mode = mode


_stack: list[_Options] = []


def _check_set(checks) -> frozenset:
    if checks is True or checks is None:
        return ALL_CHECKS
    if checks is False:
        return frozenset()
    if isinstance(checks, str):
        checks = {checks}
    if isinstance(checks, dict):
        out = set(ALL_CHECKS)
        for k, v in checks.items():
            (out.add if v else out.discard)(k)
        checks = out
    names = frozenset(checks)
    unknown = names - ALL_CHECKS
    if unknown:
        raise ValueError(f"unknown simulator checks {sorted(unknown)}; the checks are "
                         f"{sorted(ALL_CHECKS)}")
    return names


class simulate(contextlib.ContextDecorator):
    """Run kernel launches in the CPU simulator while this context (or decorated function) is
    active.

    ``checks``: True (all, the default), False (none), or a set of names among ``"race"``,
    ``"bounds"``, ``"barrier"`` and ``"uninit"`` (a dict ``{"race": False}`` turns single ones
    off). ``mode``: ``"lockstep"`` (fast, checked) or ``"python"`` (the kernel's own Python
    code per thread, for ``print``/``breakpoint()``; only barrier checks). Contexts nest; the
    innermost wins.
    """

    def __init__(self, checks=True, mode: str = "lockstep"):
        if mode not in ("lockstep", "python"):
            raise ValueError(f"mode must be 'lockstep' or 'python', got {mode!r}")
        self.options = _Options(_check_set(checks), mode)
        self._saved: list[bool] = []

    def __enter__(self):
        self._saved.append(STATE.active)
        _stack.append(self.options)
        STATE.active = True
        return self

    def __exit__(self, *exc):
        _stack.remove(self.options) if self.options in _stack else None
        STATE.active = self._saved.pop()
        return False


def _current() -> _Options:
    if _stack:
        return _stack[-1]
    env = os.environ.get(_ENV, "").strip().lower()
    return _Options(ALL_CHECKS, "python" if env == "python" else "lockstep")


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------

def _in_place(a):
    """The host view of an argument in the simulator's own device memory (a tuple or list of
    such arrays item by item, others taken as they are), or None: it runs in place."""
    if isinstance(a, np.ndarray):
        return None
    if isinstance(a, tuple):
        views = [_in_place(x) for x in a]
        if all(v is None for v in views):
            return None
        items = [x if v is None else v for x, v in zip(a, views)]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    return simulated_view(a)


def _to_host(a, name: str):
    """(a NumPy view or scalar for ``a``, a function copying results back or None): GPU memory
    (a GPU device array, a CUDA torch tensor, CuPy, anything else with a
    ``__cuda_array_interface__``) is copied to the host and back around the launch."""
    if isinstance(a, np.ndarray):  # a subclass (a mapped array, a memmap) as a plain view
        return (a if type(a) is np.ndarray else a.view(np.ndarray)), None
    if isinstance(a, np.void):  # a record passed by itself: the 0-d array over its memory
        return record_array(a), None
    if isinstance(a, (bool, int, float, complex, np.generic)):
        return a, None
    if isinstance(a, tuple):  # a tuple argument: each item, and each item's copy-back
        parts = [_to_host(x, f"{name}[{k}]") for k, x in enumerate(a)]
        backs = [b for _, b in parts if b is not None]
        return tuple(h for h, _ in parts), (lambda: [b() for b in backs]) if backs else None
    mod = type(a).__module__ or ""
    if mod.startswith("torch"):
        t = a.detach()
        # dtypes NumPy lacks travel as their bits: bfloat16 as uint16, the 8-bit floats as
        # uint8 (the kernel's types come from the tensor itself: describe_host)
        bits = {"torch.bfloat16": "int16", "torch.float8_e4m3fn": "uint8",
                "torch.float8_e5m2": "uint8", "torch.float8_e8m0fnu": "uint8"}.get(str(t.dtype))
        if bits is not None:
            import torch  # noqa: PLC0415  (only when a torch tensor is passed)

            tb = t.view(getattr(torch, bits))
            host = (tb.cpu() if tb.device.type != "cpu" else tb).numpy()
            host = host.view(np.uint16) if bits == "int16" else host
        else:
            host = t.cpu().numpy() if t.device.type != "cpu" else t.numpy()
        if t.device.type == "cpu":
            return host, None
        import torch  # noqa: PLC0415

        def back(host=host, t=t, bits=bits):
            src = torch.from_numpy(host.view(np.int16) if bits == "int16" else host)
            t.copy_(src.view(t.dtype) if bits is not None else src)
        return host, back
    if mod.startswith("cupy") and hasattr(a, "get"):
        host = a.get()
        return host, (lambda host=host, a=a: a.set(host))
    if hasattr(a, "__array_interface__") or (hasattr(a, "__array__") and
                                             not hasattr(a, "__cuda_array_interface__")):
        return np.asarray(a), None
    if hasattr(a, "__cuda_array_interface__"):  # GPU memory: a copy there and back
        d = as_cuda_array(a)
        host = d.copy_to_host()
        return host, (lambda host=host, d=d: d.setitem(Ellipsis, host))
    raise TypeError(f"argument {name!r}: the simulator runs kernels on NumPy arrays, CPU "
                    f"torch tensors and numbers, not {type(a).__name__}")


def run(kernel, launch, args: tuple, kwargs: dict) -> None:
    """Execute one launch ``kernel[launch.grid, launch.block, ...](*args, **kwargs)``.

    ``threadtile.jit`` calls this when simulation is on; ``launch`` needs ``grid``, ``block``
    and ``shared_bytes``. The arguments are described as for the GPU (``describe_host``: the
    same errors for what kernels do not take, host arrays taken as they are) and the lockstep
    mode checks them against the specialization's parameters as a GPU launch does
    (``runtime.abi``); each then runs on its host view.
    """
    opts = _current()
    runtime, consts = kernel._split(args, kwargs)
    names = [n for n in kernel.param_names if n not in kernel.constants]
    # the simulator's own device memory (a device array made under simulation, or an object
    # whose __cuda_array_interface__ points into it) runs in place, described by its host view
    views = [_in_place(a) for a in runtime]
    infos = [describe_host(a if v is None else v, i, n)
             for i, (a, v, n) in enumerate(zip(runtime, views, names))]
    kernel.check_index_width(infos)
    host, backs = [], []
    copies: dict[int, np.ndarray] = {}  # one host copy of an array passed more than once
    for a, v, n in zip(runtime, views, names):
        if v is not None and not isinstance(v, tuple):
            h = v
        elif id(a) in copies:
            h = copies[id(a)]
        else:  # (a tuple's in-place items are NumPy views already: _to_host keeps them)
            h, back = _to_host(a if v is None else v, n)
            copies[id(a)] = h
            if back is not None:
                backs.append(back)
        host.append(h)
    try:
        if opts.mode == "python":
            pythonic.run(kernel, launch, host, consts, opts.checks)
        else:
            # types come from the arguments as given: a torch bfloat16 tensor travels as its
            # uint16 bits (NumPy has no bfloat16) but is still a bfloat16 array
            lockstep.run(kernel, launch, host, consts, opts.checks, infos)
    except KernelRuntimeError as e:
        if os.environ.get(_DEBUG_ENV, "") not in ("", "0"):
            raise
        # the error already names the kernel's line: the simulator's frames would only hide it
        raise e.with_traceback(None) from None
    finally:
        for back in backs:
            back()
