"""``threadtile export``: kernels compiled ahead of time into a package that launches without
threadtile (threadtile/aot/, docs/deploy.md).

    threadtile export examples/tiled_matmul.py:matmul_tiled "float32[:, ::1]" \\
        "float32[:, ::1]" "float32[:, ::1]" tw=16 --arch sm_80,sm_90a -o build/kernels
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

from .aot import ExportError, KernelRequest, write_package
from .aot.package import DEFAULT_ARCHS
from .errors import KernelCompileError, NvrtcError
from .lang.types import ArrayType, Scalar, scalar_of

__all__ = ["main", "parse_type", "parse_items"]

_ARRAY = re.compile(r"^\s*(\w+)\s*\[(.*)\]\s*$")
_KERNEL = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_]\w*)$")

DESCRIPTION = """\
Compile kernels ahead of time into a package that builds and launches them without threadtile:
the CUDA C++ of each kernel with every threadtile header it includes, a cubin per architecture
(NVRTC), a Python loader module that launches them through cuda-bindings alone, a C header for
C and C++ hosts (CUDA driver API), a JSON manifest and a README."""

EPILOG = """\
kernels:
  FILE.py:KERNEL        a @threadtile.jit or @threadtile.tile.kernel function of FILE.py (the
                        file is imported as a module: its `if __name__ == "__main__":` block
                        does not run). Several kernels may follow one another, each with its
                        own types and constants.
  TYPE                  one per runtime parameter, in order, in numba's notation:
                          a scalar: bool, int8 .. int64, uint8 .. uint64, float16, bfloat16,
                                    float32, float64, complex64, complex128
                          an array: DTYPE[:] (1-d), DTYPE[:, :] (2-d) ...; write ::1 on the
                                    last axis for a C-contiguous array (DTYPE[:, ::1]): the
                                    kernel then indexes without strides and the loader
                                    accepts only contiguous arrays
  NAME=VALUE            the value of a Constant parameter (an int, float, True or False): the
                        package holds the kernel compiled for that value

