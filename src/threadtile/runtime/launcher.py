"""Launching a compiled kernel: check the arguments, pack them, ``cuLaunchKernel``.

What the parameters are in memory, and how an argument becomes them, is ``abi.py``; this module
launches. There are two launch paths:

- the **general path**, :meth:`CompiledKernel.launch`, given the arguments' ``ArgInfo`` records
  (:func:`threadtile.runtime.arrays.describe`): the common case (every argument exactly of its
  parameter's type, arrays on one device) is checked inline and packs each record's ``flat``
  values; anything else goes through :func:`abi.values`, which converts what converts safely and
  raises the errors users see. Host NumPy arrays are copied to the GPU and back around the
  launch. A launch packs into a ``ctypes`` parameter buffer that no other launch is packing into
  (the kernel keeps them in a list; a thread that finds it empty makes one) and launches
  through cuda-bindings' ``cuLaunchKernel``. ``RawKernel`` launches through it too, one
  :class:`CompiledKernel` per kind of argument list, with the parameters :func:`abi.raw_params`
  makes.
- the **steady state**, :meth:`CompiledKernel.direct`: once a launch configuration has launched
  with torch tensors and Python numbers, a launcher bound to those argument kinds checks each
  argument (exact type, dtype, device, rank, contiguity) and packs it without describing it, as
  :func:`abi.launcher_specs` specifies. It is ``_fastlaunch.Launcher``, an optional C extension
  (``setup.py``; built by ``pip install`` where a C compiler exists, or ``python setup.py
  build_ext --inplace`` in a checkout), which does those checks through the CPython API into a
  parameter buffer of its own and calls libcuda's ``cuLaunchKernel`` through its address (found
  with ctypes), skipping the cuda-bindings wrapper. Without the extension, or with
  ``THREADTILE_NO_CEXT=1`` set when this module is imported, it is :class:`PyLauncher`, the same
  checks in Python (:func:`abi.spec_values`) packing into the general path's buffers
  (:data:`FAST_LAUNCH` says which). Both decline (return False, launching nothing) anything that
  is not exactly of the recorded kinds; the general path then checks and raises.

Per-launch host overhead, measured with ``timeit`` (best of many runs) on this project's CI
container (2 vCPU AMD EPYC, Python 3.11; ``len(list)`` takes 17 ns there; a current desktop or
an H100 host is likely faster) with a stub in place of ``cuLaunchKernel``:

- ``describe`` of three objects exposing torch's tensor API (``get_device()``, ``shape``,
  ``dtype``, ``is_contiguous()``, ``data_ptr()``, ``stride()``): 2.7-2.9 us for the three
  (0.6 us of it is the fake tensor's own Python methods; torch's are C);
- ``CompiledKernel.launch`` for three arrays on one device and an int, up to the
  ``cuLaunchKernel`` call (argument checks, device and configuration checks, stream, buffer,
  ``pack_into`` of 10 fields): 1.6-1.7 us; ``kernel[grid, block](...)`` through the general
  path with such arrays (ready-made ArgInfo records, as a ``DeviceArray`` has): 4.3-4.4 us;
- the cuda-bindings ``cuLaunchKernel`` wrapper itself: 0.65 us (measured against a stub
  libcuda that returns at once; the real driver adds its own ~2 us).

The steady-state launcher there, for three 1-d fake tensors and an int, launching through a
stub that returns at once: with fakes whose methods are Python (0.53 us of each figure), the C
launcher takes 0.7-0.9 us and :class:`PyLauncher` 2.6 us plus the cuda-bindings wrapper; with
fakes whose methods are C builtins, as torch's are, the C launcher takes 0.57 us, most of it
those five attribute reads and calls per tensor (``dtype``, ``get_device()``, ``shape``,
``is_contiguous()``, ``data_ptr()``). Asking ``switch.requested()`` from the C ``Call`` before
it costs 0.05 us. Not yet measured with torch on a GPU host.
"""

from __future__ import annotations

import ctypes
import operator
import os
import struct
import sys
import warnings
from collections.abc import Callable
from typing import NamedTuple

from ..errors import LaunchError
from . import abi, arrays, devicearray, driver, profiling, tensormaps
from .arrays import HOST, type_key
from .driver import stream_handle, tls

