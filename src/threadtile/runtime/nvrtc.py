"""CUDA C++ to cubin with NVRTC, in-process and without a GPU.

We call NVRTC through ``cuda.bindings.nvrtc`` rather than ``cuda.core.Program``. Measured with
cuda-core 1.2.2: (1) ``Program`` takes typed ``ProgramOptions`` only, while kernels and
``RawKernel`` users pass raw NVRTC flags (``--maxrregcount=32``, ``-DNAME``); (2) with
``lineinfo=True`` it writes the source to a temporary ``.cu`` file per compile and renames the
program after it (for cuda-gdb), which changes the file names in the log; (3) importing
``cuda.core`` costs ~0.1 s more than ``cuda.bindings.nvrtc`` alone, which matters for a
compile-only CI run. The flags are the same NVRTC flags either way.

Compile times (NVRTC 13.5, sm_90, one core of this container; warm process, median of 5):

=====================================  =======  ==========
source                                 default  -minimal
=====================================  =======  ==========
trivial kernel, no header              28 ms    22 ms
generated float32 add (threadtile.h)   37 ms    30 ms
generated float16 add (+cuda_fp16.h,   55 ms    45 ms
cuda_bf16.h)
generated 2-D matmul loop              55 ms    49 ms
=====================================  =======  ==========

- ``-lineinfo`` costs ~0.5 ms: keep it on (profilers map SASS to Python lines through ``#line``).
- ``cuda_fp16.h`` + ``cuda_bf16.h`` cost ~17 ms: the code generator should include them only
  when a half type is used (it does: ``TT_HALF``).
- ``-minimal`` (omit texture types, device-runtime API and runtime types from NVRTC's builtin
  headers) saves 6-9 ms but breaks CUB/libcu++ (``cudaError_t`` undefined). We turn it on only
  when every ``#include`` of the source is in :data:`MINIMAL_SAFE_INCLUDES`.
- ``-pch`` (automatic precompiled headers, kept in-process): first compile 95 ms instead of
  55 ms, later compiles of sources with the same includes 31 ms instead of 55 ms. Not on by
  default since most processes compile a handful of kernels and the disk cache serves the rest.
- The first compile in a process pays ~0.2 s more while NVRTC's library loads from a cold disk.
- ``mma.h`` includes ``crt/mma.h``, which the ``nvidia-cuda-runtime`` wheel does not ship: it
  comes with the ``nvidia-cuda-crt`` wheel.
"""

from __future__ import annotations

import functools
import re
import time
from pathlib import Path

from ..errors import CompilerTimeout, NvrtcError, parse_log

__all__ = ["compile_cubin", "compile_ptx", "compiler_id", "nvrtc_version", "parse_log",
           "supported_archs", "include_dirs", "CompileResult", "MINIMAL_SAFE_INCLUDES"]

#: Headers known to compile under NVRTC's ``-minimal``; a source including anything else is
#: compiled without it.
MINIMAL_SAFE_INCLUDES = frozenset({"threadtile.h", "tile.h", "cuda_fp16.h", "cuda_bf16.h",
                                   "complex.h"})

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)
class CompileResult(bytes):
    """The cubin (or PTX) bytes, with NVRTC's log (warnings) attached as ``.log``."""

    log: str = ""


def _bindings():
    from cuda.bindings import nvrtc  # noqa: PLC0415  (imported when first needed: ~80 ms)

    return nvrtc


def _check(result, what: str) -> tuple:
    """Unpack a cuda.bindings NVRTC return tuple, raising on a non-success status."""
    err, *rest = result
    if int(err) != 0:
        nv = _bindings()
        _, name = nv.nvrtcGetErrorString(err)
        raise NvrtcError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    return tuple(rest)


