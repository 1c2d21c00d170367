"""What ``raise`` (and a failed ``assert``) in a kernel means: the exception it raises on the
host, named by the thread and block that raised it, as numba words it.

An ``ir.Call`` ``raise`` carries the index of its :class:`Raised` record (the exception class,
its constant arguments, where it is) in a process-wide table: the record is a Python object
the simulator raises, not a value of the kernel.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Raised:
    cls: type
    args: tuple
    func: str
    file: str
    line: int


_TABLE: list[Raised] = []
_INDEX: dict[Raised, int] = {}
_LOCK = threading.Lock()


def register(r: Raised) -> int:
    """The index of ``r`` in the table (the same record, the same index)."""
    with _LOCK:
        k = _INDEX.get(r)
        if k is None:
            k = _INDEX[r] = len(_TABLE)
            _TABLE.append(r)
        return k


def describe(k: int) -> tuple:
    """Record ``k`` as JSON-able values (the CUDA source's cache keeps them): the class's
    module and qualified name, the arguments, the function, file and line."""
    r = _TABLE[k]
    return (r.cls.__module__, r.cls.__qualname__, list(r.args), r.func, r.file, r.line)


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


def exception(k: int, tid, ctaid) -> BaseException:
    """The exception of record ``k`` raised by thread ``tid`` of block ``ctaid``: numba's
    message, ``In function 'f', file F, line N, tid=[x, y, z] ctaid=[x, y, z]: message``."""
    r = _TABLE[k]
    where = f"In function {r.func!r}, file {r.file}, line {r.line}, "
    return with_thread(r.cls(*r.args), tid, ctaid, where)


def with_thread(e: BaseException, tid, ctaid, where: str = "") -> BaseException:
    """``e`` with the thread and block that raised it in front of its message."""
    head = f"{where}tid={list(tid)} ctaid={list(ctaid)}"
    msg = f"{head}: {e}" if str(e) else head
    try:
        out = type(e)(msg)
    except Exception:  # noqa: BLE001  (a class whose constructor takes other arguments)
        return e
    out.__cause__ = e.__cause__
    return out
