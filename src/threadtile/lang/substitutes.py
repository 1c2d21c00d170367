"""Functions of other libraries that threadtile implements itself.

A kernel calling one of them (numba's ``numba.cuda.random.xoroshiro128p_uniform_float32``, say,
which numba writes over record arrays that kernels do not take) calls threadtile's function of
the same name instead, when compiled (frontend/funcs.py) and in the simulator's python mode
(backends/sim/pythonic.py). threadtile's modules register theirs here when imported.
"""

from __future__ import annotations

# (module, name) of the other library's function -> threadtile's
SUBSTITUTES: dict[tuple[str, str], object] = {}


def substitute(obj):
    """threadtile's function for ``obj`` (a function, or a dispatcher with ``py_func``), or
    ``obj`` itself when threadtile has none."""
    if not SUBSTITUTES:
        return obj
    try:
        f = getattr(obj, "py_func", obj)
        return SUBSTITUTES.get((f.__module__, f.__name__), obj)
    except (AttributeError, TypeError):  # no names, or unhashable ones: nothing to swap
        return obj
