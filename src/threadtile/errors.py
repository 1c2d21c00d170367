"""The exceptions users see.

Every threadtile error derives from :class:`ThreadtileError`. Compile errors carry a source
location and print like a frame of a Python traceback (file, line, columns, the line itself and
carets under the offending expression), so a user reads them the way they read any Python error.
Launch mistakes found before anything runs are :class:`LaunchError` (a ``ValueError``) or a plain
``TypeError`` for argument types.
"""

from __future__ import annotations

import re

__all__ = [
    "ThreadtileError", "KernelCompileError", "NvrtcError", "KernelRuntimeError", "RaceError",
    "OutOfBoundsError", "BarrierDivergenceError", "UninitializedReadError", "LaunchError",
    "RaceWarning", "PerformanceWarning",
    "CudaDriverError", "format_location", "parse_log",
    "TileError", "TileSyntaxError", "TileTypeError", "TileValueError",
    "TileUnsupportedFeatureError", "TileInternalError", "TileRecursionError",
    "TileStaticEvalError", "TileStaticAssertionError", "TileCompilerExecutionError",
    "TileCompilerTimeoutError", "StaticAssertionFailed", "StaticEvalFailed", "TileCodeSyntaxError",
    "TileCodeTypeError", "CompilerTimeout", "ArgumentTypeError", "UnsupportedCallError",
    "TileCodeUnsupportedCallError", "TileCodeRecursionError",
]


class ThreadtileError(Exception):
    """Base class of every error threadtile raises on purpose."""


def format_location(loc, source_line: str | None = None) -> list[str]:
    """The traceback-style lines for ``loc``: the frame line, then the source line and carets.

    ``loc`` needs ``filename``, ``line`` (1-based), ``col`` (0-based), ``end_col`` (0-based,
    exclusive, or None) and ``function``. The source line is shown without its indentation, as
    Python's own tracebacks do, and the carets shift with it.
    """
    col = getattr(loc, "col", 0) or 0
    end_col = getattr(loc, "end_col", None)
    cols = f", col {col + 1}" + (f"-{end_col}" if end_col and end_col > col + 1 else "")
    func = getattr(loc, "function", None)
    head = f'  "{loc.filename}", line {loc.line}{cols}' + (f", in {func}:" if func else ":")
    out = [head]
    if source_line:
        text = source_line.rstrip("\n")
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        out.append("    " + stripped.rstrip())
        start = max(col - indent, 0)
        width = (end_col - col) if end_col is not None and end_col > col else 1
        width = max(min(width, len(stripped) - start), 1)
        out.append("    " + " " * start + "^" * width)
    return out


class KernelCompileError(ThreadtileError):
    """A kernel that cannot be compiled: what is wrong, where, and (often) what to do instead.

    ``loc`` is any object with ``filename``, ``line``, ``col``, ``end_col`` and ``function``
    (``threadtile.ir.nodes.Loc``); ``source_line`` is the raw text of that line.
    """

    def __init__(self, message: str, loc=None, source_line: str | None = None,
                 hint: str | None = None):
        self.message = message
        self.loc = loc
        self.source_line = source_line
        self.hint = hint
        # the calls that led to ``loc`` through the functions the kernel calls (device
        # functions, inlined helpers), the kernel's first: (loc, source line) each, shown
        # above it as a traceback's frames
        self.callers: list[tuple] = []
        super().__init__(message)

    def add_caller(self, loc, source_line: str | None) -> None:
        """Record the call (in the caller of the function where the error is) that led to it."""
        self.callers.insert(0, (loc, source_line))

    def __str__(self) -> str:
        out = [line for loc, text in self.callers for line in format_location(loc, text)]
        out += format_location(self.loc, self.source_line) if self.loc is not None else []
        out.append(self.message)
        if self.hint:
            out.append(f"({self.hint})")
        return "\n".join(out)


