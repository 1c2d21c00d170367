"""The compile pipeline, one step per function, top to bottom:

    Python function ──lower──▶ ir.Module ──passes──▶ ir.Module ──emit──▶ CudaSource
                    ──nvrtc──▶ cubin (a Build for one target)

A :class:`Specialization` is one variant of a kernel (its argument types and constant values).
It makes each product on first use and keeps it: the simulator asks for ``module`` (the IR
after the passes, the one the CUDA backend prints), a launch asks for ``build(target)``.
What the host must know about the generated code (the shared-memory scratch the tile
operations need, the hidden tensor-map parameters) travels as typed fields of the
:class:`~threadtile.backends.cuda.emit.CudaSource`, cached on disk with its text.

Two disk caches (runtime/cache.py) make a warm start skip the work:

1. the C++ source with its fields, keyed by the kernel's Python source, the argument types,
   the constants and a fingerprint of the compiler's own files; an entry is used only if
   every global the kernel read still has the value it had (frontend/deps.py);
2. the cubin, keyed by the C++ text, the headers it includes, the target and the NVRTC in
   use.

With ``THREADTILE_TRACE`` set, each step prints its time (runtime/profiling.py): the source
cache's hit or miss, frontend, passes, emit, the cubin cache's hit or miss, nvrtc (and the
driver's load, in runtime/launcher.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import blockfit, errors
from .backends.cuda.emit import HEADERS, CudaSource, emit_module
from .frontend.deps import still_valid
from .frontend.source import get_source
from .frontend.specialize import specialize
from .ir import elastic, kloop, passes, tiling
from .ir import nodes as ir
from .lang.signatures import spell_type
from .lang.types import ArrayType, TileType, Type
from .runtime import cache, nvrtc, profiling

__all__ = ["Target", "Build", "Specialization", "lower", "compile"]


@dataclass(frozen=True)
class Target:
    """What a cubin is built for: the architecture (``sm_80``, ``sm_90a``, ...) and NVRTC's
    options (``-lineinfo``, ``--use_fast_math``, ``--maxrregcount=N``)."""

    arch: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class Build:
    """A specialization compiled for one target: the cubin, its entry point, the C++
    parameters (``ArrayType``/``Scalar``, in order) and, from the source's fields, the dynamic
    shared memory the tile operations take on this target and the hidden tensor-map
    parameters the launcher appends."""

    target: Target
    cubin: bytes
    entry: str
    params: tuple[Type, ...]
    scratch: int
    tensormaps: tuple

    @property
    def arch(self) -> str:
        return self.target.arch


def lower(fn, params: list[ir.Param], threads: int | None, occupancy: int | None,
          deps: list | None = None, launch_bounds: tuple[int, ...] | None = None,
          zero_division: str | None = None, debug: bool = False,
          tracer=profiling.NULL, occupancy_asked: int | None = None) -> ir.Module:
    """Python source -> typed IR -> the pass pipeline (ir/passes.py). ``threads`` is the block
    size where the kernel fixes it (tile operations need it), ``occupancy`` the blocks per
    multiprocessor it asks registers for, ``launch_bounds`` jit's option of that name; the
    globals the frontend read are appended to ``deps``; ``zero_division`` ("int", "all")
    makes a division by zero of those types raise ZeroDivisionError, and ``debug`` reports a
    raise on the GPU to the host (both jit's debug=True). ``tracer`` times the two steps
    (runtime/profiling.py). ``occupancy_asked`` is the kernel's hint as given; ``occupancy``
    is that hint scaled to a block the compiler grew (blockfit.py tries the hint first)."""
    block = f"block of {threads}" if threads else ""
    with tracer.phase("frontend", block):
        module = specialize(fn, params, deps, threads, zero_division)
    module.report_raises = debug
    module.occupancy = occupancy
    module.occupancy_asked = occupancy_asked
    module.launch_bounds = launch_bounds
    with tracer.phase("passes", block):
        passes.run(module)
    return module


MAX_PER_THREAD = 64  # elements of a (non-accumulator) tile a thread of an auto-sized block holds


def auto_threads(module: ir.Module) -> int:
    """The block a tile kernel without ``num_warps`` gets, as cuTile's compiler sizes its
    blocks itself: 4 warps, or 8 (two warpgroups of tensor-core multiplies) where its largest
    tensor-core accumulator (an "mma"-layout tile) is larger than 128x128 float32, which at 4
    warps would take over 128 registers a thread, or is 128x128 with k steps 64 deep or more
    and either 16-bit or inside another loop (a persistent kernel: 460 TFLOP/s against 376
    on 4, H200). 128x128 accumulators with 32-deep steps measured faster on 4 warps, several
    blocks sharing a multiprocessor (bench/tile_sweep.py).
    A kernel whose largest other tile would hold over MAX_PER_THREAD elements a thread gets
    more warps, up to 16, as long as each warp keeps whole 16-row strips of its products in
    fragments. A k loop of 8-bit floats gets the block its Hopper loop takes
    (``_float8_threads``).
    """
    f8 = _float8_threads(module)
    if f8:
        return f8
    tiles = [x.type for x in ir.walk_module_exprs(module)
             if isinstance(x, ir.TileOp) and isinstance(x.type, TileType)]
    acc = max((t.size for t in tiles if t.layout == "mma"), default=0)
    # other tiles: at most MAX_PER_THREAD elements a thread where up to 16 warps allow it
    # (LayerNorm's backward reduces 32x1024 tiles: 256 registers a thread each at 4 warps)
    # (an mma operand in shared memory holds no registers: ir/operands.py)
    big = max((t.size for t in tiles if t.layout != "mma" and not t.layout.startswith("smem")),
              default=0)
    # ... but not past whole 16-row strips a warp of its products in fragments: a 64-row
    # product on 8 warps leaves the tensor-core paths (25-38 TFLOP/s against 500 for cuTile's
    # FMHA sample at 64x64 tiles, H200)
    strips = min((t.shape[0] for t in _product_types(module)), default=0) // 16
    threads = 128
    while big > MAX_PER_THREAD * threads and threads < 512 and \
            (not strips or strips % (threads // 16) == 0):
        threads *= 2
    if acc > 128 * 128:
        return max(threads, 256)
    # a 128x128 k loop whose steps are 64 deep or more (a 16-bit K of 32 steps 64 deep:
    # tiling.sm90_step), 16-bit or inside another loop: two warpgroups of 64-row slices
    # (plain 128x128x64 516 TFLOP/s against 495 on 4 warps, batched 475 against 435,
    # persistent 460 against 376; 32-deep steps lose on 8: 320 against 494, H200). float32
    # operands (tfloat32) inside another loop at any depth: their Hopper loop runs 32-deep
    # steps either way, and persistent 128x128x64 on 8 warps made 195 TFLOP/s where
    # 128x128x32 on 4 made 153 (plain: 195 on either; H200, 6378c5b)
    looped = _looped_kloops(module)
    # a float32 k loop (tfloat32) whose Hopper loop would hold more registers a thread on 4
    # warps than keep its wgmma pipeline (ir/tiling.py sm90_tf32_regs: 64x256 tiles) and fits
    # 8: two warpgroups halve its slices
    for x in ir.walk_module_exprs(module):
        if isinstance(x, ir.TileOp) and x.op == "mma_loop" and threads == 128:
            a, b = kloop.loaded(x)
            if tiling.sm90_bytes(a, b, 128) and tiling.sm90_bytes(a, b, 256) and \
                    a.dtype.itemsize == 4 and \
                    tiling.sm90_tf32_regs(a, b, 128) > tiling.SM90_TF32_REGS >= \
                    tiling.sm90_tf32_regs(a, b, 256):
                return 256
    for x in ir.walk_module_exprs(module):
        if isinstance(x, ir.TileOp) and x.op == "mma_loop" and x.type.shape == (128, 128):
            a, b = kloop.loaded(x)
            deep = tiling.sm90_step(a, b, 256) >= 64 or a.dtype.itemsize == 4
            if deep and (a.dtype.itemsize == 2 or id(x) in looped):
                return max(threads, 256)
    # a 16-bit k loop of 128 rows or more and 64 columns inside another loop (a persistent
    # kernel, one block a multiprocessor): two warpgroups of half the rows each (persistent
    # 256x64x64 574 TFLOP/s against 511 on 4 warps, 128x64x64 411 against 364; plain loops,
    # several blocks a multiprocessor, lose a little on 8: 455 against 461, 401 against 430;
    # H200, float16 4096^3). A grid-stride kernel is launched on a full wave (ir/elastic.py):
    # where two 4-warp blocks fit a multiprocessor, as for a plain loop, it keeps 4 (128x64x64
    # 411 on 8 against 535 on 4, two blocks a multiprocessor; 256x64 does not fit two)
    elastic_ = elastic.enabled() and elastic.grid_stride(module)
    for x in ir.walk_module_exprs(module):
        if isinstance(x, ir.TileOp) and x.op == "mma_loop" and threads == 128 and \
                id(x) in looped and x.type.shape[0] % 128 == 0 and x.type.shape[1] == 64:
            a, b = kloop.loaded(x)
            if elastic_ and 2 * tiling.sm90_bytes(a, b, 128) <= tiling.SM90_SHARED_PER_SM:
                continue
            if a.dtype.itemsize == 2 and tiling.sm90_bytes(a, b, 256):
                return 256
    # several products in fragments (attention's scores and output): more warps where two of
    # them would take over 128 registers a thread, as long as each warp keeps whole row strips
    # (ir/fraglayout.py)
    kinds = _product_types(module)
    products = sorted((t.size for t in kinds), reverse=True)
    rows = min((t.shape[0] for t in kinds), default=0)
    while sum(products[:2]) > 128 * threads and threads < 256 and \
            rows % (16 * threads // 16) == 0:
        threads *= 2
    return threads


def _warn_split_strips(module: ir.Module, threads: int) -> None:
    """A PerformanceWarning for each 16-bit product whose rows the block's warps split below
    whole 16-row strips (a ``num_warps`` the user gave: ``auto_threads`` never does it)."""
    nw = threads // 32
    for x in ir.walk_module_exprs(module):
        if not (isinstance(x, ir.TileOp) and x.op == "mma" and x.type.layout == "mma"):
            continue
        a = x.args[0].type
        m = a.shape[0] if isinstance(a, TileType) and a.ndim == 2 else 0
        if a.dtype.bits == 16 and m % 16 == 0 and not tiling.whole_strips(m, nw):
            warnings.warn_explicit(
                f"the product of {m} rows runs on {nw} warps, fewer than 16 rows a warp: it "
                f"goes through the shared scratch instead of tensor-core fragments (many "
                f"times slower); num_warps={m // 16} or fewer keeps it in fragments",
                errors.PerformanceWarning, x.loc.filename, x.loc.line)


F8_BLOCKS = (256, 128, 512)  # the blocks an 8-bit k loop tries for its Hopper loop, in order


def _float8_threads(module: ir.Module) -> int | None:
    """The block for a kernel with a k loop of 8-bit floats: the one it has where the loop
    took the Hopper float8 loop (tile/kloop_sm90_f8.h: the default 4 warps where its plan
    fits them); where it did not, the first of F8_BLOCKS on which it would (two warpgroups
    first: one slice of 64 rows each for 128-row tiles). Else None. Counting the 8-bit tiles
    by their elements, as the rule below counts others, would give 128x256x128 tiles 16
    warps, on which no 128-row loop has a plan."""
    if _has_float8_loop(module):
        return module.threads
    arrays = {p.name for p in module.kernel.params if not p.is_constant}
    for s in ir.walk_stmts(module.kernel.body):
        got = kloop.match(s, arrays) if isinstance(s, ir.For) else None
        if got is None or got[0].type.dtype not in tiling.FLOAT8_TYPES:
            continue
        a, b = kloop.step_tiles(got[0], got[1], got[5])
        for threads in F8_BLOCKS:
            if tiling.sm90_f8_bytes(a, b, threads):
                return threads
    return None


def _has_float8_loop(module: ir.Module) -> bool:
    """Whether a k loop of the kernel took the Hopper float8 loop (an 8-bit ``mma_loop``)."""
    return any(isinstance(x, ir.TileOp) and x.op == "mma_loop" and kloop.is_float8(x)
               for x in ir.walk_module_exprs(module))


def _looped_kloops(module: ir.Module) -> set[int]:
    """The ids of the mma_loop ops that sit inside another loop of the kernel."""
    return {id(x) for s in ir.walk_stmts(module.kernel.body) if isinstance(s, (ir.For, ir.While))
            for t in ir.walk_stmts(s.body) for e in ir.stmt_exprs(t) for x in ir.walk_expr(e)
            if isinstance(x, ir.TileOp) and x.op == "mma_loop"}


def wants_producer(module: ir.Module, scratch_sm90a: int) -> bool:
    """Whether an sm_90a build of a tile kernel whose k loops take Hopper's main loop gets a
    producer warpgroup (tile/kloop_sm90.h; jit.build adds it to the builds without the
    portable loop). The producer's registers must cost no blocks: the block holds its
    multiprocessor anyway (8 warps or more, or over half its shared memory), and no
    ``occupancy`` was asked for. Its consumers then have 232 registers a thread where 8 warps
    had 255: a k loop inside another loop whose accumulator takes 128 registers a thread,
    with steps 64 deep or more (tiling.sm90_step: a K of 32 runs in steps of 64), keeps the
    block as it is (persistent 128x256x64 625 TFLOP/s without against 588 with; plain
    128x128x64 540 -> 600, persistent 128x128x64 524 -> 580, 64x256x64 457 -> 527; H200,
    bench/tile_sweep.py)."""
    threads = module.threads
    if not threads or module.occupancy:
        return False
    if _has_float8_loop(module):
        return False  # the float8 loop issues its own copies (its registers are counted)
    if threads < 256 and 2 * scratch_sm90a <= tiling.SM90_SHARED_PER_SM:
        return False
    looped = _looped_kloops(module)
    for x in ir.walk_module_exprs(module):
        if isinstance(x, ir.TileOp) and x.op == "mma_loop" and id(x) in looped and \
                threads >= 256 and x.type.size // threads >= 128 and \
                tiling.sm90_step(*kloop.loaded(x), threads) >= 64:
            return False
    return True


def _product_types(module: ir.Module) -> list[TileType]:
    """The types of the variables assigned an ``mma`` in fragments (one per variable)."""
    out = {}
    for f in module.kernel.all_functions():
        for s in ir.walk_stmts(f.body):
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.TileOp) and \
                    s.value.op == "mma" and s.value.type.layout == "mma":
                out[s.name] = s.value.type
    return list(out.values())


class Specialization:
    """One variant of a kernel: its IR, its CUDA source and the builds made from it.

    ``kernel`` is the ``jit.Kernel`` (its Python function, fixed block, occupancy and cache-key
    extras); ``params`` are the IR parameters, constants included.
    """

    def __init__(self, kernel, params: list[ir.Param]):
        self.kernel = kernel
        self.ir_params = params
        self.params = tuple(p.type for p in params if not p.is_constant)  # the C++ parameters
        self._module: ir.Module | None = None
        self._cuda: CudaSource | None = None
        self._deps: list = []
        self._builds: dict[Target, Build] = {}
        self.last: Build | None = None  # the build made or found most recently
        self.loaded: dict[Target, object] = {}  # the runtime's loaded kernels, by jit

    def describe(self) -> str:
        """The kernel's name and this variant's argument types and constants, as the compile
        trace names it: ``add(float32[::1], int64, BLOCK=128)``."""
        parts = [f"{p.name}={p.constant!r}" if p.is_constant else spell_type(p.type)
                 for p in self.ir_params]
        return f"{self.kernel.py_func.__name__}({', '.join(parts)})"

    @property
    def module(self) -> ir.Module:
        """The IR after the passes: what the simulator runs and the CUDA backend prints."""
        if self._module is None:
            self._deps = []
            k = self.kernel
            tracer = profiling.tracer(self.describe)
            threads = k.block_threads
            while True:
                self._deps = []
                # (an occupancy hint counts blocks of whatever size the compiler picks, as
                # cuTile's does; where it grew the block, the hint's blocks of the larger
                # one are tried first and those of the default size kept where ptxas spills
                # at that count: blockfit.py)
                occupancy = k.occupancy if not k.occupancy or threads == k.block_threads else \
                    max(1, k.occupancy * k.block_threads // threads)
                self._module = lower(k.py_func, self.ir_params, threads, occupancy,
                                     self._deps, getattr(k, "launch_bounds", None),
                                     getattr(k, "zero_division", None),
                                     bool(getattr(k, "numba_options", {}).get("debug")),
                                     tracer, k.occupancy)
                more = auto_threads(self._module) if getattr(k, "auto_warps", False) else None
                if not more or more == threads:
                    break
                threads = more
            if threads and not getattr(k, "auto_warps", False):
                _warn_split_strips(self._module, threads)
        return self._module

    @property
    def cuda(self) -> CudaSource:
        """The CUDA C++ and what the host must know about it (from the disk cache if there)."""
        if self._cuda is None:
            self._cuda = self._cached_cuda()
        return self._cuda

    @property
    def source(self) -> str:
        return self.cuda.text

    @property
    def entry(self) -> str:
        return self.cuda.entry

    @property
    def cooperative(self) -> bool:
        """Whether the kernel calls ``cg.this_grid()`` (numba's ``overload.cooperative``): it
        is launched cooperatively, all its blocks resident at once."""
        return self.cuda.cooperative

    def max_cooperative_grid_blocks(self, blockdim, dynsmem: int = 0) -> int:
        """The most blocks of ``blockdim`` (an int or a tuple) threads, with ``dynsmem``
        bytes of dynamic shared memory, that can be resident at once on the current device
        (the simulator's sm_90 under ``simulate()``): the largest grid a cooperative launch
        of this kernel may have."""
        return self.kernel.max_cooperative_blocks(self, blockdim, dynsmem)

    # the most recent build, for kernel.compile(...)'s callers
    @property
    def cubin(self) -> bytes | None:
        return self.last.cubin if self.last else None

    @property
    def arch(self) -> str | None:
        return self.last.arch if self.last else None

    def build(self, target: Target) -> Build:
        """This specialization compiled for ``target`` (made once per target)."""
        b = self._builds.get(target)
        if b is None:
            b = self._builds[target] = compile(self, target)
        self.last = b
        return b

    def _cached_cuda(self) -> CudaSource:
        fn = self.kernel.py_func
        try:
            text = get_source(fn).text
        except errors.KernelCompileError:
            text = None
        key = None
        tracer = profiling.tracer(self.describe)
        if text is not None and self._module is None:
            t0 = time.perf_counter()
            key = cache.make_key(
                "cuda-source", _compiler_fingerprint(), fn.__module__, fn.__qualname__,
                fn.__code__.co_filename, str(fn.__code__.co_firstlineno), text,
                repr([_param_token(p) for p in self.ir_params]), *self.kernel._key_extra)
            hit = cache.get(key)
            if hit is not None:
                try:
                    doc = json.loads(hit)
                    if still_valid(fn, doc["deps"]):
                        cuda = CudaSource.from_json(doc["cuda"])
                        tracer.event("source cache", "hit", _ms(t0))
                        return cuda
                except (ValueError, KeyError, TypeError):
                    pass  # a damaged or older entry is a miss
            tracer.event("source cache", "miss", _ms(t0),
                         "stale or damaged entry" if hit is not None else "")
        module = self.module
        with tracer.phase("emit"):
            cuda = emit_module(module)
        if key is not None:
            cache.put(key, json.dumps({"deps": self._deps, "cuda": cuda.to_json()}).encode())
        return cuda


def cubin_key(spec: Specialization, target: Target) -> str:
    """The cubin cache's key of ``spec`` built for ``target`` (what :func:`compile` looks up;
    a kernel the occupancy rule may refit has the rule's numbers in it too)."""
    return cache.make_key("cubin", spec.cuda.text, target.arch, " ".join(target.options),
                          nvrtc.compiler_id(), _headers_fingerprint(),
                          *((blockfit.rule(), spec.cuda.fit_blocks) if spec.cuda.fit_threads
                            else ()))


def compile(spec: Specialization, target: Target) -> Build:  # noqa: A001  (the pipeline's name)
    """The last step: the specialization's CUDA source through NVRTC for ``target``, by way of
    the cubin cache. NVRTC errors in the generated code come back as KernelCompileErrors at
    the Python line the ``#line`` directives name."""
    cuda = spec.cuda
    tracer = profiling.tracer(spec.describe)
    t0 = time.perf_counter()
    key = cubin_key(spec, target)
    cubin = cache.get(key)
    tracer.event("cubin cache", "miss" if cubin is None else "hit", _ms(t0), target.arch)
    if cubin is None:
        try:
            with tracer.phase("nvrtc", " ".join((target.arch,) + target.options)):
                fit = blockfit.compile_fitted(cuda.text, cuda.entry, target.arch,
                                              target.options, cuda.fit_threads,
                                              cuda.scratch_for(target.arch, target.options),
                                              cuda.fit_blocks)
            cubin = fit.cubin
            if fit.blocks:
                tracer.event("occupancy", "fit", None, f"__launch_bounds__("
                             f"{cuda.fit_threads}, {fit.blocks}) on {target.arch}")
        except errors.NvrtcError as e:
            raise _map_nvrtc_error(e, spec) from None
        cache.put(key, cubin)
    return Build(target, bytes(cubin), cuda.entry, spec.params,
                 cuda.scratch_for(target.arch, target.options), cuda.tensormaps)


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _param_token(p: ir.Param):
    t = p.type
    if isinstance(t, ArrayType):
        tok = [t.dtype.name, t.ndim, t.layout, t.space, t.readonly]
    else:
        tok = [getattr(t, "name", repr(t))]
    return [p.name, tok, repr(p.constant) if p.is_constant else None] + (
        [list(map(list, p.static_dims))] if p.static_dims else [])


@functools.cache
def _compiler_fingerprint() -> str:
    """Sizes and times of the files that turn Python into C++: a cached C++ source made by
    another version of the compiler must not be reused."""
    root = Path(__file__).parent
    parts = []
    for sub in ("frontend", "ir", "lang", "backends/cuda"):
        for f in sorted((root / sub).rglob("*")):
            if f.suffix in (".py", ".h"):
                st = f.stat()
                parts.append(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    st = Path(__file__).stat()
    parts.append(f"compiler.py:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.cache
def _headers_fingerprint() -> str:
    """The contents of the headers generated code includes: a cubin built against other
    headers (an edited tile.h, with the same generated text) must not be reused."""
    h = hashlib.sha256()
    for f in sorted(HEADERS.rglob("*.h")):
        h.update(f"{f.relative_to(HEADERS)}\0".encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _map_nvrtc_error(e: errors.NvrtcError, spec: Specialization) -> errors.KernelCompileError:
    log = getattr(e, "log", str(e))
    for filename, line, message in nvrtc.parse_log(log):
        if filename.endswith(".py"):
            loc = ir.Loc(filename, line, 0, None, spec.kernel.py_func.__name__)
            src_line = None
            try:
                with open(filename) as fh:
                    src_line = fh.read().splitlines()[line - 1]
            except (OSError, IndexError):
                pass
            return errors.KernelCompileError(
                f"the CUDA C++ generated for this line does not compile: {message}", loc=loc,
                source_line=src_line, hint="this is a threadtile bug or an unsupported "
                "combination; kernel.cuda_source(...) shows the generated code")
    return errors.KernelCompileError(f"NVRTC failed on the generated code:\n{log}")
