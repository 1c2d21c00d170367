"""Shared fixtures: the ``target`` a numeric test runs on, random inputs, tolerances, cubins.

Every numeric test takes ``target`` and runs once per target:

- ``sim``: the CPU simulator (``threadtile.simulate()``) on NumPy arrays. Until the simulator
  exists these runs are expected failures ("simulator not built yet"), never passes.
- ``gpu``: a real launch, marked ``gpu`` and skipped without a GPU. Arrays are torch CUDA
  tensors where torch is installed (else CuPy arrays, else threadtile device arrays); the
  target synchronizes before reading results back.

Tests build inputs on the host with NumPy, move them with ``target.to_device`` (a NumPy view
such as ``a.T`` keeps its strides: the device array is the same view of a device copy of the
base), launch with ``target.launch`` (``target.launch_tile`` for tile kernels, whose block is
their own) and read back with ``target.to_host``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # the kernels package: tests/kernels
    sys.path.insert(0, str(TESTS))
sys.path.insert(1, str(TESTS.parent / "examples"))  # tile_kernels, which kernels.tiles imports
if str(TESTS.parent) not in sys.path:  # tools.fuzz, which tests/fuzz_regressions import
    sys.path.append(str(TESTS.parent))


# ---- what this machine has -------------------------------------------------------------------

def _simulate():
    """threadtile's simulate() context manager, or None while the simulator is not built."""
    import threadtile  # noqa: PLC0415

    sim = getattr(threadtile, "simulate", None)
    if callable(sim):
        return sim
    try:
        from threadtile.backends.sim import simulate  # noqa: PLC0415
    except ImportError:
        return None
    return simulate if callable(simulate) else getattr(simulate, "simulate", None)


def _gpu_available() -> bool:
    try:
        from threadtile.runtime.driver import gpu_available  # noqa: PLC0415
    except ImportError:
        return False
    try:
        return bool(gpu_available())
    except Exception:  # a broken driver is no GPU for the tests' purposes
        return False


SIMULATE = _simulate()
# a launch goes through jit.Launch, which needs the runtime's launcher even when simulating
if importlib.util.find_spec("threadtile.runtime.launcher") is None:
    SIMULATE = None
HAVE_GPU = _gpu_available()
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_CUPY = importlib.util.find_spec("cupy") is not None
HAVE_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is not None

SIM_PARAM = pytest.param("sim", id="sim", marks=pytest.mark.xfail(
    SIMULATE is None, reason="simulator not built yet", strict=False))
GPU_PARAM = pytest.param("gpu", id="gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no GPU")])


# ---- targets ---------------------------------------------------------------------------------

