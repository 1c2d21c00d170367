"""Exported packages launched on the GPU where threadtile cannot be imported: the Python loader
in a fresh interpreter that refuses to import threadtile, and a C program built against the C
header; results checked against NumPy. The kernels are tests/deploy/aot_kernels.py (thread
level with every scalar kind, tile level with and without the sm_90a tensor maps).
tests/deploy/ checks the same packages without a GPU."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import threadtile as cuda
from threadtile import cli
from threadtile.runtime import nvrtc

pytestmark = pytest.mark.gpu

KERNELS = Path(__file__).resolve().parents[1] / "deploy" / "aot_kernels.py"
# the float16 matmul: the sm_90a main loop (TMA + wgmma) where the device has it
M, N, K = 256, 256, 512
MIXED = [-5 + 65535 + 2**31 - 1 - 2**40, 11.25, 1.0, -3.0]


@pytest.fixture(scope="module")
def device_arch() -> str:
    if not cuda.gpu_available():
        pytest.skip("needs an NVIDIA GPU")
    from threadtile.runtime import driver

    return driver.current_device().arch


def _export(out: Path, archs: str) -> Path:
    k = f"{KERNELS}:"
    assert cli.main([
        "export",
        k + "saxpy", "float32", "float32[:]", "float32[:]", "float32[:]",
        k + "mixed", "float64[:]", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
        "float32", "float64", "bool", "complex64", "complex128",
        k + "vector_add", "float32[::1]", "float32[::1]", "float32[::1]", "tile=256",
        k + "matmul", "float16[:, ::1]", "float16[:, ::1]", "float16[:, ::1]",
        "tm=128", "tn=128", "tk=64",
        "-o", str(out), "--arch", archs]) == 0
    return out


@pytest.fixture(scope="module")
def package(tmp_path_factory, device_arch) -> Path:
    """For the device's own architecture (sm_90a on Hopper) and, where that is an ``a`` one,
    the plain one too (the loader must pick the ``a`` cubin)."""
    archs = device_arch + (f",{device_arch[:-1]}" if device_arch.endswith("a") else "")
    return _export(tmp_path_factory.mktemp("pkg"), archs)


@pytest.fixture(scope="module")
def portable(tmp_path_factory, device_arch) -> Path:
    """Without the ``a`` architecture: the tile matmul's tensor maps are zeros, and it takes
    its portable path."""
    return _export(tmp_path_factory.mktemp("portable"), device_arch.rstrip("a"))


SCRIPT = """
import sys

class NoThreadtile:  # the package must launch without threadtile
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "threadtile":
            raise ImportError("threadtile is not importable in this process")
        return None

sys.meta_path.insert(0, NoThreadtile())
sys.path.insert(0, {folder!r})
import numpy as np
import kernels

