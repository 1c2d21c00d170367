"""Diagnostic, not a benchmark of record: does holding a bfloat16 row of 32768 packed (two
values per 32-bit register, so two blocks fit a multiprocessor) beat holding it as float32
(one block)? Hand-written CUDA C++ softmax kernels through threadtile.RawKernel, as fractions
of a device-to-device copy of the same bytes, in one run."""

from __future__ import annotations

import functools
import json
import sys

from _common import ROOT, cuda_time_ms

SRC = r"""
#include <cuda_bf16.h>
#ifndef NT
#define NT 512
#endif
#ifndef EXP
#define EXP __expf
#endif
#ifndef MINB
#define MINB 2
#endif
constexpr int N = 32768, WORDS = N / (8 * NT);  // 16-byte words per thread

__device__ __forceinline__ float lo(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi(unsigned u) { return __uint_as_float(u & 0xffff0000u); }

template <bool MAX> __device__ __forceinline__ float block_reduce(float v, float* sm) {
  for (int o = 16; o; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = MAX ? fmaxf(v, w) : v + w;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
  __syncthreads();
  v = sm[0];
  for (int i = 1; i < NT / 32; ++i) v = MAX ? fmaxf(v, sm[i]) : v + sm[i];
  return v;
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
softmax_packed(const __nv_bfloat16* x, __nv_bfloat16* y) {
  __shared__ float sm[NT / 32];
  const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)blockIdx.x * N);
  uint4* yr = reinterpret_cast<uint4*>(y + (size_t)blockIdx.x * N);
  uint4 w[WORDS];
#pragma unroll
  for (int r = 0; r < WORDS; ++r) w[r] = xr[r * NT + threadIdx.x];
  float m = -__int_as_float(0x7f800000);
#pragma unroll
  for (int r = 0; r < WORDS; ++r) {
    m = fmaxf(m, fmaxf(fmaxf(lo(w[r].x), hi(w[r].x)), fmaxf(lo(w[r].y), hi(w[r].y))));
    m = fmaxf(m, fmaxf(fmaxf(lo(w[r].z), hi(w[r].z)), fmaxf(lo(w[r].w), hi(w[r].w))));
  }
  m = block_reduce<true>(m, sm);
  float s = 0.f;
#pragma unroll
  for (int r = 0; r < WORDS; ++r) {
    s += __expf(lo(w[r].x) - m) + __expf(hi(w[r].x) - m) + __expf(lo(w[r].y) - m) +
         __expf(hi(w[r].y) - m) + __expf(lo(w[r].z) - m) + __expf(hi(w[r].z) - m) +
         __expf(lo(w[r].w) - m) + __expf(hi(w[r].w) - m);
  }
  const float inv = 1.f / block_reduce<false>(s, sm);
#pragma unroll
  for (int r = 0; r < WORDS; ++r) {
    uint4 o;
    unsigned* po = &o.x;
    const unsigned* pi = &w[r].x;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __nv_bfloat162 h = __floats2bfloat162_rn(__expf(lo(pi[i]) - m) * inv,
                                               __expf(hi(pi[i]) - m) * inv);
      po[i] = *reinterpret_cast<unsigned*>(&h);
    }
    yr[r * NT + threadIdx.x] = o;
  }
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
softmax_float(const __nv_bfloat16* x, __nv_bfloat16* y) {
  __shared__ float sm[NT / 32];
  const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)blockIdx.x * N);
  uint4* yr = reinterpret_cast<uint4*>(y + (size_t)blockIdx.x * N);
  float v[WORDS * 8];
#pragma unroll
  for (int r = 0; r < WORDS; ++r) {
    uint4 w = xr[r * NT + threadIdx.x];
    const unsigned* p = &w.x;
#pragma unroll
    for (int i = 0; i < 4; ++i) { v[r * 8 + 2 * i] = lo(p[i]); v[r * 8 + 2 * i + 1] = hi(p[i]); }
  }
  float m = -__int_as_float(0x7f800000);
#pragma unroll
  for (int i = 0; i < WORDS * 8; ++i) m = fmaxf(m, v[i]);
  m = block_reduce<true>(m, sm);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < WORDS * 8; ++i) { v[i] = EXP(v[i] - m); s += v[i]; }
  const float inv = 1.f / block_reduce<false>(s, sm);
#pragma unroll
  for (int r = 0; r < WORDS; ++r) {
    uint4 o;
    unsigned* po = &o.x;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __nv_bfloat162 h = __floats2bfloat162_rn(v[r * 8 + 2 * i] * inv, v[r * 8 + 2 * i + 1] * inv);
      po[i] = *reinterpret_cast<unsigned*>(&h);
    }
    yr[r * NT + threadIdx.x] = o;
  }
}
"""


def main() -> None:
    import torch

    import threadtile

    x = torch.randn(4096, 32768, device="cuda").to(torch.bfloat16)
    y = torch.empty_like(x)
    gb = 2 * x.numel() * 2 / 1e9
    copy = gb / cuda_time_ms(functools.partial(y.copy_, x)) * 1e3
    ref = torch.softmax(x.double(), dim=1)
    row = {"copy_gbs": round(copy)}
    for nt, minb, exp in ((512, 1, "__expf"), (512, 1, "expf"), (1024, 1, "expf"),
                          (512, 2, "__expf"), (256, 1, "__expf")):
        for name in ("softmax_packed", "softmax_float"):
            if name == "softmax_packed" and exp != "__expf":
                continue
            k = threadtile.RawKernel(SRC, name, options=(f"-DNT={nt}", f"-DMINB={minb}",
                                                         f"-DEXP={exp}"))
            try:
                launch = functools.partial(k[4096, nt], x, y)
                y.fill_(float("nan"))
                launch()
                err = (y.double() - ref).abs().max().item()
                ms = cuda_time_ms(launch)
                row[f"{name} nt{nt} min{minb} {exp}"] = (round(gb / ms * 1e3 / copy, 3),
                                                         f"{err:.1e}")
            except Exception as e:  # noqa: BLE001
                row[f"{name} nt{nt} min{minb} {exp}"] = f"{type(e).__name__}: {e}"[:100]
    import threadtile.tile as ct
    sys.path.insert(0, str(ROOT))
    from tests.kernels import tiles

    for w in (16, 32):
        kern = ct.kernel(num_warps=w)(tiles.softmax_rows.py_func)
        launch = functools.partial(ct.launch, 0, (4096,), kern, (x, y, 32768))
        y.fill_(float("nan"))
        launch()
        err = (y.double() - ref).abs().max().item()
        row[f"tile softmax_rows w{w}"] = (round(gb / cuda_time_ms(launch) * 1e3 / copy, 3),
                                          f"{err:.1e}")
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