@functools.cache
def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor) version, e.g. ``(13, 5)``."""
    major, minor = _check(_bindings().nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


@functools.cache
def compiler_id() -> str:
    """A cheap identity of the NVRTC in use, for cache keys and the cache's version salt.

    Loading NVRTC's bindings to ask its version costs tens of milliseconds, which would be most
    of a warm start (a fresh process whose kernels all hit the disk cache). The NVRTC wheel
    names its builtins library with the version (``libnvrtc-builtins.so.13.5``), so the names
    and sizes of the wheel's NVRTC files identify it for the price of a directory listing.
    Without the wheel (a system toolkit), NVRTC itself is asked.
    """
    import importlib.util  # noqa: PLC0415

    for pkg in ("nvidia.cu13", "nvidia.cuda_nvrtc"):
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            continue
        for loc in (spec.submodule_search_locations or []) if spec else []:
            lib = Path(loc) / "lib"
            files = sorted(lib.glob("libnvrtc*.so*")) + sorted(lib.glob("nvrtc*.dll"))
            if files:
                return "nvrtc:" + ",".join(f"{f.name}:{f.stat().st_size}" for f in files)
    return "nvrtc-" + ".".join(map(str, nvrtc_version()))


@functools.cache
def supported_archs() -> tuple[str, ...]:
    """The ``sm_XY`` targets this NVRTC can compile for (``nvrtcGetSupportedArchs``)."""
    try:
        (archs,) = _check(_bindings().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")
    except AttributeError:  # bindings older than the call
        return ()
    return tuple(f"sm_{int(a)}" for a in archs)


@functools.cache
def include_dirs() -> tuple[str, ...]:
    """Header directories given to NVRTC: threadtile's helper headers, then the CUDA runtime
    headers (cuda_fp16.h, mma.h...) and CCCL (CUB, libcu++), located by cuda-pathfinder.

    A missing optional directory is left out rather than failing here: a source that does not
    include its headers still compiles, and one that does gets NVRTC's "cannot open source
    file" error naming the header.
    """
    dirs = [str(Path(__file__).resolve().parents[1] / "backends" / "cuda" / "include")]
    try:
        from cuda.pathfinder import find_nvidia_header_directory  # noqa: PLC0415
    except ImportError:
        return tuple(dirs)
    for lib in ("cudart", "cccl"):
        try:
            d = find_nvidia_header_directory(lib)
        except Exception:  # noqa: BLE001  (pathfinder raises several kinds; all mean "absent")
            d = None
        if d and d not in dirs:
            dirs.append(str(d))
    return tuple(dirs)


def _normalize_arch(arch: str) -> str:
    a = str(arch).strip()
    if a.isdigit():
        a = "sm_" + a
    if not re.fullmatch(r"(sm|compute)_\d+[af]?", a):
        raise ValueError(f"arch must look like 'sm_90' (or 'sm_90a'), got {arch!r}")
    return a


def _wants_minimal(source: str) -> bool:
    return all(inc.rsplit("/", 1)[-1] in MINIMAL_SAFE_INCLUDES
               for inc in _INCLUDE_RE.findall(source))


def _options(arch: str, std: str, options: tuple[str, ...], minimal: bool) -> list[bytes]:
    opts = [f"-arch={arch}", f"-std={std}"]
    opts += [f"-I{d}" for d in include_dirs()]
    if minimal:
        opts.append("-minimal")
    opts += [str(o) for o in options]
    return [o.encode() for o in opts]


# NVRTC releases whose ptxas is known to miscompile code threadtile generates, with what to do
KNOWN_BAD = [((13, 0), (13, 4), "its ptxas drops the negation of an operand that it fuses into "
              "a three-way integer max or min (VIMNMX3): max(a, max(b, -c)) computes "
              "max(a, b, c); found by threadtile's GPU fuzzer, fixed in NVRTC 13.4")]


@functools.cache
def _warn_known_bugs() -> None:
    """A warning, once a process, when the NVRTC in use is one of ``KNOWN_BAD``."""
    import warnings  # noqa: PLC0415

    v = nvrtc_version()
    for lo, hi, what in KNOWN_BAD:
        if lo <= v < hi:
            warnings.warn(f"NVRTC {v[0]}.{v[1]}: {what}. Upgrade it: pip install -U "
                          f"'nvidia-cuda-nvrtc>={hi[0]}.{hi[1]}'", RuntimeWarning, stacklevel=4)


def _compile(source: str, arch: str, name: str, options: tuple[str, ...], std: str,
             minimal: bool | None, target: str) -> CompileResult:
    nv = _bindings()
    _warn_known_bugs()
    arch = _normalize_arch(arch)
    if target == "cubin" and arch.startswith("compute_"):
        raise ValueError(f"a cubin needs a real architecture (sm_XY), not {arch!r}")
    if minimal is None:
        minimal = _wants_minimal(source)
    (prog,) = _check(nv.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                     "nvrtcCreateProgram")
    try:
        opts = _options(arch, std, tuple(options), minimal)
        (status,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        log = _read_log(nv, prog)
        if int(status) != 0:
            _, status_name = nv.nvrtcGetErrorString(status)
            status_name = status_name.decode() if isinstance(status_name, bytes) else status_name
            first = next((m for _f, _l, m in parse_log(log)), None) or (
                log.strip().splitlines()[0] if log.strip() else status_name)
            raise NvrtcError(f"NVRTC could not compile {name} for {arch}: {first}\n{log.rstrip()}",
                             log=log)
        if target == "cubin":
            (size,) = _check(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            buf = b"\0" * size
            _check(nv.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
        else:
            (size,) = _check(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            buf = b"\0" * size
            _check(nv.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
            buf = buf.rstrip(b"\0")
    finally:
        nv.nvrtcDestroyProgram(prog)
    out = CompileResult(buf)
    out.log = log
    return out


def _read_log(nv, prog) -> str:
    (size,) = _check(nv.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    if size <= 1:
        return ""
    buf = b"\0" * size
    _check(nv.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
    return buf.rstrip(b"\0").decode(errors="replace")


# The longest a compile may take, in seconds (``ct.compiler_timeout``), or None. NVRTC cannot
# be interrupted in the process, so a compile that ran longer raises once it has finished.
_timeout_s: list = [None]


def compiler_timeout() -> float | None:
    return _timeout_s[0]


def set_compiler_timeout(seconds: float | None) -> float | None:
    """Set the compile time limit (None: none); the previous one."""
    if seconds is not None and not seconds > 0:
        raise ValueError(f"compiler timeout must be a positive number of seconds, got {seconds!r}")
    prev, _timeout_s[0] = _timeout_s[0], seconds
    return prev


def _timed(fn, name: str, arch: str):
    limit = _timeout_s[0]
    t0 = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t0
    if limit is not None and took > limit:
        raise CompilerTimeout(f"compiling {name} for {arch} took {took:.1f} s, more than the "
                              f"compiler timeout of {limit:g} s (ct.compiler_timeout)")
    return out


def compile_cubin(source: str, arch: str, *, name: str = "kernel.cu",
                  options: tuple[str, ...] = (), std: str = "c++17",
                  minimal: bool | None = None) -> bytes:
    """Compile CUDA C++ ``source`` to a cubin for ``arch`` (``"sm_90"``); no GPU needed.

    ``options`` are raw NVRTC flags (``"-lineinfo"``, ``"--use_fast_math"``...). ``minimal``
    None turns ``-minimal`` on when the source's includes allow it (see the module docstring).
    The result is ``bytes`` (a :class:`CompileResult` whose ``.log`` holds NVRTC's warnings).
    Raises :class:`~threadtile.errors.NvrtcError` carrying the log on failure, and
    :class:`~threadtile.errors.CompilerTimeout` after a compile that took longer than
    ``ct.compiler_timeout`` allows.
    """
    return _timed(lambda: _compile(source, arch, name, options, std, minimal, "cubin"), name,
                  arch)


def compile_ptx(source: str, arch: str, *, name: str = "kernel.cu",
                options: tuple[str, ...] = (), std: str = "c++17",
                minimal: bool | None = None) -> str:
    """Like :func:`compile_cubin` but returns PTX text (for reading, not for loading: a PTX
    from a newer NVRTC does not load on an older driver)."""
    return _compile(source, arch, name, options, std, minimal, "ptx").decode()
