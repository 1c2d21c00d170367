// cmath.h: Python's cmath functions on tt::complex, through libcu++'s <cuda/std/complex>
// (C99 Annex G's special values, as CPython's cmath has them). Included only by kernels that
// call one: libcu++'s header costs NVRTC about two seconds.
#pragma once
#include <cuda/std/complex>
#include "complex.h"

namespace tt {
namespace cmath {

template <typename T>
__device__ __forceinline__ cuda::std::complex<T> std_(complex<T> z) {
  return cuda::std::complex<T>(z.re, z.im);
}
template <typename T>
__device__ __forceinline__ complex<T> tt_(cuda::std::complex<T> z) {
  return {z.real(), z.imag()};
}

#define TT_CMATH_UNARY(name)                                    \
  template <typename T>                                         \
  __device__ __forceinline__ complex<T> name(complex<T> z) {    \
    return tt_(cuda::std::name(std_(z)));                       \
  }
TT_CMATH_UNARY(sqrt)
TT_CMATH_UNARY(exp)
TT_CMATH_UNARY(log)
TT_CMATH_UNARY(sin)
TT_CMATH_UNARY(cos)
TT_CMATH_UNARY(tan)
TT_CMATH_UNARY(asin)
TT_CMATH_UNARY(acos)
TT_CMATH_UNARY(atan)
TT_CMATH_UNARY(sinh)
TT_CMATH_UNARY(cosh)
TT_CMATH_UNARY(tanh)
TT_CMATH_UNARY(asinh)
TT_CMATH_UNARY(acosh)
TT_CMATH_UNARY(atanh)
#undef TT_CMATH_UNARY

// CPython's log10: the natural logarithm's parts divided by ln 10
template <typename T>
__device__ __forceinline__ complex<T> log10(complex<T> z) {
  complex<T> r = log(z);
  const T ln10 = T(2.302585092994045684017991454684364208);
  return {r.re / ln10, r.im / ln10};
}

}  // namespace cmath
}  // namespace tt
