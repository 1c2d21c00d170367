// tile/narrow.h: dtype work on tiles. Conversions to the narrow floats (cuda_fp8.h's and
// cuda_fp4.h's types, with TT_FP8: to nearest even, saturating to the largest finite value,
// NaN kept), conversions with a rounding mode (astype_r), a tile's bits as another dtype
// (bytes_as: bitcast, pack_to_bytes, unpack_from_bytes) and a tile of scalars (from_scalars,
// astile).
//
// Paths of bytes_as: through the scratch, each element's bytes written by its owner and read
// back as the result's elements (float4_e2m1fn staged one nibble to a byte, two to a result
// byte, the first in the low half).
#pragma once

#include "shapes.h"

namespace tt {
namespace tile {

// rounding modes of astype_r (frontend/tile_dtypes.py): towards zero, down, up, ties away
enum { RZ = 1, RM = 2, RP = 3, RA = 4 };

#ifdef TT_FP8
template <class T> __device__ __forceinline__ T narrow_bits(unsigned char b) {
  T r;
  r.__x = b;
  return r;
}
#define TT_FP8_CONV(T, KIND)                                                                    \
  template <class X> struct conv<T, X> {                                                        \
    __device__ static __forceinline__ T f(X x) {                                                \
      return narrow_bits<T>(__nv_cvt_float_to_fp8(float(wide(x)), __NV_SATFINITE, KIND));      \
    }                                                                                           \
  };                                                                                            \
  template <> struct conv<T, double> {                                                          \
    __device__ static __forceinline__ T f(double x) {                                           \
      return narrow_bits<T>(__nv_cvt_double_to_fp8(x, __NV_SATFINITE, KIND));                   \
    }                                                                                           \
  };
TT_FP8_CONV(__nv_fp8_e4m3, __NV_E4M3)
TT_FP8_CONV(__nv_fp8_e5m2, __NV_E5M2)
#undef TT_FP8_CONV
template <class X> struct conv<__nv_fp4_e2m1, X> {
  __device__ static __forceinline__ __nv_fp4_e2m1 f(X x) {
    return narrow_bits<__nv_fp4_e2m1>(
        __nv_cvt_float_to_fp4(float(wide(x)), __NV_E2M1, cudaRoundNearest));
  }
};
template <> struct conv<__nv_fp4_e2m1, double> {
  __device__ static __forceinline__ __nv_fp4_e2m1 f(double x) {
    return narrow_bits<__nv_fp4_e2m1>(__nv_cvt_double_to_fp4(x, __NV_E2M1, cudaRoundNearest));
  }
};
// float8_e8m0fnu has no rounding to nearest: conversions to it name RZ or RP (astype_r)
template <int M> __device__ __forceinline__ __nv_fp8_e8m0 to_e8m0(float x) {
  return narrow_bits<__nv_fp8_e8m0>(
      __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, M == RP ? cudaRoundPosInf : cudaRoundZero));
}
template <int M> __device__ __forceinline__ __nv_fp8_e8m0 to_e8m0(double x) {
  return narrow_bits<__nv_fp8_e8m0>(
      __nv_cvt_double_to_e8m0(x, __NV_SATFINITE, M == RP ? cudaRoundPosInf : cudaRoundZero));
}
#endif

// ---- conversions with a rounding mode ---------------------------------------------------------
template <int M> __device__ __forceinline__ float round_f32(float x) { return x; }
template <int M> __device__ __forceinline__ float round_f32(double x) {
  if (M == RZ) return __double2float_rz(x);
  if (M == RM) return __double2float_rd(x);
  if (M == RP) return __double2float_ru(x);
  return __double2float_rn(x);  // RA from float64 is not offered (frontend/tile_dtypes.py)
}

template <class U, int M> struct conv_r {
  template <class X> __device__ static __forceinline__ U f(X x) { return U(wide(x)); }
};
template <int M> struct conv_r<float, M> {
  template <class X> __device__ static __forceinline__ float f(X x) {
    return round_f32<M>(wide(x));
  }
};
template <int M> struct conv_r<tf32, M> {
  template <class X> __device__ static __forceinline__ tf32 f(X x) {
    const uint32_t b = __float_as_uint(round_f32<M>(wide(x)));
    if ((b & 0x7F800000u) == 0x7F800000u) return tf32{__uint_as_float(b)};
    if (M == RA) return tf32{__uint_as_float((b + 0x1000u) & ~0x1FFFu)};
    return tf32{__uint_as_float(b & ~0x1FFFu)};  // RZ
  }
};
#ifdef TT_HALF
template <int M> struct conv_r<__half, M> {
  template <class X> __device__ static __forceinline__ __half f(X x) {
    const float v = round_f32<M>(wide(x));  // RZ from float64 composes; others come exact
    if (M == RZ) return __float2half_rz(v);
    if (M == RM) return __float2half_rd(v);
    if (M == RP) return __float2half_ru(v);
    // RA: to nearest, a tie goes to the neighbour away from zero
    const __half z = __float2half_rz(v);
    const float zf = __half2float(z);
    if (zf == v || v != v) return z;
    const __half a = __ushort_as_half(__half_as_ushort(z) + 1);
    const float af = __half2float(a);
    return fabsf(af - v) <= fabsf(v - zf) ? a : z;
  }
};
template <int M> struct conv_r<__nv_bfloat16, M> {
  template <class X> __device__ static __forceinline__ __nv_bfloat16 f(X x) {
    return __float2bfloat16_rz(round_f32<M>(wide(x)));  // RZ only
  }
};
#endif
#ifdef TT_FP8
template <int M> struct conv_r<__nv_fp8_e8m0, M> {
  template <class X> __device__ static __forceinline__ __nv_fp8_e8m0 f(X x) {
    return to_e8m0<M>(wide(x));
  }
};
#endif

template <class U, int M, class T, int NT, int... S>
__device__ __forceinline__ Tile<U, NT, S...> astype_r(const Tile<T, NT, S...>& x) {
  Tile<U, NT, S...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, S...>::N; ++k) r.v[k] = conv_r<U, M>::f(x.v[k]);
  return r;
}

