"""Per-block resources a kernel declares, checked against the hardware's limits at compile
time, at the user's line (rather than as a ptxas message about the generated C++)."""

from __future__ import annotations

import linecache

from ..errors import KernelCompileError
from . import nodes as ir

# A block may declare at most 48 KiB of static ``__shared__`` memory on every architecture;
# more needs dynamic shared memory, which a launch may raise to the device's opt-in limit
# (sm_80: 163 KiB, sm_90: 227 KiB) with cuFuncSetAttribute, as threadtile's launcher does.
STATIC_SHARED_LIMIT = 48 * 1024
DYNAMIC_SHARED_OPTIN = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_89": 99 * 1024,
                        "sm_90": 227 * 1024}


def check_static_shared(module: ir.Module) -> None:
    """Raise at the declaration that takes a kernel's static shared memory (its own and its
    device functions' ``shared.array`` of constant shape) past ``STATIC_SHARED_LIMIT``."""
    total = 0
    seen: list[tuple[ir.ArrayDecl, int]] = []
    k = module.kernel
    for f in [k] + [f for f in k.all_functions() if f is not k]:  # the kernel's first
        for s in ir.walk_stmts(f.body):
            if not (isinstance(s, ir.ArrayDecl) and s.type.space == "shared") or s.dynamic:
                continue
            n = s.type.dtype.itemsize
            for d in s.shape:
                n *= int(d)
            total += n
            seen.append((s, n))
            if total > STATIC_SHARED_LIMIT:
                parts = ", ".join(f"{d.name}: {b} bytes" for d, b in seen)
                line = linecache.getline(s.loc.filename, s.loc.line) or None
                raise KernelCompileError(
                    f"{total} bytes of static shared memory ({parts}) are more than the "
                    f"{STATIC_SHARED_LIMIT} (48 KiB) a block may declare with a constant "
                    "shape", loc=s.loc, source_line=line,
                    hint="declare it dynamic, sized by the launch: "
                    "sh = cuda.shared.array(0, dtype), then kernel[grid, block, stream, "
                    "nbytes] with nbytes up to "
                    f"{DYNAMIC_SHARED_OPTIN['sm_80'] // 1024} KiB on sm_80, "
                    f"{DYNAMIC_SHARED_OPTIN['sm_90'] // 1024} KiB on sm_90")
