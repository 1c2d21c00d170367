"""Tile-level kernels with cuTile's names: ``import threadtile.tile as ct``.

A kernel that was written for ``import cuda.tile as ct`` ports by changing that import::

    import threadtile.tile as ct

    @ct.kernel
    def vector_add(a, b, c, tile: ct.Constant[int]):
        pid = ct.bid(0)
        ta = ct.load(a, index=(pid,), shape=(tile,))
        tb = ct.load(b, index=(pid,), shape=(tile,))
        ct.store(c, index=(pid,), tile=ta + tb)

    vector_add[ct.cdiv(n, 256)](a, b, c, 256)        # or ct.launch(stream, grid, kernel, args)

Tile operations are block-collective; a tile kernel may also use every thread-level name
(``threadtile.threadIdx``, ``shared.array``, ``shfl_down_sync``...), and a thread-level
``@threadtile.jit(num_warps=...)`` kernel may call tile operations. See docs/tiles.md.
"""

from __future__ import annotations

from ..frontend.specialize import Constant, ConstantAnnotation
from ..jit import Kernel, Launch
from ..lang.annotations import (
    Array,
    ArrayAnnotation,
    IndexedWithInt64,
    ListAnnotation,
    ScalarAnnotation,
    ScalarInt64,
)
from ..lang.tile import *  # noqa: F403  (the kernel language is this package's surface)
from ..lang.tile import UNSUPPORTED, UNSUPPORTED_STUBS
from ..lang.tile_more import *  # noqa: F403  (ensure_constant, assert_, divmod, bitwise_*)
from ..lang.types import (
    bfloat16,
    bool_,
    float4_e2m1fn,
    float8_e4m3fn,
    float8_e5m2,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    tfloat32,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..runtime.driver import stream_handle
from ..runtime.mode import requested
from ..tuning.autotuner import Autotuner
from . import tune
from .hostapi import (
    ByTarget,
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
    compiler_timeout,
    resolve_option,
)

DType = type(float32)


def kernel(func=None, *, num_warps: int | None = None, occupancy=None, num_ctas=None,
           opt_level=3, num_worker_warps=None, **options):
    """Make ``func`` a tile kernel: ``@ct.kernel`` or ``@ct.kernel(num_warps=8)``.

    The block has ``32 * num_warps`` threads. Without ``num_warps`` the compiler picks the
    block for each specialization, as cuTile's does: 4 warps, or 8 where a tensor-core
    accumulator is larger than 128x128 float32 (two warpgroups share its multiplies; at 4
    warps it would take over 128 registers a thread). Launch with the grid alone,
    ``kernel[grid](args)``, or ``ct.launch(stream, grid, kernel, args)``. Scalar arguments are
    loosely typed (a Python float times a float32 tile is float32). ``occupancy`` is the
    number of blocks that should fit on one multiprocessor at once (the compiler limits
    registers per thread to make room: ``__launch_bounds__(threads, occupancy)``); without it
    the only limit is the block's size. ``num_ctas`` (thread-block clusters) must be 1 on the
    target. Other options are ``threadtile.jit``'s (``lineinfo``, ``fastmath``,
    ``max_registers``). ``opt_level`` (0-3) is accepted and ignored: NVRTC always optimises.
    ``num_worker_warps`` (cuTile's: 4 or 8, the warps that compute, not counting a
    warp-specialized kernel's data-movement warps) is the block's ``num_warps`` where that is
    not given: threadtile's producer warpgroup, where the compiler adds one, comes on top of
    ``num_warps`` too.
    ``num_ctas``, ``occupancy``, ``num_warps`` and ``num_worker_warps`` may be
    ``ct.ByTarget(...)``: the value for sm_90, else its default.
    """
    hints = dict(num_warps=num_warps, occupancy=occupancy, num_ctas=num_ctas,
                 opt_level=opt_level, num_worker_warps=num_worker_warps, **options)
    num_worker_warps = resolve_option(num_worker_warps)
    if num_worker_warps not in (None, 4, 8):
        raise ValueError(f"ct.kernel(num_worker_warps={num_worker_warps!r}): must be 4 or 8")
    num_warps = resolve_option(num_warps)
    if num_warps is None:
        num_warps = num_worker_warps
    auto = num_warps is None
    num_warps = 4 if auto else num_warps
    occupancy = resolve_option(occupancy)
    num_ctas = resolve_option(num_ctas)
    opt_level = resolve_option(opt_level, 3)
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"ct.kernel(opt_level={opt_level!r}): must be 0, 1, 2 or 3")
    if num_ctas not in (None, 1):
        raise NotImplementedError(
            f"ct.kernel(num_ctas={num_ctas!r}): thread-block clusters are not supported yet; "
            "leave num_ctas out")

    def make(f):
        k = Kernel(f, tile=True, num_warps=num_warps, occupancy=occupancy,
                   auto_warps=auto, **options)
        k.hints = hints  # as given: replace_hints starts from them
        k.remake = kernel
        return k

    if func is None:
        return make
    if not callable(func):
        raise TypeError("use @ct.kernel or @ct.kernel(num_warps=...)")
    return make(func)


