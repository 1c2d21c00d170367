"""Builds of a specialization for an architecture, with their launchers (:func:`build`): the
options a launch on the GPU compiles with (a Hopper k loop's TMA-only build and its fallback,
the producer warpgroup), then the cubin through the disk cache (compiler.py) and the
CompiledKernel that launches it (runtime/launcher.py)."""

from __future__ import annotations

import functools
import os

from . import blockfit
from .backends.cuda.tiles import TMA_ONLY, hopper_loops
from .compiler import Specialization, Target, wants_producer
from .ir import clusters, elastic, kloop
from .lang.types import float32
from .runtime import launcher as rt_launcher
from .runtime import tensormaps as rt_tensormaps

__all__ = ["build", "target_for", "precompile", "TMA_ONLY", "PRODUCER", "PRODUCER_THREADS",
           "PRODUCER_ROUND", "CLUSTER"]

# TMA_ONLY (backends/cuda/tiles.py): a build of Hopper k loops without the portable loop
PRODUCER = "-DTT_PRODUCER"  # tile/kloop_sm90.h: a warpgroup of its own issues the k loops' copies
PRODUCER_THREADS = 128
# tile/kloop_sm90.h: the producer's other warps round A's stages to tfloat32 where every Hopper
# k loop of the kernel is a tfloat32 loop (THREADTILE_PRODUCER_ROUND=0: the loop's own threads
# round them, as without a producer)
PRODUCER_ROUND = "-DTT_PRODUCER_ROUND"
# tile/kloop_sm90.h: blocks paired in clusters along x that share B's tiles (EXPERIMENTAL, only
# with THREADTILE_CLUSTERS=1 and where ir/clusters.py allows; correct on the GPU but slower:
# docs/performance.md)
CLUSTER = f"-DTT_CLUSTER={clusters.CLUSTER}"
# code that a producer warp would break: thread-level barriers and indices, threads that stop
_NO_PRODUCER = ("__syncthreads", "tt::syncthreads()", "threadIdx", 'asm volatile("exit;")',
                "tt_raised")


def target_for(spec: Specialization, arch: str, options: tuple = (),
               portable: bool = False, cluster: bool = True) -> Target:
    """The target :func:`build` compiles ``spec`` for: ``options`` and, for a Hopper k loop on
    sm_90a, the TMA-only build and the producer warpgroup where they apply."""
    opts = tuple(options)
    hopper = not portable and arch.endswith("90a") and bool(spec.cuda.tensormaps)
    tma_only = hopper
    # ... and with a producer warpgroup after the kernel's threads where only tile operations
    # synchronise them and the compiler wants it (THREADTILE_PRODUCER=0: never; where a
    # launch takes the portable loop, the producer waits idle)
    loops = hopper_loops(spec.module) if hopper else []
    producer = bool(loops) and \
        os.environ.get("THREADTILE_PRODUCER", "1") != "0" and not any(
        w in spec.cuda.text for w in _NO_PRODUCER) and wants_producer(spec.module,
                                                                       spec.cuda.scratch_sm90a)
    paired = tma_only and cluster and os.environ.get("THREADTILE_CLUSTERS") == "1" and \
        clusters.pairable(spec.module)
    rounding = producer and os.environ.get("THREADTILE_PRODUCER_ROUND", "1") != "0" and \
        all(kloop.loaded(x)[0].dtype == float32 for x in loops)
    return Target(arch, opts + (TMA_ONLY,) * tma_only + (PRODUCER,) * producer +
                  (PRODUCER_ROUND,) * rounding + (CLUSTER,) * paired)


def precompile(launches, arch: str | None = None) -> int:
    """The cubins of ``launches`` (an iterable of ``(kernel, arguments)``: a tuner's
    configurations) compiled at once in worker processes (runtime/parallel_compile.py) for
    ``arch`` (the current device's by default), before they are launched one by one. Anything
    that goes wrong here is left to the launches, which compile and report as ever. Returns
    how many cubins the workers wrote."""
    from .compiler import cubin_key  # noqa: PLC0415
    from .runtime import driver  # noqa: PLC0415
    from .runtime import parallel_compile as pc  # noqa: PLC0415

    try:
        arch = arch or driver.current_device().arch
        jobs = []
        for k, args in launches:
            spec = k._spec_for(list(args), {})
            t = target_for(spec, arch, k.options)
            cuda = spec.cuda
            jobs.append(pc.Job(cubin_key(spec, t), cuda.text, t.arch, cuda.entry, t.options,
                               cuda.fit_threads, cuda.scratch_for(t.arch, t.options),
                               cuda.fit_blocks))
        return pc.compile_many(jobs, worker=blockfit.__name__)
    except Exception:  # noqa: BLE001  (each launch compiles its own and reports)
        return 0


def build(spec: Specialization, arch: str, options: tuple = (), portable: bool = False,
          cluster: bool = True):
    """``spec`` compiled for ``arch`` (compiler.compile, through the disk cache), with its
    launcher: the ``(CompiledKernel, scratch bytes)`` a launch needs.

    A kernel whose k loops take Hopper's main loop on sm_90a is first built without their
    portable loop (TT_TMA_ONLY: half the compile time of a tile matmul), which runs only where
    TMA cannot read an operand; the compiled kernel's ``fallback`` then builds it with that
    loop (``portable``) for the launches whose arrays need it (CompiledKernel.launch)."""
    target = target_for(spec, arch, options, portable, cluster)
    tma_only, producer = TMA_ONLY in target.options, PRODUCER in target.options
    b = spec.build(target)
    compiled = spec.loaded.get(b.target)
    if compiled is None:
        compiled = spec.loaded[b.target] = rt_launcher.CompiledKernel(
            b.cubin, b.entry, list(b.params),
            [rt_tensormaps.TensorMapParam(a, box, rows) for (a, box), rows in
             zip(b.tensormaps, spec.cuda.tensormap_rows or (0,) * len(b.tensormaps))],
            cooperative=spec.cooperative)
        compiled.raises = spec.cuda.raises  # jit(debug=True): reported raises (raised.py)
        compiled.coop_block = spec.cuda.coop_block  # threadtile.coop's block (ir/coop.py)
        compiled.block_threads = spec.module.threads  # a tile kernel's block (auto_warps)
        compiled.scratch = b.scratch
        # a tile kernel whose blocks work in grid-stride loops over x: launched on a grid of
        # at least one wave (CompiledKernel.wave)
        compiled.elastic_x = bool(spec.module.threads) and not spec.cooperative and \
            elastic.enabled() and elastic.grid_stride(spec.module)
        if producer:  # a warpgroup after the kernel's threads (kloop_sm90.h)
            compiled.extra_threads = PRODUCER_THREADS
            compiled.block_threads += PRODUCER_THREADS
        # the block of a launch of a tile kernel (one tuple: a launch whose grid and block are
        # the last one's own objects skips their checks, CompiledKernel.launch)
        compiled.block = (compiled.block_threads, 1, 1) if compiled.block_threads else None
        compiled.label = spec.describe  # the compile trace's name for its load
        if tma_only:
            compiled.fallback = functools.cache(
                lambda: build(spec, arch, options, portable=True)[0])
        if CLUSTER in target.options:  # a grid whose x is odd takes the build without
            compiled.cluster_x = clusters.CLUSTER
            compiled.unclustered = functools.cache(
                lambda: build(spec, arch, options, cluster=False)[0])
    return compiled, b.scratch