# ---- cuTile's exception classes -------------------------------------------------------------
# (``ct.TileTypeError``...: ``threadtile.tile`` re-exports them.) A compile error that cuTile
# reports with one of them is a KernelCompileError of a subclass that derives from both, so
# that ``except ct.TileStaticAssertionError`` and ``except KernelCompileError`` both catch it.

class TileError(Exception):
    """Base of cuTile's errors."""


class TileSyntaxError(TileError):
    """A Python construct tile code does not support."""


class TileTypeError(TileError):
    """A type error in tile code."""


class TileValueError(TileError):
    """An invalid value in tile code."""


class TileUnsupportedFeatureError(TileError):
    """A feature the compiler does not support."""


class TileInternalError(TileError):
    """An internal compiler error."""


class TileRecursionError(TileError):
    """Recursion in tile code."""


class TileStaticEvalError(TileError):
    """An error in a compile-time evaluation (``ct.static_eval``, ``ct.static_iter``)."""


class TileStaticAssertionError(TileError):
    """A failed compile-time assertion (``ct.static_assert``)."""


class TileCompilerExecutionError(TileError):
    """The tile compiler failed."""


class TileCompilerTimeoutError(TileError):
    """The tile compiler timed out (``ct.compiler_timeout``)."""


class UnsupportedCallError(TileError):
    """A call of a function or a class that tile code cannot make (cuTile's class of that name,
    which its ``cuda.tile._exception`` defines; ``cuda.tile`` does not export it)."""


class StaticAssertionFailed(KernelCompileError, TileStaticAssertionError):
    """``ct.static_assert(cond)`` with a false ``cond``: a compile error at its line."""


class StaticEvalFailed(KernelCompileError, TileStaticEvalError):
    """A compile-time evaluation that raised, or called what only runs on the GPU."""


class TileCodeSyntaxError(KernelCompileError, TileSyntaxError):
    """A construct used where cuTile does not allow it (``static_iter`` outside a ``for``...)."""


class TileCodeTypeError(KernelCompileError, TileTypeError):
    """A value of the wrong kind (a non-constant ``static_assert`` condition...)."""


class TileCodeValueError(KernelCompileError, TileValueError):
    """A value of the right kind but a wrong size (``a, b, c = (1, 2)``...)."""


class TileCodeRecursionError(KernelCompileError, TileRecursionError):
    """A tile kernel's helper calling itself more than ``TILE_RECURSION_LIMIT`` levels deep
    (frontend/inline.py): its recursion does not end at compile time."""


class TileCodeUnsupportedCallError(KernelCompileError, UnsupportedCallError):
    """A call a kernel cannot make (``eval()``, a class that is not a dataclass...)."""


class ArgumentTypeError(TypeError, TileTypeError):
    """A kernel argument of a kind cuTile refuses with a TileTypeError (a dataclass that is
    not frozen); a TypeError as threadtile's other argument errors."""


class CompilerTimeout(ThreadtileError, TileCompilerTimeoutError):
    """A compile that took longer than ``ct.compiler_timeout(seconds)`` allows."""


class NvrtcError(KernelCompileError):
    """NVRTC rejected a CUDA C++ source. ``log`` is NVRTC's full log; ``diagnostics`` parses it
    into ``(filename, line, message)`` entries, errors first."""

    def __init__(self, message: str, log: str = "", loc=None, source_line: str | None = None,
                 hint: str | None = None):
        super().__init__(message, loc=loc, source_line=source_line, hint=hint)
        self.log = log

    @property
    def diagnostics(self) -> list[tuple[str, int, str]]:
        return parse_log(self.log)


class KernelRuntimeError(ThreadtileError):
    """A bug found while a kernel runs (in the simulator): names block, thread, array, index
    and the Python line."""


class RaceError(KernelRuntimeError):
    """Two threads touched one shared or global element between barriers, at least one of them
    writing and not atomically."""


