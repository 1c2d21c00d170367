"""``@jit``: a Python function becomes a kernel that specializes, compiles and launches.

A launch ``kernel[grid, block](args)`` looks at each argument's dtype, rank and layout (plus the
values of ``Constant`` parameters), finds or builds the matching specialization (compiler.py:
frontend -> IR -> passes -> CUDA C++ -> NVRTC, through the on-disk caches), and launches its
cubin through the runtime (runtime/launcher.py, runtime/abi.py), or runs it in the simulator
when ``backends/sim/switch.requested()`` says so. Repeated launches with the same kinds of
arguments take the steady-state launcher, with no Python frame where the C extension is built.

``jit(signature)`` (numba's spellings, lang/signatures.py) compiles the kernel for the
signature's types when it is decorated, and a launch then converts its arguments to them or
refuses them. ``jit``'s options are numba's (:data:`NUMBA_OPTIONS`; docs/language.md, "@jit")
and threadtile's own (``num_warps``, ``occupancy``).
"""

from __future__ import annotations

import functools
import inspect
import os

import numpy as np

from . import errors, inspection
from . import resources as kernel_resources
from .backends.sim import lockstep as sim_lockstep
from .backends.sim import run as sim_run
from .backends.sim.switch import requested
from .builds import PRODUCER, TMA_ONLY, build  # noqa: F401  (jit.build, jit.TMA_ONLY)
from .compiler import Specialization, Target
from .frontend.specialize import constant_params, lower_device
from .ir import nodes as ir
from .ir.coop import block_mismatch
from .ir.printer import format_module
from .jitoptions import NUMBA_OPTIONS
from .jitoptions import numba_options as _numba_options
from .jitoptions import nvrtc_options as _nvrtc_options
from .lang import annotations as param_ann
from .lang import signatures as sigs
from .lang.thread import context
from .lang.types import NoneType, Scalar, Signature, TupleType, Type, is_type_like, scalar_of, void
from .runtime import argwrap, cutileargs, driver
from .runtime import launcher as rt_launcher
from .runtime import raised as rt_raised
from .runtime.arrays import describe_all, describe_host
from .runtime.arrays import kernel_type as arg_type

TRACEBACK_ENV = "THREADTILE_TRACEBACK"  # set to see the compiler's frames under compile errors


