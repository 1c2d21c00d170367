"""Per-block resources a kernel declares, checked against the hardware's limits at compile
time, at the user's line (rather than as a ptxas message about the generated C++); the
limits of each architecture (:data:`ARCH_LIMITS`) and the occupancy they allow
(:func:`occupancy`), which ``kernel.resources()`` reports without a GPU."""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass

from ..errors import KernelCompileError
from . import coop as ircoop
from . import nodes as ir


@dataclass(frozen=True)
class ArchLimits:
    """What one architecture's multiprocessor holds, as the driver's occupancy calculator
    counts it (CUDA's cuda_occupancy.h and the programming guide's table of compute
    capabilities). Registers go to warps in units of ``reg_unit`` per warp, split over four
    sub-partitions; shared memory goes to blocks in units of ``shared_unit``, each block
    taking ``shared_reserved`` bytes more for the driver (sm_80 on)."""

    threads_per_sm: int
    blocks_per_sm: int
    shared_per_sm: int  # the largest carveout: what the default preference gets
    shared_per_block_optin: int  # the most one block may have, opted in (the launcher does)
    shared_reserved: int = 1024
    shared_unit: int = 128
    regs_per_sm: int = 65536
    regs_per_block: int = 65536
    reg_unit: int = 256
    max_regs_per_thread: int = 255
    subpartitions: int = 4
    # sm_90 on: each block holds its barriers; blocks_per_sm * barrier_factor of them per
    # multiprocessor (None: not a limit on this architecture)
    barrier_factor: int | None = None

    @property
    def warps_per_sm(self) -> int:
        return self.threads_per_sm // 32


_K = 1024
ARCH_LIMITS = {
    "sm_75": ArchLimits(1024, 16, 64 * _K, 64 * _K, shared_reserved=0, shared_unit=256),
    "sm_80": ArchLimits(2048, 32, 164 * _K, 163 * _K),
    "sm_86": ArchLimits(1536, 16, 100 * _K, 99 * _K),
    "sm_87": ArchLimits(1536, 16, 164 * _K, 163 * _K),
    "sm_89": ArchLimits(1536, 24, 100 * _K, 99 * _K),
    "sm_90": ArchLimits(2048, 32, 228 * _K, 227 * _K, barrier_factor=2),
    "sm_100": ArchLimits(2048, 32, 228 * _K, 227 * _K, barrier_factor=2),
    "sm_103": ArchLimits(2048, 32, 228 * _K, 227 * _K, barrier_factor=1),
    "sm_120": ArchLimits(1536, 24, 100 * _K, 99 * _K, barrier_factor=1),
    "sm_121": ArchLimits(1536, 24, 100 * _K, 99 * _K, barrier_factor=1),
}


def arch_limits(arch: str) -> ArchLimits | None:
    """The limits of ``arch`` (``"sm_90"``; a suffix as in ``sm_90a`` names the same
    multiprocessor), or None for an architecture this table does not know."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)[af]?", arch)
    return ARCH_LIMITS.get(f"sm_{m[1]}") if m else None


def max_block_threads(lim: ArchLimits, regs: int) -> int:
    """The largest block (a multiple of 32 threads, at most 1024) whose registers fit one
    block's ``regs_per_block``, counted as the hardware checks them: ``regs`` per thread
    rounded up to ``reg_unit`` per warp, the warps rounded up to fill every sub-partition."""
    per_warp = -(-max(regs, 1) * 32 // lim.reg_unit) * lim.reg_unit
    warps = 32
    while warps > 1 and per_warp * -(-warps // lim.subpartitions) * lim.subpartitions > \
            lim.regs_per_block:
        warps -= 1
    return warps * 32


# A block may declare at most 48 KiB of static ``__shared__`` memory on every architecture;
# more needs dynamic shared memory, which a launch may raise to the device's opt-in limit
# (sm_80: 163 KiB, sm_90: 227 KiB) with cuFuncSetAttribute, as threadtile's launcher does.
STATIC_SHARED_LIMIT = 48 * 1024
DYNAMIC_SHARED_OPTIN = {a: lim.shared_per_block_optin for a, lim in ARCH_LIMITS.items()}


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of one kernel a multiprocessor holds at once: ``blocks`` (per
    multiprocessor), the limit each resource sets on its own (``limits``: "warps",
    "registers", "shared memory", "blocks", "barriers"; None where it sets none) and the
    resources that set the smallest (``limited_by``)."""

    blocks: int
    warps_per_block: int
    warps_per_sm: int
    limits: dict
    limited_by: tuple[str, ...]

    @property
    def fraction(self) -> float:
        """Active warps over the most a multiprocessor holds (0 to 1)."""
        return self.blocks * self.warps_per_block / self.warps_per_sm


