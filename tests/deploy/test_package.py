"""``threadtile export`` packages, without a GPU: what a package holds, that its CUDA C++
compiles with NVRTC from the package's folder alone, that its Python loader imports where
threadtile (and cuda-bindings) cannot be imported and packs arguments exactly as threadtile's
launcher does, that its C header compiles as C and C++, and the command line's help, version
and errors. tests/gpu/test_aot_package_gpu.py launches packages."""

from __future__ import annotations

import ast
import ctypes
import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from threadtile import cli
from threadtile.aot import ExportError, KernelRequest, loader, parse_archs, write_package
from threadtile.export import parse_type
from threadtile.lang.types import scalar_of
from threadtile.runtime import abi, nvrtc, tensormaps
from threadtile.runtime.arrays import bf16_bits, describe
from threadtile.version import __version__

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "aot_kernels.py"
ARCHS = ["sm_80", "sm_90", "sm_90a"]


def export(out: Path, *items: str, arch: str = ",".join(ARCHS), name: str = "kernels") -> int:
    return cli.main(["export", *items, "-o", str(out), "--arch", arch, "--name", name])


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """A thread-level kernel and two tile kernels (one with the sm_90a sections), for sm_80,
    sm_90 and sm_90a."""
    out = tmp_path_factory.mktemp("package")
    k = f"{KERNELS}:"
    assert export(out, k + "saxpy", "float32", "float32[:]", "float32[:]", "float32[:]",
                  k + "vector_add", "float32[::1]", "float32[::1]", "float32[::1]", "tile=256",
                  k + "matmul", "float32[:, ::1]", "float32[:, ::1]", "float32[:, ::1]",
                  "tm=64", "tn=64", "tk=32") == 0
    return out


@pytest.fixture(scope="module")
def hopper(tmp_path_factory) -> Path:
    """The float16 tile matmul, whose sm_90a main loop reads two hidden tensor maps, and a
    thread-level kernel with a scalar of every kind, for sm_80 and sm_90a."""
    out = tmp_path_factory.mktemp("hopper")
    assert export(out, f"{KERNELS}:matmul", "float16[:, ::1]", "float16[:, ::1]",
                  "float16[:, ::1]", "tm=128", "tn=128", "tk=64", f"{KERNELS}:mixed",
                  "float64[:]", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
                  "float32", "float64", "bool", "complex64", "complex128",
                  arch="sm_80,sm_90a") == 0
    return out


def manifest(folder: Path, name: str = "kernels") -> dict:
    return json.loads((folder / f"{name}.json").read_text())


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


# ---- the Python loader ---------------------------------------------------------------------------

ISOLATED = """
import importlib.util, sys
sys.path.insert(0, {folder!r})
assert importlib.util.find_spec("threadtile") is None, "threadtile is importable"
import kernels
assert kernels.__all__[:3] == ["saxpy", "vector_add", "matmul"], kernels.__all__
assert kernels.ARCHS == ("sm_80", "sm_90", "sm_90a")

class Dev:  # a GPU array as far as the loader can tell (it never touches the memory)
    def __init__(self, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {{"shape": shape, "typestr": typestr,
                                          "data": (1 << 20, False), "version": 3}}

a = Dev((1000,))
assert len(kernels.saxpy.pack((2.0, a, a, a))) == 4 + 4 + 3 * 24
try:
    kernels.vector_add.pack((a, a, Dev((10,), "<f8")))
except TypeError as e:
    assert "argument 2 (c) must be a 1-d array of float32" in str(e), e
else:
    raise AssertionError("a float64 array passed")
try:
    kernels.saxpy[4](1.0, a, a, a)
except ValueError as e:  # refused before the driver is asked
    assert "needs a block" in str(e), e
print(sorted(m for m in sys.modules if m.split(".")[0] in ("cuda", "numpy", "threadtile")))
"""


