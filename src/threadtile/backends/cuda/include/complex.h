// complex.h: complex64 and complex128 in kernels (tt::complex<float>, tt::complex<double>).
// Two floats laid out as NumPy's complex types, so arrays and kernel arguments share NumPy's
// bytes. The arithmetic is numba's (CPython's): the product is the schoolbook formula, the
// quotient CPython's scaled one (a zero divisor gives nan+nanj, where numba's CPU target
// raises), and ** is CPython's polar formula (z ** 2 a product). The cmath functions are in
// cmath.h, which the generated code includes only where a kernel calls one.
#pragma once

namespace tt {

template <typename T>
struct __align__(2 * sizeof(T)) complex {
  T re, im;
  complex() = default;
  __host__ __device__ constexpr complex(T r, T i = T(0)) : re(r), im(i) {}
  template <typename U>
  __host__ __device__ constexpr explicit complex(complex<U> z) : re(T(z.re)), im(T(z.im)) {}
};

template <typename T>
__device__ __forceinline__ complex<T> operator+(complex<T> a, complex<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename T>
__device__ __forceinline__ complex<T> operator-(complex<T> a, complex<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <typename T>
__device__ __forceinline__ complex<T> operator-(complex<T> a) { return {-a.re, -a.im}; }
template <typename T>
__device__ __forceinline__ complex<T> operator+(complex<T> a) { return a; }
template <typename T>
__device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename T>
__device__ __forceinline__ complex<T> operator/(complex<T> a, complex<T> b) {
  const T nan = T(0) / T(0);
  if (fabs(b.re) >= fabs(b.im)) {
    if (b.re == T(0)) return {nan, nan};
    T ratio = b.im / b.re, denom = b.re + b.im * ratio;
    return {(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
  }
  if (b.im == T(0)) return {nan, nan};  // b.re is a nan
  T ratio = b.re / b.im, denom = b.re * ratio + b.im;
  return {(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
}
template <typename T>
__device__ __forceinline__ bool operator==(complex<T> a, complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename T>
__device__ __forceinline__ bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
template <typename T>
__device__ __forceinline__ complex<T>& operator+=(complex<T>& a, complex<T> b) {
  return a = a + b;
}
template <typename T>
__device__ __forceinline__ complex<T>& operator-=(complex<T>& a, complex<T> b) {
  return a = a - b;
}
template <typename T>
__device__ __forceinline__ complex<T>& operator*=(complex<T>& a, complex<T> b) {
  return a = a * b;
}
template <typename T>
__device__ __forceinline__ complex<T>& operator/=(complex<T>& a, complex<T> b) {
  return a = a / b;
}

template <typename T>
__device__ __forceinline__ complex<T> conj(complex<T> z) { return {z.re, -z.im}; }
template <typename T>
__device__ __forceinline__ T cabs(complex<T> z) { return hypot(z.re, z.im); }
template <typename T>
__device__ __forceinline__ T phase(complex<T> z) { return atan2(z.im, z.re); }
template <typename T>
__device__ __forceinline__ bool cisnan(complex<T> z) { return isnan(z.re) || isnan(z.im); }
template <typename T>
__device__ __forceinline__ bool cisinf(complex<T> z) { return isinf(z.re) || isinf(z.im); }
template <typename T>
__device__ __forceinline__ bool cisfinite(complex<T> z) {
  return isfinite(z.re) && isfinite(z.im);
}

// a ** b: CPython's formula, in double for both widths (as numba's numba_cpowf computes);
// b == 2 is the product, which keeps the precision the polar form would lose
template <typename T>
__device__ __forceinline__ complex<T> cpow(complex<T> a, complex<T> b) {
  if (b.re == T(2) && b.im == T(0)) return a * a;
  if (b.re == T(0) && b.im == T(0)) return {T(1), T(0)};
  if (a.re == T(0) && a.im == T(0)) return {T(0), T(0)};
  double vabs = hypot(double(a.re), double(a.im));
  double len = pow(vabs, double(b.re));
  double at = atan2(double(a.im), double(a.re));
  double ph = at * double(b.re);
  if (b.im != T(0)) {
    len /= exp(at * double(b.im));
    ph += double(b.im) * log(vabs);
  }
  return {T(len * cos(ph)), T(len * sin(ph))};
}

// cmath.rect(r, phi) as numba computes it, in double: a zero r with an infinite or NaN phi is 0,
// an infinite r keeps its infinity, and a zero cos or sin of phi times an infinite r stays a
// zero (with the sign of the product)
template <typename T>
__device__ __forceinline__ complex<T> rect(T r_, T phi_) {
  double r = r_, phi = phi_;
  if (!isfinite(phi)) {
    if (r == 0.0) return {T(fabs(r)), T(0)};
    if (isinf(r)) return {r_, phi_};
  }
  double re = cos(phi), im = sin(phi);
  re = (re == 0.0 && isinf(r)) ? re / r : re * r;
  im = (im == 0.0 && isinf(r)) ? im / r : im * r;
  return {T(re), T(im)};
}

}  // namespace tt