def occupancy(lim: ArchLimits, threads: int, regs: int, shared_bytes: int,
              barriers: int = 0) -> Occupancy:
    """The blocks of ``threads`` threads, each thread with ``regs`` registers and each block
    with ``shared_bytes`` of shared memory (static and dynamic), that one multiprocessor of
    ``lim`` holds at once, by the rules of the driver's occupancy calculator with the default
    shared-memory carveout: registers per warp rounded up to ``reg_unit`` and warps counted
    per sub-partition; shared memory per block plus the driver's reserve, rounded up to
    ``shared_unit``."""
    warps = -(-threads // 32)
    limits: dict[str, int | None] = {}
    limits["warps"] = lim.warps_per_sm // warps if threads <= 1024 else 0
    limits["blocks"] = lim.blocks_per_sm
    if regs > 0:
        per_warp = -(-regs * 32 // lim.reg_unit) * lim.reg_unit
        # the hardware checks a block's registers as if its warps filled every sub-partition
        assumed = per_warp * -(-warps // lim.subpartitions) * lim.subpartitions
        if regs > lim.max_regs_per_thread or assumed > lim.regs_per_block:
            limits["registers"] = 0
        else:
            per_sub = lim.regs_per_sm // lim.subpartitions // per_warp
            limits["registers"] = per_sub * lim.subpartitions // warps
    else:
        limits["registers"] = None
    per_block = shared_bytes + lim.shared_reserved
    per_block = -(-per_block // lim.shared_unit) * lim.shared_unit
    if shared_bytes > lim.shared_per_block_optin:
        limits["shared memory"] = 0
    else:
        limits["shared memory"] = lim.shared_per_sm // per_block if per_block else None
    limits["barriers"] = (lim.blocks_per_sm * lim.barrier_factor // barriers
                          if lim.barrier_factor and barriers > 0 else None)
    blocks = min(v for v in limits.values() if v is not None)
    by = tuple(k for k, v in limits.items() if v == blocks)
    return Occupancy(blocks, warps, lim.warps_per_sm, limits, by)


def check_static_shared(module: ir.Module) -> None:
    """Raise at the declaration that takes a kernel's static shared memory (its own and its
    device functions' ``shared.array`` of constant shape, and the storage of its
    ``threadtile.coop`` primitives) past ``STATIC_SHARED_LIMIT``."""
    total = 0
    seen: list[tuple[str, int]] = []
    k = module.kernel
    decls: list = []
    for f in [k] + [f for f in k.all_functions() if f is not k]:  # the kernel's first
        for s in ir.walk_stmts(f.body):
            if not (isinstance(s, ir.ArrayDecl) and s.type.space == "shared") or s.dynamic:
                continue
            n = s.type.dtype.itemsize
            for d in s.shape:
                n *= int(d)
            decls.append((s, s.name, n))
    # threadtile.coop's primitives keep CUB's storage in static shared memory too
    ircoop.required_block(module)
    decls += [(c, f"{ircoop.called(c)}'s storage", n) for c, n in ircoop.module_scratch(module)]
    for s, name, n in decls:
        total += n
        seen.append((name, n))
        if total > STATIC_SHARED_LIMIT:
            parts = ", ".join(f"{d}: {b} bytes" for d, b in seen)
            line = linecache.getline(s.loc.filename, s.loc.line) or None
            raise KernelCompileError(
                f"{total} bytes of static shared memory ({parts}) are more than the "
                f"{STATIC_SHARED_LIMIT} (48 KiB) a block may declare with a constant "
                "shape", loc=s.loc, source_line=line,
                hint="give the primitive fewer items per thread or a smaller block (CUB's "
                "storage grows with both)" if isinstance(s, ir.Call) else
                "declare it dynamic, sized by the launch: "
                "sh = cuda.shared.array(0, dtype), then kernel[grid, block, stream, "
                "nbytes] with nbytes up to "
                f"{DYNAMIC_SHARED_OPTIN['sm_80'] // 1024} KiB on sm_80, "
                f"{DYNAMIC_SHARED_OPTIN['sm_90'] // 1024} KiB on sm_90")