def test_the_loader_imports_without_threadtile(package):
    """A fresh interpreter without site-packages (-S: no threadtile, no cuda-bindings, no
    NumPy) and without the environment (-I): the loader imports, checks and packs."""
    r = subprocess.run([sys.executable, "-I", "-S", "-c", ISOLATED.format(folder=str(package))],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"  # cuda-bindings is imported at the first launch only


def test_the_loader_is_plain_python():
    """The loader imports the standard library alone at module level (cuda.bindings and
    NumPy inside the functions that need them)."""
    tree = ast.parse(Path(loader.__file__).read_text())
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import"
            top.add(node.module.split(".")[0])
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top


class FakeDeviceArray:
    def __init__(self, shape, dtype, strides=None, ptr=0x7F0000001000):
        dt = np.dtype(dtype)
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": dt.str, "data": (ptr, False), "version": 3,
            "strides": None if strides is None else tuple(s * dt.itemsize for s in strides)}


def bound(folder: Path) -> dict:
    ns: dict = {"__file__": str(folder / "kernels.py")}
    loader.bind(ns, "kernels.json")
    return ns


def test_the_loader_packs_what_threadtile_packs(hopper):
    """Every scalar kind, arrays (strided and contiguous) and the hidden tensor maps: the same
    bytes as runtime/abi.py's layout and values."""
    m = manifest(hopper)
    ns = bound(hopper)
    mm, mixed = ns["matmul"], ns["mixed"]
    out = FakeDeviceArray((4,), np.float64, strides=(3,))
    args = (out, -5, 65535, 2**31 - 1, -(2**63), 1.5, 2.25, np.float32(0.5), 7, True,
            1 + 2j, np.complex128(3 - 4j))
    types = [_type(p) for p in m["kernels"][1]["params"]]
    infos = [describe(a) for a in args]
    want = abi.param_layout(types).struct.pack(*abi.values("mixed", types, infos))
    assert mixed.pack(args) == want
    with pytest.raises(OverflowError, match=r"argument 2 \(u16\): 65536 does not fit in uint16"):
        mixed.pack(args[:2] + (65536,) + args[3:])
    a = FakeDeviceArray((256, 512), np.float16)
    b = FakeDeviceArray((512, 256), np.float16, strides=(256, 1))
    c = FakeDeviceArray((256, 256), np.float16)
    types = [_type(p) for p in m["kernels"][0]["params"]]
    maps = [tensormaps.TensorMapParam(t["arg"], tuple(t["box"]))
            for t in m["kernels"][0]["tensormaps"]]
    assert len(maps) == 2
    infos = [describe(x) for x in (a, b, c)]
    fake = [bytes(range(i, i + 128)) for i in range(2)]
    want = abi.param_layout(types + maps).struct.pack(*abi.values("matmul", types, infos), *fake)
    assert mm.pack((a, b, c), fake) == want
    zeros = abi.param_layout(types + maps).struct.pack(*abi.values("matmul", types, infos),
                                                       *[tensormaps.ZERO] * 2)
    assert mm.pack((a, b, c)) == zeros


def _type(p: dict):
    return parse_type(p["type"])


class FakeDriver:
    """cuda.bindings.driver as far as the loader uses it, on a device of ``capability``:
    records each launch with the bytes each kernel parameter pointer points at."""

    def __init__(self, capability=(9, 0)):
        self.capability = capability
        self.launches, self.attributes, self.maps = [], [], []

    def __getattr__(self, name):  # enums: CUdevice_attribute.X -> "X"
        if name.startswith("CU"):
            return _Enum()
        raise AttributeError(name)

    CUdeviceptr = CUstream = CUfunction = cuuint64_t = cuuint32_t = staticmethod(lambda x: x)

    def cuPointerGetAttribute(self, attr, ptr):
        return 0, 0

    def cuCtxGetCurrent(self):
        return 0, 1

    def cuCtxGetDevice(self):
        return 0, 0

    def cuDeviceGet(self, i):
        return 0, i

    def cuDeviceGetAttribute(self, attr, dev):
        return 0, self.capability[0 if attr.endswith("MAJOR") else 1]

    def cuLibraryLoadData(self, data, *rest):
        assert data[:4] == b"\x7fELF" and rest == (None, None, 0, None, None, 0)
        return 0, "library"

    def cuLibraryGetKernel(self, lib, name):
        return 0, 1000 + len(name)

    def cuKernelGetParamInfo(self, kern, i):
        sizes = self.param_sizes
        return (0, 0, sizes[i]) if i < len(sizes) else (1, 0, 0)

    def cuKernelSetAttribute(self, attr, value, kern, dev):
        self.attributes.append((attr, value, dev))
        return (0,)

    def cuTensorMapEncodeTiled(self, dtype, rank, ptr, dims, pitches, box, *rest):
        self.maps.append((dtype, ptr, dims, pitches, box, rank, rest))
        buf = ctypes.create_string_buffer(bytes([len(self.maps)]) * 128, 128)
        self._keep = getattr(self, "_keep", []) + [buf]
        return 0, types.SimpleNamespace(getPtr=lambda: ctypes.addressof(buf))

    def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
        ptrs = (ctypes.c_void_p * len(self.param_sizes)).from_address(argv)
        params = [ctypes.string_at(p, n) for p, n in zip(ptrs, self.param_sizes)]
        self.launches.append(((gx, gy, gz), (bx, by, bz), shared, stream, params))
        return (0,)


