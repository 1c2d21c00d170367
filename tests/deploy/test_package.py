"""``threadtile export`` packages, without a GPU: what a package holds, that its CUDA C++
compiles with NVRTC from the package's folder alone (and with nvcc), and the command line's
help, version and errors. test_loader.py and test_cheader.py test the loader and the C
header; tests/gpu/test_aot_package_gpu.py launches packages."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from aot_support import ARCHS, KERNELS, export, manifest

from threadtile import cli
from threadtile.aot import ExportError, KernelRequest, parse_archs, write_package
from threadtile.export import parse_type
from threadtile.runtime import nvrtc
from threadtile.version import __version__

# ---- what a package holds ----------------------------------------------------------------------

def test_the_package_holds_sources_headers_cubins_loader_and_header(package):
    m = manifest(package)
    assert m["archs"] == ARCHS and m["threadtile"] == __version__
    assert [k["name"] for k in m["kernels"]] == ["saxpy", "vector_add", "matmul"]
    saxpy, vadd, mm = m["kernels"]
    assert saxpy["threads"] is None and vadd["threads"] == mm["threads"] == 128
    assert saxpy["params"][0] == {"name": "a", "type": "float32", "kind": "scalar",
                                  "dtype": "float32"}
    assert vadd["params"][0]["contiguous"] and not saxpy["params"][1]["contiguous"]
    assert vadd["constants"] == {"tile": 256}
    assert mm["cubins"]["sm_90a"]["scratch"] > 0  # the tile operations' shared memory
    # the portable k loop stays in: a package has no fallback build for zero tensor maps
    assert not any("TMA_ONLY" in o for k in m["kernels"] for o in k["options"])
    for k in m["kernels"]:
        assert 'extern "C" __global__' in (package / k["source"]).read_text()
        for arch in ARCHS:
            assert (package / k["cubins"][arch]["file"]).read_bytes()[:4] == b"\x7fELF"
    # every section of tile.h, the Hopper ones included, and nothing tile kernels don't use
    assert "tile.h" not in saxpy["headers"] and "tile/wgmma.h" in mm["headers"]
    assert {f"tile/{p.name}" for p in (package / "tile").glob("*.h")} <= set(mm["headers"])
    for h in mm["headers"]:
        assert (package / h).is_file()
    assert (package / "kernels.py").is_file() and (package / "kernels.h").is_file()
    assert "nvcc" in (package / "README.md").read_text()


def _nvrtc(source: str, arch: str, include: list[Path]) -> bytes:
    """NVRTC with exactly these include folders (threadtile's NVRTC adds its own)."""
    from cuda.bindings import nvrtc as nv

    err, prog = nv.nvrtcCreateProgram(source.encode(), b"k.cu", 0, [], [])
    assert int(err) == 0
    opts = [f"-arch={arch}".encode(), b"-std=c++17"] + [f"-I{d}".encode() for d in include]
    (status,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
    _, n = nv.nvrtcGetProgramLogSize(prog)
    log = b" " * n
    nv.nvrtcGetProgramLog(prog, log)
    assert int(status) == 0, log.decode(errors="replace")
    _, n = nv.nvrtcGetCUBINSize(prog)
    cubin = b" " * n
    nv.nvrtcGetCUBIN(prog, cubin)
    nv.nvrtcDestroyProgram(prog)
    return cubin


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", ["saxpy", "vector_add", "matmul"])
def test_the_cuda_cxx_compiles_from_the_package_folder_alone(package, tmp_path, kernel, arch):
    # a copy of the folder, away from threadtile's headers: only -I of the copy
    folder = tmp_path / "copy"
    shutil.copytree(package, folder)
    src = (folder / f"{kernel}.cu").read_text()
    assert _nvrtc(src, arch, [folder])[:4] == b"\x7fELF"


def test_a_float16_tile_kernel_needs_only_the_toolkit_headers_besides(hopper):
    """cuda_fp16.h and cuda_bf16.h are the toolkit's (nvcc has them): the manifest names
    them, and with them the package's own headers do the rest, Hopper main loop included."""
    m = manifest(hopper)
    k = m["kernels"][0]
    assert m["toolkit_headers"] == ["cuda_fp16.h", "cuda_bf16.h"] == k["toolkit_headers"]
    assert [t["arg"] for t in k["tensormaps"]] == [0, 1]  # the hidden TMA descriptors
    toolkit = [Path(d) for d in nvrtc.include_dirs()[1:]]
    src = (hopper / "matmul.cu").read_text()
    assert "tt::tile::mma_loop<" in src
    assert _nvrtc(src, "sm_90a", [hopper, *toolkit])[:4] == b"\x7fELF"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_the_printed_nvcc_commands_build_the_cubins(tmp_path, capsys):
    assert export(tmp_path, f"{KERNELS}:matmul", "float32[:, ::1]", "float32[:, ::1]",
                  "float32[:, ::1]", "tm=64", "tn=64", "tk=32", arch="sm_90a") == 0
    out = capsys.readouterr().out
    cmds = [line.strip() for line in out.splitlines() if line.strip().startswith("nvcc ")]
    assert len(cmds) == 1 and "-arch=sm_90a" in cmds[0]
    (tmp_path / "matmul.sm_90a.cubin").unlink()
    subprocess.run(cmds[0].split(), check=True, capture_output=True, timeout=300)
    assert (tmp_path / "matmul.sm_90a.cubin").read_bytes()[:4] == b"\x7fELF"


# ---- the command line --------------------------------------------------------------------------

def test_export_help_documents_kernels_types_and_constants(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["export", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for needle in ("FILE.py:KERNEL", "NAME=VALUE", "float32[:, ::1]", "::1", "bfloat16",
                   "--arch", "sm_90a", "--name", "-o DIR", "cubin", "C header", "loader"):
        assert needle in text, needle
    assert "rest" not in text


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"threadtile {__version__}"
    r = subprocess.run([sys.executable, "-m", "threadtile.cli", "--version"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == f"threadtile {__version__}"


@pytest.mark.parametrize("items, message", [
    ([f"{KERNELS}:nothere", "float32"], "has no kernel 'nothere' .*its kernels: matmul, mixed"),
    (["nofile.py:k"], "no file nofile.py"),
    (["float32[:]"], "give FILE.py:KERNEL first"),
    ([f"{KERNELS}:saxpy", "float33", "float32[:]", "float32[:]", "float32[:]"],
     "unknown dtype 'float33'"),
    ([f"{KERNELS}:saxpy", "float32", "float32[::1, :]", "float32[:]", "float32[:]"],
     "one ':' per axis"),
    ([f"{KERNELS}:saxpy", "float32", "float32[:]"], r"takes 4 runtime arguments \(a, x, y, "
                                                    r"out\), 2 types given"),
    ([f"{KERNELS}:vector_add", "float32[:]", "float32[:]", "float32[:]"],
     "give the Constant parameter of vector_add as NAME=VALUE: tile"),
    ([f"{KERNELS}:vector_add", "float32[:]", "float32[:]", "float32[:]", "tile=x"],
     "constant value 'x' is not a number"),
    ([f"{KERNELS}:vector_add", "float32[:]", "float32[:]", "float32[:]", "tile=64", "n=1"],
     "no Constant parameter n"),
    ([f"{KERNELS}:saxpy", "float32", "float32[:]", "float32[:]", "float32[:]",
      f"{KERNELS}:saxpy", "float64", "float64[:]", "float64[:]", "float64[:]"],
     "exported twice"),
])
def test_bad_input_is_a_clear_error(tmp_path, items, message):
    with pytest.raises(SystemExit, match=message):
        export(tmp_path, *items, arch="sm_80")
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("arch, message", [
    ("sm_10", r"cannot compile for sm_10; it compiles for .*sm_90"),
    ("compute_90", "virtual architecture"),
    ("sm_80a", "cannot compile for sm_80a"),
    ("hopper", "unknown architecture 'hopper'"),
    (",", "no architecture given"),
])
def test_an_unsupported_arch_is_a_clear_error(arch, message):
    with pytest.raises(ExportError, match=message):
        parse_archs(arch)


def test_parse_archs():
    assert parse_archs("sm_80, 90,sm_90a,sm_80") == ["sm_80", "sm_90", "sm_90a"]


def test_what_a_package_cannot_hold_is_refused(tmp_path):
    import threadtile as cuda
    from threadtile.lang.types import TupleType, float32, int32

    @cuda.jit(debug=True, opt=False)
    def checked(x):
        assert x[0] > 0

    with pytest.raises(ExportError, match="debug=True"):
        write_package([KernelRequest(checked, [parse_type("float32[:]")])], tmp_path, "sm_80")

    @cuda.jit
    def pair(x, t):
        x[0] = t[0] + t[1]

    with pytest.raises(ExportError, match="parameter 't' is Tuple"):
        write_package([KernelRequest(pair, [parse_type("float32[:]"),
                                            TupleType((float32, int32))])], tmp_path, "sm_80")
    with pytest.raises(ExportError, match="identifier"):
        write_package([KernelRequest(pair, [])], tmp_path, "sm_80", name="my-kernels")
    assert not any(tmp_path.iterdir())


def test_operand_loads_maps_are_zeros_in_a_package(tmp_path):
    """A kernel whose loop copies mma operands by TMA in a launch's sm_90a build (attention's
    Q, K and V: tile/operands.h load_operand_tma) exports with those tensor maps marked: the
    package's cubins copy the operands by cp.async and never read them, so both loaders
    pass zeros."""
    layouts = Path(__file__).resolve().parents[1] / "tile" / "test_tile_operand_layouts.py"
    assert export(tmp_path, f"{layouts}:attention_bshd", *["float16[:, :, :, :]"] * 3,
                  "float16[:, :, :, ::1]", "float64", "G=4", "D=128", "TM=128", "TN=64",
                  arch="sm_90a", name="att") == 0
    (k,) = manifest(tmp_path, "att")["kernels"]
    # Q, K, V, and K's copy an iteration ahead (ir/prefetch.py) through a map of its own
    assert [(t["arg"], t["operand"]) for t in k["tensormaps"]] == [(0, True), (1, True),
                                                                    (2, True), (1, True)]
    header = (tmp_path / "att.h").read_text()
    assert "memset(&tt_map3, 0, sizeof tt_map3);" in header
    assert "tt_aot_tensormap(&tt_map0" not in header
