"""The C header of an ahead-of-time package: its kernels for C and C++ hosts, through the CUDA
driver API (``cuda.h``; link with ``-lcuda``), with no threadtile and no CUDA runtime library.

Per kernel it declares a loader, ``<name>_load_<kernel>(&k, dir, device)``, which picks the
package's cubin for the device's compute capability (the Python loader's rule) and loads it
(``cuLibraryLoadFromFile``), and a launcher, ``<name>_launch_<kernel>(&k, grid..., [block...,]
shared_bytes, stream, args...)``, which takes the arguments as the kernel does: an array as
a ``tt_array_<dtype>_<n>d`` struct (data pointer, extents, strides in elements), a scalar as
its C type (float16 and bfloat16 as their 16 bits, complex numbers as ``{re, im}``). A tile
kernel's block is fixed and its shared-memory scratch is added to ``shared_bytes``; its hidden
tensor maps are encoded from the array arguments for an sm_90a cubin and zero otherwise, as
threadtile's launcher does (runtime/tensormaps.py). Functions return the driver's
``CUresult``; ``CUDA_ERROR_NO_BINARY_FOR_GPU`` when no cubin of the package runs on the device.
"""

from __future__ import annotations

from ..version import __version__
from .loader import ITEMSIZE, TMA_DTYPES

__all__ = ["header", "C_TYPES"]

# a scalar dtype's C type (float16 and bfloat16: their bits)
C_TYPES = {"bool": "bool", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
           "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t",
           "uint64": "uint64_t", "float16": "uint16_t", "bfloat16": "uint16_t",
           "float32": "float", "float64": "double", "complex64": "tt_complex64",
           "complex128": "tt_complex128"}
_C_WORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while bool true false class new delete this "
    "template typename namespace operator private public protected virtual friend using "
    "k grid_x grid_y grid_z block_x block_y block_z shared_bytes stream params".split())