# the optional C launcher (setup.py builds it; THREADTILE_NO_CEXT=1 ignores it)
if os.environ.get("THREADTILE_NO_CEXT", "") not in ("", "0"):
    _fastlaunch = None
else:
    try:
        from . import _fastlaunch
    except ImportError:
        _fastlaunch = None
FAST_LAUNCH = _fastlaunch is not None  # direct() builds C launchers (where libcuda is found)

_KEY, _FLAT, _DEVICE = (arrays.ArgInfo._fields.index(f) for f in ("key", "flat", "device"))

__all__ = ["dim3", "cdiv", "normalize_dims", "stream_handle", "CompiledKernel", "PyLauncher",
           "FAST_LAUNCH", "call_base", "check_config", "arrays_device", "device_copies",
           "copy_back"]


class dim3(NamedTuple):
    """Grid or block dimensions, as in CUDA: ``dim3(x, y=1, z=1)``."""

    x: int
    y: int = 1
    z: int = 1


def cdiv(a: int, b: int) -> int:
    """Ceiling division for positive ``b``: how many blocks of ``b`` cover ``a`` items."""
    return -(-a // b)


def normalize_dims(v, what: str = "dims") -> tuple[int, int, int]:
    """``v`` (an int, a 1-3 tuple/list, or anything with ``x, y, z``) as a 3-tuple of ints >= 1.

    Raises ``TypeError`` for something that is not a dimension and ``ValueError`` for a
    dimension below 1 or a sequence of more than 3 (numba's errors: ``griddim must be a
    sequence of 1, 2 or 3 integers, got [1, 2, 3, 4]``).
    """
    if type(v) is int:
        dims = (v, 1, 1)
    elif isinstance(v, (tuple, list)):
        if not 1 <= len(v) <= 3:
            raise ValueError(f"{what}dim must be a sequence of 1, 2 or 3 integers, got "
                             f"{list(v)!r}")
        dims = tuple(v) + (1,) * (3 - len(v))
    elif all(hasattr(v, a) for a in "xyz"):
        dims = (v.x, v.y, v.z)
    else:
        dims = (v,)
    out = []
    for d in dims:
        try:
            if isinstance(d, bool):
                raise TypeError
            d = operator.index(d)
        except TypeError:
            raise TypeError(f"{what}dim must be a sequence of integers, got "
                            f"{list(v) if isinstance(v, (tuple, list)) else [v]!r} (an int, a "
                            "tuple of 1 to 3 ints or a dim3)") from None
        if d < 1:
            raise ValueError(f"{what}dim must be >= 1 in every dimension, got "
                             f"{tuple(dims) + (1,) * (3 - len(dims))!r}")
        out.append(d)
    out += [1] * (3 - len(out))
    return out[0], out[1], out[2]


# ----------------------------------------------------------------------------------------------
# Warnings
# ----------------------------------------------------------------------------------------------

def _user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel of the first frame outside threadtile, so a warning
    names (and is shown once per) the user's launch line."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f, level = sys._getframe(1), 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg):
        f, level = f.f_back, level + 1
    return level


# ----------------------------------------------------------------------------------------------
# CompiledKernel
# ----------------------------------------------------------------------------------------------

class CompiledKernel:
    """A cubin's kernel ``entry`` taking ``params`` (the parameter kinds of ``abi.py``), loaded
    on first launch.

    ``launch(grid, block, stream, shared_bytes, infos)`` with 3-tuples ``grid``/``block`` (see
    :func:`normalize_dims`), ``stream`` None/int/stream object, and ``infos`` from
    :func:`threadtile.runtime.arrays.describe`. ``maps``: the hidden tensor-map parameters after
    the arguments; ``at``: the parameters' offsets where the driver has reported them;
    ``loaded``: a kernel already loaded (``driver.LoadedKernel``) to launch instead of loading
    ``cubin``, which several parameter lists of one ``RawKernel`` share.
    """

    raises: tuple = ()  # jit(debug=True): the exceptions it reports (runtime/raised.py)
    # a thunk giving the build to launch instead where a tensor map is absent (jit.build: a
    # Hopper k loop built without its portable loop), or None
    fallback = None
    # threads the block has beyond the kernel's own (jit.build: a producer warp); the fallback
    # build has none
    extra_threads = 0
    # blocks a cluster along x (builds.py CLUSTER), and a thunk giving the build without
    # clusters for grids whose x is not a multiple of it
    cluster_x = 1
    unclustered = None
    block = None  # a tile kernel's block as one 3-tuple (builds.build)
    # the kernel's blocks work in grid-stride loops over x alone (ir/elastic.py): a launch
    # whose grid holds fewer blocks than the device keeps resident gets more along x
    elastic_x = False
    scratch = 0  # the tile operations' dynamic shared memory in the launches' (builds.build)
    # what the compile trace calls it (a string, or a callable making one): jit.build names
    # the specialization; else the entry point
    label = None

    def __init__(self, cubin: bytes, entry: str, params: list, maps: list = (), *,
                 at: list | None = None, loaded=None, cooperative: bool = False):
        self.cubin = bytes(cubin)
        # launched with cuLaunchCooperativeKernel (the kernel syncs its grid): the driver
        # refuses a grid that cannot be resident at once, _configure names the limit first
        self.cooperative = cooperative
        self.entry = entry
        self.params = list(params)
        # hidden parameters after the arguments: tensor maps of array arguments (tensormaps.py)
        self.tensormaps = list(maps)
        self.layout = abi.param_layout(self.params + self.tensormaps, at)
        self._n = len(self.params)
        self._nall = self._n + len(self.tensormaps)
        # an argument whose ArgInfo key is its parameter's packs its `flat` values as they are
        self._keys = tuple(type_key(p) for p in self.params)
        self._pack = self.layout.struct.pack_into
        # parameter buffers no launch is packing into (list.pop and append are atomic): a launch
        # takes one, or makes one while other threads hold them all, and gives it back
        self._buffers = [self._new_buffer()]
        self._loaded = loaded
        self._func = None  # driver.LoadedKernel
        self._handle = None
        self._attrs: dict[int, dict] = {}  # device -> func_attributes
        # the last launch configuration that passed validation (grid and block by identity:
        # jit caches its 3-tuples per launch configuration)
        self._cfg = (None, None, -1, -2)
        # every configuration that passed (by value): a kernel launched with two grids in
        # turn (threadtile.compute's reduce: the tiles, then one block over the partials)
        # is checked once per configuration, not at each change
        self._cfgs_ok: set = set()
        self._cu_launch = None
        self._nvtx = False  # launches wrapped in NVTX ranges (THREADTILE_NVTX, read by _load)
        self._stream = (None, None)  # (int handle, CUstream): one attribute, read at once
        self._ex_config = None  # _launch_ex's last launch configuration
        self._waves: dict = {}  # (grid, block, shared bytes, device) -> the grid launched
        self._wave = (None, None, -1, -2, None)  # the last of them (grid, block by identity)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.entry}({', '.join(map(repr, self.params))})>"

    def _new_buffer(self) -> tuple:
        """A parameter buffer, the kernelParams array pointing at each parameter in it, and that
        array's address (0 for a kernel without parameters)."""
        buf = ctypes.create_string_buffer(max(self.layout.nbytes, 1))
        base = ctypes.addressof(buf)
        argv = (ctypes.c_void_p * max(self._nall, 1))(*[base + o for o in self.layout.offsets])
        return buf, argv, ctypes.addressof(argv) if self._nall else 0

    # -- loading -------------------------------------------------------------------------------

    def _load(self):
        func = self._loaded
        if func is None:
            with profiling.tracer(self.label or self.entry).phase("load"):
                func = driver.load_function(self.cubin, self.entry)
        layout = abi.driver_layout(self.entry, self.params + self.tensormaps, self.layout,
                                   driver.param_info(func), self._n)
        if layout is not self.layout:
            self.layout = layout
            self._pack = layout.struct.pack_into
            self._buffers = [self._new_buffer()]
        self._func = func
        self._handle = func.handle
        cu = driver._cu()
        if self.cooperative:
            coop = cu.cuLaunchCooperativeKernel  # the same arguments, less `extra`
            self._cu_launch = lambda *a: coop(*a[:-1])
        else:
            self._cu_launch = cu.cuLaunchKernel
        # THREADTILE_NVTX: each launch in a range named after the kernel, decided here once so
        # that a launch without ranges checks nothing (direct() then declines: every launch
        # takes this path)
        self._nvtx = profiling.nvtx_enabled()
        if self._nvtx:
            self._cu_launch = profiling.nvtx_wrap(self.entry, self._cu_launch)
        return func

    def accept_keys(self, keys: tuple) -> None:
        """Let the inline check take arguments whose ArgInfo keys are ``keys`` (one per
        parameter) as exact: their ``flat`` values pack at the parameters' formats as they
        are (RawKernel: Python ints for pointer and integer parameters)."""
        if len(keys) != self._n:
            raise ValueError(f"{self.entry}: {len(keys)} keys for {self._n} parameters")
        self._keys = keys

    def load(self):
        """Load the cubin now (normally done by the first launch); returns the loaded kernel."""
        return self._func if self._func is not None else self._load()

    def attributes(self, device: int | None = None) -> dict:
        """Registers per thread, static shared/local/constant memory and the largest block of
        this kernel on ``device`` (default: the current one). Needs a GPU."""
        dev = driver.current_index() if device is None else device
        driver.ensure_device(dev)
        func = self.load()
        return dict(driver.func_attributes(func, dev))

    def _attributes(self, dev: int) -> dict:
        a = self._attrs.get(dev)
        if a is None:
            a = self._attrs[dev] = driver.func_attributes(self._func, dev)
        return a

    # -- launching -----------------------------------------------------------------------------

    def launch(self, grid, block, stream, shared_bytes: int, infos, pdl: bool = False) -> None:
        """Launch on ``grid`` x ``block`` (3-tuples) with ``shared_bytes`` of dynamic shared
        memory on ``stream`` (None: the current stream of the arguments' framework, else the
        legacy default stream). Raises before submitting anything when arguments or limits are
        wrong. ``pdl``: a programmatic dependent launch (``_launch_ex``)."""
        # The common case, checked inline (a call per launch would cost more than the check):
        # each argument exactly of its parameter's type, so that its `flat` values are what
        # abi.values would make of it, and no host array nor a second device among them.
        # vals are pack_into's arguments: the buffer (set when packing), the offset, values.
        vals: list = [None, 0]
        dev, first = -1, None
        exact = len(infos) == self._n
        if exact:
            keys = self._keys
            i = 0
            for info in infos:
                # fields by index: an ArgInfo attribute is a descriptor call, costlier per
                # argument than the rest of this loop (and zip costlier than the counter)
                if info[_KEY] != keys[i]:
                    exact = False
                    break
                vals += info[_FLAT]
                d = info[_DEVICE]
                if d != dev and d != -1:  # -1: a scalar, or an array that does not say
                    if dev != -1 or d == HOST:
                        exact = False
                        break
                    dev, first = d, info
                i += 1
        if not exact:
            r = self._checked(infos)
            if r is None:
                return self._launch_host(grid, block, stream, shared_bytes, infos)
            vals, dev, first = r
            vals[:0] = (None, 0)
        if self.tensormaps:
            if self.cluster_x > 1 and grid[0] % self.cluster_x:
                return self.unclustered().launch(grid, block, stream, shared_bytes, infos, pdl)
            maps = tensormaps.values(self.tensormaps, infos)
            if self.fallback is not None and tensormaps.ZERO in maps:
                # a build without the portable k loop and an array TMA cannot read (with the
                # portable loop's scratch, which may be larger: tiles.scratch_sizes)
                fb = self.fallback()
                if self.extra_threads:  # (its block, one tuple: its checks made once)
                    block = fb.block
                return fb.launch(grid, block, stream, shared_bytes + fb.scratch - self.scratch,
                                 infos, pdl)
            vals += maps
        if dev < 0:
            dev = driver.current_index()
        elif tls.device != dev:
            driver.activate(dev)
        if self.elastic_x:
            grid = self.wave(grid, block, shared_bytes, dev)
        cfg = self._cfg
        if grid is not cfg[0] or block is not cfg[1] or shared_bytes != cfg[2] or dev != cfg[3]:
            c = (tuple(grid), tuple(block), shared_bytes, dev)
            if c in self._cfgs_ok:
                self._cfg = (grid, block, shared_bytes, dev)
            else:
                self._configure(grid, block, shared_bytes, dev)
                if len(self._cfgs_ok) < 64:
                    self._cfgs_ok.add(c)
        if stream is None:
            sh = framework_stream(first.framework, dev) if (
                first is not None and first.framework is not None) else 0
        elif type(stream) is int:
            sh = stream
        else:
            sh = stream_handle(stream)
        st = self._stream
        if sh != st[0]:
            st = self._stream = (sh, driver._cu().CUstream(sh))
        buffers = self._buffers
        try:
            b = buffers.pop()
        except IndexError:  # other threads are between their pack and their launch
            b = self._new_buffer()
        vals[0] = b[0]
        try:
            self._pack(*vals)
            err = (self._launch_ex if pdl else self._cu_launch)(
                self._handle, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                shared_bytes, st[1], b[2], 0)[0]
        except struct.error as e:
            raise abi.pack_error(self.entry, self.params, infos, e) from None
        finally:
            buffers.append(b)  # the driver has copied the parameters
        if err:
            self._launch_failed(err, grid, block, shared_bytes)

    __call__ = launch

    def wave(self, grid, block, shared_bytes: int, dev: int):
        """The grid an ``elastic_x`` kernel is launched on instead of ``grid``: x raised until
        the grid holds as many blocks as device ``dev`` keeps resident at once with this
        block and shared memory (one wave; ir/elastic.py proves the result the same), or
        ``grid`` itself where it holds that many already. The same tuple for the same
        configuration (the launch compares its last one by identity)."""
        last = self._wave  # (the steady state: jit passes the same grid and block objects)
        if grid is last[0] and block is last[1] and shared_bytes == last[2] and dev == last[3]:
            return last[4]
        key = (tuple(grid), tuple(block), shared_bytes, dev)
        out = self._waves.get(key)
        if out is None:
            # (loaded, and its dynamic shared memory limit raised to shared_bytes: the
            # occupancy the driver reports counts it)
            self._configure(grid, block, shared_bytes, dev)
            threads = block[0] * block[1] * block[2]
            most = driver.max_active_blocks(self._func, threads, shared_bytes)
            rest = grid[1] * grid[2]
            out = grid
            if grid[0] * rest < most:
                out = (most // rest, grid[1], grid[2])
            if len(self._waves) < 64:
                self._waves[key] = out
        self._wave = (grid, block, shared_bytes, dev, out)
        return out

    def _launch_ex(self, func, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, extra):
        """``cuLaunchKernelEx`` (cuLaunchKernel's arguments) for a programmatic dependent
        launch: the launch may start while the grid before it on the stream still runs, once
        that grid's blocks have all run ``griddepcontrol.launch_dependents`` or exited, and
        its ``griddepcontrol.wait`` waits for that grid to end (cuTile's
        ``programmatic_dependent_launch=True``). A cooperative kernel keeps its attribute."""
        cu = driver._cu()
        key = (gx, gy, gz, bx, by, bz, shared_bytes)
        cached = self._ex_config  # (key, stream, config): the last one, reused as it is
        if cached is None or cached[0] != key or cached[1] is not stream:
            c = cu.CUlaunchConfig()
            c.gridDimX, c.gridDimY, c.gridDimZ = gx, gy, gz
            c.blockDimX, c.blockDimY, c.blockDimZ = bx, by, bz
            c.sharedMemBytes, c.hStream = shared_bytes, stream
            ids = cu.CUlaunchAttributeID
            attrs = [cu.CUlaunchAttribute()]
            attrs[0].id = ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attrs[0].value.programmaticStreamSerializationAllowed = 1
            if self.cooperative:
                attrs.append(cu.CUlaunchAttribute())
                attrs[1].id = ids.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
                attrs[1].value.cooperative = 1
            c.attrs, c.numAttrs = attrs, len(attrs)
            cached = self._ex_config = (key, stream, c)
        return cu.cuLaunchKernelEx(cached[2], func, params, extra)

    def _checked(self, infos):
        """What the inline check declines, checked in full: the argument count, arguments of
        other types than their parameters (converted when safe, else TypeError), arrays whose
        device is unknown or differs, host arrays (returns None: copy around the launch)."""
        vals = abi.values(self.entry, self.params, infos)
        if any(info.device == HOST for info in infos):
            return None
        dev, first = arrays_device(self.entry, infos)
        return vals, dev, first

    def direct(self, grid, block, stream, shared_bytes: int, args, infos,
               consts: dict | None = None, narrow=(), pdl: bool = False):
        """A launcher for the common steady state, or None: after ``launch`` has accepted
        ``args`` (torch CUDA tensors and Python numbers) under this configuration, the
        returned ``go(args) -> bool`` launches later calls whose arguments are of exactly the
        same kinds (tensor type, dtype, rank, contiguity, device) without describing them
        first, and returns False, launching nothing, for anything else. It reads each tensor
        once into the packed buffer, which is what the general path does after building its
        ArgInfo records; those records were most of a launch's Python time.

        ``go`` is a ``_fastlaunch.Launcher`` (C: the same checks, a buffer of its own,
        ``cuLaunchKernel`` called through its address in libcuda) when that extension is built
        (:data:`FAST_LAUNCH`), else a :class:`PyLauncher`; both are built from the same
        :func:`abi.launcher_specs` (``consts`` and ``narrow`` as it takes them: a tile
        kernel's later calls then pass its Constants too, which must equal these). A
        programmatic dependent launcher (``pdl``) is a PyLauncher calling ``_launch_ex``."""
        if stream is not None and type(stream) is not int or self._handle is None or \
                self.tensormaps or self.cooperative or self._nvtx:
            return None
        r = abi.launcher_specs(self.params, self.layout, args, infos, consts, narrow)
        if r is None:
            return None
        specs, dev = r
        if self.elastic_x:
            grid = self.wave(grid, block, shared_bytes, dev)
        getter = _stream_getter("torch") if stream is None else stream
        go = None if pdl else self._c_launcher(grid, block, getter, shared_bytes, dev, specs)
        if go is None:
            go = PyLauncher(self, grid, block, getter, shared_bytes, dev, specs, pdl)
        return go

    def _c_launcher(self, grid, block, stream, shared_bytes: int, dev: int, specs):
        """``direct``'s launcher in C (``_fastlaunch.Launcher``: the same checks, its own
        parameter buffer, ``cuLaunchKernel`` through a function pointer), or None when the
        extension is not built or disabled, or libcuda's ``cuLaunchKernel`` cannot be found.
        ``stream``: an int handle or ``getstream(dev)``."""
        if _fastlaunch is None:
            return None
        addr = _cu_launch_address()
        if not addr:
            return None
        g, b, sh = tuple(grid), tuple(block), int(shared_bytes)
        cu = driver._cu()

        def failed(err):
            try:
                err = cu.CUresult(err)  # the enum, as the Python launcher reports it
            except ValueError:
                pass
            self._launch_failed(err, g, b, sh)

        # with one device, a tensor's is_cuda says it is on it (cheaper than get_device())
        return _fastlaunch.Launcher(addr, int(self._handle), g, b, sh, stream, dev, tls,
                                    tuple(specs), self.layout.nbytes, failed,
                                    one_device=driver.device_count() == 1)

    def _launch_failed(self, err, grid, block, shared_bytes: int) -> None:
        driver.check((err,), f"launching {self.entry!r} with grid {tuple(grid)}, block "
                             f"{tuple(block)}, {shared_bytes} bytes of dynamic shared memory")

    # -- the slow paths ------------------------------------------------------------------------

    def _configure(self, grid, block, shared_bytes: int, dev: int) -> None:
        """Validate a launch configuration (once per distinct one), loading on first use."""
        if self._func is None:
            self._load()
        check_config(self.entry, self._func, self._attributes(dev), grid, block, shared_bytes,
                     dev)
        if self.cooperative:
            threads = block[0] * block[1] * block[2]
            most = driver.max_active_blocks(self._func, threads, shared_bytes)
            nblocks = grid[0] * grid[1] * grid[2]
            if nblocks > most:
                raise LaunchError(
                    f"kernel {self.entry!r} syncs its grid (cg.this_grid()), so it is launched "
                    f"cooperatively, and a grid of {nblocks} blocks of {threads} threads is "
                    f"more than the {most} the device can hold resident at once; use at most "
                    "kernel.overloads[sig].max_cooperative_grid_blocks(blockdim) blocks")
        self._cfg = (grid, block, shared_bytes, dev)

    def _launch_host(self, grid, block, stream, shared_bytes, infos) -> None:
        """Copy host NumPy arrays to the GPU, launch, synchronize, copy them back."""
        new_infos, copies = device_copies(self.entry, infos, stream)
        self.launch(grid, block, stream, shared_bytes, new_infos)
        copy_back(copies, stream_handle(stream) if stream is not None else 0)


def call_base(requested: Callable[[], bool]) -> type | None:
    """The C base class of a launch configuration, ``_fastlaunch.Call``, whose call runs the
    steady-state launcher without a Python frame unless ``requested()`` (the simulation
    switch) is true; None where the extension is not built or is disabled."""
    if _fastlaunch is None:
        return None
    _fastlaunch.set_simulation(requested)
    return _fastlaunch.Call


class PyLauncher:
    """``CompiledKernel.direct``'s launcher where the C one is not built or cannot find libcuda:
    ``go(args) -> bool`` makes the C launcher's checks (:func:`abi.spec_values`) and launches
    from the general path's parameter buffers."""

    __slots__ = ("kernel", "grid", "block", "shared_bytes", "device", "specs", "stream",
                 "getstream", "pdl")

    def __init__(self, kernel: CompiledKernel, grid, block, stream, shared_bytes: int, dev: int,
                 specs: tuple, pdl: bool = False):
        self.kernel = kernel
        self.grid, self.block = tuple(grid), tuple(block)
        self.shared_bytes = int(shared_bytes)
        self.device = dev
        self.specs = tuple(tuple(s) for s in specs)  # (plain tuples unpack faster)
        # an int handle, or a callable giving the framework's current stream on a device
        self.getstream = stream if callable(stream) else None
        self.stream = 0 if callable(stream) else int(stream)
        self.pdl = pdl  # a programmatic dependent launch (CompiledKernel._launch_ex)

    def __call__(self, args) -> bool:
        dev = self.device
        if tls.device != dev:
            return False
        vals = abi.spec_values(self.specs, args, dev)
        if vals is None:
            return False
        k = self.kernel
        buffers = k._buffers
        try:
            buf = buffers.pop()
        except IndexError:  # other threads are between their pack and their launch
            buf = k._new_buffer()
        g, b = self.grid, self.block
        try:
            k._pack(buf[0], 0, *vals)
            sh = self.stream if self.getstream is None else self.getstream(dev)
            st = k._stream
            if sh != st[0]:
                st = k._stream = (sh, driver._cu().CUstream(sh))
            err = (k._launch_ex if self.pdl else k._cu_launch)(
                k._handle, g[0], g[1], g[2], b[0], b[1], b[2], self.shared_bytes, st[1], buf[2],
                0)[0]
        except struct.error:
            return False
        finally:
            buffers.append(buf)
        if err:
            k._launch_failed(err, g, b, self.shared_bytes)
        return True


def device_copies(entry: str, infos, stream) -> tuple[list, list]:
    """Warn (once per call site) and replace each host NumPy argument by a C-contiguous device
    copy. Returns the new infos and ``[(host_array, device_array)]`` for :func:`copy_back`."""
    import numpy as np  # noqa: PLC0415

    warnings.warn(
        f"kernel {entry!r} was given a NumPy array: it is copied to the GPU and back around "
        "the launch (and the launch waits for the kernel). Copy it once with "
        "threadtile.to_device(), or pass torch/CuPy arrays, to avoid the copies",
        arrays.HostArrayWarning, stacklevel=_user_stacklevel())
    dev, _ = arrays_device(entry, infos)
    driver.ensure_device(dev if dev >= 0 else driver.current_index())
    sh = stream_handle(stream) if stream is not None else 0
    out, copies = [], []
    for info in infos:
        if info.device == HOST:
            host = info.writeback
            d = devicearray.DeviceArray(host.shape, host.dtype)
            d.copy_to_device(np.ascontiguousarray(host), stream=sh)
            copies.append((host, d))
            out.append(d._arginfo)
        else:
            out.append(info)
    return out, copies


def copy_back(copies, stream: int) -> None:
    """After a launch with host arrays: wait for it, then copy each device copy back into its
    (writable) host array."""
    if stream:
        driver.stream_synchronize(stream)
    else:
        driver.synchronize()
    for host, d in copies:
        if not host.flags.writeable:
            continue
        if host.flags.c_contiguous:
            d.copy_to_host(host)
        else:
            host[...] = d.copy_to_host()


_CU_LAUNCH_ADDR: int | None = None


def _cu_launch_address() -> int:
    """The address of libcuda's ``cuLaunchKernel`` for the C launcher (0 when not found), found
    once. It is the entry point cuda-bindings launches through: the legacy default stream's,
    or the per-thread default stream's (``_ptsz``) when CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM
    asks cuda-bindings for that."""
    global _CU_LAUNCH_ADDR
    if _CU_LAUNCH_ADDR is None:
        try:
            lib = ctypes.CDLL("nvcuda.dll" if os.name == "nt" else "libcuda.so.1")
            ptds = int(os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM") or 0)
            f = getattr(lib, "cuLaunchKernel_ptsz" if ptds else "cuLaunchKernel")
            _CU_LAUNCH_ADDR = ctypes.cast(f, ctypes.c_void_p).value or 0
        except (OSError, AttributeError, ValueError):
            _CU_LAUNCH_ADDR = 0
    return _CU_LAUNCH_ADDR


def framework_stream(framework: str, device: int) -> int:
    """The current stream handle of ``framework`` ("torch", "cupy") on ``device``, through
    the cheapest getter the framework has."""
    get = _STREAM_GETTERS.get(framework)
    if get is None:
        get = _STREAM_GETTERS[framework] = _stream_getter(framework)
    return get(device)


_STREAM_GETTERS: dict = {}


def _stream_getter(framework: str):
    """The fastest way to ask ``framework`` for its current stream on a device."""
    if framework == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:  # ~0.1 us; torch.cuda.current_stream() builds a Stream object
            return raw
        return lambda dev: torch.cuda.current_stream(dev).cuda_stream
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        return lambda dev: cupy.cuda.get_current_stream().ptr
    return lambda dev: 0


def arrays_device(entry: str, infos) -> tuple[int, object]:
    """The device every array argument is on (-1 when none says) and the first such argument
    (whose framework gives the default stream). Arrays on two devices are a LaunchError."""
    dev, first = -1, None
    for info in infos:
        d = info.device
        if d >= 0:
            if dev < 0:
                dev, first = d, info
            elif d != dev:
                where = ", ".join(f"argument {i} on cuda:{x.device}"
                                  for i, x in enumerate(infos) if x.device >= 0)
                raise LaunchError(f"kernel {entry!r}: arrays on different devices ({where}); "
                                  "all arrays of one launch must be on one GPU")
    return dev, first


def check_config(entry: str, func, attrs: dict, grid, block, shared_bytes: int,
                 dev: int) -> None:
    """Check grid, block and dynamic shared memory against device ``dev`` and the kernel's
    attributes ``attrs`` (:func:`driver.func_attributes`); raise :class:`LaunchError` with the
    numbers, and raise the kernel's dynamic shared memory limit when more than the default
    48 KiB is asked for and the device allows it."""
    g = normalize_dims(grid, "grid")
    b = normalize_dims(block, "block")
    if len(grid) != 3 or len(block) != 3 or tuple(grid) != g or tuple(block) != b:
        raise TypeError("launch() takes grid and block as 3-tuples of ints; use "
                        "normalize_dims() first")
    info = driver.get_device(dev)
    threads = b[0] * b[1] * b[2]
    if threads > info.max_threads_per_block:
        raise LaunchError(f"block {b} has {threads} threads; {info.name} allows at most "
                          f"{info.max_threads_per_block} threads per block")
    for axis, n, lim in zip("xyz", b, info.max_block_dims):
        if n > lim:
            raise LaunchError(f"block {b}: the {axis} dimension can be at most {lim}")
    for axis, n, lim in zip("xyz", g, info.max_grid_dims):
        if n > lim:
            raise LaunchError(f"grid {g}: the {axis} dimension can be at most {lim} blocks")
    if type(shared_bytes) is not int or shared_bytes < 0:
        raise LaunchError(f"shared_bytes must be an int >= 0, got {shared_bytes!r}")
    if threads > attrs["max_threads_per_block"]:
        raise LaunchError(
            f"block {b} has {threads} threads, but kernel {entry!r} can run at most "
            f"{attrs['max_threads_per_block']} per block (it uses {attrs['num_regs']} registers "
            "per thread): use smaller blocks, or fewer registers (jit(max_registers=...))")
    static = attrs["shared_size_bytes"]
    limit = info.max_shared_per_block_optin
    if static + shared_bytes > limit:
        raise LaunchError(
            f"kernel {entry!r} needs {static + shared_bytes} bytes of shared memory per block "
            f"({static} static + {shared_bytes} dynamic); {info.name} allows at most {limit}")
    allowed = func._shared_set.get(dev, attrs["max_dynamic_shared_size_bytes"])
    if shared_bytes > allowed:
        driver.set_max_dynamic_shared(func, shared_bytes, dev)
