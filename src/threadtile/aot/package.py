"""Writing an ahead-of-time package: one folder that builds and launches its kernels without
threadtile.

For each requested kernel specialization (:class:`KernelRequest`: a kernel, its runtime
argument types, its ``Constant`` values) the folder gets:

- ``<entry>.cu``: the CUDA C++ (``extern "C" __global__ <entry>``), and every threadtile header
  it includes, directly or through other headers, at the same relative paths (``threadtile.h``;
  ``tile.h`` and its sections under ``tile/`` for tile kernels, the sm_90a ones included), so
  that ``nvcc -I<folder>`` or NVRTC with ``-I<folder>`` compiles it. Headers of the CUDA
  toolkit (``cuda_fp16.h`` for float16 kernels...) are not copied: nvcc has them; NVRTC gets
  them with ``-I`` of the ``nvidia-cuda-runtime`` wheel's include folder. The manifest lists
  them;
- ``<entry>.<arch>.cubin`` for each architecture, compiled with NVRTC with the kernel's options;
- ``<name>.json``, the manifest: per kernel its entry point, parameters (arrays as threadtile
  passes them: data pointer, extents, strides in elements; scalars as their C type; the hidden
  tensor maps after them), fixed block, cubins and the shared-memory scratch each needs;
- ``<name>.py``, the Python loader (:mod:`threadtile.aot.loader`, copied, plus one line that
  reads the manifest);
- ``<name>.h``, the C header (:mod:`threadtile.aot.cheader`);
- ``README.md``: what the folder holds and the commands that rebuild the cubins.

What a package cannot hold is refused with an :class:`ExportError` naming the kernel: tuple and
record parameters, ``jit(debug=True)`` kernels (their raises are reported through threadtile's
runtime) and kernels that captured a global device array (its address belongs to the exporting
process).
"""

from __future__ import annotations

import json
import keyword
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import errors
from ..compiler import Target
from ..lang.types import ArrayType, Scalar, Type, spell
from ..runtime import abi, nvrtc
from ..runtime.tensormaps import OPERAND
from ..version import __version__
from . import cheader
from . import loader as loader_module

__all__ = ["ExportError", "KernelRequest", "Package", "parse_archs", "write_package",
           "included_headers"]

DEFAULT_ARCHS = ("sm_80", "sm_90a")


class ExportError(ValueError):
    """A kernel, type or architecture that cannot go into a package; the message says why."""


@dataclass
class KernelRequest:
    """One kernel specialization to export: ``kernel`` (a ``@jit``/``@ct.kernel`` kernel),
    the types of its runtime arguments in order, and the values of its ``Constant``
    parameters."""

    kernel: object
    types: list[Type]
    constants: dict = field(default_factory=dict)


@dataclass
class Package:
    """A written package: its folder, the files written (relative paths), the manifest and
    the nvcc commands that rebuild each cubin."""

    folder: Path
    files: list[str]
    manifest: dict
    commands: list[str]


# ----------------------------------------------------------------------------------------------
# Architectures
# ----------------------------------------------------------------------------------------------

_ARCH = re.compile(r"^sm_(\d+)([af]?)$")
_PROBE = 'extern "C" __global__ void tt_probe() {}\n'


