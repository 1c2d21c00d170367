// tile/elementwise.h: the scalars under tile operations (16-bit floats compute in float and
// round once; conversions, tfloat32 rounding), making tiles (full, arange), astype and item,
// and the elementwise operations: arithmetic, comparisons and bit operations, pow, neg, invert,
// where, unary math, abs, isnan. All are free: each thread works on its own registers.
//
// Paths of astype:
//   bfloat16 -> float32 in pairs  an even number of slots per thread (with TT_HALF): the two
//                                 values of a 32-bit word by one shift and one mask, the
//                                 instructions of each conversion site kept apart
//   one by one                    every other conversion: to<U> per slot
#pragma once

#include "layout.h"

namespace tt {
namespace tile {

// ---- scalar helpers: 16-bit floats compute in float and round once ------------------------
template <class T> __device__ __forceinline__ T wide(T x) { return x; }
#ifdef TT_HALF
__device__ __forceinline__ float wide(__half x) { return __half2float(x); }
__device__ __forceinline__ float wide(__nv_bfloat16 x) { return __bfloat162float(x); }
#endif
__device__ __forceinline__ float wide(tf32 x) { return x.x; }
#ifdef TT_FP8  // the narrow floats (cuda_fp8.h, cuda_fp4.h): exact in float (tile/narrow.h)
__device__ __forceinline__ float wide(__nv_fp8_e4m3 x) { return float(x); }
__device__ __forceinline__ float wide(__nv_fp8_e5m2 x) { return float(x); }
__device__ __forceinline__ float wide(__nv_fp8_e8m0 x) { return float(x); }
__device__ __forceinline__ float wide(__nv_fp4_e2m1 x) { return float(x); }
#endif

template <class U, class X> struct conv {
  __device__ static __forceinline__ U f(X x) {
    auto w = wide(x);
    typedef decltype(w) W;
    // a float to an integer as cvt.rzi converts it (threadtile.h's f2i): a C++ cast of a
    // value out of the integer's range is undefined
    if constexpr (::tt::is_int<U>::value && (same<W, float>::value || same<W, double>::value))
      return ::tt::f2i<U>(w);
    else
      return U(w);
  }
};
template <class X> struct conv<bool, X> {
  __device__ static __forceinline__ bool f(X x) { return wide(x) != 0; }
};
template <> struct conv<bool, bool> {
  __device__ static __forceinline__ bool f(bool x) { return x; }
};
#ifdef TT_HALF
template <class X> struct conv<__half, X> {
  __device__ static __forceinline__ __half f(X x) { return __float2half_rn(float(wide(x))); }
};
template <> struct conv<__half, double> {
  __device__ static __forceinline__ __half f(double x) { return __double2half(x); }
};
template <class X> struct conv<__nv_bfloat16, X> {
  __device__ static __forceinline__ __nv_bfloat16 f(X x) {
    return __float2bfloat16_rn(float(wide(x)));
  }
};
template <> struct conv<__nv_bfloat16, double> {
  __device__ static __forceinline__ __nv_bfloat16 f(double x) { return __double2bfloat16(x); }
};
#endif
// float32 bits rounded to TensorFloat-32: to nearest, ties to even (as cuBLAS's TF32 and
// cuTile's astype round; cvt.rna's ties away from zero differ), infinities and NaNs kept
__device__ __forceinline__ uint32_t tf32_bits(uint32_t x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // one instruction from sm_90 on (rounding to nearest, ties to even, as below)
  uint32_t r;
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
#else
  return (x & 0x7F800000u) == 0x7F800000u ? x : (x + 0xFFFu + ((x >> 13) & 1u)) & ~0x1FFFu;
#endif
}
template <class X> struct conv<tf32, X> {
  __device__ static __forceinline__ tf32 f(X x) {
    return tf32{__uint_as_float(tf32_bits(__float_as_uint(float(wide(x)))))};
  }
};
template <class U, class X> __device__ __forceinline__ U to(X x) { return conv<U, X>::f(x); }

template <class T, int NT, int... S>
__device__ __forceinline__ T at(const Tile<T, NT, S...>& x, int k) { return x.v[k]; }
template <class T> __device__ __forceinline__ T at(const T& x, int) { return x; }

// ---- making tiles ----------------------------------------------------------------------------
template <class TL>
__device__ __forceinline__ TL full(typename traits<TL>::elem value) {
  TL r;
#pragma unroll
  for (int k = 0; k < TL::N; ++k) r.v[k] = value;
  return r;
}

template <class TL>
__device__ __forceinline__ TL arange(typename traits<TL>::elem start,
                                     typename traits<TL>::elem step) {
  typedef typename traits<TL>::elem T;
  TL r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < TL::N; ++k)
    r.v[k] = to<T>(wide(start) + wide(to<T>(elem<TL>(t, k))) * wide(step));
  return r;
}

// astype<U, Site>: Site numbers the conversions of the source (the code generator's count),
// so that the compiler does not take two conversions of one tile for one (see below)
template <class U, int Site = 0, class T, int NT, int... S>
__device__ __forceinline__ Tile<U, NT, S...> astype(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  Tile<U, NT, S...> r;
#ifdef TT_HALF
  if constexpr (same<T, __nv_bfloat16>::value && same<U, float>::value && X::N % 2 == 0) {
    // bfloat16 is float32's upper half: the two values of a 32-bit word become two floats with
    // one shift and one mask. Each conversion in the source is its own instructions (Site),
    // free to move but never merged with another: a kernel that converts a row again in a
    // later pass (rather than keeping one float32 copy across it) keeps the row packed two
    // values to a register meanwhile, half the registers.
#pragma unroll
    for (int k = 0; k < X::N; k += 2) {
      unsigned u, lo, hi;
      memcpy(&u, &x.v[k], 4);
      asm("shl.b32 %0, %2, 16;\n\tand.b32 %1, %2, 0xffff0000; // %3"
          : "=r"(lo), "=r"(hi) : "r"(u), "n"(Site));
      r.v[k] = __uint_as_float(lo);
      r.v[k + 1] = __uint_as_float(hi);
    }
  } else
#endif
  {
#pragma unroll
    for (int k = 0; k < X::N; ++k) r.v[k] = to<U>(x.v[k]);
  }
  return r;
}

template <class T, int NT, int... S>
__device__ __forceinline__ T item(const Tile<T, NT, S...>& x) {
  static_assert(Tile<T, NT, S...>::E == 1, "item() of a one-element tile");
  return x.v[0];
}

// ---- elementwise -----------------------------------------------------------------------------
// Operands are tiles of one shape and dtype, or scalars of that dtype (the frontend converted
// and broadcast them); the scalar semantics are threadtile.h's (Python's // and %, min, max).
// truediv's RoundingMode.APPROX: float32's fast division (div.approx.f32), IEEE otherwise
__device__ __forceinline__ float fdiv_approx(float x, float y) { return __fdividef(x, y); }
template <class T> __device__ __forceinline__ T fdiv_approx(T x, T y) { return x / y; }

// Signed integers wrap, as NumPy's and the thread level's (threadtile.h's wadd, wsub, wmul,
// wneg): C++ leaves a signed overflow undefined and the compiler optimises on it (it took
// max(x * x, 4) for an unsigned maximum, x * x being ">= 0": fuzz seed 21716). Shifts are
// threadtile.h's tt::shl and tt::shr (Python's, for any count).
#define TT_TILE_BINARY(NAME, R, EXPR)                                                   \
  template <class A, class B>                                                           \
  __device__ __forceinline__ auto NAME(const A& a, const B& b) {                        \
    typedef carrier<A, B> C;                                                            \
    typedef typename traits<C>::elem T;                                                 \
    typedef typename cond<same<R, void>::value, T, R>::type RT;                         \
    typename traits<C>::template with<RT> r;                                            \
    _Pragma("unroll") for (int k = 0; k < traits<C>::N; ++k) {                          \
      auto x = wide(at(a, k));                                                          \
      auto y = wide(at(b, k));                                                          \
      r.v[k] = to<RT>(EXPR);                                                            \
    }                                                                                   \
    return r;                                                                           \
  }
TT_TILE_BINARY(add, void, ::tt::wadd(x, y))
TT_TILE_BINARY(sub, void, ::tt::wsub(x, y))
TT_TILE_BINARY(mul, void, ::tt::wmul(x, y))
TT_TILE_BINARY(div, void, x / y)
TT_TILE_BINARY(div_approx, void, ::tt::tile::fdiv_approx(x, y))  // truediv(..., APPROX)
TT_TILE_BINARY(floordiv, void, ::tt::floordiv(x, y))
TT_TILE_BINARY(mod, void, ::tt::pymod(x, y))
TT_TILE_BINARY(bit_and, void, x & y)
TT_TILE_BINARY(bit_or, void, x | y)
TT_TILE_BINARY(bit_xor, void, x ^ y)
TT_TILE_BINARY(shl, void, ::tt::shl(x, y))
TT_TILE_BINARY(shr, void, ::tt::shr(x, y))
TT_TILE_BINARY(maximum, void, ::tt::max(x, y))
TT_TILE_BINARY(minimum, void, ::tt::min(x, y))
TT_TILE_BINARY(lt, bool, x < y)
TT_TILE_BINARY(le, bool, x <= y)
TT_TILE_BINARY(gt, bool, x > y)
TT_TILE_BINARY(ge, bool, x >= y)
TT_TILE_BINARY(eq, bool, x == y)
TT_TILE_BINARY(ne, bool, x != y)
#undef TT_TILE_BINARY

__device__ __forceinline__ float pow_(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double pow_(double x, double y) { return ::pow(x, y); }
template <class T> __device__ __forceinline__ T pow_(T x, T y) { return ::tt::ipow(x, y); }
template <class A, class B>
__device__ __forceinline__ auto pow(const A& a, const B& b) {
  typedef carrier<A, B> C;
  typedef typename traits<C>::elem T;
  C r;
#pragma unroll
  for (int k = 0; k < traits<C>::N; ++k) r.v[k] = to<T>(pow_(wide(at(a, k)), wide(at(b, k))));
  return r;
}

// (X any tile type: Tile, or the fragment tiles of fragments.h; a scalar X has no
// traits<X>::with, so these never take scalars)
template <class X> using same_tile = typename traits<X>::template with<typename traits<X>::elem>;
template <class X>
__device__ __forceinline__ same_tile<X> neg(const X& x) {
  typedef typename traits<X>::elem T;
  same_tile<X> r;
#pragma unroll
  for (int k = 0; k < traits<X>::N; ++k) r.v[k] = to<T>(::tt::wneg(wide(x.v[k])));
  return r;
}
__device__ __forceinline__ bool invert_(bool x) { return !x; }
template <class T> __device__ __forceinline__ T invert_(T x) { return ~x; }
template <class X>
__device__ __forceinline__ same_tile<X> invert(const X& x) {
  same_tile<X> r;
#pragma unroll
  for (int k = 0; k < traits<X>::N; ++k) r.v[k] = invert_(x.v[k]);
  return r;
}

template <class C, class X, class Y>
__device__ __forceinline__ auto where(const C& c, const X& x, const Y& y) {
  typedef carrier<X, Y> XY;
  typedef typename traits<XY>::elem T;
  typedef typename cond<traits<XY>::tile, XY,
                        typename traits<C>::template with<T>>::type R;
  R r;
#pragma unroll
  for (int k = 0; k < traits<R>::N; ++k) r.v[k] = at(c, k) ? at(x, k) : at(y, k);
  return r;
}

// unary math: float and double natively, 16-bit floats through float
#define TT_TILE_MATH(NAME, FF, FD)                                                       \
  __device__ __forceinline__ float NAME##_(float x) { return FF(x); }                    \
  __device__ __forceinline__ double NAME##_(double x) { return FD(x); }                  \
  template <class X>                                                                     \
  __device__ __forceinline__ same_tile<X> NAME(const X& x) {                             \
    typedef typename traits<X>::elem T;                                                  \
    same_tile<X> r;                                                                      \
    _Pragma("unroll") for (int k = 0; k < traits<X>::N; ++k)                             \
      r.v[k] = to<T>(NAME##_(wide(x.v[k])));                                             \
    return r;                                                                            \
  }
TT_TILE_MATH(exp, expf, ::exp)
TT_TILE_MATH(exp_approx, __expf, ::exp)  // RoundingMode.APPROX (float32 only)
TT_TILE_MATH(exp2, exp2f, ::exp2)
// exp2(x, flush_to_zero=True) of float32 tiles: the hardware's 2^x as it is (exp2f adds four
// instructions an element to keep results below 2^-126 subnormal)
__device__ __forceinline__ float ex2_ftz(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TT_TILE_MATH(exp2_ftz, ex2_ftz, ::exp2)
TT_TILE_MATH(log, logf, ::log)
TT_TILE_MATH(log2, log2f, ::log2)
TT_TILE_MATH(sqrt, sqrtf, ::sqrt)
TT_TILE_MATH(rsqrt, rsqrtf, ::rsqrt)
TT_TILE_MATH(tanh, tanhf, ::tanh)
TT_TILE_MATH(sin, sinf, ::sin)
TT_TILE_MATH(cos, cosf, ::cos)
TT_TILE_MATH(tan, tanf, ::tan)
TT_TILE_MATH(sinh, sinhf, ::sinh)
TT_TILE_MATH(cosh, coshf, ::cosh)
TT_TILE_MATH(floor, floorf, ::floor)
TT_TILE_MATH(ceil, ceilf, ::ceil)
#undef TT_TILE_MATH
__device__ __forceinline__ float abs_(float x) { return fabsf(x); }
__device__ __forceinline__ double abs_(double x) { return ::fabs(x); }
template <class T> __device__ __forceinline__ T abs_(T x) { return x < 0 ? T(-x) : x; }
template <class X>
__device__ __forceinline__ same_tile<X> abs(const X& x) {
  typedef typename traits<X>::elem T;
  same_tile<X> r;
#pragma unroll
  for (int k = 0; k < traits<X>::N; ++k) r.v[k] = to<T>(abs_(wide(x.v[k])));
  return r;
}
template <class X>
__device__ __forceinline__ typename traits<X>::template with<bool> isnan(const X& x) {
  typename traits<X>::template with<bool> r;
#pragma unroll
  for (int k = 0; k < traits<X>::N; ++k) r.v[k] = ::isnan(wide(x.v[k]));
  return r;
}

}  // namespace tile
}  // namespace tt
