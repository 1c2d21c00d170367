"""Diagnostic, not a benchmark of record: which design of a bfloat16 layer norm forward over
rows of 32768 reaches a copy's bandwidth? Hand-written CUDA C++ through threadtile.RawKernel,
as fractions of a device-to-device copy of the same bytes (X read, Y written), in one run:

- ``rows``: the row held in registers (16-byte words of packed bfloat16), statistics from
  registers, then W and B read word by word for the output; ``R`` rows per block share each
  W and B word; ``NOWB`` leaves W and B out (the bound of the design); ``PRE`` loads W and B
  before the statistics;
- ``twopass``: nothing held: a first pass over the row sums x - K and (x - K)^2 (K, the row's
  first element, keeps the variance from cancelling), a second pass re-reads the row (from L2)
  with W and B; ``R`` rows per block share W and B.

Env LN_PROBE_N picks the row length (default 32768); LN_PROBE_ONLY, a part of the variants'
names to run."""

from __future__ import annotations

import functools
import json
import os
import sys

from _common import cuda_time_ms

SRC = r"""
#include <cuda_bf16.h>
#ifndef NT
#define NT 512
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef R
#define R 1
#endif
constexpr int N = NCOLS, NW = NT / 32, WORDS = N / (8 * NT);

__device__ __forceinline__ float lo(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi(unsigned u) { return __uint_as_float(u & 0xffff0000u); }
// VOLU: the later phases unpack again (opaque to the compiler), so it cannot keep the row
// unpacked as floats (twice the registers) between the phases
#ifdef VOLU
__device__ __forceinline__ float lo2(unsigned u) {
  unsigned r;
  asm volatile("shl.b32 %0, %1, 16;" : "=r"(r) : "r"(u));
  return __uint_as_float(r);
}
__device__ __forceinline__ float hi2(unsigned u) {
  unsigned r;
  asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(r) : "r"(u));
  return __uint_as_float(r);
}
#else
#define lo2 lo
#define hi2 hi
#endif
__device__ __forceinline__ unsigned pack(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}
__device__ __forceinline__ float sum8(uint4 u, float k) {
  return ((lo(u.x) - k) + (hi(u.x) - k)) + ((lo(u.y) - k) + (hi(u.y) - k)) +
         (((lo(u.z) - k) + (hi(u.z) - k)) + ((lo(u.w) - k) + (hi(u.w) - k)));
}
__device__ __forceinline__ float sq(float a) { return a * a; }
__device__ __forceinline__ float sumsq8(uint4 u, float k) {
  return (sq(lo2(u.x) - k) + sq(hi2(u.x) - k)) + (sq(lo2(u.y) - k) + sq(hi2(u.y) - k)) +
         ((sq(lo2(u.z) - k) + sq(hi2(u.z) - k)) + (sq(lo2(u.w) - k) + sq(hi2(u.w) - k)));
}

// v[k] := the block's sum of v[k], in every thread
template <int K> __device__ __forceinline__ void block_sum(float (&v)[K], float* sm) {
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int o = 16; o; o >>= 1) v[k] += __shfl_xor_sync(0xffffffffu, v[k], o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
#pragma unroll
    for (int k = 0; k < K; ++k) sm[k * NW + (threadIdx.x >> 5)] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float a = 0.f, b = 0.f;
#pragma unroll
    for (int i = 0; i < NW; i += 2) {
      a += sm[k * NW + i];
      if (i + 1 < NW) b += sm[k * NW + i + 1];
    }
    v[k] = a + b;
  }
}

// ORD: W and B words loaded in program order (the compiler may not hoist them all up front)
__device__ __forceinline__ uint4 ld_ordered(const uint4* p) {
#ifdef ORD
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p) : "memory");
  return r;
#else
  return *p;
#endif
}

__device__ __forceinline__ uint4 norm8(uint4 u, uint4 w, uint4 b, float m, float r) {
  uint4 o;
  o.x = pack((lo2(u.x) - m) * r * lo(w.x) + lo(b.x), (hi2(u.x) - m) * r * hi(w.x) + hi(b.x));
  o.y = pack((lo2(u.y) - m) * r * lo(w.y) + lo(b.y), (hi2(u.y) - m) * r * hi(w.y) + hi(b.y));
  o.z = pack((lo2(u.z) - m) * r * lo(w.z) + lo(b.z), (hi2(u.z) - m) * r * hi(w.z) + hi(b.z));
  o.w = pack((lo2(u.w) - m) * r * lo(w.w) + lo(b.w), (hi2(u.w) - m) * r * hi(w.w) + hi(b.w));
  return o;
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
ln_rows(const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* b,
        __nv_bfloat16* y, float* mean_out, float* rstd_out, float eps) {
  __shared__ float sm[R * NW];
  const int row0 = blockIdx.x * R, t = threadIdx.x;
  uint4 v[R][WORDS];
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int i = 0; i < WORDS; ++i)
      v[rr][i] = reinterpret_cast<const uint4*>(x + (size_t)(row0 + rr) * N)[i * NT + t];
  const uint4* w4 = reinterpret_cast<const uint4*>(w);
  const uint4* b4 = reinterpret_cast<const uint4*>(b);
#ifdef PRE
  uint4 ww[WORDS], bb[WORDS];
#pragma unroll
  for (int i = 0; i < WORDS; ++i) { ww[i] = w4[i * NT + t]; bb[i] = b4[i * NT + t]; }
#endif
  float s[R], m[R], q[R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    float a = 0.f, c = 0.f;
#pragma unroll
    for (int i = 0; i < WORDS; i += 2) {
      a += sum8(v[rr][i], 0.f);
      if (i + 1 < WORDS) c += sum8(v[rr][i + 1], 0.f);
    }
    s[rr] = a + c;
  }
  block_sum<R>(s, sm);
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    m[rr] = s[rr] * (1.f / N);
    float a = 0.f, c = 0.f;
#pragma unroll
    for (int i = 0; i < WORDS; i += 2) {
      a += sumsq8(v[rr][i], m[rr]);
      if (i + 1 < WORDS) c += sumsq8(v[rr][i + 1], m[rr]);
    }
    q[rr] = a + c;
  }
  block_sum<R>(q, sm + 0);
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    q[rr] = rsqrtf(q[rr] * (1.f / N) + eps);
    if (t == 0) { mean_out[row0 + rr] = m[rr]; rstd_out[row0 + rr] = q[rr]; }
  }
#pragma unroll
  for (int i = 0; i < WORDS; ++i) {
#if defined(PRE)
    uint4 wi = ww[i], bi = bb[i];
#elif defined(NOWB)
    const unsigned one = 0x3f803f80u;  // two bfloat16 ones
    uint4 wi = make_uint4(one, one, one, one), bi = make_uint4(0, 0, 0, 0);
#else
    uint4 wi = ld_ordered(w4 + i * NT + t), bi = ld_ordered(b4 + i * NT + t);
#endif
#pragma unroll
    for (int rr = 0; rr < R; ++rr)
      reinterpret_cast<uint4*>(y + (size_t)(row0 + rr) * N)[i * NT + t] =
          norm8(v[rr][i], wi, bi, m[rr], q[rr]);
  }
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
ln_twopass(const __nv_bfloat16* x, const __nv_bfloat16* w, const __nv_bfloat16* b,
           __nv_bfloat16* y, float* mean_out, float* rstd_out, float eps) {
  __shared__ float sm[2 * R * NW];
  const int row0 = blockIdx.x * R, t = threadIdx.x;
  float k[R], acc[2 * R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    k[rr] = __bfloat162float(x[(size_t)(row0 + rr) * N]);
    acc[rr] = 0.f; acc[R + rr] = 0.f;
  }
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)(row0 + rr) * N);
#pragma unroll 4
    for (int i = t; i < N / 8; i += NT) {
      uint4 u = xr[i];
      acc[rr] += sum8(u, k[rr]);
      acc[R + rr] += sumsq8(u, k[rr]);
    }
  }
  block_sum<2 * R>(acc, sm);
  float m[R], r[R];
#pragma unroll
  for (int rr = 0; rr < R; ++rr) {
    const float d = acc[rr] * (1.f / N);
    m[rr] = k[rr] + d;
    r[rr] = rsqrtf(fmaxf(acc[R + rr] * (1.f / N) - d * d, 0.f) + eps);
    if (t == 0) { mean_out[row0 + rr] = m[rr]; rstd_out[row0 + rr] = r[rr]; }
  }
  const uint4* w4 = reinterpret_cast<const uint4*>(w);
  const uint4* b4 = reinterpret_cast<const uint4*>(b);
#pragma unroll 4
  for (int i = t; i < N / 8; i += NT) {
    uint4 wi = w4[i], bi = b4[i];
#pragma unroll
    for (int rr = 0; rr < R; ++rr) {
      const size_t o = (size_t)(row0 + rr) * (N / 8) + i;
      reinterpret_cast<uint4*>(y)[o] =
          norm8(reinterpret_cast<const uint4*>(x)[o], wi, bi, m[rr], r[rr]);
    }
  }
}
"""

