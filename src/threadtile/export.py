"""``threadtile export``: write a kernel's CUDA C++, with the one header it needs, for nvcc.

    threadtile export examples/tiled_matmul.py:matmul_tiled "float32[:, ::1]" \\
        "float32[:, ::1]" "float32[:, ::1]" tw=16 -o build/

Argument types use numba's notation: a dtype name for a scalar (``int64``, ``float32``), and
``dtype[:, :]`` for an array of that rank; ``::1`` on the last axis marks a C-contiguous array
(the kernel then indexes without strides). ``NAME=VALUE`` sets a ``Constant`` parameter.
Nothing is locked in: the files compile with ``nvcc -arch=sm_90 -c kernel.cu``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import sys
from pathlib import Path

from .compiler import Target
from .lang.types import ArrayType, Scalar, scalar_of

_ARRAY = re.compile(r"^\s*(\w+)\s*\[(.*)\]\s*$")


def parse_type(text: str) -> Scalar | ArrayType:
    """``float32`` -> Scalar; ``float32[:, ::1]`` -> a C-contiguous 2-d ArrayType."""
    m = _ARRAY.match(text)
    name = m.group(1) if m else text.strip()
    st = scalar_of(name)
    if st is None:
        raise ValueError(f"unknown dtype {name!r} in {text!r}")
    if not m:
        return st
    axes = [a.strip() for a in m.group(2).split(",")]
    if not axes or any(a not in (":", "::1") for a in axes) or "::1" in axes[:-1]:
        raise ValueError(f"array type {text!r}: write one ':' per axis, '::1' on the last "
                         "for a C-contiguous array")
    return ArrayType(st, len(axes), "C" if axes[-1] == "::1" else "A")


def _load_kernel(spec: str):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit(f"threadtile export: give FILE.py:KERNEL, got {spec!r}")
    file = Path(path)
    if not file.exists():
        raise SystemExit(f"threadtile export: no file {path}")
    sys.path.insert(0, str(file.resolve().parent))
    mspec = importlib.util.spec_from_file_location(file.stem, file)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[file.stem] = mod
    mspec.loader.exec_module(mod)
    kernel = getattr(mod, name, None)
    if not getattr(kernel, "_threadtile_kernel", False):
        raise SystemExit(f"threadtile export: {name!r} in {path} is not a @threadtile.jit kernel")
    return kernel


def _constant(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    raise SystemExit(f"threadtile export: constant value {text!r} is not a number")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="threadtile export", description=__doc__.split("\n\n")[0])
    p.add_argument("kernel", help="FILE.py:KERNEL")
    p.add_argument("types", nargs="*", help="argument types, then NAME=VALUE constants")
    p.add_argument("-o", "--out", default=".", help="output folder (default: here)")
    p.add_argument("--cubin", metavar="ARCH", help="also write a cubin for ARCH (e.g. sm_90)")
    args = p.parse_args(argv)
    kernel = _load_kernel(args.kernel)
    types, consts = [], {}
    for t in args.types:
        if "=" in t and "[" not in t:
            k, v = t.split("=", 1)
            consts[k.strip()] = _constant(v.strip())
        else:
            try:
                types.append(parse_type(t))
            except ValueError as e:
                raise SystemExit(f"threadtile export: {e}") from None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    missing = kernel.constants - consts.keys()
    if missing:
        raise SystemExit(f"threadtile export: give the Constant parameters "
                         f"{', '.join(sorted(missing))} as NAME=VALUE")
    n_runtime = len(kernel.param_names) - len(kernel.constants)
    if len(types) != n_runtime:
        raise SystemExit(f"threadtile export: {kernel.__name__} takes {n_runtime} runtime "
                         f"arguments, {len(types)} types given")
    spec = kernel.specialization(types, consts)
    source = spec.source
    name = spec.entry or kernel.__name__
    cu = out / f"{kernel.__name__}.cu"
    cu.write_text(source)
    include = Path(__file__).parent / "backends" / "cuda" / "include"
    headers = [h for h in sorted(include.glob("*.h")) if f'"{h.name}"' in source or
               h.name == "threadtile.h"]  # tile.h, when the kernel uses tiles, includes it
    wrote = [str(out / h.name) for h in headers]
    for h in headers:
        shutil.copy(h, out / h.name)
    if any(h.name == "tile.h" for h in headers):  # its sections, which it includes from tile/
        shutil.copytree(include / "tile", out / "tile", dirs_exist_ok=True)
        wrote.append(str(out / "tile") + "/")
    print(f"wrote {cu} and {', '.join(wrote)}")
    if args.cubin:
        b = spec.build(Target(args.cubin, kernel.options))
        cubin = out / f"{kernel.__name__}.{args.cubin}.cubin"
        cubin.write_bytes(b.cubin)
        print(f"wrote {cubin} (entry point {name!r})")
    print(f"compile with: nvcc -arch=sm_90 -c {cu}   (the kernel is extern \"C\" {name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
