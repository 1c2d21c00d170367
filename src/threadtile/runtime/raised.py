"""Exceptions raised on the GPU by kernels compiled with ``jit(debug=True)``, as numba's debug
mode raises them on the host.

The kernel's module has ``tt_raised``, four 64-bit words: the first raise of a launch stores
1 + its code (an index into the kernel's ``CudaSource.raises``), its thread and its block
(``tt::report_raise`` in threadtile.h), and that thread stops. After such a kernel's launch the
host waits for it, reads the words, clears them, and raises the exception, named by thread
and block as the simulator names it.
"""

from __future__ import annotations

import ctypes
import sys

from ..errors import with_thread
from . import driver

__all__ = ["check", "from_description"]


def check(compiled, stream) -> None:
    """Wait for ``compiled``'s launch on ``stream``; raise what it reported, if anything."""
    func = compiled.load()
    ptr, _ = driver.library_global(func, "tt_raised")
    words = (ctypes.c_uint64 * 4)()
    driver.copy_dtoh(ctypes.addressof(words), ptr, ctypes.sizeof(words),
                     driver.stream_handle(stream))
    if not words[0]:
        return
    zero = (ctypes.c_uint64 * 4)()
    driver.copy_htod(ptr, ctypes.addressof(zero), ctypes.sizeof(zero))
    tid = [words[1] & 0x1FFFFF, (words[1] >> 21) & 0x1FFFFF, words[1] >> 42]
    ctaid = [words[2] & 0xFFFFFFFF, words[2] >> 32, words[3]]
    exc, where = from_description(compiled.raises[words[0] - 1])
    raise with_thread(exc, tid, ctaid, where)


def from_description(d) -> BaseException:
    """The exception a described record raises (its class found again by module and name; a
    class that cannot be found, one local to a function, becomes a RuntimeError naming it)."""
    module, qualname, args, func, file, line = d
    cls = sys.modules.get(module)
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        args, cls = [f"{qualname}({', '.join(map(repr, args))})"], RuntimeError
    return cls(*args), f"In function {func!r}, file {file}, line {line}, "