// ---- a tile's bits as another dtype -----------------------------------------------------------
template <class T> struct is_fp4 { static const bool value = false; };
#ifdef TT_FP8
template <> struct is_fp4<__nv_fp4_e2m1> { static const bool value = true; };
#endif

template <class R, class T, int NT, int... S>
__device__ __forceinline__ R bytes_as(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename traits<R>::elem U;
  unsigned char* buf = scratch<unsigned char>();
  const int t = tid();
  block_sync();  // the scratch's previous user has finished reading it
  if (owner<X>(t)) {
#pragma unroll
    for (int k = 0; k < X::N; ++k) {
      const int e = elem<X>(t, k);
      if constexpr (is_fp4<T>::value) {
        unsigned char b;
        memcpy(&b, &x.v[k], 1);
        buf[e] = b & 0xF;  // one nibble to a byte; the reader pairs them
      } else {
        memcpy(buf + e * sizeof(T), &x.v[k], sizeof(T));
      }
    }
  }
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    const int e = elem<R>(t, k);
    if constexpr (is_fp4<T>::value) {
      const unsigned char b = buf[2 * e] | (buf[2 * e + 1] << 4);
      memcpy(&r.v[k], &b, 1);
    } else if constexpr (is_fp4<U>::value) {
      const unsigned char b = (buf[e / 2] >> (4 * (e & 1))) & 0xF;
      memcpy(&r.v[k], &b, 1);
    } else {
      memcpy(&r.v[k], buf + e * sizeof(U), sizeof(U));
    }
  }
  return r;
}

// ---- a tile of scalars (row-major) -----------------------------------------------------------
template <class TL, class... A>
__device__ __forceinline__ TL from_scalars(A... a) {
  typedef typename traits<TL>::elem T;
  const T vals[sizeof...(A)] = {a...};
  TL r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < TL::N; ++k) r.v[k] = vals[elem<TL>(t, k)];
  return r;
}

}  // namespace tile
}  // namespace tt
