// cmath.h: Python's cmath functions on tt::complex, by the algorithms numba compiles for the
// GPU (CPython's cmathmodule.c formulas: branch cuts, signed zeros and infinities as C99
// Annex G has them). Every function computes in double and rounds its result once, so
// complex64 gets the double formula's answer rounded to float (the simulator's, which runs
// CPython's cmath on complex128). Included only by kernels that call one.
#pragma once
#include "complex.h"

namespace tt {
namespace cmath {

using cd = complex<double>;

namespace detail {

__device__ __forceinline__ cd mul_i(cd z) { return {-z.im, z.re}; }       // z * 1j
__device__ __forceinline__ cd div_i(cd z) { return {z.im, -z.re}; }       // z / 1j
constexpr double LN_4 = 1.386294361119890618834464242916;                  // log(4)
constexpr double LN_10 = 2.302585092994045684017991454684;
constexpr double HALF_PI = 1.570796326794896619231321691640;
constexpr double LARGE = 8.507059173023461586584365185794e37;  // FLT_MAX / 4, numba's bound
constexpr double SQRT_LARGE = 9.223372036854775808e18;           // sqrt(FLT_MAX / 4)
constexpr double SQRT_TINY = 1.084202172485504434e-19;           // sqrt(FLT_MIN)

__device__ inline cd sqrt_(cd z) {
  double a = z.re, b = z.im;
  if (a == 0.0 && b == 0.0) return {fabs(b), b};
  if (isinf(b)) return {fabs(b), b};
  if (isnan(a)) return {a, a};
  if (isinf(a)) {
    if (a < 0.0) return {fabs(b - b), copysign(a, b)};
    return {a, copysign(b - b, b)};
  }
  // scale components that would overflow hypot's sum
  const double thres = 1.7976931348623157e308 / 2.414213562373095048801688724209698;
  bool scaled = fabs(a) >= thres || fabs(b) >= thres;
  if (scaled) {
    a *= 0.25;
    b *= 0.25;
  }
  double re, im;
  if (a >= 0.0) {
    double t = sqrt((a + hypot(a, b)) * 0.5);
    re = t;
    im = b / (2.0 * t);
  } else {
    double t = sqrt((-a + hypot(a, b)) * 0.5);
    re = fabs(b) / (2.0 * t);
    im = copysign(t, b);
  }
  return scaled ? cd(re * 2.0, im) : cd(re, im);
}

__device__ inline cd exp_(cd z) {
  double x = z.re, y = z.im;
  if (isfinite(x)) {
    if (isfinite(y)) {
      double r = exp(x);
      return {r * cos(y), r * sin(y)};
    }
    double nan = y - y;
    return {nan, nan};
  }
  if (isnan(x)) return y != 0.0 ? cd(x, x) : cd(x, y);
  if (x > 0.0) {  // +inf: keep the zeros of cos and sin as zeros
    if (!isfinite(y)) return {x, y - y};
    double re = cos(y), im = sin(y);
    if (re != 0.0) re *= x;
    if (im != 0.0) im *= x;
    return {re, im};
  }
  if (isfinite(y)) {  // -inf: a signed zero in the direction of y
    double r = exp(x);
    return {r * cos(y), r * sin(y)};
  }
  return {0.0, 0.0};
}

__device__ inline cd log_(cd z) { return {log(hypot(z.re, z.im)), atan2(z.im, z.re)}; }

__device__ inline cd cosh_(cd z) {
  double x = z.re, y = z.im;
  if (isinf(x)) {
    double re, im;
    if (isnan(y) || y == 0.0) {
      re = fabs(x);
      im = y;
    } else {
      re = copysign(x, cos(y));
      im = copysign(x, sin(y));
    }
    if (x < 0.0) im = -im;
    return {re, im};
  }
  return {cos(y) * cosh(x), sin(y) * sinh(x)};
}

__device__ inline cd sinh_(cd z) {
  double x = z.re, y = z.im;
  if (isinf(x)) {
    if (isnan(y)) return {x, y};
    double re = cos(y), im = sin(y);
    if (re != 0.0) re *= x;
    if (im != 0.0) im *= fabs(x);
    return {re, im};
  }
  return {cos(y) * sinh(x), sin(y) * cosh(x)};
}

__device__ inline cd tanh_(cd z) {
  double x = z.re, y = z.im;
  if (isinf(x)) return {copysign(1.0, x), isinf(y) ? 0.0 : copysign(0.0, sin(2.0 * y))};
  double tx = tanh(x), ty = tan(y), cx = 1.0 / cosh(x);
  double txty = tx * ty;
  double denom = 1.0 + txty * txty;
  return {tx * (1.0 + ty * ty) / denom, ((ty / denom) * cx) * cx};
}

__device__ inline cd acos_(cd z) {
  if (fabs(z.re) > LARGE || fabs(z.im) > LARGE) {  // no overflow, infinities included
    return {atan2(fabs(z.im), z.re),
            copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + LN_4, -z.im)};
  }
  cd s1 = sqrt_(cd(1.0 - z.re, -z.im));
  cd s2 = sqrt_(cd(1.0 + z.re, z.im));
  return {2.0 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re)};
}

__device__ inline cd acosh_(cd z) {
  if (fabs(z.re) > LARGE || fabs(z.im) > LARGE) {
    return {log(hypot(z.re * 0.5, z.im * 0.5)) + LN_4, atan2(z.im, z.re)};
  }
  cd s1 = sqrt_(cd(z.re - 1.0, z.im));
  cd s2 = sqrt_(cd(z.re + 1.0, z.im));
  return {asinh(s1.re * s2.re + s1.im * s2.im), 2.0 * atan2(s1.im, s2.re)};
}

__device__ inline cd asinh_(cd z) {
  if (fabs(z.re) > LARGE || fabs(z.im) > LARGE) {
    return {copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + LN_4, z.re),
            atan2(z.im, fabs(z.re))};
  }
  cd s1 = sqrt_(cd(1.0 + z.im, -z.re));
  cd s2 = sqrt_(cd(1.0 - z.im, z.re));
  return {asinh(s1.re * s2.im - s2.re * s1.im), atan2(z.im, s1.re * s2.re - s1.im * s2.im)};
}

