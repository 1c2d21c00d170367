"""numba's module-level compile functions: ``compile``, ``compile_for_current_device``,
``compile_ptx`` and ``compile_ptx_for_current_device``. Each compiles a Python function for one
signature, as a kernel or as a device function, with no GPU, and returns ``(code, return
type)``: PTX, or a cubin. threadtile compiles through CUDA C++ with NVRTC, so there is no
LTO-IR of numba's kind (``output="ltoir"`` says so) and the ABI is always the C one (a kernel
is ``extern "C" __global__``, a device function ``extern "C" __device__``).
"""

from __future__ import annotations

from . import inspection
from .compiler import Target
from .jit import Kernel
from .lang import signatures as sigs
from .lang.types import void

__all__ = ["compile", "compile_for_current_device", "compile_ptx",
           "compile_ptx_for_current_device"]


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True,  # noqa: A001  (numba's)
            fastmath=False, cc=None, opt=None, abi="c", abi_info=None, output="ptx",
            forceinline=False, launch_bounds=None):
    """``pyfunc`` compiled for ``sig`` (a signature in any of numba's spellings, or a tuple of
    argument types) as a device function (``device=True``, numba's default here) or a kernel,
    for ``cc`` (``(major, minor)``; None: the current device, sm_90 without one). ``output``
    is ``"ptx"`` or ``"cubin"``. Returns ``(code, return type)``: PTX text or cubin bytes, and
    the declared or inferred return type (``void`` for a kernel)."""
    if output not in ("ptx", "cubin"):
        raise NotImplementedError(
            f"output={output!r}: threadtile compiles through CUDA C++ with NVRTC and gives "
            "'ptx' or 'cubin'; it has no LTO-IR of numba's kind")
    if forceinline:
        raise ValueError("forceinline: threadtile's device functions are always inlined into "
                         "the kernels that call them (__forceinline__); there is no LTO-IR "
                         "to mark")
    if abi not in ("c", "numba"):
        raise NotImplementedError(f"abi={abi!r}: the ABI is 'c' (or 'numba')")
    s = sigs.signature(sig)
    if not device and s.return_type not in (None, void):
        raise TypeError(f"{pyfunc.__name__}: the signature {s} returns {s.return_type}, but a "
                        "kernel must have void return type")
    kernel = Kernel(pyfunc, device=device, lineinfo=lineinfo, fastmath=fastmath, debug=debug,
                    opt=opt, launch_bounds=launch_bounds, signatures=[s])
    arch = inspection.arch_of(cc)
    if device:
        if output == "cubin":
            raise NotImplementedError("output='cubin' of a device function: a cubin holds "
                                      "kernels; compile a kernel that calls it")
        return inspection.device_ptx(pyfunc, s, arch, kernel.options)
    spec = kernel.specialization(list(s.args), {})
    if output == "cubin":
        return spec.build(Target(arch, kernel.options)).cubin, void
    return inspection.kernel_ptx(spec, arch, kernel.options), void


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None, output="ptx",
                               forceinline=False, launch_bounds=None):
    """:func:`compile` for the current device's compute capability."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=None, opt=opt, abi=abi, abi_info=abi_info,
                   output=output, forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="numba", abi_info=None, forceinline=False,
                launch_bounds=None):
    """``(PTX, return type)`` of ``pyfunc`` for ``sig``: a kernel unless ``device=True``."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                   output="ptx", forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None):
    """:func:`compile_ptx` for the current device's compute capability."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=None, opt=opt, abi=abi, abi_info=abi_info,
                       forceinline=forceinline, launch_bounds=launch_bounds)