def parse_archs(text: str | list[str]) -> list[str]:
    """``"sm_80,sm_90a"`` (or a list) as checked architecture names, in order, without
    repeats: each a real architecture (``sm_XY``, ``sm_XYa``, ``sm_XYf``: a package holds
    cubins) that this NVRTC compiles for. ExportError otherwise."""
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[str] = []
    for a in (str(x).strip() for x in items):
        if not a:
            continue
        if a.isdigit():
            a = "sm_" + a
        if a.startswith("compute_"):
            raise ExportError(f"{a} is a virtual architecture (PTX); a package holds cubins: "
                              f"give real ones, e.g. --arch sm_{a[8:]}")
        m = _ARCH.match(a)
        if not m:
            raise ExportError(f"unknown architecture {a!r}: write sm_XY, sm_XYa or sm_XYf, "
                              "e.g. --arch sm_80,sm_90a")
        supported = _supported()
        if supported and f"sm_{m.group(1)}" not in supported:
            raise ExportError(f"this NVRTC ({_nvrtc_version()}) cannot compile for {a}; it "
                              f"compiles for {', '.join(supported)}")
        if m.group(2):  # sm_80a does not exist: NVRTC says which suffixes it knows
            try:
                nvrtc.compile_cubin(_PROBE, a, name="probe.cu")
            except errors.NvrtcError as e:
                raise ExportError(f"NVRTC ({_nvrtc_version()}) cannot compile for {a}: "
                                  f"{str(e).splitlines()[0]}") from None
        if a not in out:
            out.append(a)
    if not out:
        raise ExportError("no architecture given: e.g. --arch sm_80,sm_90a")
    return out


def _supported() -> tuple[str, ...]:
    try:
        return nvrtc.supported_archs()
    except errors.ThreadtileError:
        return ()


def _nvrtc_version() -> str:
    try:
        return "NVRTC " + ".".join(map(str, nvrtc.nvrtc_version()))
    except errors.ThreadtileError:
        return "NVRTC"


# ----------------------------------------------------------------------------------------------
# Headers
# ----------------------------------------------------------------------------------------------

_QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_ANGLED = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.MULTILINE)


def included_headers(source: str) -> tuple[list[str], list[str]]:
    """The threadtile headers ``source`` includes, directly or through one another (paths
    relative to threadtile's include folder, the first of ``nvrtc.include_dirs()``), and the
    CUDA toolkit headers (``<cuda_fp16.h>``...) it and they include. C++ standard headers
    (``<cstdint>``: threadtile.h includes them for nvcc only) are left out."""
    root = Path(nvrtc.include_dirs()[0]).resolve()
    ours: list[str] = []
    toolkit: list[str] = []
    todo = [(source, root)]
    while todo:
        text, here = todo.pop()
        for name in _QUOTED.findall(text):
            for base in (here, root):
                f = (base / name).resolve()
                if f.is_file() and f.is_relative_to(root):
                    break
            else:
                raise ExportError(f'the CUDA C++ includes "{name}", which is not one of '
                                  f"threadtile's headers (in {root})")
            rel = f.relative_to(root).as_posix()
            if rel not in ours:
                ours.append(rel)
                todo.append((f.read_text(), f.parent))
        for name in _ANGLED.findall(text):
            if name.endswith(".h") and name not in toolkit:
                toolkit.append(name)
    return sorted(ours), toolkit


# ----------------------------------------------------------------------------------------------
# Parameters
# ----------------------------------------------------------------------------------------------

def _param(name: str, t: Type, kernel: str) -> dict:
    """The manifest entry of a runtime parameter."""
    if isinstance(t, ArrayType) and isinstance(t.dtype, Scalar) and \
            t.dtype.name in loader_module.ITEMSIZE:
        return {"name": name, "type": spell(t), "kind": "array", "dtype": t.dtype.name,
                "ndim": t.ndim, "contiguous": t.layout == "C"}
    if isinstance(t, Scalar) and t.name in loader_module.CODES:
        abi.param_format(t)  # (a type the launcher cannot pack raises here)
        return {"name": name, "type": t.name, "kind": "scalar", "dtype": t.name}
    raise ExportError(f"kernel {kernel!r} parameter {name!r} is {spell(t)}: a package takes "
                      "arrays and scalars of the NumPy dtypes (bool, integers, float16, "
                      "bfloat16, float32, float64, complex64, complex128)")