class _Enum:
    def __getattr__(self, name):
        return name


@pytest.fixture
def fake_driver(monkeypatch):
    def make(kernel, capability):
        fake = FakeDriver(capability)
        fake.param_sizes = [loader.param_format(p)[1] for p in kernel.params + kernel.tensormaps]
        monkeypatch.setitem(loader._state, "cu", fake)  # noqa: SLF001
        return fake
    return make


def _split(packed: bytes, kernel) -> list[bytes]:
    return [packed[o:o + loader.param_format(p)[1]]
            for o, p in zip(kernel._offsets, kernel.params + kernel.tensormaps)]  # noqa: SLF001


def test_the_loader_launches_as_threadtile_does(hopper, package, fake_driver):
    """Through a stand-in for the driver: the cubin for the device's capability, each
    parameter's bytes behind its pointer, the tensor maps encoded for sm_90a only, the tile
    operations' scratch added to the dynamic shared memory (and opted into above 48 KiB)."""
    m = manifest(hopper)["kernels"][0]
    a = FakeDeviceArray((256, 512), np.float16, ptr=0x10000)
    b = FakeDeviceArray((512, 256), np.float16, ptr=0x20000)
    c = FakeDeviceArray((256, 256), np.float16, ptr=0x30000)
    mm = bound(hopper)["matmul"]
    fake = fake_driver(mm, (9, 0))
    mm[(2, 2)](a, b, c)
    grid, block, shared, stream, params = fake.launches[-1]
    assert grid == (2, 2, 1) and block == (m["threads"], 1, 1) and stream == 0
    assert shared == m["cubins"]["sm_90a"]["scratch"] > 48 * 1024
    assert fake.attributes == [("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", shared, 0)]
    assert params[:3] == _split(mm.pack((a, b, c)), mm)[:3]
    assert params[3:] == [bytes([1]) * 128, bytes([2]) * 128]  # what the driver encoded
    assert [(x[1], x[2], x[4]) for x in fake.maps] == [
        (0x10000, [512, 256], m["tensormaps"][0]["box"]),
        (0x20000, [256, 512], m["tensormaps"][1]["box"])]
    mm.launch((2, 2), (a, b, c), block=256, stream=7, shared_bytes=1024)
    assert fake.launches[-1][2:4] == (shared + 1024, 7)
    loader.launch(types.SimpleNamespace(cuda_stream=9), (2, 2), mm, [a, b, c])
    assert fake.launches[-1][0] == (2, 2, 1) and fake.launches[-1][3] == 9
    with pytest.raises(TypeError, match=r"a tile kernel: launch it with its grid alone"):
        mm[(2, 2), 256]

    mm = bound(hopper)["matmul"]  # an sm_86 device runs the sm_80 cubin: no tensor maps
    fake = fake_driver(mm, (8, 6))
    mm[4](a, b, c)
    grid, block, shared, stream, params = fake.launches[-1]
    assert params[3:] == [bytes(128)] * 2 and not fake.maps
    assert shared == m["cubins"]["sm_80"]["scratch"]
    with pytest.raises(loader.LaunchError, match="blocks of 256 threads"):
        mm.launch(4, (a, b, c), block=128)

    mm = bound(hopper)["matmul"]
    fake_driver(mm, (10, 0))
    with pytest.raises(loader.CudaError, match="none of which runs on this GPU .*sm_100"):
        mm[4](a, b, c)

    saxpy = bound(package)["saxpy"]
    fake = fake_driver(saxpy, (9, 0))
    x = FakeDeviceArray((1000,), np.float32)
    with pytest.raises(loader.LaunchError, match="needs a block"):
        saxpy[8](2.0, x, x, x)
    saxpy[8, 128](2.0, x, x, x)
    assert fake.launches[-1][:3] == ((8, 1, 1), (128, 1, 1), 0) and not fake.attributes
    assert fake.launches[-1][4] == _split(saxpy.pack((2.0, x, x, x)), saxpy)
    saxpy[(8, 2), (32, 4), 5, 64](2.0, x, x, x)  # numba's configuration: stream, shared memory
    assert fake.launches[-1][:4] == ((8, 2, 1), (32, 4, 1), 64, 5)
    fake.param_sizes = fake.param_sizes[:-1]
    saxpy = bound(package)["saxpy"]
    with pytest.raises(loader.CudaError, match="parameter sizes"):
        saxpy[8, 128](2.0, x, x, x)