_COMMON = r"""
#ifndef TT_AOT_COMMON_
#define TT_AOT_COMMON_
/* A kernel loaded for one device: the library of its cubin and what a launch needs to know. */
typedef struct tt_kernel {
  CUlibrary library;
  CUkernel kernel;
  char arch[16];        /* the cubin's architecture, e.g. "sm_90a" */
  unsigned scratch;     /* dynamic shared memory its tile operations take first (bytes) */
  unsigned threads;     /* its block's fixed size (tile kernels, num_warps), else 0 */
  int hopper;           /* an sm_90a cubin: its tensor maps are encoded */
  int cooperative;      /* launched with cuLaunchCooperativeKernel (it syncs its grid) */
} tt_kernel;

typedef struct { float re, im; } tt_complex64;
typedef struct { double re, im; } tt_complex128;

/* The index of the architecture of archs[0..n) whose cubin runs best on compute capability
   major.minor: sm_XYa only on X.Y, sm_XY and sm_XYf on X.Y and later minors of X; -1: none. */
static inline int tt_aot_pick(const char* const* archs, int n, int major, int minor) {
  int best = -1, best_rank = -1;
  for (int i = 0; i < n; ++i) {
    const char* p = archs[i] + 3;  /* after "sm_" */
    int num = 0;
    while (*p >= '0' && *p <= '9') num = num * 10 + (*p++ - '0');
    int am = num / 10, an = num % 10;
    if (am != major || an > minor || (*p == 'a' && an != minor)) continue;
    int rank = 3 * an + (*p == 'a' ? 2 : *p == 'f' ? 1 : 0);
    if (rank > best_rank) { best = i; best_rank = rank; }
  }
  return best;
}

static inline CUresult tt_aot_load(tt_kernel* k, const char* dir, CUdevice dev,
                                   const char* entry, const char* const* archs,
                                   const char* const* files, const unsigned* scratch, int n,
                                   unsigned threads, int cooperative) {
  int major = 0, minor = 0;
  char path[4096];
  CUresult r;
  memset(k, 0, sizeof *k);
  r = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (r != CUDA_SUCCESS) return r;
  r = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (r != CUDA_SUCCESS) return r;
  int i = tt_aot_pick(archs, n, major, minor);
  if (i < 0) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (snprintf(path, sizeof path, "%s/%s", dir, files[i]) >= (int)sizeof path)
    return CUDA_ERROR_INVALID_VALUE;
  r = cuLibraryLoadFromFile(&k->library, path, NULL, NULL, 0, NULL, NULL, 0);
  if (r != CUDA_SUCCESS) return r;
  r = cuLibraryGetKernel(&k->kernel, k->library, entry);
  if (r != CUDA_SUCCESS) return r;
  strncpy(k->arch, archs[i], sizeof k->arch - 1);
  k->scratch = scratch[i];
  k->threads = threads;
  k->hopper = strcmp(archs[i], "sm_90a") == 0;
  k->cooperative = cooperative;
  return CUDA_SUCCESS;
}

/* The tensor map of a 2-d array (or of a 3-d one's rows, its batches one after another) for
   box_w x box_h tiles, or zeros where TMA cannot copy it or the cubin does not read it. */
static inline void tt_aot_tensormap(CUtensorMap* m, int hopper, CUtensorMapDataType type,
                                    unsigned itemsize, const void* ptr, int ndim,
                                    const int64_t* shape, const int64_t* strides,
                                    unsigned box_w, unsigned box_h) {
  int64_t rows, cols, s0, s1, pitch;
  memset(m, 0, sizeof *m);
  if (!hopper) return;
  if (ndim == 2) {
    rows = shape[0]; cols = shape[1]; s0 = strides[0]; s1 = strides[1];
  } else if (ndim == 3) {
    if (shape[0] > 1 && shape[1] > 1 && strides[0] != shape[1] * strides[1]) return;
    rows = shape[0] * shape[1]; cols = shape[2]; s0 = strides[1]; s1 = strides[2];
  } else {
    return;
  }
  if ((uintptr_t)ptr % 16 || rows < 1 || cols < 1) return;
  if (s1 != 1 && cols > 1) return;
  pitch = s0 * (int64_t)itemsize;
  if (rows > 1 && (s0 < cols || pitch % 16 || pitch >= ((int64_t)1 << 40))) return;
  if (box_w == 0 || box_w > 256 || box_h == 0 || box_h > 256 || box_w * itemsize > 128 ||
      rows > ((int64_t)1 << 31) || cols > ((int64_t)1 << 31)) return;
  if (rows == 1) pitch = (cols * (int64_t)itemsize + 15) / 16 * 16;
  {
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t pitches[1] = {(cuuint64_t)pitch};
    cuuint32_t box[2] = {box_w, box_h};
    cuuint32_t step[2] = {1, 1};
    if (cuTensorMapEncodeTiled(m, type, 2, (void*)ptr, dims, pitches, box, step,
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               box_w * itemsize == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                      : CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      memset(m, 0, sizeof *m);
  }
}

static inline CUresult tt_aot_launch(const tt_kernel* k, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz,
                                     unsigned shared_bytes, CUstream stream, void** params) {
  unsigned shared = shared_bytes + k->scratch;
  CUresult r;
  if (k->threads && bx * by * bz != k->threads) return CUDA_ERROR_INVALID_VALUE;
  if (shared > 48u * 1024u) {  /* above the default: the kernel must opt in */
    CUdevice dev;
    r = cuCtxGetDevice(&dev);
    if (r != CUDA_SUCCESS) return r;
    r = cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared,
                             k->kernel, dev);
    if (r != CUDA_SUCCESS) return r;
  }
  if (k->cooperative)
    return cuLaunchCooperativeKernel((CUfunction)k->kernel, gx, gy, gz, bx, by, bz, shared,
                                     stream, params);
  return cuLaunchKernel((CUfunction)k->kernel, gx, gy, gz, bx, by, bz, shared, stream, params,
                        NULL);
}
#endif /* TT_AOT_COMMON_ */
"""


def array_struct(dtype: str, ndim: int) -> str:
    """The C name of the struct of a ``dtype`` array argument of rank ``ndim``."""
    return f"tt_array_{dtype}_{ndim}d"


def _array_typedef(dtype: str, ndim: int) -> str:
    name = array_struct(dtype, ndim)
    guard = name.upper() + "_"
    axes = f" int64_t shape[{ndim}]; int64_t strides[{ndim}];" if ndim else ""
    return (f"#ifndef {guard}\n#define {guard}\n"
            f"typedef struct {{ {C_TYPES[dtype]}* data;{axes} }} {name};\n#endif\n")


def _cname(name: str) -> str:
    return name + "_" if name in _C_WORDS or name.startswith("tt_") else name