def _entry_meta(req: KernelRequest) -> tuple[dict, object]:
    """The manifest entry of one request (without its cubins), and its specialization."""
    k = req.kernel
    kname = getattr(k, "__name__", "?")
    if getattr(k, "device", False):
        raise ExportError(f"{kname!r} is a device function; export the kernels that call it")
    missing = sorted(set(k.constants) - set(req.constants))
    if missing:
        raise ExportError(f"give the Constant parameter{'s' if len(missing) > 1 else ''} of "
                          f"{kname} as NAME=VALUE: {', '.join(missing)}")
    extra = sorted(set(req.constants) - set(k.constants))
    if extra:
        raise ExportError(f"{kname} has no Constant parameter {', '.join(extra)} (its "
                          f"parameters: {', '.join(k.param_names)})")
    names = [n for n in k.param_names if n not in k.constants]
    if len(req.types) != len(names):
        raise ExportError(f"{kname} takes {len(names)} runtime argument"
                          f"{'s' if len(names) != 1 else ''} ({', '.join(names)}), "
                          f"{len(req.types)} type{'s' if len(req.types) != 1 else ''} given")
    try:
        spec = k.specialization(list(req.types), dict(req.constants))
        cuda = spec.cuda
    except TypeError as e:
        raise ExportError(f"{kname}: {e}") from None
    if cuda.raises:
        raise ExportError(f"{kname} is compiled with debug=True: the exceptions it raises are "
                          "reported through threadtile's runtime; export it without debug")
    if spec.module.captured:
        raise ExportError(f"{kname} reads a global device array "
                          f"({spec.module.captured[0].name}): its address belongs to this "
                          "process; pass the array as an argument instead")
    params = [_param(n, t, kname) for n, t in zip(names, spec.params)]
    threads = spec.module.threads
    meta = {
        "name": kname, "entry": cuda.entry, "source": f"{cuda.entry}.cu", "params": params,
        "constants": {c: req.constants[c] for c in k.param_names if c in k.constants},
        "threads": threads, "tile": bool(getattr(k, "tile", False)),
        "cooperative": bool(cuda.cooperative),
        # (an operand load's map: the package's cubins, built with their portable loops,
        # copy those operands without TMA and never read it; its loaders pass zeros)
        "tensormaps": [{"arg": a, "box": list(box), "operand": r == OPERAND}
                       for (a, box), r in zip(cuda.tensormaps, cuda.tensormap_rows or
                                              (0,) * len(cuda.tensormaps))],
        "options": list(k.options), "cubins": {},
    }
    return meta, spec


# ----------------------------------------------------------------------------------------------
# The package
# ----------------------------------------------------------------------------------------------

