"""Seeing what threadtile does: the compile trace (``THREADTILE_TRACE``) and NVTX ranges
around launches (``THREADTILE_NVTX``). Both are off unless asked for, and cost next to
nothing then.

The trace. ``THREADTILE_TRACE=1`` prints one line per step of every specialization threadtile
compiles, with its time, to standard error; ``THREADTILE_TRACE=/path/file`` appends the lines
to that file instead (a file that cannot be opened warns once and falls back to standard
error). The steps, in the order a first launch takes them (a specialization is named by its
kernel, argument types and constants)::

    threadtile trace: saxpy(float32[::1], float32, int64) source cache  miss     7.04 ms
    threadtile trace: saxpy(float32[::1], float32, int64) frontend               0.97 ms
    threadtile trace: saxpy(float32[::1], float32, int64) passes                 0.09 ms
    threadtile trace: saxpy(float32[::1], float32, int64) emit                   0.47 ms
    threadtile trace: saxpy(float32[::1], float32, int64) cubin cache   miss     3.71 ms  sm_90
    threadtile trace: saxpy(float32[::1], float32, int64) nvrtc                137.45 ms  sm_90
    threadtile trace: saxpy(float32[::1], float32, int64) load                   (on a GPU)

A warm start (both disk caches hit) shows the two cache lines as ``hit`` and no frontend,
passes, emit or nvrtc. The variable is read each time a specialization starts a step, so it
may be set while the program runs; with it unset each step costs one dictionary lookup, and
only steps that compile something (never a launch of a kernel already built) ask.

NVTX. ``THREADTILE_NVTX=1`` wraps each GPU launch in an NVTX range named after the kernel
(domain ``threadtile``), so that Nsight Systems shows which kernel each launch is. It is read
when a kernel is loaded (its first launch). The ranges come from the ``nvtx`` package
(``pip install nvtx``), else from ``torch.cuda.nvtx``; with neither importable the variable
warns once and launches run without ranges. With ranges on, every launch takes the general
path (the steady-state launcher has no hook for them); with the variable unset nothing on the
launch path changes.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings

__all__ = ["TRACE_ENV", "NVTX_ENV", "tracer", "Tracer", "NULL", "nvtx_enabled",
           "nvtx_wrap", "NvtxWarning"]

TRACE_ENV = "THREADTILE_TRACE"
NVTX_ENV = "THREADTILE_NVTX"
_OFF = ("", "0", "false", "no", "off")

# -- the compile trace -------------------------------------------------------------------------


class Tracer:
    """The trace of one specialization: ``with tracer.phase("nvrtc", "sm_90"): ...`` times a
    step, ``tracer.event("cubin cache", "hit")`` records one that has no duration of its own.
    The lines go where ``THREADTILE_TRACE`` said when the tracer was made."""

    __slots__ = ("label", "dest")

    def __init__(self, label: str, dest: str):
        self.label = label
        self.dest = dest

    @contextlib.contextmanager
    def phase(self, name: str, detail: str = ""):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._write(name, "", (time.perf_counter() - t0) * 1e3, detail)

    def event(self, name: str, what: str, ms: float | None = None, detail: str = "") -> None:
        self._write(name, what, ms, detail)

    def _write(self, name: str, what: str, ms: float | None, detail: str) -> None:
        took = f"{ms:8.2f} ms" if ms is not None else " " * 11
        line = f"threadtile trace: {self.label} {name:<13} {what:<5}{took}"
        _emit((line + (f"  {detail}" if detail else "")).rstrip() + "\n", self.dest)


class _NullTracer:
    """The tracer while the trace is off: every step is a no-op."""

    __slots__ = ()
    label = ""
    _null = contextlib.nullcontext()

    def phase(self, name: str, detail: str = ""):
        return self._null

    def event(self, name: str, what: str, ms: float | None = None, detail: str = "") -> None:
        pass

    def __bool__(self) -> bool:
        return False


NULL = _NullTracer()


def trace_destination() -> str | None:
    """Where the trace goes: ``"stderr"``, a file path, or None (off)."""
    v = os.environ.get(TRACE_ENV)
    if v is None or v.strip().lower() in _OFF:
        return None
    return "stderr" if v.strip().lower() in ("1", "true", "yes", "on", "stderr") else v


def tracer(label) -> Tracer | _NullTracer:
    """A :class:`Tracer` for the specialization ``label`` names (a string, or a callable
    making one, called only when tracing), or :data:`NULL` when ``THREADTILE_TRACE`` is
    unset."""
    dest = trace_destination()
    if dest is None:
        return NULL
    return Tracer(label() if callable(label) else str(label), dest)


_bad_files: set[str] = set()


def _emit(text: str, dest: str) -> None:
    if dest != "stderr" and dest not in _bad_files:
        try:
            with open(dest, "a", encoding="utf-8") as f:
                f.write(text)
            return
        except OSError as e:
            _bad_files.add(dest)
            warnings.warn(f"{TRACE_ENV}={dest}: cannot append the compile trace to that file "
                          f"({e.strerror or e}); it goes to standard error instead",
                          RuntimeWarning, stacklevel=4)
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # a closed or absent stderr: drop the line
        pass


# -- NVTX ranges around launches ---------------------------------------------------------------


class NvtxWarning(RuntimeWarning):
    """``THREADTILE_NVTX`` is set but no NVTX binding can be imported."""


_nvtx: list = []  # [(push, pop)] once looked up, [None] where there is no binding
_nvtx_warned: list = []


def nvtx_enabled() -> bool:
    """Whether ``THREADTILE_NVTX`` asks for ranges and a binding to make them is importable
    (warns once, and answers False, where none is)."""
    v = os.environ.get(NVTX_ENV)
    if v is None or v.strip().lower() in _OFF:
        return False
    return _binding() is not None


def _binding():
    if not _nvtx:
        _nvtx.append(_find_binding())
    b = _nvtx[0]
    if b is None and not _nvtx_warned:
        _nvtx_warned.append(True)
        warnings.warn(f"{NVTX_ENV} is set but no NVTX binding is importable: launches run "
                      "without NVTX ranges; pip install nvtx (or torch) to get them",
                      NvtxWarning, stacklevel=4)
    return b


def _find_binding():
    """``(push(name), pop())`` from the ``nvtx`` package, else ``torch.cuda.nvtx``, each
    tried once (torch built without CUDA imports but cannot make ranges); None."""
    for find in (_nvtx_package, _torch_nvtx):
        try:
            b = find()
            if b is not None:
                b[0]("threadtile")
                b[1]()
                return b
        except Exception:  # noqa: BLE001, S112  (absent or broken: try the next one)
            continue
    return None


def _nvtx_package():
    import nvtx  # noqa: PLC0415  (optional, looked up only when ranges are asked for)

    def push(name: str) -> None:
        nvtx.push_range(message=name, domain="threadtile")

    def pop() -> None:
        nvtx.pop_range(domain="threadtile")
    return push, pop


def _torch_nvtx():
    from torch.cuda import nvtx  # noqa: PLC0415  (optional, as above)

    return nvtx.range_push, nvtx.range_pop


def nvtx_wrap(name: str, launch):
    """``launch`` (a driver call) wrapped in an NVTX range ``name``."""
    push, pop = _binding()

    def ranged(*args):
        push(name)
        try:
            return launch(*args)
        finally:
            pop()
    return ranged


def reset() -> None:
    """Forget the NVTX binding found and the warnings given (tests)."""
    _nvtx.clear()
    _nvtx_warned.clear()
    _bad_files.clear()