class Kernel:
    """A ``@jit`` function: a kernel (``device=False``) or a device function.

    Without signatures it compiles one specialization per kind of arguments it is launched
    (or called) with. With ``signatures`` (``jit("void(float32[:], int32)")``; a list of
    :class:`~threadtile.lang.types.Signature`) it is lowered for each of them when made, and a
    launch takes the one its arguments fit best, converted (``lang/signatures.select``).
    The other keywords are ``jit``'s options (:func:`jit`)."""

    _threadtile_kernel = True

    def __init__(self, py_func, device: bool = False, lineinfo: bool = True,
                 fastmath: bool = False, max_registers: int | None = None,
                 num_warps: int | None = None, tile: bool = False,
                 occupancy: int | None = None, *, signatures: list[Signature] | None = None,
                 auto_warps: bool = False, **numba_options):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self._pyfunc = py_func  # cuTile's name of it (its tests read kernel._pyfunc)
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
        opts = _numba_options(numba_options, device)
        self.numba_options = opts
        self.launch_bounds = opts["launch_bounds"]
        if self.launch_bounds and num_warps:
            raise ValueError("launch_bounds and num_warps both bound the block: give one")
        self.tile = tile
        if tile:
            from .frontend.tile_print import TILE_KERNELS
            TILE_KERNELS.add(py_func)
        self.num_warps = num_warps
        self.occupancy = occupancy
        self.block_threads = 32 * num_warps if num_warps else None
        # a tile kernel without num_warps: each specialization picks its block (compiler.py,
        # auto_threads), block_threads (4 warps) the first it tries
        self.auto_warps = bool(auto_warps and tile and num_warps)
        self._key_extra = (f"tile={tile} threads={self.block_threads} occupancy={occupancy}"
                           + (" auto_warps" if self.auto_warps else ""),
                           ) if (tile or num_warps) else ()
        if self.launch_bounds:
            self._key_extra += (f"launch_bounds={self.launch_bounds}",)
        self._init = dict(device=device, lineinfo=lineinfo, fastmath=fastmath,
                          max_registers=max_registers, num_warps=num_warps, tile=tile,
                          occupancy=occupancy, auto_warps=auto_warps, **numba_options)
        self.options = _nvrtc_options(lineinfo, fastmath, max_registers, opts)
        # debug=True: division by zero raises ZeroDivisionError (numba's Python error model);
        # with fastmath, float division is left to the hardware (numba's too)
        self.zero_division = ("int" if fastmath else "all") if opts["debug"] else None
        if opts["debug"]:  # the generated code differs: the CUDA source cache must tell
            self._key_extra += (f"debug zero_division={self.zero_division}",)
        sig = inspect.signature(py_func)
        self.param_names = list(sig.parameters)
        for p in sig.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise errors.KernelCompileError(
                    f"kernel parameter {p.name!r}: *args, **kwargs and keyword-only parameters "
                    "are not supported")
        self.constants = constant_params(py_func)
        # cuTile's annotations (ScalarInt64, IndexedWithInt64...), applied to each launch's
        # types; an annotation that combines two kinds is a TypeError at the launch, as cuTile's
        try:
            self.param_nodes, self._annotation_error = param_ann.parameter_nodes(py_func), None
        except (TypeError, ValueError) as e:
            self.param_nodes, self._annotation_error = {}, e
        # parameters with static_shape_dims/static_stride_dims: their values are part of
        # each specialization (static_consts)
        self.static_dims = {n: a for n, a in self.param_nodes.items()
                            if param_ann.has_static_dims(a)}
        self._const_pos = tuple(i for i, n in enumerate(self.param_names) if n in self.constants)
        self._runtime_names = [n for n in self.param_names if n not in self.constants]
        # tuple parameters with Constant items: those items are part of each specialization
        self._item_consts = {n for n, a in self.param_nodes.items()
                             if self.tile and param_ann.has_constant_items(a)}
        self._dispatch: dict[tuple, Specialization] = {}  # by argument types and constants
        # by the launch path's argument keys: what was built for the current device. Kept
        # apart from the Specialization, which compile(arch=...) may rebuild for another arch.
        self._launches: dict[tuple, tuple] = {}
        self._configs: dict[tuple, Launch] = {}
        self.specializations: dict[tuple, Kernel] = {}  # specialize(): kernels by types
        # numba's argument handlers (runtime/argwrap.py)
        self.extensions: list = list(opts["extensions"])
        self.declared_signatures: list[Signature] | None = None
        if signatures is not None:
            self._declare(list(signatures))

    # ct.kernel sets these: the options as given, and how to make a kernel of them
    hints: dict | None = None
    remake = None

    def replace_hints(self, **hints) -> Kernel:
        """A new tile kernel of the same function with these options changed (cuTile's
        ``kernel.replace_hints(occupancy=4)``); it compiles its own specializations."""
        if self.remake is None:
            raise TypeError(f"{self.__name__}: replace_hints() is for tile kernels "
                            "(@ct.kernel); make another @jit kernel of the function instead")
        known = set(inspect.signature(self.remake).parameters) - {"func", "options"} | set(
            self.hints)
        bad = sorted(set(hints) - known - {"lineinfo", "fastmath", "max_registers"})
        if bad:
            raise TypeError(f"replace_hints() got unknown option{'s' if len(bad) > 1 else ''} "
                            f"{', '.join(map(repr, bad))}")
        return self.remake(self.py_func, **{**self.hints, **hints})

    def __repr__(self) -> str:
        kind = "device function" if self.device else "kernel"
        return f"<threadtile {kind} {self.py_func.__qualname__}>"

    # -- signatures ----------------------------------------------------------------------------

    def _declare(self, declared: list[Signature]) -> None:
        """Fix the kernel's types to ``declared`` and lower each now, so that an error in the
        kernel is raised at the decorator, as numba compiles a signature eagerly. (A cubin
        needs the GPU's arch: it is built at the first launch, or by ``compile(arch=)``.)"""
        name = self.py_func.__name__
        if self.constants:
            raise TypeError(f"{name}: a kernel with Constant parameters takes no signature; "
                            "each Constant value compiles its own variant")
        for s in declared:
            if len(s.args) != len(self.param_names):
                raise TypeError(f"{name}: the signature {s} has {len(s.args)} argument "
                                f"type{'s' if len(s.args) != 1 else ''}, the function takes "
                                f"{len(self.param_names)} ({', '.join(self.param_names)})")
            if not self.device and s.return_type not in (None, void):
                raise TypeError(f"{name}: the signature {s} returns {s.return_type}, but a "
                                "kernel must have void return type (it writes its results "
                                "into arrays); use device=True for a function that returns")
        self.declared_signatures = declared
        for s in declared:
            if self.device:  # lowered on its own now; again inside each kernel that calls it
                lower_device(self.py_func, [ir.Param(n, t) for n, t in
                                            zip(self.param_names, s.args)], s.return_type)
            else:
                spec = self.specialization(list(s.args), {})
                spec.module  # noqa: B018  (lowering raises the kernel's compile errors here)

    @property
    def overloads(self) -> dict[tuple, Specialization]:
        """The specializations made so far, by argument types (numba's ``overloads``): one per
        signature of a kernel declared with signatures. Device functions are compiled inside
        the kernels that call them and have none of their own."""
        out: dict[tuple, Specialization] = {}
        for spec in self._dispatch.values():
            out.setdefault(tuple(p.type for p in spec.ir_params if not p.is_constant), spec)
        return out

    @property
    def signatures(self) -> list[tuple]:
        """The argument types of each specialization (numba's ``signatures``): the declared
        signatures' for a kernel declared with them, else those launched so far."""
        if self.declared_signatures is not None:
            return [tuple(s.args) for s in self.declared_signatures]
        return list(self.overloads)

    @property
    def specialized(self) -> bool:
        """Whether this kernel's types are fixed (declared with signatures, or made by
        ``specialize``): it compiles nothing new."""
        return self.declared_signatures is not None

    def specialize(self, *args) -> Kernel:
        """A kernel fixed to the types of ``args`` (example arguments or types), numba's
        ``specialize``: made once per list of types, and kept in ``specializations``."""
        if len(args) == 2 and isinstance(args[0], list) and isinstance(args[1], dict):
            return self.specialization(*args)  # the older name of specialization()
        if self.declared_signatures is not None:
            raise RuntimeError(f"{self.__name__}: Dispatcher already specialized (its types "
                               f"are fixed to {self._declared_text()}); specialize the kernel "
                               "it was made from")
        if self.constants:
            raise TypeError(f"{self.__name__}: a kernel with Constant parameters cannot be "
                            "specialized")
        types = tuple(_type_of(a) for a in args)
        k = self.specializations.get(types)
        if k is None:
            ret = None if self.device else void
            k = Kernel(self.py_func, **self._init, signatures=[Signature(types, ret)])
            self.specializations[types] = k
        return k

    def _declared_text(self) -> str:
        return " | ".join(str(s) for s in self.declared_signatures or ())

    def _select(self, types: list[Type]) -> Signature:
        """The declared signature a launch with arguments of ``types`` takes (the best fit;
        lang/signatures.select), or the TypeError numba raises."""
        declared = self.declared_signatures
        best = sigs.select(declared, types)
        if not best:
            raise TypeError(f"{self.__name__}: No matching definition for argument type(s) "
                            f"{sigs.spell_args(types)}; it was compiled for "
                            f"{self._declared_text()}")
        if len(best) > 1 and len({declared[i] for i in best}) > 1:
            raise TypeError(f"{self.__name__}: Ambiguous overloading for argument type(s) "
                            f"{sigs.spell_args(types)}: "
                            f"{' and '.join(str(declared[i]) for i in best)} fit equally well; "
                            "pass arguments of one signature's exact types")
        return declared[best[0]]

    def _coerce(self, args: list) -> list:
        """A launch's arguments converted to the declared signature they fit best: each scalar
        to its parameter's type (an integer wraps to the parameter's width, as numba's launch
        does), arrays as they are (a contiguous one fits a strided parameter); the TypeError
        "No matching definition" where none fits, before anything runs."""
        types = [_launch_type(a) for a in args]
        if None in types:
            raise TypeError(f"{self.__name__}: No matching definition for argument type(s) "
                            f"{', '.join(_spell_value(a, t) for a, t in zip(args, types))}; it "
                            f"was compiled for {self._declared_text()}")
        chosen = self._select(types)
        return [sigs.convert(a, p) if isinstance(p, Scalar) and p != t else a
                for a, t, p in zip(args, types, chosen.args)]

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
            # kernel[5, 128] of a tile kernel is the grid (5, 128): said the thread-level way,
            # the 128 is a block size; the first call checks that the kernel reads axis 1
            launch.check_axes = self.tile and any(n > 1 for n in launch.grid[1:])
            if isinstance(config, (tuple, int)) and len(self._configs) < 256:
                try:
                    self._configs[config] = launch
                except TypeError:  # unhashable config, e.g. a list
                    pass
        return launch

    def forall(self, n: int, threads_per_block: int = 256, stream=0, sharedmem: int = 0):
        """A launch configuration that covers ``n`` threads: ``kernel.forall(n)(args)``
        (numba's ``forall(ntasks, tpb=0, stream=0, sharedmem=0)``; ``tpb`` 0 means 256). With
        ``n == 0`` the call launches nothing; a negative ``n`` is a ValueError."""
        if n < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {n}")
        tpb = threads_per_block or 256
        if n == 0:
            return lambda *args, **kwargs: None
        return self[-(-n // tpb), tpb, stream, sharedmem]

    def __call__(self, *args):
        if context.current is not None:  # simulate(mode="python"): plain Python, per thread
            return self.py_func(*args)
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        raise ValueError(f"{self.__name__} is a kernel and its launch configuration was not "
                         f"specified: launch it with {self.__name__}[grid, block](...)")

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
            params = ", ".join(self.param_names)
            if self.tile:  # cuTile's words
                got = sum(a is not _MISSING for a in args)
                raise TypeError(f"{self.__name__}({params}): Kernel expects {n} argument"
                                f"{'' if n == 1 else 's'} but {got} "
                                f"{'was' if got == 1 else 'were'} given")
            raise TypeError(f"{self.__name__}() takes {n} arguments ({params}), got {len(args)}")
        if self.tile:  # (a frozen dataclass argument travels as a namedtuple of its own)
            cutileargs.check_plain_tuples(args)
        runtime = [a for i, a in enumerate(args) if i not in self._const_pos]
        consts = {self.param_names[i]: args[i] for i in self._const_pos}
        for i in self._const_pos if self.tile else ():
            if isinstance(args[i], (tuple, list)) and (
                    e := cutileargs.constant_tuple_error(args[i], f"kernel argument #{i}")):
                raise e
        if self._item_consts:  # `cfg: tuple[ct.Constant[int], int]`: the Constant items
            for a, name in zip(runtime, self._runtime_names):
                if name in self._item_consts:
                    for path, v in param_ann.constant_items(self.param_nodes[name], a):
                        consts[param_ann.item_key(name, path)] = v
        return runtime, consts

    def narrow_arrays(self, infos) -> list[bool]:
        """Per runtime argument, whether it is an array a tile kernel indexes in 32-bit (not
        annotated ``ct.IndexedWithInt64``: check_index_width)."""
        return [self.tile and i.kind == "array" and not param_ann.wide_index(
            self.param_nodes.get(name)) for name, i in zip(self._runtime_names, infos)]

    def check_index_width(self, infos) -> None:
        """A tile kernel's launch: an array not annotated ``ct.IndexedWithInt64`` must have
        extents and strides that fit int32, as cuTile indexes it (an OverflowError)."""
        if self.tile:
            cutileargs.check_index_width(self.param_nodes, self._runtime_names, infos)

    def static_consts(self, infos) -> dict:
        """The annotated static extents and strides of the arrays ``infos`` describe (one per
        runtime parameter), as entries ``"x.shape[0]": 16`` of a specialization's constants."""
        return cutileargs.static_consts(self.static_dims, self._runtime_names, infos)

    def specialization(self, types: list[Type], consts: dict) -> Specialization:
        """The specialization for runtime argument ``types`` and constant values ``consts``;
        for a kernel declared with signatures, the one of the signature they fit (a
        TypeError where none does)."""
        if self._annotation_error is not None:
            raise self._annotation_error
        if self.declared_signatures is not None:
            types = list(self._select(list(types)).args)
        key = tuple(types) + tuple(sorted(consts.items()))
        spec = self._dispatch.get(key)
        if spec is not None:
            return spec
        params, it = [], iter(types)
        dims: dict[str, list] = {}
        for ck, v in consts.items():
            if "@" in ck:  # a tuple parameter's Constant item (param_ann.item_key)
                pname, path = ck.split("@", 1)
                dims.setdefault(pname, []).append(
                    ("item", tuple(int(k) for k in path.split(",")), v))
                continue
            if "." in ck:  # "x.shape[0]": an annotated static extent (static_consts)
                pname, rest = ck.split(".", 1)
                attr, axis = rest[:-1].split("[")
                dims.setdefault(pname, []).append((attr, int(axis), v))
        for name in self.param_names:
            if name in self.constants:
                v = consts[name]
                if isinstance(v, np.generic):
                    v = v.item()
                if isinstance(v, (tuple, list)) and self.tile and cutileargs.constant_tuple(v):
                    # cuTile's ct.Constant[tuple]: a tuple of numbers, known when compiling
                    params.append(ir.Param(name, NoneType, cutileargs.frozen(v), True))
                    continue
                if not isinstance(v, (int, float, bool)):
                    raise TypeError(f"Constant parameter {name!r} must be an int, float or bool"
                                    f"{' (or a tuple of them)' if self.tile else ''}, "
                                    f"got {type(v).__name__}")
                params.append(ir.Param(name, scalar_of(type(v)), v, True))
            else:
                t = next(it)
                node = self.param_nodes.get(name)
                if node is not None:  # ScalarInt64: int64, strictly typed
                    t = param_ann.apply(node, t, name)
                # cuTile's rule: a scalar argument of a tile kernel is loosely typed, so that
                # `x * eps` with a float32 tile and a Python float stays float32
                # (the numbers of a tuple argument too)
                params.append(ir.Param(name, t, weak=self.tile and (
                                           isinstance(t, Scalar) and node is None or isinstance(
                                               t, TupleType) and not param_ann.has_scalar(node)),
                                       static_dims=tuple(sorted(dims.get(name, ()))),
                                       wide_index=param_ann.wide_index(node)))
        spec = Specialization(self, params)
        self._dispatch[key] = spec
        return spec

    def _spec_for(self, args, kwargs) -> Specialization:
        if len(args) == 1 and not kwargs and _spells_signature(args[0]):
            return self.specialization(list(sigs.signature(args[0]).args), {})
        if self.tile and any(cutileargs.cutile_arg(a) for a in args):
            args = cutileargs.as_tuples(args)
        runtime, consts = self._split(args, kwargs)
        if self.static_dims:  # example arrays give the annotated static extents and strides
            infos = []
            for i, (a, n) in enumerate(zip(runtime, self._runtime_names)):
                try:
                    infos.append(describe_host(a, i, n) if n in self.static_dims else None)
                except (TypeError, ValueError, AttributeError):
                    infos.append(None)  # a type, not an array: the dims stay runtime values
            consts = {**consts, **self.static_consts(infos)}
        return self.specialization([_type_of(a) for a in runtime], consts)

    def cuda_source(self, *args, **constants) -> str:
        """The CUDA C++ this kernel compiles to for arguments like ``args`` (example arrays,
        scalars or types; only dtype, rank and layout matter), or for one signature
        (``kernel.cuda_source("void(float32[:])")``)."""
        return self._spec_for(args, constants).source

    def ir(self, *args, **constants) -> str:
        """The typed IR of this kernel for arguments like ``args``, as text."""
        return format_module(self._spec_for(args, constants).module)

    def compile(self, *args, arch: str = "sm_90", **constants) -> Specialization:
        """Compile for ``arch`` without a GPU; the result has ``.cubin`` and ``.source``."""
        spec = self._spec_for(args, constants)
        spec.build(Target(arch, self.options))
        return spec

    # -- numba's questions about the compiled code ---------------------------------------------

    def _by_signature(self, signature, what):
        """``what(specialization)`` for the specialization of ``signature`` (any spelling);
        with None, for every one, by argument types (the value alone where the kernel is
        declared with a single signature), as numba's ``get_*`` answer."""
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: it is compiled inside the "
                            "kernels that call it; inspect those")
        if signature is not None:
            return what(self.specialization(list(sigs.signature(signature).args), {}))
        over = self.overloads
        if self.declared_signatures is not None and len(self.declared_signatures) == 1:
            return what(next(iter(over.values())))
        return sigs.ByTypes({types: what(spec) for types, spec in over.items()})

    def _resource(self, name: str, signature):
        arch_opts = self.options

        def get(spec):
            try:
                arch = driver.current_device().arch
            except errors.CudaDriverError:  # no GPU here: what ptxas reports for it
                return inspection.attributes(spec, inspection.current_arch(), arch_opts)[name]
            compiled, _ = build(spec, arch, arch_opts)
            return compiled.attributes()[name]
        return self._by_signature(signature, get)

    def get_regs_per_thread(self, signature=None):
        """Registers per thread: for ``signature`` (any spelling), else a dict by argument
        types, or the one value of a kernel declared with one signature. The driver answers
        where there is a GPU; without one, ptxas's report for the current (or simulated)
        device's architecture (inspection.attributes)."""
        return self._resource("num_regs", signature)

    def get_shared_mem_per_block(self, signature=None):
        """Static shared memory per block in bytes (the driver's, or ptxas's without a GPU)."""
        return self._resource("shared_size_bytes", signature)

    def get_local_mem_per_thread(self, signature=None):
        """Local memory per thread in bytes (the driver's, or ptxas's without a GPU)."""
        return self._resource("local_size_bytes", signature)

    def get_const_mem_size(self, signature=None):
        """Constant memory in bytes (the driver's, or ptxas's without a GPU)."""
        return self._resource("const_size_bytes", signature)

    def get_max_threads_per_block(self, signature=None):
        """The largest block the compiled kernel can run (the driver's; ptxas's without a
        GPU)."""
        return self._resource("max_threads_per_block", signature)

    def inspect_asm(self, signature=None):
        """The PTX for ``signature`` (any spelling), or a dict of it by argument types for
        every specialization made so far, for the current device (inspection.py)."""
        return inspection.asm(self, signature)

    def inspect_lto_ptx(self, signature=None):
        """numba's PTX after link-time optimisation: threadtile's PTX is already the whole
        program (device functions are compiled into the kernel), so it is ``inspect_asm``'s."""
        return inspection.asm(self, signature)

    def inspect_cuda(self, signature=None):
        """The CUDA C++ for ``signature``, or a dict of it by argument types."""
        return inspection.cuda(self, signature)

    def inspect_sass(self, signature=None):
        """The SASS for ``signature``, or a dict by argument types (needs ``nvdisasm``)."""
        return inspection.sass(self, signature)

    def inspect_types(self, file=None, signature=None, **kwargs) -> None:
        """Print each specialization's argument types and typed IR to ``file`` (stdout)."""
        inspection.types(self, file, signature)

    def inspect_llvm(self, signature=None):
        """There is no LLVM IR: threadtile compiles through CUDA C++ (raises, saying so)."""
        raise NotImplementedError(f"{self.__name__}.inspect_llvm(): {inspection.LLVM_MESSAGE}")

    def max_cooperative_blocks(self, spec: Specialization, blockdim, dynsmem: int = 0) -> int:
        """``spec.max_cooperative_grid_blocks``: the occupancy of the compiled kernel on the
        current GPU times its multiprocessors; under ``simulate()``, the simulated device's."""
        dims = (blockdim,) if isinstance(blockdim, int) else tuple(blockdim)
        threads = 1
        for d in dims:
            threads *= int(d)
        if requested():
            return sim_lockstep.cooperative_blocks(threads,
                                                   sim_lockstep.static_shared(spec) + dynsmem)
        compiled, scratch = build(spec, driver.current_device().arch, self.options)
        return driver.max_active_blocks(compiled.load(), threads, dynsmem + scratch)

    def resources(self, *args, block=None, shared_bytes: int = 0, arch: str | None = None,
                  **constants) -> kernel_resources.Resources:
        """What the kernel compiled for arguments like ``args`` (a launch's arguments, types,
        or one signature) takes: registers per thread, spill stores and loads, local, static
        and dynamic shared (``shared_bytes``, the launch's, plus the tile operations'
        scratch) and constant memory, and the blocks of ``block`` threads (a tile kernel's
        own; else 256) one multiprocessor holds at once, with what limits them. ``str()`` of
        the result is a table. From the driver on a GPU; from ptxas's report and the
        architecture's limits without one, or for ``arch`` (resources.py)."""
        spec = self._spec_for(args, constants)
        return kernel_resources.report(self, spec, build, block, shared_bytes, arch)


_MISSING = object()


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

    __slots__ = ("kernel", "grid", "block", "stream", "shared_bytes", "check_axes", "pdl")

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
        self.check_axes = False
        self.pdl = False  # a programmatic dependent launch (ct.launch's option: PyLauncher)
        if self.shared_bytes < 0:
            raise ValueError(f"shared_bytes must be >= 0, got {self.shared_bytes}")
        nt = kernel.block_threads
        lb = kernel.launch_bounds
        if lb and self.block[0] * self.block[1] * self.block[2] > lb[0]:
            raise errors.launch_bounds_error(
                f"{kernel.__name__} is compiled for blocks of at most {lb[0]} threads "
                f"(launch_bounds={lb}); launched with block {tuple(self.block)}")
        if nt is not None and self.block[0] * self.block[1] * self.block[2] != nt:
            raise errors.LaunchError(
                f"{kernel.__name__} is compiled for blocks of {nt} threads (num_warps="
                f"{kernel.num_warps}); launched with block {tuple(self.block)}")

    def _call(self, *args, **kwargs):
        if self.kernel.tile and any(cutileargs.cutile_arg(a) for a in args):
            args = cutileargs.as_tuples(args)
        try:
            if self.check_axes:
                self._check_axes(args, kwargs)
            return self._general(args, kwargs)
        except errors.KernelCompileError as e:
            # the error names the kernel's line; the compiler's frames would only bury it
            if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
                raise
            raise e.with_traceback(None) from None

    def _check_axes(self, args, kwargs) -> None:
        """Refuse a tile kernel's grid with blocks along an axis its code never reads (no
        ``ct.bid(axis)``, ``ct.num_blocks(axis)``): they would all repeat one another's work,
        as ``softmax[5, 128](...)`` written the thread-level way does (128 a block size)."""
        k = self.kernel
        read = {x.reg.rsplit(".", 1)[-1] for x in ir.walk_module_exprs(
            k._spec_for(args, kwargs).module) if isinstance(x, ir.Special) and
            x.reg.split(".")[0] in ("blockIdx", "gridDim")}
        for axis, n in enumerate(self.grid):
            if n > 1 and "xyz"[axis] not in read:
                raise errors.LaunchError(
                    f"{k.__name__}: the grid {tuple(self.grid)} has {n} blocks along axis "
                    f"{axis}, but the kernel never reads "
                    f"ct.bid({axis}) or ct.num_blocks({axis}): they would repeat one "
                    "another's work (and race on every store). A tile kernel's subscript "
                    "is its grid alone, and the compiler picks its threads (num_warps): "
                    f"launch {k.__name__}[({self.grid[0]},)](...) or ct.launch(stream, grid, "
                    "kernel, args)")
        self.check_axes = False

    def _general(self, args, kwargs):
        k = self.kernel
        on_gpu = not requested()
        if k.extensions or argwrap.has_wrapped(args, on_gpu):  # argument handlers, In/Out
            args, retr = argwrap.prepare(k.extensions, [_launch_type(a) for a in args], args,
                                         self.stream, on_gpu)
            self._launch(tuple(args), kwargs, False)
            for r in retr:
                r()
            return None
        return self._launch(args, kwargs, True)

    def _launch(self, args, kwargs, remember: bool):
        k = self.kernel
        if k.declared_signatures is not None:  # the arguments, converted to a signature's
            args, kwargs = tuple(k._coerce(k._split(args, kwargs)[0])), {}
        if requested():
            return sim_run(k, self, args, kwargs)
        d = self.direct  # the base's call has tried it (and it declined) where it is set
        if kwargs or k._const_pos or k._item_consts or k.tile:
            runtime, consts = k._split(args, kwargs)
        else:
            runtime, consts = args, None
            if len(args) != len(k.param_names):
                k._split(args, kwargs)  # raises the argument-count error
        infos = describe_all(runtime, k._runtime_names)
        k.check_index_width(infos)
        if k.static_dims:  # annotated static extents and strides: part of the specialization
            consts = {**(consts or {}), **k.static_consts(infos)}
        key = tuple([i.key for i in infos])
        if consts:
            key += tuple(sorted(consts.items()))
        hit = k._launches.get(key)
        if hit is None:
            hit = self._prepare(key, infos, consts or {})
        compiled, scratch = hit
        shared = self.shared_bytes + scratch  # the tile operations' scratch comes first
        block = compiled.block if k.auto_warps or compiled.extra_threads else self.block
        want = getattr(compiled, "coop_block", ())  # threadtile.coop's (ir/coop.py)
        if want and (msg := block_mismatch(k.__name__, want, block)):
            raise errors.LaunchError(msg)
        compiled.launch(self.grid, block, self.stream, shared, infos, self.pdl)
        if compiled.raises:  # jit(debug=True): an exception the kernel raised, raised here
            rt_raised.check(compiled, self.stream)
            return None
        if d is None and remember and not kwargs:
            if not consts:
                self.direct = compiled.direct(self.grid, block, self.stream, shared, args,
                                              infos, pdl=self.pdl) or _never
            elif k.tile and not k._item_consts and not k.static_dims:  # Constants: by value
                self.direct = compiled.direct(
                    self.grid, block, self.stream, shared, runtime, infos,
                    {i: args[i] for i in k._const_pos}, k.narrow_arrays(infos),
                    pdl=self.pdl) or _never

    def _prepare(self, key, infos, consts) -> tuple:
        k = self.kernel
        spec = k.specialization([i.type for i in infos], consts)
        hit = k._launches[key] = build(spec, driver.current_device().arch, k.options)
        carveout = k.numba_options["shared_memory_carveout"]
        if carveout is not None:
            driver.set_shared_carveout(hit[0].load(), carveout)
        return hit


def _never(args) -> bool:
    return False


def jit(func_or_sig=None, *, device: bool = False, **options):
    """Make a function a kernel (``@jit``) or a device function (``@jit(device=True)``).

    ``func_or_sig`` is the function, or signatures, as numba takes them: one
    (``"void(float32[:], int32)"``, ``void(float32[:], int32)``, a tuple of argument types,
    numba's own types and signatures) or a list of them; ``jit(signatures)`` returns the
    decorator. A kernel with signatures is lowered for each when decorated (its compile
    errors are raised there), and a launch converts its arguments to the signature they fit
    best or raises a TypeError ("No matching definition"). A device function's signature may
    give its return type (``"float32(float32, float32)"``); calls convert their arguments.

    Options (docs/language.md, "@jit", says what each means here): ``lineinfo`` (default
    True: profilers map instructions to Python lines), ``fastmath``, ``max_registers``,
    ``debug``, ``opt``, ``launch_bounds`` (``__launch_bounds__``), ``cache``, ``inline``,
    ``forceinline``, ``lto``, ``shared_memory_carveout``, ``link`` and ``extensions`` (empty
    only), ``boundscheck`` (not True); threadtile's own: ``num_warps`` (a fixed block of
    ``32 * num_warps`` threads, which a kernel that calls tile operations needs; docs/tiles.md;
    compiled with ``__launch_bounds__(32 * num_warps)``), ``occupancy`` (with ``num_warps``:
    how many blocks should fit on one multiprocessor, the second argument of
    ``__launch_bounds__``; cuTile's hint of that name).
    """
    _numba_options({k: v for k, v in options.items() if k in NUMBA_OPTIONS}, device)
    unknown = set(options) - set(NUMBA_OPTIONS) - {"lineinfo", "fastmath", "max_registers",
                                                   "num_warps", "occupancy"}
    if unknown:
        raise TypeError(f"jit() got unknown option{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(sorted(unknown))}; its options are numba's "
                        f"({', '.join(sorted(NUMBA_OPTIONS))}, lineinfo, fastmath, "
                        "max_registers) and num_warps, occupancy")
    if func_or_sig is None:
        return lambda f: jit(f, device=device, **options)
    if sigs.is_signature(func_or_sig):
        declared = sigs.signatures(func_or_sig)
        return lambda f: Kernel(_function(f), device=device, signatures=declared, **options)
    if not callable(func_or_sig):
        raise TypeError(f"jit() takes a function or signatures, got {func_or_sig!r}")
    return Kernel(_function(func_or_sig), device=device, **options)


def _function(f):
    """The Python function to compile: a jitted one is compiled anew from its own."""
    if isinstance(f, Kernel):
        return f.py_func
    if not callable(f):
        raise TypeError(f"jit(signature) decorates a function, got {f!r}")
    return f


def _type_of(a) -> Type:
    """The type an example argument or a type (threadtile's, numba's, a string) stands for."""
    if isinstance(a, str) or is_type_like(a):
        return sigs.as_type(a)
    return arg_type(a)


def _launch_type(a) -> Type | None:
    """The type of a launch argument, or None where kernels take no such argument."""
    try:
        return arg_type(a)
    except TypeError:
        pass
    try:
        return describe_host(a).type
    except (TypeError, ValueError):
        return None


def _spell_value(a, t: Type | None) -> str:
    """A launch argument's type for a message, also where kernels take no such argument."""
    if t is not None:
        return sigs.spell_type(t)
    if isinstance(a, complex):
        return "complex128"
    dt, nd = getattr(a, "dtype", None), getattr(a, "ndim", None)
    if dt is not None and isinstance(nd, int) and nd > 0:
        return f"{dt}[{', '.join(':' * nd)}]"
    return str(dt) if dt is not None else type(a).__name__


def _spells_signature(a) -> bool:
    """Whether one argument of ``compile``/``ir``/``cuda_source`` is a whole signature."""
    return isinstance(a, (str, Signature)) or sigs.is_signature(a) and not isinstance(
        a, list) and (not isinstance(a, tuple) or all(is_type_like(x) or isinstance(x, str)
                                                      for x in a))