def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype for a threadtile dtype name (bfloat16 through ml_dtypes)."""
    if name == "bfloat16":
        import ml_dtypes  # noqa: PLC0415

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class Target:
    """Where a kernel runs: ``name`` is ``sim`` or ``gpu``; ``lib`` how device arrays are made
    (``numpy`` for the simulator; ``torch``, ``cupy``, ``device`` (threadtile.to_device) or
    ``host`` (NumPy arrays the runtime copies) on the GPU)."""

    def __init__(self, name: str, lib: str):
        self.name, self.lib = name, lib

    def __repr__(self) -> str:
        return f"Target({self.name}, {self.lib})"

    # -- arrays ----------------------------------------------------------------------------------

    def to_device(self, a: np.ndarray):
        """``a`` on the target, with ``a``'s strides when ``a`` is a view of a larger array."""
        a = np.asarray(a)
        base = a
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        if base is a or not _is_view_of(a, base):
            return self._put(np.array(a, copy=True))
        return self._view(self._put(np.array(base, copy=True)), a, base)

    def array(self, values, dtype: str):
        """``values`` converted to ``dtype`` (a threadtile dtype name) on the target. bfloat16
        needs ml_dtypes for NumPy arrays; torch makes it from float32 values directly."""
        values = np.asarray(values)
        if dtype != "bfloat16":
            return self.to_device(values.astype(dtype))
        if self.lib == "torch":
            import torch  # noqa: PLC0415

            return torch.from_numpy(np.ascontiguousarray(values, np.float32)).to(
                torch.bfloat16).cuda()
        if not HAVE_ML_DTYPES or self.lib == "cupy":
            pytest.skip(f"no bfloat16 arrays for {self.lib} here")
        return self.to_device(values.astype(np_dtype("bfloat16")))

    def _put(self, a: np.ndarray):
        if self.lib in ("numpy", "host"):
            return a
        if self.lib == "torch":
            import torch  # noqa: PLC0415

            if a.dtype.name == "bfloat16":
                t = torch.from_numpy(a.view(np.uint16).astype(np.int32) << 16)
                return t.view(torch.float32).to(torch.bfloat16).cuda()
            if a.dtype == np.uint16 or a.dtype == np.uint32 or a.dtype == np.uint64:
                bits = {2: torch.uint16, 4: torch.uint32, 8: torch.uint64}[a.itemsize]
                signed = a.view(f"i{a.itemsize}")
                return torch.from_numpy(signed.copy()).view(bits).cuda()
            return torch.from_numpy(a).cuda()
        if self.lib == "cupy":
            import cupy  # noqa: PLC0415

            return cupy.asarray(a)
        if self.lib == "device":
            return _public("to_device")(a)
        raise ValueError(self.lib)

    def _view(self, dev, a: np.ndarray, base: np.ndarray):
        """The view of device array ``dev`` (a copy of ``base``) that ``a`` is of ``base``."""
        if self.lib in ("numpy", "host"):
            return _same_view(dev, a, base)
        item = a.itemsize
        offset = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
        strides = [s // item for s in a.strides]
        if self.lib == "torch":
            return dev.as_strided(a.shape, strides, offset)
        if self.lib == "cupy":
            import cupy  # noqa: PLC0415

            flat = dev.reshape(-1)
            return cupy.lib.stride_tricks.as_strided(flat[offset:], a.shape, a.strides)
        raise ValueError(f"strided views of {self.lib} arrays are not made by these tests")

    def to_host(self, d) -> np.ndarray:
        """A NumPy copy of device array ``d`` after the target's work is done; bfloat16 comes back
        as float32."""
        self.synchronize()
        if isinstance(d, np.ndarray):
            return d.astype(np.float32) if d.dtype.name == "bfloat16" else d.copy()
        if self.lib == "torch":
            import torch  # noqa: PLC0415

            if d.dtype == torch.bfloat16:
                d = d.float()
            if d.dtype in (torch.uint16, torch.uint32, torch.uint64):
                signed = {torch.uint16: torch.int16, torch.uint32: torch.int32,
                          torch.uint64: torch.int64}[d.dtype]
                h = d.contiguous().view(signed).cpu().numpy()
                return h.view(f"u{h.itemsize}")
            return d.cpu().numpy()
        if self.lib == "cupy":
            import cupy  # noqa: PLC0415

            return cupy.asnumpy(d)
        return d.copy_to_host()

    def synchronize(self) -> None:
        if self.name != "gpu":
            return
        if self.lib == "torch":
            import torch  # noqa: PLC0415

            torch.cuda.synchronize()
        elif self.lib == "cupy":
            import cupy  # noqa: PLC0415

            cupy.cuda.runtime.deviceSynchronize()
        else:
            _public("synchronize")()

    # -- launching -------------------------------------------------------------------------------

    def launch(self, kernel, grid, block, *args, shared: int = 0, **constants) -> None:
        """``kernel[grid, block(, 0, shared)](*args, **constants)`` on this target."""
        config = (grid, block) if not shared else (grid, block, 0, shared)
        if self.name == "sim":
            if SIMULATE is None:
                pytest.xfail("simulator not built yet")
            with SIMULATE():
                kernel[config](*args, **constants)
            return
        kernel[config](*args, **constants)
        self.synchronize()

    def launch_tile(self, kernel, grid, *args) -> None:
        """``kernel[grid](*args)`` for a tile kernel (whose block is its own) on this target."""
        with self.running():
            kernel[grid](*args)

    @contextlib.contextmanager
    def running(self):
        """Launches made inside run on this target: in the simulator for ``sim``; on the GPU the
        target synchronizes at the end."""
        if self.name == "sim":
            if SIMULATE is None:
                pytest.xfail("simulator not built yet")
            with SIMULATE():
                yield
            return
        yield
        self.synchronize()

    @contextlib.contextmanager
    def capture_prints(self, capfd):
        """Collects what kernels print (device printf reaches fd 1 at synchronization)."""
        out: list[str] = []
        capfd.readouterr()
        try:
            yield out
        finally:
            self.synchronize()
            sys.stdout.flush()
            out.append(capfd.readouterr().out)


def _public(name: str):
    """``threadtile.<name>``, or the runtime function it will export (the runtime lands before
    the package's public names do)."""
    import threadtile  # noqa: PLC0415

    fn = getattr(threadtile, name, None)
    if fn is None:
        from threadtile.runtime import arrays  # noqa: PLC0415

        fn = getattr(arrays, name)
    return fn


def _same_view(dev: np.ndarray, a: np.ndarray, base: np.ndarray) -> np.ndarray:
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    flat = dev.reshape(-1).view(np.uint8)
    return np.lib.stride_tricks.as_strided(flat[offset:].view(a.dtype), a.shape, a.strides)


def _is_view_of(a: np.ndarray, base: np.ndarray) -> bool:
    lo = base.__array_interface__["data"][0]
    hi = lo + base.nbytes
    return base.flags.c_contiguous and lo <= a.__array_interface__["data"][0] < hi


def _gpu_lib() -> str:
    return "torch" if HAVE_TORCH else ("cupy" if HAVE_CUPY else "device")


@pytest.fixture(params=[SIM_PARAM, GPU_PARAM])
def target(request) -> Target:
    """Each numeric test runs in the simulator and on the GPU."""
    if request.param == "sim":
        return Target("sim", "numpy")
    return Target("gpu", _gpu_lib())


def gpu_target(lib: str) -> Target:
    """A GPU target whose arrays are ``lib`` arrays (for the interop tests)."""
    if not HAVE_GPU:
        pytest.skip("no GPU")
    if lib == "torch" and not HAVE_TORCH or lib == "cupy" and not HAVE_CUPY:
        pytest.skip(f"{lib} is not installed")
    return Target("gpu", lib)


# ---- inputs, poison and tolerances -----------------------------------------------------------

@pytest.fixture
def rng() -> np.random.Generator:
    """Fresh random inputs each run; the seed is printed, so a failure can be replayed with
    THREADTILE_TEST_SEED=<seed>."""
    seed = int(os.environ.get("THREADTILE_TEST_SEED", 0)) or int(
        np.random.SeedSequence().entropy % (1 << 63))
    print(f"THREADTILE_TEST_SEED={seed}")
    return np.random.default_rng(seed)


def poison(shape, dtype) -> np.ndarray:
    """An output array filled with a value no correct kernel writes: NaN for floats, a sentinel
    for integers (tests check every element, so a skipped write shows)."""
    if dtype == "bfloat16":  # float32 NaNs: Target.array makes them bfloat16
        return np.full(shape, np.nan, np.float32)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    if dt.kind == "b":
        return np.ones(shape, dt)
    info = np.iinfo(dt)
    return np.full(shape, info.min + 7 if dt.kind == "i" else info.max - 7, dt)


def quantize(values, dtype: str) -> np.ndarray:
    """``values`` rounded to ``dtype`` (nearest, ties to even), returned as float64: what the
    kernel sees after the inputs are converted."""
    v = np.asarray(values, dtype=np.float64)
    if dtype == "bfloat16":
        bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return v.astype(dtype).astype(np.float64)


TOL = {  # (rtol, atol) for one rounding of a value of order 1
    "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 8e-3), "float32": (2e-6, 1e-6),
    "float64": (1e-13, 1e-14),
}


def assert_close(got, ref, dtype="float32", ulps: float = 1, err_msg: str = "") -> None:
    """``got`` matches the float64 reference ``ref`` to ``ulps`` roundings of ``dtype`` (exactly
    for integer and bool dtypes). NaNs must match NaNs."""
    got = np.asarray(got)
    if got.dtype.name == "bfloat16":
        got = got.astype(np.float32)
    got = got.astype(np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name in TOL:
        rtol, atol = TOL[name]
        np.testing.assert_allclose(got, ref, rtol=rtol * ulps, atol=atol * ulps,
                                   equal_nan=True, err_msg=err_msg)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=err_msg)


U32 = 2.0 ** -24  # unit roundoff of float32


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def assert_dot_close(got, m, n, ref=None, u=U32):
    """A float32 matrix product is within the classic bound k*u*(|m| @ |n|) of the exact one,
    whatever the order of summation (plus one rounding of the result)."""
    m, n = np.asarray(m, np.float64), np.asarray(n, np.float64)
    ref = m @ n if ref is None else ref
    k = m.shape[-1]
    bound = (k + 2) * u * (np.abs(m) @ np.abs(n)) + 1e-30
    got = np.asarray(got, np.float64)
    assert not np.isnan(got).any(), "unwritten (NaN) elements"
    bad = np.abs(got - ref) > bound
    assert not bad.any(), f"{bad.sum()} elements off; worst {np.abs(got - ref)[bad].max()}"


def assert_chain(olds, vals, init, final, op):
    """Atomic updates happened one at a time: each thread's old value is the value the previous
    update left, so {init} + {op(old_i, v_i)} and {old_i} + {final} are the same multiset."""
    olds, vals = np.asarray(olds), np.asarray(vals)
    news = [op(o, v) for o, v in zip(olds.tolist(), vals.tolist())]
    assert sorted([init] + news) == sorted(olds.tolist() + [final])


# ---- compiling without a GPU -----------------------------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def _scratch_cache(tmp_path_factory):
    """Compiled cubins go to a scratch cache, never the user's."""
    old = os.environ.get("THREADTILE_CACHE_DIR")
    os.environ["THREADTILE_CACHE_DIR"] = str(tmp_path_factory.mktemp("threadtile-cache"))
    yield
    if old is None:
        os.environ.pop("THREADTILE_CACHE_DIR", None)
    else:
        os.environ["THREADTILE_CACHE_DIR"] = old


def runtime_compiles() -> bool:
    """Whether ``kernel.compile`` is usable (the runtime's NVRTC and cache modules exist)."""
    return all(importlib.util.find_spec(f"threadtile.runtime.{m}") is not None
               for m in ("nvrtc", "cache", "launcher"))


def compile_cubin(kernel, *args, arch: str = "sm_90", **constants) -> bytes:
    """The cubin of ``kernel`` for ``args``: through ``kernel.compile`` once the runtime exists,
    else straight through cuda.core's NVRTC wrapper with the same headers."""
    if runtime_compiles():
        return bytes(kernel.compile(*args, arch=arch, **constants).cubin)
    return compile_source(kernel.cuda_source(*args, **constants), arch)


def compile_source(source: str, arch: str) -> bytes:
    import cuda.pathfinder  # noqa: PLC0415
    from cuda.core import Program, ProgramOptions  # noqa: PLC0415

    include = Path(__file__).resolve().parents[1] / "src/threadtile/backends/cuda/include"
    opts = ProgramOptions(arch=arch, std="c++17", include_path=[
        cuda.pathfinder.find_nvidia_header_directory("cudart"), str(include)])
    return bytes(Program(source, "c++", opts).compile("cubin").code)


# ---- the packages the AOT tests share (tests/deploy), exported once per session: NVRTC takes
# seconds. Here rather than in a tests/deploy/conftest.py, whose module name would shadow this
# file's for the test modules that import from it.

def _aot_support():
    deploy = str(Path(__file__).resolve().parent / "deploy")
    if deploy not in sys.path:
        sys.path.insert(0, deploy)
    import aot_support  # noqa: PLC0415  (tests/deploy/aot_support.py)

    return aot_support


@pytest.fixture(scope="session")
def package(tmp_path_factory) -> Path:
    """A thread-level kernel and two tile kernels (one with the sm_90a sections), for sm_80,
    sm_90 and sm_90a."""
    s = _aot_support()
    out = tmp_path_factory.mktemp("package")
    k = f"{s.KERNELS}:"
    assert s.export(out, k + "saxpy", "float32", "float32[:]", "float32[:]", "float32[:]",
                    k + "vector_add", "float32[::1]", "float32[::1]", "float32[::1]",
                    "tile=256", k + "matmul", "float32[:, ::1]", "float32[:, ::1]",
                    "float32[:, ::1]", "tm=64", "tn=64", "tk=32") == 0
    return out


@pytest.fixture(scope="session")
def hopper(tmp_path_factory) -> Path:
    """The float16 tile matmul, whose sm_90a main loop reads two hidden tensor maps, and a
    thread-level kernel with a scalar of every kind, for sm_80 and sm_90a."""
    s = _aot_support()
    out = tmp_path_factory.mktemp("hopper")
    assert s.export(out, f"{s.KERNELS}:matmul", "float16[:, ::1]", "float16[:, ::1]",
                    "float16[:, ::1]", "tm=128", "tn=128", "tk=64", f"{s.KERNELS}:mixed",
                    "float64[:]", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
                    "float32", "float64", "bool", "complex64", "complex128",
                    arch="sm_80,sm_90a") == 0
    return out
