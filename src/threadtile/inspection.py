"""What a kernel compiles to, as numba's dispatchers answer: PTX (``inspect_asm``), SASS
(``inspect_sass``, through ``nvdisasm``), the typed code (``inspect_types``) and the CUDA C++
(``inspect_cuda``). threadtile compiles Python to CUDA C++ and NVRTC compiles that; there is no
LLVM IR (``inspect_llvm`` says so).

PTX needs no GPU: it is made for the current device's architecture (the simulator's sm_90
under ``simulate()``, and sm_90 where there is no GPU at all), with the kernel's NVRTC options
(``fastmath=True`` is ``--use_fast_math``: ``sin.approx.ftz.f32``, ``div.approx.ftz.f32``).
A device function's PTX is the function compiled on its own, as an external ``.func``.
"""

from __future__ import annotations

import functools
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from . import blockfit
from .backends.cuda.emit import emit_module
from .compiler import Specialization, Target
from .frontend.specialize import device_module
from .ir import nodes as ir
from .ir import passes
from .ir.printer import format_module
from .ir.resources import ArchLimits, arch_limits, max_block_threads
from .lang import signatures as sigs
from .lang.types import Signature
from .runtime import nvrtc
from .runtime.devices import get_current_device

LLVM_MESSAGE = ("threadtile has no LLVM IR to inspect: it compiles Python to CUDA C++, which "
                "NVRTC compiles to PTX; inspect_cuda() gives the C++, inspect_asm() the PTX")


def current_arch() -> str:
    """``sm_XY`` of the current device (the simulator's under ``simulate()``); sm_90 where
    there is no GPU to ask, since PTX needs none."""
    try:
        major, minor = get_current_device().compute_capability
    except Exception:  # noqa: BLE001  (no driver, no device: any error means "no GPU here")
        return "sm_90"
    return f"sm_{major}{minor}"


def arch_of(cc) -> str:
    """numba's ``cc`` (``(8, 0)``), or an ``sm_XY`` string, as an arch; None: the current."""
    if cc is None:
        return current_arch()
    if isinstance(cc, str):
        return cc
    major, minor = cc
    return f"sm_{int(major)}{int(minor)}"


@functools.lru_cache(maxsize=256)
def _ptx(text: str, arch: str, options: tuple[str, ...], entry: str) -> str:
    return nvrtc.compile_ptx(text, arch, name=f"{entry}.cu", options=options)


def kernel_ptx(spec: Specialization, arch: str, options: tuple[str, ...]) -> str:
    """The PTX of one kernel specialization."""
    return _ptx(spec.cuda.text, arch, tuple(options), spec.cuda.entry)


def device_source(fn, sig: Signature) -> tuple[str, str, ir.Function]:
    """The CUDA C++ of device function ``fn`` compiled on its own for ``sig`` (its return
    type, where given, is the one it returns): ``(text, entry, root function)``."""
    names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    if len(names) != len(sig.args):
        raise TypeError(f"{fn.__name__}: the signature {sig} has {len(sig.args)} argument "
                        f"types, the function takes {len(names)}")
    ret = sig.return_type if sig.return_type is not None else None
    module = device_module(fn, [ir.Param(n, t) for n, t in zip(names, sig.args)], ret)
    passes.run(module)
    cuda = emit_module(module)
    return cuda.text, cuda.entry, module.kernel


def device_ptx(fn, sig: Signature, arch: str, options: tuple[str, ...]) -> tuple[str, object]:
    """``(PTX, return type)`` of device function ``fn`` compiled on its own for ``sig``:
    relocatable device code (``-rdc=true``), where it stays as ``.visible .func``."""
    text, entry, root = device_source(fn, sig)
    return _ptx(text, arch, tuple(options) + ("-rdc=true",), entry), root.return_type


def by_signature(kernel, signature, what):
    """numba's convention for ``inspect_*``: ``what(key)`` for ``signature``; with None a
    dict by argument types, of every specialization made (a kernel) or signature declared (a
    device function) so far. ``key`` is a Specialization, or a device function's Signature."""
    if kernel.device:
        declared = kernel.declared_signatures or []
        if signature is not None:
            s = sigs.signature(signature)
            match = next((d for d in declared if tuple(d.args) == tuple(s.args)), None)
            return what(match or Signature(tuple(s.args), s.return_type))
        return sigs.ByTypes({tuple(d.args): what(d) for d in declared})
    if signature is not None:
        return what(kernel.specialization(list(sigs.signature(signature).args), {}))
    return sigs.ByTypes({types: what(spec) for types, spec in kernel.overloads.items()})


def asm(kernel, signature=None, arch: str | None = None):
    """``kernel.inspect_asm``: the PTX for ``signature``, or a dict by argument types."""
    arch = arch or current_arch()

    def get(key):
        if kernel.device:
            return device_ptx(kernel.py_func, key, arch, kernel.options)[0]
        return kernel_ptx(key, arch, kernel.options)
    return by_signature(kernel, signature, get)