def write_package(requests: list[KernelRequest], out: str | Path,
                  archs: list[str] | str = DEFAULT_ARCHS, name: str = "kernels") -> Package:
    """Write the package of ``requests`` for ``archs`` into folder ``out`` (made if needed);
    ``name`` names the loader module, the manifest and the C header. Raises ExportError for
    what a package cannot hold, before writing anything."""
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise ExportError(f"package name {name!r} must be a Python (and C) identifier")
    if not requests:
        raise ExportError("no kernel to export")
    archs = parse_archs(archs)
    metas, specs = [], []
    for req in requests:
        meta, spec = _entry_meta(req)
        for other in metas:
            if other["entry"] == meta["entry"] or other["name"] == meta["name"]:
                raise ExportError(f"kernel {meta['name']!r} is exported twice: one package "
                                  "holds one specialization of each kernel")
        if meta["name"] in (name, "ARCHS") or meta["name"].startswith("_") or \
                hasattr(loader_module, meta["name"]):
            raise ExportError(f"kernel {meta['name']!r} would hide a name of the loader module; "
                              "rename the kernel or the package (--name)")
        metas.append(meta)
        specs.append(spec)
    builds = []  # compile everything before writing anything
    for meta, spec in zip(metas, specs):
        for arch in archs:
            builds.append((meta, arch, spec.build(Target(arch, tuple(meta["options"])))))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    headers: list[str] = []
    toolkit: list[str] = []
    for meta, spec in zip(metas, specs):
        (folder / meta["source"]).write_text(spec.source)
        files.append(meta["source"])
        ours, theirs = included_headers(spec.source)
        meta["headers"], meta["toolkit_headers"] = ours, theirs
        headers += [h for h in ours if h not in headers]
        toolkit += [h for h in theirs if h not in toolkit]
    root = Path(nvrtc.include_dirs()[0])
    for h in sorted(headers):
        (folder / h).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / h, folder / h)
        files.append(h)
    for meta, arch, b in builds:
        cubin = f"{meta['entry']}.{arch}.cubin"
        (folder / cubin).write_bytes(b.cubin)
        files.append(cubin)
        meta["cubins"][arch] = {"file": cubin, "scratch": int(b.scratch)}
    manifest = {"format": loader_module.FORMAT, "name": name, "threadtile": __version__,
                "nvrtc": _nvrtc_version(), "archs": archs, "toolkit_headers": toolkit,
                "kernels": metas}
    (folder / f"{name}.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (folder / f"{name}.py").write_text(loader_source(name))
    (folder / f"{name}.h").write_text(cheader.header(name, metas))
    commands = [nvcc_command(folder, m, arch) for m in metas for arch in archs]
    (folder / "README.md").write_text(_readme(  # commands run in the folder, wherever it is
        name, metas, archs, toolkit, [nvcc_command(Path("."), m, a) for m in metas
                                      for a in archs]))
    files += [f"{name}.json", f"{name}.py", f"{name}.h", "README.md"]
    return Package(folder, files, manifest, commands)


def loader_source(name: str) -> str:
    """The package's Python loader: :mod:`threadtile.aot.loader` as it is, then the line that
    binds the manifest's kernels to module attributes."""
    text = Path(loader_module.__file__).read_text()
    return (text.rstrip("\n") + "\n\n\n# The kernels of this package (threadtile export wrote "
            "this line and the manifest).\n"
            f'__all__ = bind(globals(), "{name}.json") + [\n'
            '    "ARCHS", "launch", "to_device", "device_array", "DeviceArray", "CudaError",\n'
            '    "LaunchError"]\n')


def nvcc_command(folder: Path, meta: dict, arch: str) -> str:
    """The nvcc command that rebuilds ``meta``'s cubin for ``arch`` from the package alone."""
    opts = "".join(f" {o}" for o in meta["options"])
    return (f"nvcc -cubin -std=c++17 -arch={arch}{opts} -I {folder} "
            f"-o {folder / meta['entry']}.{arch}.cubin {folder / meta['source']}")


def _readme(name: str, metas: list[dict], archs: list[str], toolkit: list[str],
            commands: list[str]) -> str:
    lines = [f"# {name}: kernels compiled ahead of time by threadtile {__version__}", "",
             f"Architectures: {', '.join(archs)}.", "", "| kernel | arguments | block |",
             "|---|---|---|"]
    for m in metas:
        args = ", ".join(f"{p['name']}: {p['type']}" for p in m["params"])
        consts = ", ".join(f"{k}={v!r}" for k, v in m["constants"].items())
        lines.append(f"| `{m['name']}` | `{args}`{f' ({consts})' if consts else ''} | "
                     f"{m['threads'] or 'any'} |")
    lines += ["", "From Python (needs `cuda-bindings` only, imported at the first launch):", "",
              "```python", "import sys; sys.path.insert(0, 'path/to/this/folder')",
              f"import {name}"]
    for m in metas:
        cfg = "grid" if m["tile"] else "grid, block"
        lines.append(f"{name}.{m['name']}[{cfg}]({', '.join(p['name'] for p in m['params'])})")
    lines += ["```", "", f"From C or C++: `#include \"{name}.h\"` (CUDA driver API; link "
              "with `-lcuda`).", "", "Rebuild the cubins with nvcc, in this folder:", "", "```"]
    lines += commands + ["```"]
    if toolkit:
        lines += ["", f"The CUDA C++ includes CUDA toolkit headers ({', '.join(toolkit)}): "
                  "nvcc finds them; give NVRTC `-I` of the toolkit's include folder too."]
    return "\n".join(lines) + "\n"