ROWS = [  # (kernel, NT, MINB, R, extra defines)
    ("ln_rows", 1024, 1, 1, ()), ("ln_rows", 1024, 1, 1, ("PRE",)),
    ("ln_rows", 1024, 1, 1, ("NOWB",)), ("ln_rows", 1024, 1, 2, ()),
    ("ln_rows", 512, 1, 1, ()), ("ln_rows", 512, 2, 1, ()),
    ("ln_rows", 1024, 1, 2, ("VOLU",)), ("ln_rows", 512, 2, 1, ("VOLU",)),
    ("ln_rows", 512, 1, 1, ("VOLU",)), ("ln_rows", 256, 2, 1, ("VOLU",)),
    ("ln_twopass", 256, 4, 1, ()), ("ln_twopass", 256, 8, 1, ()), ("ln_twopass", 512, 4, 1, ()),
    ("ln_twopass", 256, 4, 2, ()), ("ln_twopass", 512, 2, 2, ()), ("ln_twopass", 256, 4, 4, ()),
    ("ln_twopass", 1024, 2, 1, ()), ("ln_twopass", 1024, 1, 2, ()),
]


def main() -> None:
    import torch

    import threadtile

    n = int(os.environ.get("LN_PROBE_N", "32768"))
    rows = 4096
    torch.manual_seed(0)
    x = (torch.randn(rows, n, device="cuda") * 2 + 3).to(torch.bfloat16)
    w = torch.randn(n, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, device="cuda").to(torch.bfloat16)
    y = torch.empty_like(x)
    mean = torch.empty(rows, device="cuda")
    rstd = torch.empty(rows, device="cuda")
    gb = 2 * x.numel() * 2 / 1e9
    copy = gb / cuda_time_ms(functools.partial(y.copy_, x)) * 1e3
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double())
    out = {"n": n, "copy_gbs": round(copy)}
    out["torch"] = round(gb / cuda_time_ms(lambda: torch.nn.functional.layer_norm(
        x, (n,), w, b)) * 1e3 / copy, 3)
    only = os.environ.get("LN_PROBE_ONLY", "")
    for name, nt, minb, r, extra in ROWS:
        tag = f"{name} nt{nt} min{minb} R{r} {' '.join(extra)}".strip()
        if n % (8 * nt) or rows % r or only not in tag:
            continue
        try:
            opts = (f"-DNCOLS={n}", f"-DNT={nt}", f"-DMINB={minb}", f"-DR={r}",
                    *(f"-D{e}" for e in extra))
            k = threadtile.RawKernel(SRC, name, options=opts)
            launch = functools.partial(k[rows // r, nt], x, w, b, y, mean, rstd, 1e-5)
            y.fill_(float("nan"))
            launch()
            err = (y.double() - ref).abs().max().item() if "NOWB" not in extra else 0.0
            out[tag] = (round(gb / cuda_time_ms(launch) * 1e3 / copy, 3), f"{err:.1e}")
        except Exception as e:  # noqa: BLE001
            out[tag] = f"{type(e).__name__}: {e}"[:160]
        print(tag, out[tag], flush=True)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