written into the output folder (-o):
  KERNEL.cu, threadtile.h (tile kernels: tile.h and tile/*.h)   nvcc -I FOLDER compiles them
  KERNEL.ARCH.cubin     one per --arch
  NAME.py               the loader: import NAME; NAME.KERNEL[grid, block](args...)
  NAME.h                the C header: NAME_load_KERNEL(), NAME_launch_KERNEL()
  NAME.json, README.md  the manifest; the package's kernels and the nvcc commands

examples:
  threadtile export examples/tiled_matmul.py:matmul_tiled "float32[:, ::1]" \\
      "float32[:, ::1]" "float32[:, ::1]" tw=16 -o build/matmul
  threadtile export kernels.py:vector_add "float32[::1]" "float32[::1]" "float32[::1]" \\
      tile=256 kernels.py:scale "float32[:]" float32 --arch sm_80,sm_90a --name ops -o build/ops
"""


def parse_type(text: str) -> Scalar | ArrayType:
    """``float32`` -> Scalar; ``float32[:, ::1]`` -> a C-contiguous 2-d ArrayType. ValueError
    for anything else."""
    m = _ARRAY.match(text)
    name = m.group(1) if m else text.strip()
    st = scalar_of(name)
    if st is None or not isinstance(st, Scalar) or st.kind == "v":
        raise ValueError(f"unknown dtype {name!r} in {text!r} (bool, int8 .. int64, uint8 .. "
                         "uint64, float16, bfloat16, float32, float64, complex64, complex128)")
    if not m:
        return st
    axes = [a.strip() for a in m.group(2).split(",")]
    if not axes or any(a not in (":", "::1") for a in axes) or "::1" in axes[:-1]:
        raise ValueError(f"array type {text!r}: write one ':' per axis, '::1' on the last "
                         "for a C-contiguous array")
    return ArrayType(st, len(axes), "C" if axes[-1] == "::1" else "A")


def _constant(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    raise ExportError(f"constant value {text!r} is not a number (an int, a float, True or "
                      "False)")


def parse_items(items: list[str]) -> list[tuple[str, list, dict]]:
    """The positional arguments as ``(FILE.py:KERNEL, types, constants)`` groups: each
    ``FILE.py:KERNEL`` starts a group, the types and ``NAME=VALUE`` constants after it are its
    own."""
    groups: list[tuple[str, list, dict]] = []
    for item in items:
        if _KERNEL.match(item):
            groups.append((item, [], {}))
            continue
        if not groups:
            raise ExportError(f"give FILE.py:KERNEL first, got {item!r}")
        _spec, types, consts = groups[-1]
        if "=" in item and "[" not in item:
            k, v = item.split("=", 1)
            if not k.strip().isidentifier():
                raise ExportError(f"{item!r}: a constant is NAME=VALUE")
            consts[k.strip()] = _constant(v.strip())
        else:
            try:
                types.append(parse_type(item))
            except ValueError as e:
                raise ExportError(str(e)) from None
    if not groups:
        raise ExportError("give a kernel as FILE.py:KERNEL")
    return groups


_MODULES: dict[Path, object] = {}


def load_kernel(spec: str):
    """The kernel ``FILE.py:KERNEL`` names (its file imported once per process)."""
    m = _KERNEL.match(spec)
    if not m:
        raise ExportError(f"give FILE.py:KERNEL, got {spec!r}")
    file, name = Path(m.group("path")), m.group("name")
    if not file.is_file():
        raise ExportError(f"no file {file}")
    key = file.resolve()
    mod = _MODULES.get(key)
    if mod is None:
        sys.path.insert(0, str(key.parent))
        mspec = importlib.util.spec_from_file_location(file.stem, file)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[file.stem] = mod
        mspec.loader.exec_module(mod)
        _MODULES[key] = mod
    kernel = getattr(mod, name, None)
    if kernel is None:
        found = sorted(n for n, v in vars(mod).items()
                       if getattr(v, "_threadtile_kernel", False) and not getattr(v, "device",
                                                                                  False))
        raise ExportError(f"{file} has no kernel {name!r}"
                          + (f" (its kernels: {', '.join(found)})" if found else ""))
    if not getattr(kernel, "_threadtile_kernel", False):
        raise ExportError(f"{name!r} in {file} is not a @threadtile.jit or "
                          "@threadtile.tile.kernel kernel")
    return kernel


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="threadtile export", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="threadtile export FILE.py:KERNEL [TYPE ...] [NAME=VALUE ...] "
              "[FILE.py:KERNEL ...] [-o DIR] [--arch ARCHS] [--name NAME]")
    p.add_argument("items", nargs="+", metavar="FILE.py:KERNEL TYPE NAME=VALUE",
                   help="a kernel, the types of its runtime arguments, its constants "
                        "(below)")
    p.add_argument("-o", "--out", default=".", metavar="DIR",
                   help="the package's folder, made if needed (default: here)")
    p.add_argument("--arch", default=",".join(DEFAULT_ARCHS), metavar="ARCHS",
                   help="comma-separated architectures to compile cubins for: sm_XY, or "
                        "sm_XYa for the architecture-specific features (sm_90a: the Hopper "
                        "TMA/wgmma main loop of tile matmuls) (default: %(default)s)")
    p.add_argument("--name", default="kernels",
                   help="the loader module's name, also of the C header and manifest "
                        "(default: %(default)s)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``threadtile export ...``: 0 once the package is written; a bad kernel, type,
    constant or architecture exits with its message."""
    args = build_parser().parse_intermixed_args(argv)
    try:
        groups = parse_items(args.items)
        requests = [KernelRequest(load_kernel(spec), types, consts)
                    for spec, types, consts in groups]
        pkg = write_package(requests, args.out, args.arch, args.name)
    except ExportError as e:
        raise SystemExit(f"threadtile export: {e}") from None
    except (KernelCompileError, NvrtcError) as e:
        raise SystemExit(f"threadtile export: {e}") from None
    print(f"wrote {pkg.folder}/: {', '.join(pkg.files)}")
    kernels = pkg.manifest["kernels"]
    print(f"launch from Python:  import {args.name}; " + "; ".join(
        f"{args.name}.{m['name']}[{'grid' if m['tile'] else 'grid, block'}](...)"
        for m in kernels))
    print(f"launch from C/C++:   #include \"{args.name}.h\"  ({args.name}_load_"
          f"{kernels[0]['name']}, {args.name}_launch_{kernels[0]['name']}; link -lcuda)")
    print("rebuild with nvcc:")
    for c in pkg.commands:
        print(f"  {c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
