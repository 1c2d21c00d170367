"""What ``raise`` (and a failed ``assert``) in a kernel means: the exception it raises on the
host, named by the thread and block that raised it, as numba words it.

An ``ir.Call`` ``raise`` carries the index of its :class:`Raised` record (the exception class,
its constant arguments, where it is) in a process-wide table: the record is a Python object
the simulator raises, not a value of the kernel.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import with_thread


@dataclass(frozen=True)
class Raised:
    cls: type
    args: tuple
    func: str
    file: str
    line: int
    trap: bool = False  # on the GPU without debug=True: trap (a launch error), not exit



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


def traps(k: int) -> bool:
    """Whether record ``k`` stops the whole kernel with an error on the GPU (cuTile's
    ``ct.assert_``) rather than ending the raising thread (numba's ``raise``)."""
    return _TABLE[k].trap


def exception(k: int, tid, ctaid) -> BaseException:
    """The exception of record ``k`` raised by thread ``tid`` of block ``ctaid``: numba's
    message, ``In function 'f', file F, line N, tid=[x, y, z] ctaid=[x, y, z]: message``."""
    r = _TABLE[k]
    where = f"In function {r.func!r}, file {r.file}, line {r.line}, "
    return with_thread(r.cls(*r.args), tid, ctaid, where)
