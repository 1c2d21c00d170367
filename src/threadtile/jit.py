"""``@jit``: a Python function becomes a kernel that specializes, compiles and launches.

A launch ``kernel[grid, block](args)`` looks at each argument's dtype, rank and layout (plus the
values of ``Constant`` parameters), finds or builds the matching specialization (compiler.py:
frontend -> IR -> passes -> CUDA C++ -> NVRTC, through the on-disk caches), and launches its
cubin through the runtime (runtime/launcher.py, runtime/abi.py), or runs it in the simulator
when ``backends/sim/switch.requested()`` says so. Repeated launches with the same kinds of
arguments take the steady-state launcher, with no Python frame where the C extension is built.
"""

from __future__ import annotations

import functools
import inspect
import os

import numpy as np

from . import errors
from .backends.sim import run as sim_run
from .backends.sim.switch import requested
from .compiler import Specialization, Target
from .frontend.specialize import constant_params
from .ir import nodes as ir
from .ir.printer import format_module
from .lang.thread import context
from .lang.types import Scalar, Type, scalar_of
from .runtime import driver
from .runtime import launcher as rt_launcher
from .runtime import tensormaps as rt_tensormaps
from .runtime.arrays import describe_all
from .runtime.arrays import kernel_type as arg_type

TRACEBACK_ENV = "THREADTILE_TRACEBACK"  # set to see the compiler's frames under compile errors