__device__ inline cd atanh_(cd z) {
  bool negate = z.re < 0.0;  // atanh(z) = -atanh(-z): work with re >= 0
  if (negate) z = cd(-z.re, -z.im);
  double x = z.re, y = z.im, ay = fabs(y), re, im;
  if (isnan(x) || x > SQRT_LARGE || ay > SQRT_LARGE) {
    if (isinf(y)) {
      re = copysign(0.0, x);
    } else if (isinf(x)) {
      re = 0.0;
    } else {
      double h = hypot(x * 0.5, y * 0.5);
      re = x / 4.0 / h / h;
    }
    im = -copysign(HALF_PI, -y);
  } else if (x == 1.0 && ay < SQRT_TINY) {  // C99: atanh(1 +- 0j) = inf +- 0j
    if (ay == 0.0) {
      re = __longlong_as_double(0x7ff0000000000000LL);
      im = y;
    } else {
      re = -log(sqrt(ay) / sqrt(hypot(ay, 2.0)));
      im = copysign(atan2(2.0, -ay) / 2.0, y);
    }
  } else {
    double x1 = 1.0 - x;
    re = log1p(4.0 * x / (x1 * x1 + ay * ay)) * 0.25;
    im = -atan2(-2.0 * y, x1 * (1.0 + x) - ay * ay) * 0.5;
  }
  if (isnan(y)) im = y - y;
  return negate ? cd(-re, -im) : cd(re, im);
}

// the circular functions through the hyperbolic ones: f(z) = -1j * fh(1j * z)
__device__ inline cd cos_(cd z) { return cosh_(mul_i(z)); }
__device__ inline cd sin_(cd z) { return div_i(sinh_(mul_i(z))); }
__device__ inline cd tan_(cd z) { return div_i(tanh_(mul_i(z))); }
__device__ inline cd asin_(cd z) { return div_i(asinh_(mul_i(z))); }
__device__ inline cd atan_(cd z) {
  cd r = atanh_(mul_i(z));
  // atan(+-inf + nan j): the real part keeps the sign numba's (and CPython's) table gives
  if (isinf(z.re) && isnan(z.im)) return {r.im, r.re};
  return div_i(r);
}
__device__ inline cd log10_(cd z) {
  cd r = log_(z);
  return {r.re / LN_10, r.im / LN_10};
}

}  // namespace detail

#define TT_CMATH_UNARY(name)                                    \
  template <typename T>                                         \
  __device__ __forceinline__ complex<T> name(complex<T> z) {    \
    return complex<T>(detail::name##_(cd(z)));                  \
  }
TT_CMATH_UNARY(sqrt)
TT_CMATH_UNARY(exp)
TT_CMATH_UNARY(log)
TT_CMATH_UNARY(log10)
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

}  // namespace cmath
}  // namespace tt