def test_the_loader_encodes_tensor_maps_as_threadtile_does(monkeypatch):
    """The same cuTensorMapEncodeTiled call as runtime/tensormaps.py, argument for argument,
    for 2-d and batched 3-d arrays and both swizzles; zeros where TMA cannot copy."""
    import cuda.bindings

    fake = FakeDriver()
    monkeypatch.setattr(cuda.bindings, "driver", fake, raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)
    monkeypatch.setitem(loader._state, "cu", fake)  # noqa: SLF001
    monkeypatch.setattr(tensormaps, "_CACHE", {})
    cases = [((64, 128), "float16", 0x1000, (256, 512), (512, 1)),
             ((32, 64), "bfloat16", 0x2000, (3, 64, 96), (6144, 96, 1)),
             ((16, 64), "float32", 0x3000, (1, 40), (40, 1)),
             ((64, 64), "float16", 0x3008, (64, 64), (64, 1)),  # a misaligned address
             ((64, 64), "float16", 0x4000, (64, 64), (1, 64))]  # a column-major array
    for box, dtype, ptr, shape, strides in cases:
        theirs = tensormaps.encode(tensormaps.TensorMapParam(0, box), scalar_of(dtype), ptr,
                                   shape, strides)
        calls = len(fake.maps)
        mine = loader.encode_tensormap(box, dtype, ptr, shape, strides)
        assert (mine == bytes(128)) == (theirs == bytes(128)), (box, shape)
        if len(fake.maps) > calls:
            assert fake.maps[-1] == fake.maps[-2]


def test_the_loader_refuses_what_threadtile_refuses(package):
    ns: dict = {"__file__": str(package / "kernels.py")}
    loader.bind(ns, "kernels.json")
    saxpy, vadd = ns["saxpy"], ns["vector_add"]
    x = FakeDeviceArray((10,), np.float32)
    with pytest.raises(TypeError, match=r"argument 0 \(a\) must be a float32 scalar, got 1j"):
        saxpy.pack((1j, x, x, x))
    with pytest.raises(TypeError, match="takes 4 arguments"):
        saxpy.pack((1.0, x, x))
    with pytest.raises(TypeError, match=r"argument 1 \(b\) must be C-contiguous"):
        vadd.pack((x, FakeDeviceArray((10,), np.float32, strides=(2,)), x))
    with pytest.raises(TypeError, match="is a host array"):
        vadd.pack((x, np.zeros(10, np.float32), x))
    with pytest.raises(TypeError, match="must be an array of float32 with 1 dimension"):
        vadd.pack((x, 3, x))
    assert len(saxpy.pack((np.float32(2), x, FakeDeviceArray((10,), np.float32, (5,)), x)))
    assert saxpy.pack((np.array(2.0), x, x, x)) == saxpy.pack((2.0, x, x, x))  # a 0-d array

    class NotANumber:  # has a dtype without NumPy's kinds (a torch 0-d tensor's, say)
        dtype, ndim = object(), 0

    with pytest.raises(TypeError, match="must be a float32 scalar, got NotANumber"):
        saxpy.pack((NotANumber(), x, x, x))