class Kernel:
    """A ``@jit`` function: a kernel (``device=False``) or a device function."""

    _threadtile_kernel = True

    def __init__(self, py_func, device: bool = False, lineinfo: bool = True,
                 fastmath: bool = False, max_registers: int | None = None,
                 num_warps: int | None = None, tile: bool = False,
                 occupancy: int | None = None):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.device = device
        # A fixed block of 32 * num_warps threads, known when compiling: what tile operations
        # need. A tile kernel (threadtile.tile.kernel) always has one and is launched with a
        # grid alone; a thread-level kernel that calls tile operations declares it.
        if num_warps is not None and (not isinstance(num_warps, int) or num_warps not in (
                1, 2, 4, 8, 16, 32)):
            raise ValueError(f"num_warps must be 1, 2, 4, 8, 16 or 32, got {num_warps!r}")
        if occupancy is not None and (not num_warps or not isinstance(occupancy, int) or
                                      not 1 <= occupancy <= 32 or occupancy * num_warps > 64):
            raise ValueError(
                f"occupancy={occupancy!r}: blocks per multiprocessor, an int from 1 to 32 with "
                "at most 64 warps in all, for a kernel with a fixed block (num_warps=)")
        self.tile = tile
        self.num_warps = num_warps
        self.occupancy = occupancy
        self.block_threads = 32 * num_warps if num_warps else None
        self._key_extra = (f"tile={tile} threads={self.block_threads} occupancy={occupancy}",
                           ) if (tile or num_warps) else ()
        self.options = tuple(["-lineinfo"] if lineinfo else []) + (
            ("--use_fast_math",) if fastmath else ()) + (
            (f"--maxrregcount={max_registers}",) if max_registers else ())
        sig = inspect.signature(py_func)
        self.param_names = list(sig.parameters)
        for p in sig.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise errors.KernelCompileError(
                    f"kernel parameter {p.name!r}: *args, **kwargs and keyword-only parameters "
                    "are not supported")
        self.constants = constant_params(py_func)
        self._const_pos = tuple(i for i, n in enumerate(self.param_names) if n in self.constants)
        self._runtime_names = [n for n in self.param_names if n not in self.constants]
        self._dispatch: dict[tuple, Specialization] = {}  # by argument types and constants
        # by the launch path's argument keys: what was built for the current device. Kept
        # apart from the Specialization, which compile(arch=...) may rebuild for another arch.
        self._launches: dict[tuple, tuple] = {}
        self._configs: dict[tuple, Launch] = {}

    def __repr__(self) -> str:
        kind = "device function" if self.device else "kernel"
        return f"<threadtile {kind} {self.py_func.__qualname__}>"

    # -- launching -----------------------------------------------------------------------------

    def __getitem__(self, config) -> Launch:
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        launch = self._configs.get(config) if isinstance(config, (tuple, int)) else None
        if launch is None:
            # a tile kernel picks its own block: kernel[grid](...), as cuTile's launch
            if self.tile and isinstance(config, tuple) and any(
                    not isinstance(c, int) for c in config):
                raise TypeError(f"{self.__name__} is a tile kernel: launch it with its grid "
                                f"alone, {self.__name__}[grid](...), or ct.launch(stream, "
                                f"grid, kernel, args); its block is {self.block_threads} "
                                "threads (num_warps)")
            launch = Launch(self, (config, self.block_threads) if self.tile else config)
            if isinstance(config, (tuple, int)) and len(self._configs) < 256:
                try:
                    self._configs[config] = launch
                except TypeError:  # unhashable config, e.g. a list
                    pass
        return launch

    def forall(self, n: int, threads_per_block: int = 256) -> Launch:
        """A launch configuration that covers ``n`` threads: ``kernel.forall(n)(args)``."""
        return self[-(-n // threads_per_block), threads_per_block]

    def __call__(self, *args):
        if context.current is not None:  # simulate(mode="python"): plain Python, per thread
            return self.py_func(*args)
        raise TypeError(f"{self.__name__} is a {'device function' if self.device else 'kernel'}"
                        f": {'call it from a kernel' if self.device else 'launch it with '}"
                        f"{'' if self.device else self.__name__ + '[grid, block](...)'}")

    # -- specialization ------------------------------------------------------------------------

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        """Separate runtime arguments from Constant values (given positionally or by name)."""
        n = len(self.param_names)
        if kwargs:
            args = list(args)
            for k, v in kwargs.items():
                if k not in self.param_names:
                    raise TypeError(f"{self.__name__}() has no parameter {k!r}")
                i = self.param_names.index(k)
                while len(args) <= i:
                    args.append(_MISSING)
                if args[i] is not _MISSING:
                    raise TypeError(f"{self.__name__}() got {k!r} twice")
                args[i] = v
        if len(args) != n or any(a is _MISSING for a in args):
            raise TypeError(f"{self.__name__}() takes {n} arguments "
                            f"({', '.join(self.param_names)}), got {len(args)}")
        runtime = [a for i, a in enumerate(args) if i not in self._const_pos]
        consts = {self.param_names[i]: args[i] for i in self._const_pos}
        return runtime, consts

    def specialize(self, types: list[Type], consts: dict) -> Specialization:
        """The specialization for runtime argument ``types`` and constant values ``consts``."""
        key = tuple(types) + tuple(sorted(consts.items()))
        spec = self._dispatch.get(key)
        if spec is not None:
            return spec
        params, it = [], iter(types)
        for name in self.param_names:
            if name in self.constants:
                v = consts[name]
                if isinstance(v, np.generic):
                    v = v.item()
                if not isinstance(v, (int, float, bool)):
                    raise TypeError(f"Constant parameter {name!r} must be an int, float or bool, "
                                    f"got {type(v).__name__}")
                params.append(ir.Param(name, scalar_of(type(v)), v, True))
            else:
                t = next(it)
                # cuTile's rule: a scalar argument of a tile kernel is loosely typed, so that
                # `x * eps` with a float32 tile and a Python float stays float32
                params.append(ir.Param(name, t, weak=self.tile and isinstance(t, Scalar)))
        spec = Specialization(self, params)
        self._dispatch[key] = spec
        return spec

    def _spec_for(self, args, kwargs) -> Specialization:
        runtime, consts = self._split(args, kwargs)
        return self.specialize([arg_type(a) for a in runtime], consts)

    def cuda_source(self, *args, **constants) -> str:
        """The CUDA C++ this kernel compiles to for arguments like ``args`` (example arrays,
        scalars or types; only dtype, rank and layout matter)."""
        return self._spec_for(args, constants).source

    def ir(self, *args, **constants) -> str:
        """The typed IR of this kernel for arguments like ``args``, as text."""
        return format_module(self._spec_for(args, constants).module)

    def compile(self, *args, arch: str = "sm_90", **constants) -> Specialization:
        """Compile for ``arch`` without a GPU; the result has ``.cubin`` and ``.source``."""
        spec = self._spec_for(args, constants)
        spec.build(Target(arch, self.options))
        return spec

    def resources(self, *args, **constants) -> dict:
        """Registers, shared and local memory per thread of the compiled kernel (needs a GPU)."""
        spec = self._spec_for(args, constants)
        compiled, _ = build(spec, driver.current_device().arch, self.options)
        return compiled.attributes()


_MISSING = object()


def build(spec: Specialization, arch: str, options: tuple = ()):
    """``spec`` compiled for ``arch`` (compiler.compile, through the disk cache), with its
    launcher: the ``(CompiledKernel, scratch bytes)`` a launch needs."""
    b = spec.build(Target(arch, tuple(options)))
    compiled = spec.loaded.get(b.target)
    if compiled is None:
        compiled = spec.loaded[b.target] = rt_launcher.CompiledKernel(
            b.cubin, b.entry, list(b.params),
            [rt_tensormaps.TensorMapParam(a, box) for a, box in b.tensormaps])
    return compiled, b.scratch


def _c_call_base():
    """The C base of Launch (runtime/_fastlaunch.c: its call runs the steady-state launcher
    without a Python frame), or None where the extension is not built or is disabled."""
    return rt_launcher.call_base(requested)  # whose call asks the one predicate


class _PyCall:
    """Launch's base in Python, where the C one is not built: the same steps."""

    __slots__ = ("direct",)

    def __call__(self, *args, **kwargs):
        d = self.direct
        if d is not None and not kwargs and not requested() and d(args):
            return None
        return self._call(*args, **kwargs)


class Launch(_c_call_base() or _PyCall):
    """``kernel[grid, block(, stream(, shared_bytes))]``: call it with the kernel's arguments.

    A call with no keywords and no simulation asked for first tries ``direct``, the
    steady-state launcher (``CompiledKernel.direct``), which launches at once when the
    arguments are of the kinds of an earlier launch (the C base runs a C launcher without a
    Python frame); anything else takes ``_call``, the general path."""

    __slots__ = ("kernel", "grid", "block", "stream", "shared_bytes")

    def __init__(self, kernel: Kernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch with kernel[grid, block], kernel[grid, block, stream] or "
                            "kernel[grid, block, stream, shared_bytes]")
        self.kernel = kernel
        self.grid = rt_launcher.normalize_dims(config[0], "grid")
        self.block = rt_launcher.normalize_dims(config[1], "block")
        self.stream = config[2] if len(config) > 2 else None
        self.shared_bytes = int(config[3]) if len(config) > 3 else 0
        self.direct = None  # CompiledKernel.direct's launcher, once a launch has succeeded
        if self.shared_bytes < 0:
            raise ValueError(f"shared_bytes must be >= 0, got {self.shared_bytes}")
        nt = kernel.block_threads
        if nt is not None and self.block[0] * self.block[1] * self.block[2] != nt:
            raise errors.LaunchError(
                f"{kernel.__name__} is compiled for blocks of {nt} threads (num_warps="
                f"{kernel.num_warps}); launched with block {tuple(self.block)}")

    def _call(self, *args, **kwargs):
        try:
            return self._general(args, kwargs)
        except errors.KernelCompileError as e:
            # the error names the kernel's line; the compiler's frames would only bury it
            if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
                raise
            raise e.with_traceback(None) from None

    def _general(self, args, kwargs):
        k = self.kernel
        if requested():
            return sim_run(k, self, args, kwargs)
        d = self.direct  # the base's call has tried it (and it declined) where it is set
        if kwargs or k._const_pos:
            runtime, consts = k._split(args, kwargs)
        else:
            runtime, consts = args, None
            if len(args) != len(k.param_names):
                k._split(args, kwargs)  # raises the argument-count error
        infos = describe_all(runtime, k._runtime_names)
        key = tuple([i.key for i in infos])
        if consts:
            key += tuple(sorted(consts.items()))
        hit = k._launches.get(key)
        if hit is None:
            hit = self._prepare(key, infos, consts or {})
        compiled, scratch = hit
        shared = self.shared_bytes + scratch  # the tile operations' scratch comes first
        compiled.launch(self.grid, self.block, self.stream, shared, infos)
        if d is None and not kwargs and not consts:
            self.direct = compiled.direct(self.grid, self.block, self.stream, shared, args,
                                          infos) or _never

    def _prepare(self, key, infos, consts) -> tuple:
        k = self.kernel
        spec = k.specialize([i.type for i in infos], consts)
        hit = k._launches[key] = build(spec, driver.current_device().arch, k.options)
        return hit


def _never(args) -> bool:
    return False


def jit(func=None, *, device: bool = False, **options):
    """Make ``func`` a kernel (``@jit``) or a device function (``@jit(device=True)``).

    Options: ``lineinfo`` (default True: profilers map instructions to Python lines),
    ``fastmath`` (approximate division, sqrt and transcendentals), ``max_registers``,
    ``num_warps`` (a fixed block of ``32 * num_warps`` threads, which a kernel that calls tile
    operations needs; docs/tiles.md; the kernel is then compiled with
    ``__launch_bounds__(32 * num_warps)``), ``occupancy`` (with ``num_warps``: how many blocks
    should fit on one multiprocessor, the second argument of ``__launch_bounds__``, which
    caps the registers per thread; cuTile's hint of that name).
    """
    if func is None:
        return lambda f: Kernel(f, device=device, **options)
    if isinstance(func, (str, list, tuple)) or not callable(func):
        raise TypeError("jit takes no signatures: types come from the arguments at launch; "
                        "write @jit or @jit(device=True)")
    return Kernel(func, device=device, **options)
