"""The Python loader of a package, without a GPU: it imports where threadtile (and
cuda-bindings) cannot be imported; it checks and packs arguments, encodes tensor maps and
calls the driver (a stand-in here) exactly as threadtile's launcher does."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from aot_support import FakeDeviceArray, FakeDriver, bound, manifest, param_type, split

from threadtile.aot import loader
from threadtile.lang.types import scalar_of
from threadtile.runtime import abi, tensormaps
from threadtile.runtime.arrays import bf16_bits, describe

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


def test_the_loader_packs_what_threadtile_packs(hopper):
    """Every scalar kind, arrays (strided and contiguous) and the hidden tensor maps: the same
    bytes as runtime/abi.py's layout and values."""
    m = manifest(hopper)
    ns = bound(hopper)
    mm, mixed = ns["matmul"], ns["mixed"]
    out = FakeDeviceArray((4,), np.float64, strides=(3,))
    args = (out, -5, 65535, 2**31 - 1, -(2**63), 1.5, 2.25, np.float32(0.5), 7, True,
            1 + 2j, np.complex128(3 - 4j))
    types = [param_type(p) for p in m["kernels"][1]["params"]]
    infos = [describe(a) for a in args]
    want = abi.param_layout(types).struct.pack(*abi.values("mixed", types, infos))
    assert mixed.pack(args) == want
    with pytest.raises(OverflowError, match=r"argument 2 \(u16\): 65536 does not fit in uint16"):
        mixed.pack(args[:2] + (65536,) + args[3:])
    a = FakeDeviceArray((256, 512), np.float16)
    b = FakeDeviceArray((512, 256), np.float16, strides=(256, 1))
    c = FakeDeviceArray((256, 256), np.float16)
    types = [param_type(p) for p in m["kernels"][0]["params"]]
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


@pytest.fixture
def fake_driver(monkeypatch):
    def make(kernel, capability):
        fake = FakeDriver(capability)
        fake.param_sizes = [loader.param_format(p)[1] for p in kernel.params + kernel.tensormaps]
        monkeypatch.setitem(loader._state, "cu", fake)  # noqa: SLF001
        return fake
    return make


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
    assert params[:3] == split(mm.pack((a, b, c)), mm)[:3]
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
    assert fake.launches[-1][4] == split(saxpy.pack((2.0, x, x, x)), saxpy)
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