def test_the_loader_picks_the_cubin_the_device_runs():
    pick = loader.pick_arch
    assert pick(["sm_80", "sm_90", "sm_90a"], (9, 0)) == "sm_90a"
    assert pick(["sm_80", "sm_90"], (9, 0)) == "sm_90"
    assert pick(["sm_80", "sm_86", "sm_90a"], (8, 9)) == "sm_86"
    assert pick(["sm_80", "sm_90a"], (8, 6)) == "sm_80"
    assert pick(["sm_80", "sm_90a"], (10, 0)) is None  # no cubin runs on a newer major
    assert pick(["sm_90a"], (9, 1)) is None
    assert pick(["sm_100f", "sm_100"], (10, 3)) == "sm_100f"
    assert pick(["sm_86"], (8, 0)) is None


def test_the_loader_shares_threadtile_s_rules():
    """The loader cannot import threadtile, so it repeats a few of its facts; they agree."""
    assert {k: v for k, v in loader.CODES.items() if not k.startswith("complex")} == \
        abi._CODES  # noqa: SLF001
    assert loader.TMA_DTYPES == tensormaps._DTYPES  # noqa: SLF001
    assert (loader.TENSORMAP_SIZE, loader.TENSORMAP_ALIGN) == (tensormaps.SIZE, tensormaps.ALIGN)
    for v in (0.0, 1.0, -2.5, 3.14159, 1e-40, 65504.0, 1e38, float("inf"), float("nan")):
        assert loader.bf16_bits(v) == bf16_bits(v), v
    shapes = [(1, 1), (7, 64), (64, 64), (128, 100), (3, 64, 64), (2, 5, 8), (1, 300)]
    for shape in shapes:
        for extra in (0, 8):
            strides = list(np.cumprod((1,) + shape[:0:-1])[::-1])
            strides[0] += extra if len(shape) > 1 else 0
            strides = tuple(int(s) for s in strides)
            assert loader.tma_flat2d(shape, strides) == tensormaps.flat2d(shape, strides)
            flat = tensormaps.flat2d(shape, strides)
            if flat is None:
                continue
            for box in ((64, 128), (32, 64), (64, 300), (128, 64)):
                for itemsize in (1, 2, 4):
                    for ptr in (0x1000, 0x1008):
                        assert loader.tma_usable(box, itemsize, ptr, *flat) == \
                            tensormaps.usable(box, itemsize, ptr, *flat), (shape, box)


# ---- the C header ------------------------------------------------------------------------------

