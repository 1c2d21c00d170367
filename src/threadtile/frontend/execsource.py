"""The source of functions built from strings (``exec``, ``compile``), which ``inspect`` cannot
find: numba's users and tests generate kernels that way
(``exec("def atomic(res, ary): ...", globs, ns)``).

CPython raises the audit event ``compile`` with the source and the file name for every string
it compiles (``exec``/``eval``/``compile`` given text). :func:`install` (run when threadtile is
imported) adds one audit hook that remembers the recent sources compiled under a pseudo file
name (``<string>``, ``<ast>``...) that define a function. :func:`find` then picks, among those,
the source whose compiled code holds the function's own code object, and registers it in
``linecache`` under a name of its own (``<string exec 1a2b3c4d>``), so that error messages and
the simulator's checks show the kernel's lines.

Only sources compiled after ``import threadtile`` are seen; the hook costs one comparison per
audit event.
"""

from __future__ import annotations
import __future__

import collections
import functools
import hashlib
import linecache
import operator
import sys
import threading
import types

#: How many sources are kept (the newest), the longest one kept and the most kept in all,
#: in characters.
MAX_SOURCES = 512
MAX_CHARS = 100_000
MAX_TOTAL = 8_000_000

_sources: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
_total = 0  # characters kept
_lock = threading.Lock()
_state = threading.local()  # .busy: our own compile() calls, not to be remembered
_installed = False


def _hook(event: str, args: tuple) -> None:
    if event != "compile":
        return
    try:
        src, filename = args
    except ValueError:
        return
    if not (isinstance(filename, str) and filename[:1] == "<" and filename[-1:] == ">"):
        return  # a real file: inspect reads it from disk
    if isinstance(src, bytes):
        # dataclasses compile every __init__/__repr__... this way (hundreds when a library
        # loads): never a kernel, they would push the user's sources out
        if len(src) > MAX_CHARS or b"def " not in src or src.startswith(b"def __create_fn__"):
            return
        try:
            src = src.decode()
        except UnicodeDecodeError:
            return
    elif not isinstance(src, str) or len(src) > MAX_CHARS or "def " not in src or \
            src.startswith("def __create_fn__"):
        return  # an AST or a code object, or no function in it
    if getattr(_state, "busy", False):
        return
    key = (filename, src)
    global _total
    with _lock:
        if key in _sources:
            _sources.move_to_end(key)
            return
        _sources[key] = None
        _total += len(src)
        while len(_sources) > MAX_SOURCES or _total > MAX_TOTAL:
            (_, old), _ = _sources.popitem(last=False)
            _total -= len(old)


def install() -> None:
    """Add the audit hook (once per process; audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        _installed = True
        sys.addaudithook(_hook)


def remembered() -> int:
    """How many sources are remembered now (for tests and diagnostics)."""
    return len(_sources)


_compiled: dict[tuple[str, str, int], types.CodeType | None] = {}
# The __future__ flags a string's code inherits from the code that exec'd it (a module with
# `from __future__ import annotations` passes it on): recompiled without them, the code differs
_FUTURE = functools.reduce(operator.or_, (getattr(__future__, f).compiler_flag
                                          for f in __future__.all_feature_names), 0)


def _compile(filename: str, src: str, flags: int) -> types.CodeType | None:
    key = (filename, src, flags)
    if key not in _compiled:
        _state.busy = True
        try:
            _compiled[key] = compile(src, filename, "exec", flags=flags, dont_inherit=True)
        except (SyntaxError, ValueError):  # an expression's source, or no longer valid
            _compiled[key] = None
        finally:
            _state.busy = False
        if len(_compiled) > 2 * MAX_SOURCES:
            _compiled.pop(next(iter(_compiled)))
    return _compiled[key]


def _holds(code: types.CodeType, target: types.CodeType) -> bool:
    """Whether ``target`` (a function's code) is ``code`` or nested in it."""
    # code objects compare by name, first line, bytecode (unspecialised), constants, names and
    # line table, not by file: `fn` of "np.sin(a0, a1)" and of "np.cos(a0, a1)" differ by name
    if code == target:
        return True
    return any(isinstance(c, types.CodeType) and _holds(c, target) for c in code.co_consts)


def compiles_to(src: str, filename: str, code: types.CodeType) -> bool:
    """Whether ``src`` compiled as ``filename`` holds ``code`` (a function's code object)."""
    compiled = _compile(filename, src, code.co_flags & _FUTURE)
    return compiled is not None and _holds(compiled, code)


def find(code: types.CodeType) -> tuple[str, str] | None:
    """``(name, text)`` of the remembered source that compiled to ``code``: ``text`` is the
    whole string, registered in ``linecache`` under ``name``; None where none did."""
    filename = code.co_filename
    with _lock:
        candidates = [s for f, s in reversed(_sources) if f == filename]
    for src in candidates:
        if compiles_to(src, filename, code):
            digest = hashlib.sha1(f"{filename}\0{src}".encode()).hexdigest()[:8]
            name = f"{filename[:-1]} exec {digest}>"
            lines = src.splitlines(keepends=True)
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            linecache.cache[name] = (len(src), None, lines, name)  # mtime None: kept
            return name, src
    return None