class RaceWarning(UserWarning):
    """A race the simulator lets pass: threads wrote an element concurrently (or wrote it while
    others read it), but every write stored the value the element already held, so no thread
    can see a difference, whatever the order (numba's tests write ``a[0] = 1`` from every
    thread). Any write of a different value is a :class:`RaceError`."""


class PerformanceWarning(UserWarning):
    """Code that compiles and runs correctly but leaves a fast path for a reason the user
    can change, said at the kernel's line (numba's ``NumbaPerformanceWarning``): a tile
    product of M rows on a block of more than M / 16 warps, which splits its 16-row strips
    and takes the shared scratch instead of tensor-core fragments."""


class OutOfBoundsError(KernelRuntimeError):
    """An index outside an array's bounds (negative indices too: on a GPU they do not wrap)."""


class BarrierDivergenceError(KernelRuntimeError):
    """A ``syncthreads()`` that not every live thread of the block reached."""


class UninitializedReadError(KernelRuntimeError):
    """A read of shared or local memory that no thread of the block has written yet."""


class LaunchError(ThreadtileError, ValueError):
    """A launch that cannot run as configured (block too large, too much shared memory, grid out
    of range, arrays on different devices), found before anything is submitted."""


class CudaDriverError(ThreadtileError, RuntimeError):
    """A CUDA driver call failed; ``name`` is the CUresult name (``CUDA_ERROR_...``)."""

    def __init__(self, message: str, name: str = "", code: int = 0):
        super().__init__(message)
        self.name = name
        self.code = code


_launch_bounds_error: type | None = None


def launch_bounds_error(message: str) -> LaunchError:
    """The error for a block larger than the kernel's ``launch_bounds``, which the driver
    would refuse with ``CUDA_ERROR_INVALID_VALUE``: a :class:`LaunchError` that is also a
    :class:`CudaDriverError` and cuda.core's ``CUDAError`` (what numba-cuda's users catch).
    The class is made at the first such error: importing cuda.core takes a third of a
    second, which ``import threadtile`` does not pay."""
    global _launch_bounds_error
    if _launch_bounds_error is None:
        try:
            from cuda.core._utils.cuda_utils import CUDAError as core  # noqa: PLC0415
            bases: tuple = (LaunchError, CudaDriverError, core)
        except ImportError:  # another cuda.core's layout: ours only
            bases = (LaunchError, CudaDriverError)
        _launch_bounds_error = type("LaunchBoundsError", bases, {"__module__": __name__})
    e = _launch_bounds_error(f"CUDA_ERROR_INVALID_VALUE: {message}")
    e.name, e.code = "CUDA_ERROR_INVALID_VALUE", 1
    return e


# NVRTC diagnostics: `file(12): error: message` or `file(12): warning #177-D: message`.
# The file name may contain spaces and parentheses of its own, so anchor on the last `(N): `.
_DIAG_RE = re.compile(
    r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<sev>error|warning|catastrophic error|remark)"
    r"(?: #[\w-]+)?: (?P<msg>.*)$")


def parse_log(log: str) -> list[tuple[str, int, str]]:
    """NVRTC diagnostics as ``(filename, line, message)``: errors first, then warnings, each in
    log order. Error messages are bare (``identifier "x" is undefined``); warnings keep their
    prefix (``warning #177-D: variable "x" was declared but never referenced``).

    File names and lines follow the source's ``#line`` directives, so for generated code they
    point at the Python kernel.
    """
    errors_, warnings_ = [], []
    for raw in log.splitlines():
        m = _DIAG_RE.match(raw.rstrip())
        if m is None:
            continue
        sev, msg = m.group("sev"), m.group("msg").strip()
        if sev.endswith("error"):
            errors_.append((m.group("file"), int(m.group("line")), msg))
        else:
            code = re.search(r"#[\w-]+", raw[m.end("sev"):m.start("msg")])
            prefix = sev + (f" {code.group(0)}" if code else "")
            warnings_.append((m.group("file"), int(m.group("line")), f"{prefix}: {msg}"))
    return errors_ + warnings_


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