rng = np.random.default_rng(0)
n = 1000
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
dx, dy, dout = kernels.to_device(x), kernels.to_device(y), kernels.device_array(n, np.float32)
kernels.saxpy[(n + 127) // 128, 128](np.float32(2.5), dx, dy, dout)
# against the exact value: the kernel may contract to one fma (one rounding) where NumPy
# rounds twice, so a float32 NumPy reference differs where the sum cancels
exact = 2.5 * x.astype(np.float64) + y
bound = 2.0**-23 * (np.abs(2.5 * x.astype(np.float64)) + np.abs(exact))
assert np.all(np.abs(dout.copy_to_host() - exact) <= bound)

out = kernels.device_array(4, np.float64)
kernels.mixed[1, 32](out, -5, 65535, 2**31 - 1, -(2**40), 1.5, 2.25, 0.5, 7, True, 1 + 2j,
                     3 - 4j)
assert out.copy_to_host().tolist() == {mixed!r}, out.copy_to_host()

n = 256 * 10
a = rng.standard_normal(n, dtype=np.float32)
b = rng.standard_normal(n, dtype=np.float32)
dc = kernels.device_array(n, np.float32)
kernels.vector_add[n // 256](kernels.to_device(a), kernels.to_device(b), dc)
np.testing.assert_array_equal(dc.copy_to_host(), a + b)

A = rng.uniform(-1, 1, ({M}, {K})).astype(np.float16)
B = rng.uniform(-1, 1, ({K}, {N})).astype(np.float16)
C = kernels.device_array(({M}, {N}), np.float16)
kernels.matmul[({M} // 128, {N} // 128)](kernels.to_device(A), kernels.to_device(B), C)
ref = A.astype(np.float32) @ B.astype(np.float32)
np.testing.assert_allclose(C.copy_to_host().astype(np.float32), ref, rtol=2e-2, atol=5e-2)

try:
    import torch
except ImportError:
    torch = None
if torch is not None and torch.cuda.is_available():  # torch tensors, torch's current stream
    tx = torch.randn(1000, device="cuda")
    ty = torch.randn(1000, device="cuda")
    tout = torch.empty_like(tx)
    kernels.saxpy[8, 128](2.0, tx, ty, tout)
    torch.cuda.synchronize()
    assert torch.allclose(tout.double(), 2.0 * tx.double() + ty.double(), rtol=0, atol=4e-6)

assert not [m for m in sys.modules if m.split(".")[0] == "threadtile"]
print("ok", kernels.matmul._arch_of)
"""


def _run_python(folder: Path) -> str:
    code = SCRIPT.format(folder=str(folder), mixed=MIXED, M=M, N=N, K=K)
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_python_loader_launches_without_threadtile(package, device_arch):
    out = _run_python(package)
    assert out.startswith("ok") and repr(device_arch) in out  # the `a` cubin where there is one


def test_the_tile_matmul_takes_its_portable_path_without_sm_90a(portable, device_arch):
    out = _run_python(portable)
    assert out.startswith("ok") and repr(device_arch.rstrip("a")) in out


C_HOST = r"""
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = NULL; \
  cuGetErrorName(r_, &s_); fprintf(stderr, "line %d: %s: %s\n", __LINE__, #x, \
  s_ ? s_ : "?"); return 1; } } while (0)

static void* load(const char* dir, const char* name, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "rb");
  void* p = malloc(n);
  if (!f || fread(p, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
  fclose(f);
  return p;
}

static void save(const char* dir, const char* name, const void* p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  fwrite(p, 1, n, f);
  fclose(f);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* pkg = argv[1];
  const char* io = argv[2];
  const int64_t M = MM, N = NN, K = KK;
  CUdevice dev;
  CUcontext ctx;
  tt_kernel k;
  CUdeviceptr da, db, dc, dout;
  size_t na = M * K * 2, nb = K * N * 2, nc = M * N * 2;
  void* ha = load(io, "a.bin", na);
  void* hb = load(io, "b.bin", nb);
  void* hc = malloc(nc);
  double mixed[4];
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuMemAlloc(&da, na));
  CHECK(cuMemAlloc(&db, nb));
  CHECK(cuMemAlloc(&dc, nc));
  CHECK(cuMemAlloc(&dout, sizeof mixed));
  CHECK(cuMemcpyHtoD(da, ha, na));
  CHECK(cuMemcpyHtoD(db, hb, nb));
  {
    tt_array_float16_2d a = {(uint16_t*)(uintptr_t)da, {M, K}, {K, 1}};
    tt_array_float16_2d b = {(uint16_t*)(uintptr_t)db, {K, N}, {N, 1}};
    tt_array_float16_2d c = {(uint16_t*)(uintptr_t)dc, {M, N}, {N, 1}};
    CHECK(kernels_load_matmul(&k, pkg, dev));
    CHECK(kernels_launch_matmul(&k, (unsigned)(M / 128), (unsigned)(N / 128), 1, 0, NULL,
                                a, b, c));
  }
  {
    tt_array_float64_1d out = {(double*)(uintptr_t)dout, {4}, {1}};
    tt_complex64 c64 = {1.0f, 2.0f};
    tt_complex128 c128 = {3.0, -4.0};
    CHECK(kernels_load_mixed(&k, pkg, dev));
    CHECK(kernels_launch_mixed(&k, 1, 1, 1, 32, 1, 1, 0, NULL, out, -5, 65535, 2147483647,
                               -((int64_t)1 << 40), 0x3E00 /* 1.5 */, 0x4010 /* 2.25 */, 0.5f,
                               7.0, true, c64, c128));
  }
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(hc, dc, nc));
  CHECK(cuMemcpyDtoH(mixed, dout, sizeof mixed));
  save(io, "c.bin", hc, nc);
  save(io, "mixed.bin", mixed, sizeof mixed);
  printf("ok %s\n", k.arch);
  return 0;
}
"""


def _libcuda() -> str | None:
    """The path of the libcuda.so.1 this process loads (the driver the C host links)."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
        with open("/proc/self/maps") as f:
            return next((line.split()[-1] for line in f if "/libcuda.so" in line), None)
    except OSError:
        return None


def test_a_c_host_launches_the_package(package, tmp_path, device_arch):
    cc = shutil.which("gcc") or shutil.which("cc")
    inc = next((d for d in nvrtc.include_dirs() if (Path(d) / "cuda.h").is_file()), None)
    lib = _libcuda()
    if cc is None or inc is None or lib is None:
        pytest.skip("needs a C compiler, cuda.h (the nvidia-cuda-runtime wheel) and libcuda")
    src = tmp_path / "host.c"
    src.write_text(C_HOST.replace("MM", str(M)).replace("NN", str(N)).replace("KK", str(K)))
    exe = tmp_path / "host"
    r = subprocess.run([cc, "-std=c11", "-O1", f"-I{package}", f"-I{inc}", str(src), "-o",
                        str(exe), lib], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    r = subprocess.run([str(exe), str(package), str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["ok", device_arch]
    c = np.fromfile(tmp_path / "c.bin", np.float16).reshape(M, N)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=5e-2)
    assert np.fromfile(tmp_path / "mixed.bin", np.float64).tolist() == MIXED