def function(func=None, **options):
    """A device function callable from tile kernels (cuTile's ``ct.function``); the same as
    ``threadtile.jit(device=True)``. Its parameters and result may be tiles."""
    if func is None:
        return lambda f: Kernel(f, device=True, **options)
    return Kernel(func, device=True, **options)


def launch(stream, grid, kernel, args, *, programmatic_dependent_launch: bool = False) -> None:
    """cuTile's launch: ``kernel[grid]`` on ``stream`` (a torch/CuPy stream, a handle, or None
    for the current stream) with the tuple ``args``. An autotuned kernel
    (``threadtile.autotune``) launches its choice for ``args``; ``grid`` may then be a function
    of the configuration (``lambda meta: ...``).

    ``programmatic_dependent_launch=True`` lets the kernel start before the kernel ahead of it
    on the stream has ended (Hopper and later; ``cuLaunchKernelEx``): its code up to
    ``grid_dependency_control_wait()`` may overlap that kernel's tail, which
    ``grid_dependency_control_launch_dependents()`` there can bring forward. Such launches
    go through cuda-bindings' ``cuLaunchKernelEx``, not the C launcher (about 15 µs of host
    time against 9); an autotuned kernel launches without it; the simulator runs launches in
    order either way."""
    if isinstance(kernel, Autotuner):
        return kernel.launch(stream, grid, args)
    if not getattr(kernel, "tile", False):
        raise TypeError("ct.launch() launches a @ct.kernel; launch thread-level kernels with "
                        "kernel[grid, block, stream](...)")
    if not isinstance(args, (tuple, list)):
        raise TypeError("ct.launch(stream, grid, kernel, args): args must be a tuple")
    if isinstance(grid, (tuple, list)):
        grid = tuple(grid) or (1,)  # (): one block, as cuTile launches it
        for k, g in enumerate(grid):
            if isinstance(g, int) and g > _GRID_MAX:  # cuTile's block ids are 24-bit
                raise ValueError(f"Grid[{k}] exceeds 24-bit limit: max={_GRID_MAX}, got={g}. "
                                 "Use multiple kernel launches for larger workloads.")
    if stream is not None and type(stream) is not int and not requested():
        stream = stream_handle(stream)  # (a handle: the launch may take the C launcher)
    pdl = bool(programmatic_dependent_launch)
    try:  # the launches of the last grids and streams, each checked once (a Launch)
        go = _LAUNCHES[kernel, grid, stream, pdl]
    except (KeyError, TypeError):  # TypeError: an unhashable grid or stream
        go = Launch(kernel, (grid, kernel.block_threads, stream))
        go.pdl = pdl
        if len(_LAUNCHES) >= 64:
            _LAUNCHES.clear()
        try:
            _LAUNCHES[kernel, grid, stream, pdl] = go
        except TypeError:
            pass
    go(*args)


_GRID_MAX = (1 << 24) - 1
_LAUNCHES: dict = {}


def __getattr__(name: str):
    if name in UNSUPPORTED:
        return UNSUPPORTED_STUBS[name]
    raise AttributeError(f"threadtile.tile has no attribute {name!r}; docs/tiles.md lists the "
                         "supported cuTile names")


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations",)]
_ = (Constant, ConstantAnnotation, Array, ArrayAnnotation, IndexedWithInt64, ListAnnotation,
     ScalarAnnotation, ScalarInt64, tune, compiler_timeout)