def _cuda_h() -> Path | None:
    for d in nvrtc.include_dirs()[1:]:
        if (Path(d) / "cuda.h").is_file():
            return Path(d)
    return None


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                    reason="no C compiler")
@pytest.mark.skipif(_cuda_h() is None, reason="no cuda.h (the nvidia-cuda-runtime wheel)")
@pytest.mark.parametrize("lang", ["c", "c++"])
def test_the_c_header_compiles(package, tmp_path, lang):
    head = (package / "kernels.h").read_text()
    assert "kernels_launch_vector_add(" in head and "tt_array_float32_1d" in head
    src = tmp_path / ("host.c" if lang == "c" else "host.cpp")
    src.write_text('#include "kernels.h"\n#include "kernels.h"\n'  # (include guards)
                   "int run(CUdevice dev, CUstream s, float* x, int64_t n) {\n"
                   "  tt_kernel k;\n"
                   '  CUresult r = kernels_load_vector_add(&k, "pkg", dev);\n'
                   "  tt_array_float32_1d a = {x, {n}, {1}};\n"
                   "  if (r == CUDA_SUCCESS) r = kernels_launch_vector_add(&k, 4, 1, 1, 0, s, "
                   "a, a, a);\n"
                   "  if (r == CUDA_SUCCESS) r = kernels_load_saxpy(&k, \"pkg\", dev);\n"
                   "  return r == CUDA_SUCCESS ? kernels_launch_saxpy(&k, 4, 1, 1, 256, 1, 1, "
                   "0, s, 2.0f, a, a, a) : r;\n}\n")
    cc = ["gcc", "-std=c11"] if lang == "c" else ["g++", "-std=c++11"]
    r = subprocess.run([*cc, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{package}",
                        f"-I{_cuda_h()}", str(src)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


STUB = r"""
/* A stand-in for libcuda: prints what the C header asks of the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

struct CUlib_st { char file[4096]; };
struct CUkern_st { char name[256]; };
static struct CUlib_st lib;
static struct CUkern_st kern;

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  const char* cc = getenv("TT_CC");
  (void)dev;
  *pi = attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? atoi(cc) : atoi(cc + 2);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* l, const char* file, CUjit_option* o,
                                       void** ov, unsigned n, CUlibraryOption* lo,
                                       void** lov, unsigned ln) {
  FILE* f = fopen(file, "rb");
  char magic[4] = {0};
  if (!f || fread(magic, 1, 4, f) != 4 || memcmp(magic, "\x7f" "ELF", 4))
    return CUDA_ERROR_FILE_NOT_FOUND;
  fclose(f);
  (void)o; (void)ov; (void)n; (void)lo; (void)lov; (void)ln;
  strcpy(lib.file, file);
  *l = &lib;
  printf("load %s\n", file);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLibraryGetKernel(CUkernel* k, CUlibrary l, const char* name) {
  (void)l;
  strcpy(kern.name, name);
  *k = &kern;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* d) { *d = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d) {
  (void)k; (void)d;
  printf("attr %d %d\n", (int)a, v);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* m, CUtensorMapDataType t, cuuint32_t rank,
    void* addr, const cuuint64_t* dims, const cuuint64_t* pitches, const cuuint32_t* box,
    const cuuint32_t* step, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  printf("encode %d %u %llu %llu %llu %llu %u %u %u %u %d %d %d %d\n", (int)t, rank,
         (unsigned long long)(uintptr_t)addr, (unsigned long long)dims[0],
         (unsigned long long)dims[1], (unsigned long long)pitches[0], box[0], box[1], step[0],
         step[1], (int)il, (int)sw, (int)l2, (int)oob);
  memset(m, 0xAB, sizeof *m);
  return CUDA_SUCCESS;
}
static void dump(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned shared, CUstream s, void** params) {
  char var[300], sizes[1024];
  snprintf(var, sizeof var, "TT_SIZES_%s", kern.name);
  strcpy(sizes, getenv(var));
  printf("launch %u %u %u %u %u %u %u %llu", gx, gy, gz, bx, by, bz, shared,
         (unsigned long long)(uintptr_t)s);
  int i = 0;
  for (char* t = strtok(sizes, ","); t; t = strtok(NULL, ","), ++i) {
    const unsigned char* p = (const unsigned char*)params[i];
    printf(" ");
    for (int j = 0; j < atoi(t); ++j) printf("%02x", p[j]);
  }
  printf("\n");
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                CUstream s, void** params, void** extra) {
  (void)f; (void)extra;
  dump(gx, gy, gz, bx, by, bz, shared, s, params);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                           unsigned bx, unsigned by, unsigned bz,
                                           unsigned shared, CUstream s, void** params) {
  (void)f;
  printf("cooperative ");
  dump(gx, gy, gz, bx, by, bz, shared, s, params);
  return CUDA_SUCCESS;
}
"""

C_HOST = r"""
#include "kernels.h"

int main(int argc, char** argv) {
  tt_kernel k;
  tt_array_float16_2d a = {(uint16_t*)0x10000, {256, 512}, {512, 1}};
  tt_array_float16_2d b = {(uint16_t*)0x20000, {512, 256}, {256, 1}};
  tt_array_float16_2d c = {(uint16_t*)0x30000, {256, 256}, {256, 1}};
  tt_array_float64_1d out = {(double*)0x40000, {4}, {3}};
  tt_complex64 c64 = {1.0f, 2.0f};
  tt_complex128 c128 = {3.0, -4.0};
  CUresult r;
  if (argc < 2) return 2;
  r = kernels_load_matmul(&k, argv[1], 0);
  if (r == CUDA_SUCCESS) r = kernels_launch_matmul(&k, 2, 2, 1, 1024, (CUstream)7, a, b, c);
  if (r == CUDA_SUCCESS) r = kernels_launch_matmul(&k, 2, 2, 1, 0, NULL, a, c, c);
  if (r == CUDA_SUCCESS) r = kernels_load_mixed(&k, argv[1], 0);
  if (r == CUDA_SUCCESS) r = kernels_launch_mixed(&k, 1, 1, 1, 32, 1, 1, 0, NULL, out, -5,
                                                  65535, 2147483647, -((int64_t)1 << 40),
                                                  0x3E00, 0x4010, 0.5f, 7.0, true, c64, c128);
  printf("result %d %s\n", (int)r, k.arch);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
@pytest.mark.skipif(_cuda_h() is None, reason="no cuda.h (the nvidia-cuda-runtime wheel)")
@pytest.mark.parametrize("cc, arch", [("9.0", "sm_90a"), ("8.6", "sm_80"), ("10.0", None)])
def test_the_c_header_launches_as_the_python_loader_does(hopper, tmp_path, cc, arch):
    """A C host linked against a stand-in for libcuda: the cubin it picks, the scratch it adds
    (and opts into), each parameter's bytes (those the Python loader packs), the tensor maps it
    encodes (the Python loader's call, sm_90a only)."""
    from cuda.bindings import driver as cu

    (tmp_path / "stub.c").write_text(STUB)
    (tmp_path / "host.c").write_text(C_HOST)
    exe = tmp_path / "host"
    r = subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", f"-I{hopper}", f"-I{_cuda_h()}",
                        str(tmp_path / "host.c"), str(tmp_path / "stub.c"), "-o", str(exe)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    ns = bound(hopper)
    mm, mixed = ns["matmul"], ns["mixed"]
    env = {"TT_CC": cc, **{f"TT_SIZES_{k.entry}": ",".join(
        str(loader.param_format(p)[1]) for p in k.params + k.tensormaps) for k in (mm, mixed)}}
    r = subprocess.run([str(exe), str(hopper)], capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    if arch is None:  # no cubin of the package runs there
        assert [x.split() for x in lines] == [
            ["result", str(int(cu.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU))]]
        return
    m = manifest(hopper)["kernels"][0]
    scratch = m["cubins"][arch]["scratch"]
    launches = [x.split()[1:] for x in lines if x.startswith("launch")]
    assert [x.split()[1] for x in lines if x.startswith("load")] == [
        str(hopper / f"matmul.{arch}.cubin"), str(hopper / f"mixed.{arch}.cubin")]
    assert [x.split()[1:] for x in lines if x.startswith("attr")] == [
        [str(int(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)),
         str(scratch + s)] for s in (1024, 0)]
    assert lines[-1] == f"result 0 {arch}"
    a = FakeDeviceArray((256, 512), np.float16, ptr=0x10000)
    b = FakeDeviceArray((512, 256), np.float16, ptr=0x20000)
    c = FakeDeviceArray((256, 256), np.float16, ptr=0x30000)
    maps = [b"\xab" * 128] * 2 if arch == "sm_90a" else None
    assert launches[0][:8] == ["2", "2", "1", str(m["threads"]), "1", "1", str(scratch + 1024),
                               "7"]
    assert launches[0][8:] == [x.hex() for x in _split(mm.pack((a, b, c), maps), mm)]
    assert launches[1][8:] == [x.hex() for x in _split(mm.pack((a, c, c), maps), mm)]
    out = FakeDeviceArray((4,), np.float64, strides=(3,), ptr=0x40000)
    args = (out, -5, 65535, 2**31 - 1, -(2**40), 1.5, 2.25, 0.5, 7.0, True, 1 + 2j, 3 - 4j)
    assert launches[2][:8] == ["1", "1", "1", "32", "1", "1", "0", "0"]
    assert launches[2][8:] == [x.hex() for x in _split(mixed.pack(args), mixed)]
    assert len(launches) == 3
    encodes = [x.split()[1:] for x in lines if x.startswith("encode")]
    if arch != "sm_90a":
        assert not encodes
        return
    fake = FakeDriver()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(loader._state, "cu", fake)  # noqa: SLF001
        for t, x in zip(m["tensormaps"] * 2, (a, b, a, c)):  # the two launches' maps
            dtype, ptr, shape, strides, _ = loader.describe_array(x)
            loader.encode_tensormap(tuple(t["box"]), dtype, ptr, shape, strides)
    enums = (cu.CUtensorMapDataType, cu.CUtensorMapInterleave, cu.CUtensorMapSwizzle,
             cu.CUtensorMapL2promotion, cu.CUtensorMapFloatOOBfill)
    assert [[e[0], *e[-4:]] for e in encodes] == [
        [str(int(getattr(e, n))) for e, n in zip(enums, [dt, *rest[1:]])]
        for dt, *_, rest in fake.maps]
    assert [[int(v) for v in e[1:10]] for e in encodes] == [
        [rank, ptr, *dims, *pitches, *box, *rest[0]]
        for _dt, ptr, dims, pitches, box, rank, rest in fake.maps]


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
