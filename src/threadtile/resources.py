"""``kernel.resources(...)``: what one specialization of a kernel takes from a multiprocessor,
and how many of its blocks fit on one at once.

Without a GPU (or with ``arch=`` given, or under ``simulate()``) the numbers come from ptxas's
report on the cubin threadtile builds for that architecture (NVRTC with ``-Xptxas=-v``:
registers, spill stores and loads, the stack frame, static shared memory, barriers), and the
occupancy is computed from the architecture's limits (``ir/resources.py``: ``ARCH_LIMITS``,
``occupancy``), by the rules of the driver's occupancy calculator. On a GPU the driver answers:
its function attributes and ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` for the build a
launch would use; only the spills, which the driver does not report, come from ptxas (the same
NVRTC and options, so the same code).

The dynamic shared memory counted is the launch's (``shared_bytes``) plus the scratch the tile
operations take (added to every launch of the kernel). A tile kernel's block is its own; a
thread-level kernel's is ``block=`` (an int or a tuple), 256 threads where not given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import inspection
from .ir.resources import arch_limits, occupancy
from .runtime import driver, mode
from .runtime.devices import get_current_device

__all__ = ["Resources", "report", "DEFAULT_BLOCK"]

DEFAULT_BLOCK = 256  # a thread-level kernel's block where resources() is not given one


@dataclass(frozen=True)
class Resources:
    """One specialization's resources on one architecture (``str()`` is a readable table).

    Bytes throughout; ``blocks_per_sm`` is the most blocks of ``block`` threads one
    multiprocessor holds at once, ``limits`` the limit each resource sets on its own
    ("warps", "registers", "shared memory", "blocks", "barriers"; computed from the
    architecture's table, empty for one it does not know) and ``limited_by`` those that set
    the smallest. ``source`` is ``"ptxas"`` (no GPU asked) or ``"driver"``."""

    kernel: str
    arch: str
    source: str
    registers: int
    spill_stores: int
    spill_loads: int
    local_bytes: int
    static_shared: int
    dynamic_shared: int
    scratch: int
    const_bytes: int
    barriers: int
    max_threads_per_block: int
    block: int
    block_given: bool
    blocks_per_sm: int | None
    warps_per_sm: int | None
    limits: dict = field(default_factory=dict)
    limited_by: tuple[str, ...] = ()

    @property
    def shared_per_block(self) -> int:
        """Static and dynamic shared memory of one block."""
        return self.static_shared + self.dynamic_shared

    @property
    def warps_per_block(self) -> int:
        return -(-self.block // 32)

    @property
    def active_warps(self) -> int | None:
        """Warps resident on one multiprocessor at full occupancy of this block."""
        if self.blocks_per_sm is None:
            return None
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float | None:
        """Active warps over the most a multiprocessor holds (0 to 1), or None (unknown)."""
        if self.active_warps is None or not self.warps_per_sm:
            return None
        return self.active_warps / self.warps_per_sm

    def __str__(self) -> str:
        src = "the driver (spills: ptxas's report)" if self.source == "driver" else \
            "ptxas's report"
        rows = [
            ("registers per thread", f"{self.registers}"),
            ("spill stores / loads", f"{self.spill_stores} / {self.spill_loads} bytes"),
            ("local memory / thread", f"{self.local_bytes} bytes"),
            ("shared memory / block", f"{self.static_shared} static + {self.dynamic_shared} "
                                      f"dynamic = {self.shared_per_block} bytes" +
             (f" ({self.scratch} of it the tile operations' scratch)" if self.scratch else "")),
            ("constant memory", f"{self.const_bytes} bytes"),
            ("barriers", f"{self.barriers}"),
            ("largest block", f"{self.max_threads_per_block} threads"),
            ("block", f"{self.block} threads ({self.warps_per_block} warps"
                      f"{'' if self.block_given else '; the default, pass block='})"),
        ]
        if self.blocks_per_sm is None:
            rows.append(("blocks / multiprocessor", f"unknown ({self.arch}'s limits are not "
                                                    "in threadtile's table)"))
        else:
            why = ""
            if self.limited_by:
                each = ", ".join(f"{k} {v}" for k, v in self.limits.items() if v is not None)
                why = f", limited by {' and '.join(self.limited_by)} ({each})"
            rows.append(("blocks / multiprocessor", f"{self.blocks_per_sm}{why}"))
            if self.occupancy is not None:
                rows.append(("occupancy", f"{self.occupancy:.0%} ({self.active_warps} of "
                                          f"{self.warps_per_sm} warps)"))
        width = max(len(k) for k, _ in rows)
        head = f"{self.kernel} on {self.arch}, from {src}"
        return "\n".join([head] + [f"  {k:<{width}}  {v}" for k, v in rows])


def report(kernel, spec, build, block=None, shared_bytes: int = 0,
           arch: str | None = None) -> Resources:
    """The :class:`Resources` of ``spec`` (a specialization of ``kernel``), built with
    ``build(spec, arch, options) -> (CompiledKernel, scratch)`` (jit.build): from the driver
    where there is a GPU and neither ``arch`` nor the simulator is asked for, else from
    ptxas's report for ``arch`` (default: the arch a launch on the current device builds
    for; the simulator's device is an sm_90)."""
    if type(shared_bytes) is not int or shared_bytes < 0:
        raise ValueError(f"shared_bytes must be an int >= 0, got {shared_bytes!r}")
    threads, given = _block(kernel, spec, block)
    if arch is None and not mode.requested() and driver.gpu_available():
        return _from_driver(kernel, spec, build, threads, given, shared_bytes)
    if arch is None:
        arch = _current_arch()
    _compiled, scratch = build(spec, arch, kernel.options)
    threads += getattr(_compiled, "extra_threads", 0)  # a producer warpgroup's (builds.py)
    target = spec.last.target  # (the options a launch builds with: jit.build may add some)
    attrs = inspection.attributes(spec, target.arch, target.options)
    rep = inspection.ptxas_report(spec, target.arch, target.options)
    dynamic = shared_bytes + scratch
    lim = arch_limits(arch)
    blocks, limits, by = None, {}, ()
    if lim is not None:
        occ = occupancy(lim, threads, attrs["num_regs"], attrs["shared_size_bytes"] + dynamic,
                        rep["barriers"])
        blocks, limits, by = occ.blocks, dict(occ.limits), occ.limited_by
        if threads > attrs["max_threads_per_block"]:
            blocks, by = 0, ("block size",)
            limits["block size"] = 0
    return Resources(
        spec.describe(), arch, "ptxas", attrs["num_regs"], rep["spill_stores"],
        rep["spill_loads"], attrs["local_size_bytes"], attrs["shared_size_bytes"], dynamic,
        scratch, attrs["const_size_bytes"], rep["barriers"], attrs["max_threads_per_block"],
        threads, given, blocks, lim.warps_per_sm if lim else None, limits, by)


def _from_driver(kernel, spec, build, threads: int, given: bool,
                 shared_bytes: int) -> Resources:
    """The driver's answers for the build a launch on the current GPU uses."""
    dev = driver.current_device()
    compiled, scratch = build(spec, dev.arch, kernel.options)
    threads += getattr(compiled, "extra_threads", 0)  # a producer warpgroup's (builds.py)
    target = spec.last.target
    func = compiled.load()
    attrs = compiled.attributes()
    rep = inspection.ptxas_report(spec, target.arch, target.options)
    dynamic = shared_bytes + scratch
    static = attrs["shared_size_bytes"]
    # above 48 KiB a launch first raises the kernel's dynamic limit (runtime/launcher.py), and
    # the occupancy calculator counts no block at all until it has
    if dynamic > attrs["max_dynamic_shared_size_bytes"] and \
            static + dynamic <= dev.max_shared_per_block_optin:
        driver.set_max_dynamic_shared(func, dynamic)
    fits = threads <= attrs["max_threads_per_block"] and \
        static + dynamic <= dev.max_shared_per_block_optin
    blocks = driver.blocks_per_sm(func, threads, dynamic) if fits else 0
    lim = arch_limits(dev.arch)
    limits, by = {}, ()
    if lim is not None:  # why: the same rules over the driver's numbers
        occ = occupancy(lim, threads, attrs["num_regs"], static + dynamic, rep["barriers"])
        limits = dict(occ.limits)
        by = tuple(k for k, v in limits.items() if v == blocks)
        warps = lim.warps_per_sm
    else:
        warps = driver.device_attribute(dev.index, "MAX_THREADS_PER_MULTIPROCESSOR") // 32
    if threads > attrs["max_threads_per_block"]:
        by = ("block size",)
    return Resources(
        spec.describe(), dev.arch, "driver", attrs["num_regs"], rep["spill_stores"],
        rep["spill_loads"], attrs["local_size_bytes"], static, dynamic, scratch,
        attrs["const_size_bytes"], rep["barriers"], attrs["max_threads_per_block"], threads,
        given, blocks, warps, limits, by)


def _current_arch() -> str:
    """The arch a launch on the current device builds for: the simulator's (an sm_90) under
    ``simulate()`` or where there is no GPU to ask."""
    try:
        cc = get_current_device().compute_capability
    except Exception:  # noqa: BLE001  (no driver, no device: any error means "no GPU here")
        cc = (9, 0)
    return driver.arch_for(cc)


def _block(kernel, spec, block) -> tuple[int, bool]:
    """The threads per block to count, and whether the caller gave them."""
    fixed = spec.module.threads
    if block is None:
        if fixed:
            return fixed, True
        bounds = spec.module.launch_bounds
        return (min(DEFAULT_BLOCK, bounds[0]) if bounds else DEFAULT_BLOCK), False
    dims = (block,) if isinstance(block, int) else tuple(block)
    if not dims or len(dims) > 3 or not all(isinstance(d, int) and d > 0 for d in dims):
        raise ValueError(f"block must be a positive int or a tuple of up to 3 of them, got "
                         f"{block!r}")
    threads = 1
    for d in dims:
        threads *= d
    if fixed and threads != fixed:
        raise ValueError(f"{kernel.__name__} runs blocks of {fixed} threads (its tile "
                         f"operations fix them); block={block!r} has {threads}")
    return threads, True