def cuda(kernel, signature=None):
    """``kernel.inspect_cuda``: the CUDA C++ for ``signature``, or a dict by argument types."""
    def get(key):
        if kernel.device:
            return device_source(kernel.py_func, key)[0]
        return key.source
    return by_signature(kernel, signature, get)


def sass(kernel, signature=None, arch: str | None = None):
    """``kernel.inspect_sass``: the SASS of the cubin, disassembled by ``nvdisasm``."""
    if kernel.device:
        raise RuntimeError(f"{kernel.__name__} is a device function: it has no SASS of its "
                           "own; inspect the kernels that call it")
    tool = shutil.which("nvdisasm")
    if tool is None:
        raise RuntimeError("inspect_sass: nvdisasm was not found on PATH; it is the CUDA "
                           "toolkit's disassembler (put the toolkit's bin/, or the "
                           "nvidia-cuda-nvdisasm wheel's, on PATH); inspect_asm() gives the "
                           "PTX without it")
    arch = arch or current_arch()

    def get(spec):
        cubin = spec.build(Target(arch, tuple(kernel.options))).cubin
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(cubin)
        try:
            return subprocess.run([tool, "-gi", f.name], capture_output=True, text=True,
                                  check=True).stdout
        finally:
            os.unlink(f.name)
    return by_signature(kernel, signature, get)


def types(kernel, file=None, signature=None) -> None:
    """``kernel.inspect_types``: for each specialization its name and argument types, then its
    typed IR (threadtile's annotation of the source: every variable's type)."""
    file = file or sys.stdout
    got = by_signature(kernel, signature, lambda key: key)
    for key in got.values() if isinstance(got, dict) else [got]:
        if kernel.device:
            args = key.args
            body = "(a device function is typed inside each kernel that calls it)"
        else:
            args, body = key.params, format_module(key.module)
        print(f"{kernel.py_func.__name__} ({', '.join(sigs.spell_type(t) for t in args)})",
              file=file)
        print("-" * 80, file=file)
        print(body, file=file)
        print("=" * 80, file=file)


# -- resources without a GPU -------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _ptxas_log(text: str, arch: str, options: tuple[str, ...], entry: str) -> str:
    return blockfit.ptxas_log(text, arch, options, entry)[1]


def ptxas_report(spec: Specialization, arch: str, options: tuple[str, ...]) -> dict[str, int]:
    """ptxas's report on ``spec``'s entry point for ``arch`` (NVRTC with ``-Xptxas=-v``; no
    GPU): ``num_regs``, ``shared_size_bytes`` (static), ``local_size_bytes`` (the stack
    frame), ``spill_stores``, ``spill_loads`` (bytes) and ``barriers``; 0 for what it does not
    mention. The build reported is the one a launch runs: where the compiler's occupancy rule
    asks for another block a multiprocessor (blockfit.py), the tighter one. Made once per
    source, arch and options."""
    cuda = spec.cuda
    return dict(blockfit.fitted_report(cuda.text, cuda.entry, arch, tuple(options),
                                       cuda.fit_threads, cuda.scratch_for(arch, tuple(options)),
                                       cuda.fit_blocks)[1])


def elf_section_bytes(cubin: bytes, name: str) -> int:
    """The size of section ``name`` of a cubin (an ELF64 file; 0 where it has none): the
    user's constant memory (``__constant__`` arrays, print's formats) is ``.nv.constant3``,
    one kernel a module as threadtile builds them."""
    b = bytes(cubin)
    if b[:4] != b"\x7fELF" or b[4] != 2:
        raise ValueError("not an ELF64 cubin")
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)

    def header(i):  # (name offset, ..., file offset, size)
        return struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)

    names = header(shstrndx)[4]
    for i in range(shnum):
        h = header(i)
        start = names + h[0]
        if b[start:b.index(b"\0", start)].decode() == name:
            return h[5]
    return 0


def attributes(spec: Specialization, arch: str, options: tuple[str, ...]) -> dict[str, int]:
    """What the driver's function attributes would say of ``spec`` on ``arch``, without a GPU:
    registers, static shared and local (stack frame) bytes from ptxas's report
    (:func:`ptxas_report`), the user's constant memory from the cubin's constant bank
    (:func:`elf_section_bytes`), and the largest block those registers allow (64 Ki
    registers per block, allotted per warp in units of 256, ir/resources.max_block_threads)."""
    report = ptxas_report(spec, arch, options)
    out = {k: report[k] for k in ("num_regs", "shared_size_bytes", "local_size_bytes")}
    cubin = spec.build(Target(arch, tuple(options))).cubin  # (the cubin cache's, by now)
    out["const_size_bytes"] = elf_section_bytes(cubin, ".nv.constant3")
    # (every architecture from sm_75 on shares the register file's rules: ArchLimits' own)
    out["max_threads_per_block"] = max_block_threads(arch_limits(arch) or ArchLimits(0, 0, 0, 0),
                                                     out["num_regs"])
    bounds = spec.module.launch_bounds
    if bounds:
        out["max_threads_per_block"] = min(out["max_threads_per_block"], bounds[0])
    return out