def _kernel(pkg: str, m: dict) -> str:
    k = m["name"]
    args = [(_cname(p["name"]), p) for p in m["params"]]
    sig = ", ".join(f"{p['name']}: {p['type']}" for p in m["params"])
    consts = ", ".join(f"{c}={v!r}" for c, v in m["constants"].items())
    archs = list(m["cubins"])
    block = (f"blocks of {m['threads']} threads" if m["threads"] else "any block")
    doc = [f"/* {k}({sig})" + (f" with {consts}" if consts else "") + f": {block}.",
           f"   Entry point {m['entry']!r}; cubins for {', '.join(archs)}. */"]
    strs = ", ".join(f'"{a}"' for a in archs)
    files = ", ".join(f'"{m["cubins"][a]["file"]}"' for a in archs)
    scratch = ", ".join(str(m["cubins"][a]["scratch"]) for a in archs)
    load = [
        f"static inline CUresult {pkg}_load_{k}(tt_kernel* k, const char* dir, CUdevice dev) {{",
        f"  static const char* const archs[] = {{{strs}}};",
        f"  static const char* const files[] = {{{files}}};",
        f"  static const unsigned scratch[] = {{{scratch}}};",
        f"  return tt_aot_load(k, dir, dev, \"{m['entry']}\", archs, files, scratch, "
        f"{len(archs)}, {m['threads'] or 0}, {int(m['cooperative'])});",
        "}", ""]
    params = ["const tt_kernel* k", "unsigned grid_x", "unsigned grid_y", "unsigned grid_z"]
    if not m["tile"]:  # (a thread-level kernel with num_warps takes any block of its size)
        params += ["unsigned block_x", "unsigned block_y", "unsigned block_z"]
    params += ["unsigned shared_bytes", "CUstream stream"]
    for c, p in args:
        t = array_struct(p["dtype"], p["ndim"]) if p["kind"] == "array" else C_TYPES[p["dtype"]]
        params.append(f"{t} {c}")
    body = []
    ptrs = [f"&{c}" for c, _ in args]
    for i, t in enumerate(m["tensormaps"]):
        c, p = args[t["arg"]]
        if t.get("operand"):  # an operand load's: the package's cubins never read it
            body += [f"  CUtensorMap tt_map{i};", f"  memset(&tt_map{i}, 0, sizeof tt_map{i});"]
            ptrs.append(f"&tt_map{i}")
            continue
        w, h = t["box"]
        body += [f"  CUtensorMap tt_map{i};",
                 f"  tt_aot_tensormap(&tt_map{i}, k->hopper, "
                 f"CU_TENSOR_MAP_DATA_TYPE_{TMA_DTYPES[p['dtype']]}, {ITEMSIZE[p['dtype']]}, "
                 f"{c}.data, {p['ndim']}, {c}.shape, {c}.strides, {w}, {h});"]
        ptrs.append(f"&tt_map{i}")
    body.append(f"  void* params[] = {{{', '.join(ptrs)}}};" if ptrs else
                "  void** params = NULL;")
    blk = "k->threads, 1, 1" if m["tile"] else "block_x, block_y, block_z"
    body.append(f"  return tt_aot_launch(k, grid_x, grid_y, grid_z, {blk}, shared_bytes, "
                "stream, params);")
    launch = [f"static inline CUresult {pkg}_launch_{k}(" + ",\n    ".join(params) + ") {",
              *body, "}", ""]
    return "\n".join(doc + load + launch)


def header(pkg: str, metas: list[dict]) -> str:
    """The C header of package ``pkg`` whose manifest kernels are ``metas``."""
    guard = f"{pkg.upper()}_H_"
    first = metas[0]
    ex_args = ", ".join(_cname(p["name"]) for p in first["params"])
    ex_grid = "grid_x, 1, 1" + ("" if first["tile"] else ", block_x, 1, 1")
    out = [f"/* {pkg}.h: the kernels of the package {pkg!r}, for C and C++ hosts (written by "
           f"threadtile export {__version__}).",
           " *",
           " * CUDA driver API only (cuda.h; link with -lcuda). With a context current:",
           " *",
           " *   tt_kernel k;",
           f' *   CUresult r = {pkg}_load_{first["name"]}(&k, "path/to/package", device);',
           f" *   r = {pkg}_launch_{first['name']}(&k, {ex_grid}, 0, stream, {ex_args});",
           " *",
           " * An array argument is a tt_array_<dtype>_<n>d: the device pointer, then the extent",
           " * and the stride (in elements) of each axis. float16 and bfloat16 scalars are their",
           " * 16 bits. A tile kernel's block is fixed; its tile operations' shared memory is",
           " * added to shared_bytes. */",
           f"#ifndef {guard}", f"#define {guard}", "",
           "#include <stdbool.h>", "#include <stdint.h>", "#include <stdio.h>",
           "#include <string.h>", "", "#include <cuda.h>", "",
           "#ifdef __cplusplus", 'extern "C" {', "#endif", _COMMON]
    seen = []
    for m in metas:
        for p in m["params"]:
            if p["kind"] == "array" and (p["dtype"], p["ndim"]) not in seen:
                seen.append((p["dtype"], p["ndim"]))
                out.append(_array_typedef(p["dtype"], p["ndim"]))
    for m in metas:
        out.append(_kernel(pkg, m))
    out += ["#ifdef __cplusplus", '}  /* extern "C" */', "#endif", f"#endif /* {guard} */", ""]
    return "\n".join(out)
