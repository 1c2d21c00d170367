"""Ahead-of-time packages (``threadtile export``): kernels compiled for listed architectures,
with what it takes to launch them where threadtile is not installed.

- :mod:`.package` writes a package: each kernel's CUDA C++ with every threadtile header it
  includes, a cubin per architecture (NVRTC), a manifest (JSON), the Python loader and a C
  header (docs/deploy.md);
- :mod:`.loader` is the Python loader, copied into each package: the standard library and
  cuda-bindings at run time, nothing of threadtile;
- :mod:`.cheader` writes the C header: the kernels' argument structs and their loading and
  launching through the CUDA driver API, for C and C++ hosts.
"""

from .package import ExportError, KernelRequest, Package, parse_archs, write_package

__all__ = ["ExportError", "KernelRequest", "Package", "parse_archs", "write_package"]
