"""The C header of a package, without a GPU: it compiles as C and C++, and a C host linked
against a stand-in for libcuda launches as the Python loader does."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from aot_support import FakeDeviceArray, FakeDriver, bound, cuda_h, manifest, split

from threadtile.aot import loader

# ---- the C header ------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                    reason="no C compiler")
@pytest.mark.skipif(cuda_h() is None, reason="no cuda.h (the nvidia-cuda-runtime wheel)")
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
                        f"-I{cuda_h()}", str(src)], capture_output=True, text=True,
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
@pytest.mark.skipif(cuda_h() is None, reason="no cuda.h (the nvidia-cuda-runtime wheel)")
@pytest.mark.parametrize("cc, arch", [("9.0", "sm_90a"), ("8.6", "sm_80"), ("10.0", None)])
def test_the_c_header_launches_as_the_python_loader_does(hopper, tmp_path, cc, arch):
    """A C host linked against a stand-in for libcuda: the cubin it picks, the scratch it adds
    (and opts into), each parameter's bytes (those the Python loader packs), the tensor maps it
    encodes (the Python loader's call, sm_90a only)."""
    from cuda.bindings import driver as cu

    (tmp_path / "stub.c").write_text(STUB)
    (tmp_path / "host.c").write_text(C_HOST)
    exe = tmp_path / "host"
    r = subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", f"-I{hopper}", f"-I{cuda_h()}",
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
    assert launches[0][8:] == [x.hex() for x in split(mm.pack((a, b, c), maps), mm)]
    assert launches[1][8:] == [x.hex() for x in split(mm.pack((a, c, c), maps), mm)]
    out = FakeDeviceArray((4,), np.float64, strides=(3,), ptr=0x40000)
    args = (out, -5, 65535, 2**31 - 1, -(2**40), 1.5, 2.25, 0.5, 7.0, True, 1 + 2j, 3 - 4j)
    assert launches[2][:8] == ["1", "1", "1", "32", "1", "1", "0", "0"]
    assert launches[2][8:] == [x.hex() for x in split(mixed.pack(args), mixed)]
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


