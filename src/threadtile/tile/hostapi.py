"""cuTile's host-side names that kernels' files import: ``ByTarget`` and the exception classes
(defined in ``threadtile.errors``, where the compiler's own errors derive from them).

A cuTile program imports these even where it never raises or catches them (a test module's
``from cuda.tile import TileTypeError``), so they exist under the same names. threadtile's
compiler reports its own errors (``threadtile.errors.KernelCompileError``, with the kernel's
line); the classes here are what a program may raise or catch itself.
"""

from __future__ import annotations

import contextlib

from ..errors import (
    TileCompilerExecutionError,
    TileCompilerTimeoutError,
    TileError,
    TileInternalError,
    TileRecursionError,
    TileStaticAssertionError,
    TileStaticEvalError,
    TileSyntaxError,
    TileTypeError,
    TileUnsupportedFeatureError,
    TileValueError,
)
from ..runtime import nvrtc

# The architecture a ``ByTarget`` value is chosen for: an option is fixed when the kernel is
# decorated, before any device is asked, and threadtile's tuned target is the H100.
DEFAULT_TARGET = "sm_90"


class _Unspecified:
    def __repr__(self) -> str:
        return "UNSPECIFIED"


UNSPECIFIED = _Unspecified()


class ByTarget:
    """A kernel option that depends on the GPU architecture (cuTile's ``ByTarget``):
    ``@ct.kernel(num_ctas=ct.ByTarget(sm_100=2, default=1))``. Keys are ``sm_<major><minor>``.

    threadtile fixes options when the kernel is decorated, for ``sm_90``: the value for
    ``sm_90`` if given, else ``default``, else the option's own default."""

    def __init__(self, *, default=UNSPECIFIED, **value_by_target):
        for sm in value_by_target:
            if not (sm.startswith("sm_") and sm[3:].isdigit()):
                raise ValueError(f"Invalid GPU architecture name: {sm}, expected "
                                 "sm_<major><minor>")
        self.default = default
        self.by_target = dict(value_by_target)

    def resolve(self, arch: str = DEFAULT_TARGET, fallback=None):
        """The value for ``arch``: its own, else ``default``, else ``fallback``."""
        if arch in self.by_target:
            return self.by_target[arch]
        return fallback if self.default is UNSPECIFIED else self.default

    def __repr__(self) -> str:
        items = [f"{k}={v!r}" for k, v in self.by_target.items()]
        if self.default is not UNSPECIFIED:
            items.append(f"default={self.default!r}")
        return f"ByTarget({', '.join(items)})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, ByTarget) and self.default == other.default
                and self.by_target == other.by_target)

    __hash__ = None


def resolve_option(value, fallback=None):
    """A kernel option as given, or a ``ByTarget``'s value for the default target."""
    return value.resolve(DEFAULT_TARGET, fallback) if isinstance(value, ByTarget) else value


ERRORS = (TileError, TileSyntaxError, TileTypeError, TileValueError,
          TileUnsupportedFeatureError, TileInternalError, TileRecursionError,
          TileStaticEvalError, TileStaticAssertionError, TileCompilerExecutionError,
          TileCompilerTimeoutError)


@contextlib.contextmanager
def compiler_timeout(timeout_sec: float):
    """``with ct.compiler_timeout(10): ...``: a kernel compiled inside (for the GPU) may take
    at most ``timeout_sec`` seconds, else it raises ``TileCompilerTimeoutError``. NVRTC runs in
    this process and cannot be interrupted, so the limit is checked when the compile finishes.
    A setting of the whole process (not thread-safe, as cuTile's). The simulator does not
    compile, so it never times out."""
    prev = nvrtc.set_compiler_timeout(timeout_sec)
    try:
        yield
    finally:
        nvrtc.set_compiler_timeout(prev)
