// tile.h: the block-collective tiles behind threadtile's tile operations (docs/tiles.md).
//
// A Tile<T, NT, S...> is a tile of shape S... spread over the NT threads of a block, one
// function call per tile operation, executed by every thread of the block together:
//
//   layout: a tile with E elements spreads over the NT threads in runs of V consecutive
//           row-major elements: element e lives in thread (e / V) % NT, register slot
//           (e / (V NT)) V + e % V. V (vec_width) is the largest power of two up to TT_VEC
//           for which the last axis is a multiple of V NT, else 1; it depends on the shape and
//           NT only, never on the dtype, so tiles of one shape share a layout whatever their
//           types. A thread's run of V elements is one vector access of memory (16 bytes for
//           float32), and a warp's runs are consecutive, so loads and stores stay coalesced.
//           A tile smaller than the block (E < NT) is replicated: thread t holds element
//           t % E, and a one-element tile is in every thread.
//   free:   elementwise operations, reshapes between shapes of one vector width (the row-major
//           order does not change), broadcasts that add leading axes or expand a one-element
//           tile, loads and stores.
//   shared: operations that move elements between threads (reductions, transposes, other
//           broadcasts, mma) stage through the scratch at the start of dynamic shared memory
//           (TT_SCRATCH_BYTES, sized by the code generator for the largest user); each starts
//           with __syncthreads() so that the previous user has finished reading it.
//
// The generated code defines TT_SCRATCH_BYTES before including this header.
#pragma once

#ifndef TT_SCRATCH_BYTES
#define TT_SCRATCH_BYTES 0
#endif

extern __shared__ __align__(16) unsigned char tt_dynamic_smem[];

namespace tt {
namespace tile {

// TensorFloat-32: float bits rounded to 10 mantissa bits (what the tensor cores read)
struct tf32 {
  float x;
};

#ifndef TT_VEC
#define TT_VEC 4
#endif
// the vector width of a tile whose last axis has d elements (backends/cuda/tiles.py, vec_width)
__host__ __device__ constexpr int vec_width(int nt, int d) {
  int v = TT_VEC;
  while (v > 1 && d % (v * nt) != 0) v /= 2;
  return v;
}
template <int... S> __host__ __device__ constexpr int last_dim() {
  constexpr int s[] = {1, S...};
  return s[sizeof...(S)];
}

template <typename T, int NT, int... S>
struct Tile {
  static constexpr int E = (1 * ... * S);           // elements
  static constexpr int N = E >= NT ? E / NT : 1;    // register slots per thread
  static constexpr int V = vec_width(NT, last_dim<S...>());  // consecutive elements per run
  T v[N];
};

// ---- small metaprogramming (NVRTC has no <type_traits>) -------------------------------------
template <bool C, class A, class B> struct cond { typedef A type; };
template <class A, class B> struct cond<false, A, B> { typedef B type; };
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };

template <class X> struct traits {
  static constexpr bool tile = false;
  typedef X elem;
};
template <class T, int NT_, int... S>
struct traits<Tile<T, NT_, S...>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  static constexpr int rank = sizeof...(S);
  static constexpr int E = Tile<T, NT_, S...>::E;
  static constexpr int N = Tile<T, NT_, S...>::N;
  static constexpr int V = Tile<T, NT_, S...>::V;
  typedef T elem;
  template <class U> using with = Tile<U, NT_, S...>;
  __host__ __device__ static constexpr int dim(int d) {
    constexpr int s[] = {S..., 1};
    return s[d];
  }
};
// the tile type among the operands of an elementwise operation (scalars broadcast)
template <class A, class B> using carrier = typename cond<traits<A>::tile, A, B>::type;
template <int I, int... S> struct pack_at;
template <int I, int H, int... S> struct pack_at<I, H, S...> {
  static constexpr int value = pack_at<I - 1, S...>::value;
};
template <int H, int... S> struct pack_at<0, H, S...> { static constexpr int value = H; };

__device__ __forceinline__ int tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
// the element thread t holds in slot k
template <class TL>
__device__ __forceinline__ int elem(int t, int k) {
  constexpr int NT = traits<TL>::NT, V = traits<TL>::V;
  if constexpr (traits<TL>::E < NT) return t % traits<TL>::E;
  else if constexpr (V == 1) return t + k * NT;
  else return (k / V) * (V * NT) + t * V + k % V;
}
// whether thread t is the one (of the replicas) that writes element elem(t, k)
template <class TL>
__device__ __forceinline__ bool owner(int t) {
  return traits<TL>::E >= traits<TL>::NT || t < traits<TL>::E;
}
// row-major coordinates of element e
template <class TL>
__device__ __forceinline__ void coords(int e, int* c) {
#pragma unroll
  for (int d = traits<TL>::rank - 1; d >= 0; --d) {
    c[d] = e % traits<TL>::dim(d);
    e /= traits<TL>::dim(d);
  }
}
template <class TL>
__device__ __forceinline__ int flat(const int* c) {
  int e = 0;
#pragma unroll
  for (int d = 0; d < traits<TL>::rank; ++d) e = e * traits<TL>::dim(d) + c[d];
  return e;
}
template <class T>
__device__ __forceinline__ T* scratch() {
  return reinterpret_cast<T*>(tt_dynamic_smem);
}

// ---- scalar helpers: 16-bit floats compute in float and round once ------------------------
template <class T> __device__ __forceinline__ T wide(T x) { return x; }
#ifdef TT_HALF
__device__ __forceinline__ float wide(__half x) { return __half2float(x); }
__device__ __forceinline__ float wide(__nv_bfloat16 x) { return __bfloat162float(x); }
#endif
__device__ __forceinline__ float wide(tf32 x) { return x.x; }

template <class U, class X> struct conv {
  __device__ static __forceinline__ U f(X x) { return U(wide(x)); }
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
template <class X> struct conv<tf32, X> {
  __device__ static __forceinline__ tf32 f(X x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(float(wide(x))));
    return tf32{__uint_as_float(r)};
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
TT_TILE_BINARY(add, void, x + y)
TT_TILE_BINARY(sub, void, x - y)
TT_TILE_BINARY(mul, void, x * y)
TT_TILE_BINARY(div, void, x / y)
TT_TILE_BINARY(floordiv, void, ::tt::floordiv(x, y))
TT_TILE_BINARY(mod, void, ::tt::pymod(x, y))
TT_TILE_BINARY(bit_and, void, x & y)
TT_TILE_BINARY(bit_or, void, x | y)
TT_TILE_BINARY(bit_xor, void, x ^ y)
TT_TILE_BINARY(shl, void, x << y)
TT_TILE_BINARY(shr, void, x >> y)
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

template <class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, S...> neg(const Tile<T, NT, S...>& x) {
  Tile<T, NT, S...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, S...>::N; ++k) r.v[k] = to<T>(-wide(x.v[k]));
  return r;
}
__device__ __forceinline__ bool invert_(bool x) { return !x; }
template <class T> __device__ __forceinline__ T invert_(T x) { return ~x; }
template <class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, S...> invert(const Tile<T, NT, S...>& x) {
  Tile<T, NT, S...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, S...>::N; ++k) r.v[k] = invert_(x.v[k]);
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
  template <class T, int NT, int... S>                                                   \
  __device__ __forceinline__ Tile<T, NT, S...> NAME(const Tile<T, NT, S...>& x) {        \
    Tile<T, NT, S...> r;                                                                 \
    _Pragma("unroll") for (int k = 0; k < Tile<T, NT, S...>::N; ++k)                     \
      r.v[k] = to<T>(NAME##_(wide(x.v[k])));                                             \
    return r;                                                                            \
  }
TT_TILE_MATH(exp, expf, ::exp)
TT_TILE_MATH(exp_approx, __expf, ::exp)  // RoundingMode.APPROX (float32 only)
TT_TILE_MATH(exp2, exp2f, ::exp2)
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
template <class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, S...> abs(const Tile<T, NT, S...>& x) {
  Tile<T, NT, S...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, S...>::N; ++k) r.v[k] = to<T>(abs_(wide(x.v[k])));
  return r;
}
template <class T, int NT, int... S>
__device__ __forceinline__ Tile<bool, NT, S...> isnan(const Tile<T, NT, S...>& x) {
  Tile<bool, NT, S...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, S...>::N; ++k) r.v[k] = ::isnan(wide(x.v[k]));
  return r;
}

// ---- shapes ----------------------------------------------------------------------------------
// broadcast that adds leading axes or expands a one-element tile: element e of the result is
// element e % E_src of the source, which the same thread holds (slot k % N_src) when both
// have one vector width (the code generator checks: tiles.py, register_broadcast)
template <int... O, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, O...> broadcast(const Tile<T, NT, S...>& x) {
  static_assert(Tile<T, NT, S...>::E == 1 || Tile<T, NT, S...>::V == Tile<T, NT, O...>::V,
                "register broadcast between tiles of one vector width");
  Tile<T, NT, O...> r;
#pragma unroll
  for (int k = 0; k < Tile<T, NT, O...>::N; ++k) r.v[k] = x.v[k % Tile<T, NT, S...>::N];
  return r;
}

// stage a tile in the scratch: each element written once (replicas skip)
template <class TL>
__device__ __forceinline__ void to_scratch(const TL& x, typename traits<TL>::elem* buf) {
  const int t = tid();
  __syncthreads();  // the scratch's previous user has finished reading it
  if (owner<TL>(t)) {
#pragma unroll
    for (int k = 0; k < TL::N; ++k) buf[elem<TL>(t, k)] = x.v[k];
  }
  __syncthreads();
}

// reshape: same elements in the same row-major order, hence the same registers when the two
// shapes have one vector width; else through the scratch
template <int... O, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, O...> reshape(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, O...> R;
  static_assert(R::E == X::E, "reshape keeps the size");
  R r;
  if constexpr (R::V == X::V || X::E < NT) {
#pragma unroll
    for (int k = 0; k < X::N; ++k) r.v[k] = x.v[k];
  } else {
    static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
    T* buf = scratch<T>();
    to_scratch(x, buf);
    const int t = tid();
#pragma unroll
    for (int k = 0; k < R::N; ++k) r.v[k] = buf[elem<R>(t, k)];
  }
  return r;
}

// any other broadcast (NumPy's rules, source axes right-aligned)
template <int... O, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, O...> broadcast_smem(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, O...> R;
  static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  R r;
  const int t = tid();
  constexpr int off = traits<R>::rank - traits<X>::rank;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[traits<R>::rank + 1], s[traits<X>::rank + 1];
    coords<R>(elem<R>(t, k), c);
#pragma unroll
    for (int d = 0; d < traits<X>::rank; ++d) s[d] = traits<X>::dim(d) == 1 ? 0 : c[d + off];
    r.v[k] = buf[flat<X>(s)];
  }
  return r;
}

// axis d of the result is axis P[d] of x
template <int... P, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, pack_at<P, S...>::value...> permute(
    const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, pack_at<P, S...>::value...> R;
  static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  constexpr int perm[] = {P..., 0};
  T* buf = scratch<T>();
  to_scratch(x, buf);
  R r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[traits<R>::rank + 1], s[traits<X>::rank + 1];
    coords<R>(elem<R>(t, k), c);
#pragma unroll
    for (int d = 0; d < traits<R>::rank; ++d) s[perm[d]] = c[d];
    r.v[k] = buf[flat<X>(s)];
  }
  return r;
}

// ---- reductions and scans --------------------------------------------------------------------
enum Op { SUM, PROD, MAX, MIN, ARGMAX, ARGMIN };

template <class T> struct acc_of { typedef T type; };
#ifdef TT_HALF
template <> struct acc_of<__half> { typedef float type; };
template <> struct acc_of<__nv_bfloat16> { typedef float type; };
#endif

template <> struct acc_of<int8_t> { typedef int32_t type; };
template <> struct acc_of<int16_t> { typedef int32_t type; };
template <> struct acc_of<uint8_t> { typedef uint32_t type; };
template <> struct acc_of<uint16_t> { typedef uint32_t type; };

// max/min ignore NaNs (as fmax), sum/prod of 16-bit floats accumulate in float
template <int K, class A> __device__ __forceinline__ A combine(A a, A b) {
  if constexpr (K == SUM) return a + b;
  else if constexpr (K == PROD) return a * b;
  else if constexpr (same<A, float>::value) return K == MAX ? fmaxf(a, b) : fminf(a, b);
  else if constexpr (same<A, double>::value) return K == MAX ? fmax(a, b) : fmin(a, b);
  else if constexpr (K == MAX) return a != a ? b : ::tt::max(a, b);
  else return a != a ? b : ::tt::min(a, b);
}
// combining get(0), get(1), ..., get(n - 1) (n a compile-time count): four independent
// chains, then their tree, so that a long run is not one chain of dependent instructions (the
// order differs from a left fold only by rounding, as on any GPU)
template <int K, int n, class A, class F>
__device__ __forceinline__ A combine_chains(F get) {
  constexpr int C = n >= 8 ? 4 : 1;
  A acc[C];
#pragma unroll
  for (int c = 0; c < C; ++c) acc[c] = get(c);
#pragma unroll
  for (int j = C; j < n; ++j) acc[j % C] = combine<K>(acc[j % C], get(j));
#pragma unroll
  for (int w = C / 2; w >= 1; w /= 2) {
#pragma unroll
    for (int c = 0; c < w; ++c) acc[c] = combine<K>(acc[c], acc[c + w]);
  }
  return acc[0];
}
// combining a thread's slots x.v[base], ..., x.v[base + n - 1]
template <int K, int n, class A, class TL>
__device__ __forceinline__ A combine_slots(const TL& x, int base) {
  return combine_chains<K, n, A>([&](int j) { return A(wide(x.v[base + j])); });
}
// argmax/argmin: the better value, the lower index on ties
template <int K, class A>
__device__ __forceinline__ void combine_arg(A& a, int& ia, A b, int ib) {
  bool take = K == ARGMAX ? (b > a || (b == a && ib < ia)) : (b < a || (b == a && ib < ia));
  if (take) {
    a = b;
    ia = ib;
  }
}

// generic: through the scratch, each result element combining its inputs in order
template <int K, int Mask, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename cond<(K == ARGMAX || K == ARGMIN), int32_t, T>::type RT;
  typedef Tile<RT, NT, O...> R;
  typedef typename acc_of<T>::type A;
  static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  constexpr int rank = traits<X>::rank;
  int count = 1;  // elements combined into each result
#pragma unroll
  for (int d = 0; d < rank; ++d)
    if (Mask >> d & 1) count *= traits<X>::dim(d);
  R r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    // the result element's coordinates over the kept axes (reduced axes at 0)
    int e = elem<R>(t, k), c[rank + 1];
#pragma unroll
    for (int d = rank - 1; d >= 0; --d) {
      if (Mask >> d & 1) {
        c[d] = 0;
      } else {
        c[d] = e % traits<X>::dim(d);
        e /= traits<X>::dim(d);
      }
    }
    A acc = A(wide(buf[flat<X>(c)]));
    int best = 0;
    for (int i = 1; i < count; ++i) {
      int j = i;
#pragma unroll
      for (int d = rank - 1; d >= 0; --d) {
        if (Mask >> d & 1) {
          c[d] = j % traits<X>::dim(d);
          j /= traits<X>::dim(d);
        }
      }
      A v = A(wide(buf[flat<X>(c)]));
      if (K == ARGMAX || K == ARGMIN) combine_arg<K>(acc, best, v, i);
      else acc = combine<K>(acc, v);
    }
    if (K == ARGMAX || K == ARGMIN) r.v[k] = RT(best);
    else r.v[k] = to<RT>(acc);
  }
  return r;
}

template <int K, class A>
__device__ __forceinline__ void warp_combine(A& a, int& ia) {
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    A b = __shfl_xor_sync(0xffffffffu, a, s);
    if (K == ARGMAX || K == ARGMIN) {
      int ib = __shfl_xor_sync(0xffffffffu, ia, s);
      combine_arg<K>(a, ia, b, ib);
    } else {
      a = combine<K>(a, b);
    }
  }
}

// reducing the trailing axes, R = E / E_out elements per result with R a multiple of NT: each
// thread combines its own registers (a result's inputs are slots [o*R/NT, (o+1)*R/NT) of
// every thread), then the warp through shuffles, then the warps through the scratch
template <int K, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce_rows(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename cond<(K == ARGMAX || K == ARGMIN), int32_t, T>::type RT;
  typedef Tile<RT, NT, O...> R;
  typedef typename acc_of<T>::type A;
  constexpr int EO = R::E, RS = X::N / EO, NW = NT / 32;
  static_assert(X::E % (EO * NT * X::V) == 0, "reduce_rows: rows of a multiple of V NT elements");
  static_assert(EO * NW * (sizeof(A) + 4) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int t = tid(), lane = t % 32, w = t / 32;
  A* part = scratch<A>();
  int* ipart = reinterpret_cast<int*>(part + EO * NW);
  __syncthreads();
#pragma unroll
  for (int o = 0; o < EO; ++o) {
    constexpr bool arg = K == ARGMAX || K == ARGMIN;
    A acc;
    int best = elem<X>(t, o * RS) - o * (X::E / EO);  // the index within the row
    if constexpr (arg) {
      acc = A(wide(x.v[o * RS]));
#pragma unroll
      for (int j = 1; j < RS; ++j)
        combine_arg<K>(acc, best, A(wide(x.v[o * RS + j])),
                       elem<X>(t, o * RS + j) - o * (X::E / EO));
    } else {
      acc = combine_slots<K, RS, A>(x, o * RS);
    }
    warp_combine<K>(acc, best);
    if (lane == 0) {
      part[o * NW + w] = acc;
      if constexpr (arg) ipart[o * NW + w] = best;
    }
  }
  __syncthreads();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int o = elem<R>(t, k);
    A acc = part[o * NW];
    if constexpr (K == ARGMAX || K == ARGMIN) {
      int best = ipart[o * NW];
      for (int i = 1; i < NW; ++i) combine_arg<K>(acc, best, part[o * NW + i], ipart[o * NW + i]);
      r.v[k] = RT(best);
    } else {  // the warps' partials, in chains (combine_chains)
      acc = combine_chains<K, NW, A>([&](int i) { return part[o * NW + i]; });
      r.v[k] = to<RT>(acc);
    }
  }
  return r;
}

// inclusive scan along one axis (from the end with Rev), through the scratch
template <int K, int Axis, bool Rev, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, S...> scan(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename acc_of<T>::type A;
  static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  X r;
  const int t = tid();
  constexpr int n = traits<X>::dim(Axis);
#pragma unroll
  for (int k = 0; k < X::N; ++k) {
    int c[traits<X>::rank + 1];
    coords<X>(elem<X>(t, k), c);
    const int last = c[Axis];
    c[Axis] = Rev ? n - 1 : 0;
    A acc = A(wide(buf[flat<X>(c)]));
    for (int i = 1; i <= (Rev ? n - 1 - last : last); ++i) {
      c[Axis] = Rev ? n - 1 - i : i;
      acc = combine<K>(acc, A(wide(buf[flat<X>(c)])));
    }
    r.v[k] = to<T>(acc);
  }
  return r;
}

// ---- memory ----------------------------------------------------------------------------------
template <class T, int R>
__device__ __forceinline__ int64_t offset(const ::tt::Array<T, R>& a, const int64_t* ix) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < R; ++d) off += ix[d] * a.strides[d];
  return off;
}
template <class T, int R>
__device__ __forceinline__ int64_t offset(const ::tt::CArray<T, R>& a, const int64_t* ix) {
  int64_t off = ix[0];
#pragma unroll
  for (int d = 1; d < R; ++d) off = off * a.shape[d] + ix[d];
  return off;
}

// the array index of element e of the tile at tile index ix (array axis Ord[d] is tile axis d)
template <class TL, int R, int... Ord>
__device__ __forceinline__ bool locate(int e, const int64_t* ix, const int64_t* shape,
                                       int64_t* g) {
  constexpr int ord[] = {Ord..., 0};
  int c[R + 1];
  coords<TL>(e, c);
  bool in = true;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    const int a = sizeof...(Ord) ? ord[d] : d;
    g[a] = ix[d] * traits<TL>::dim(d) + c[d];
    in = in && g[a] >= 0 && g[a] < shape[a];
  }
  return in;
}

// The interior fast path of loads and stores: a tile of rank 1 or 2 whose rows span a
// multiple of V NT elements, axes in order, lying wholly inside the array (a block-uniform test).
// Slot k of thread t is then row c / D, column c % D + t V + k % V of the tile, with
// c = (k / V) V NT, so every address is one base per thread plus compile-time multiples of
// the strides: no per-element coordinates or bounds tests. Each run of V slots is one vector
// access when the rows are contiguous and the address is aligned to the run's size.
template <class T, int R>
__device__ __forceinline__ int64_t stride_of(const ::tt::Array<T, R>& a, int d) {
  return a.strides[d];
}
template <class T, int R>
__device__ __forceinline__ int64_t stride_of(const ::tt::CArray<T, R>& a, int d) {
  return d == R - 1 ? 1 : (R == 2 ? a.shape[1] : 0);
}
template <class TL, int NO, int R>
struct interior_ok {
  static constexpr bool value = NO == 0 && traits<TL>::rank == R && (R == 1 || R == 2) &&
                                traits<TL>::E >= traits<TL>::NT &&
                                traits<TL>::dim(R - 1) % (traits<TL>::NT * traits<TL>::V) == 0;
};
// the element offset of thread t's slot 0 of the tile at ix, or -1 when the tile is not
// wholly inside the array
template <class TL, class Arr, int R>
__device__ __forceinline__ int64_t interior_base(const Arr& a, const int64_t* ix, int t) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    const int64_t lo = ix[d] * traits<TL>::dim(d);
    if (lo < 0 || lo + traits<TL>::dim(d) > a.shape[d]) return -1;
    off += (d == R - 1 ? lo + t * traits<TL>::V : lo) * stride_of(a, d);
  }
  return off;
}
template <class TL, class Arr, int R>
__device__ __forceinline__ int64_t interior_slot(const Arr& a, int k) {
  constexpr int NT = traits<TL>::NT, V = traits<TL>::V, D = traits<TL>::dim(R - 1);
  const int c = (k / V) * (V * NT);
  if constexpr (R == 1) return int64_t(c + k % V) * stride_of(a, 0);
  else return int64_t(c / D) * stride_of(a, 0) + int64_t(c % D + k % V) * stride_of(a, 1);
}
// whether the runs of V elements from p are contiguous and aligned for vector accesses
template <int V, class T, int R, template <class, int> class Arr>
__device__ __forceinline__ bool runs_ok(const Arr<T, R>& a, const T* p) {
  return stride_of(a, R - 1) == 1 && (R == 1 || stride_of(a, 0) % V == 0) &&
         reinterpret_cast<unsigned long long>(p) % (V * sizeof(T)) == 0;
}
// whether the run of V elements at array index g (inside the array), address p, of an edge
// tile lies wholly inside the array, contiguous and aligned: then it is one vector access
template <int V, class T, int R, template <class, int> class Arr>
__device__ __forceinline__ bool run_inside(const Arr<T, R>& a, const int64_t* g, const T* p) {
  return g[R - 1] + V <= a.shape[R - 1] && stride_of(a, R - 1) == 1 &&
         reinterpret_cast<unsigned long long>(p) % (V * sizeof(T)) == 0;
}
// moving V elements of T as machine words: 16-byte words for runs of 16 bytes or more
template <int B> struct word_of { typedef uint4 type; };
template <> struct word_of<2> { typedef unsigned short type; };
template <> struct word_of<4> { typedef unsigned int type; };
template <> struct word_of<8> { typedef uint2 type; };
// the words of one run of V elements of T (a vector access moves them at once)
template <int V, class T> struct run_words {
  static constexpr int B = V * int(sizeof(T)), W = B < 16 ? B : 16;
  typedef typename word_of<W>::type Word;
  Word w[B / W];
};
template <int V, class T>
__device__ __forceinline__ run_words<V, T> vload_run(const T* p) {
  run_words<V, T> r;
#pragma unroll
  for (int i = 0; i < int(sizeof(r.w) / sizeof(r.w[0])); ++i)
    r.w[i] = reinterpret_cast<const typename run_words<V, T>::Word*>(p)[i];
  return r;
}
template <int V, class T>
__device__ __forceinline__ run_words<V, T> pack_run(const T* e) {
  run_words<V, T> r;
  memcpy(&r, e, sizeof r);
  return r;
}
// a tile's runs as machine words, and a tile index, passed to and from load_runs
template <class TL> struct tile_words {
  run_words<traits<TL>::V, typename traits<TL>::elem> w[TL::N / traits<TL>::V];
};
template <int R> struct index_of {
  int64_t v[R];
};
// load's paths other than an interior tile with vector runs, each run as its words: an
// interior tile of unaligned or strided rows, or an edge tile, whose runs wholly inside the
// array, contiguous and aligned, are still one vector access each (a run never crosses a row:
// the last axis is a multiple of V)
template <class TL, class Arr, int R>
__device__ __noinline__ tile_words<TL> load_runs(const Arr a, typename traits<TL>::elem pad,
                                                 const index_of<R> ix) {
  constexpr int V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int t = tid();
  tile_words<TL> w;
  if constexpr (interior_ok<TL, 0, R>::value) {
    const int64_t base = interior_base<TL, Arr, R>(a, ix.v, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; k += V) {
        T e[V];
#pragma unroll
        for (int i = 0; i < V; ++i) e[i] = a.data[base + interior_slot<TL, Arr, R>(a, k + i)];
        w.w[k / V] = pack_run<V>(e);
      }
      return w;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; k += V) {
    int64_t g[R];
    const bool in = locate<TL, R>(elem<TL>(t, k), ix.v, a.shape, g);
    const T* p = a.data + offset(a, g);
    if (in && run_inside<V>(a, g, p)) {
      w.w[k / V] = vload_run<V>(p);
    } else {
      T e[V];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const bool e_in = locate<TL, R>(elem<TL>(t, k + i), ix.v, a.shape, g);
        e[i] = e_in ? a.data[offset(a, g)] : pad;
      }
      w.w[k / V] = pack_run<V>(e);
    }
  }
  return w;
}
template <int V, class T>
__device__ __forceinline__ void vstore_run(T* p, const run_words<V, T>& w) {
#pragma unroll
  for (int i = 0; i < int(sizeof(w.w) / sizeof(w.w[0])); ++i)
    reinterpret_cast<typename run_words<V, T>::Word*>(p)[i] = w.w[i];
}
// store's paths other than an interior tile with vector runs (as load_runs)
template <class TL, class Arr, int R>
__device__ __noinline__ void store_runs(const Arr a, const tile_words<TL> w, const index_of<R> ix) {
  constexpr int V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int t = tid();
  if constexpr (interior_ok<TL, 0, R>::value) {
    const int64_t base = interior_base<TL, Arr, R>(a, ix.v, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; k += V) {
        T e[V];
        memcpy(e, &w.w[k / V], sizeof(e));
#pragma unroll
        for (int i = 0; i < V; ++i) a.data[base + interior_slot<TL, Arr, R>(a, k + i)] = e[i];
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; k += V) {
    int64_t g[R];
    const bool in = locate<TL, R>(elem<TL>(t, k), ix.v, a.shape, g);
    T* p = a.data + offset(a, g);
    if (in && run_inside<V>(a, g, p)) {
      vstore_run<V>(p, w.w[k / V]);
    } else {
      T e[V];
      memcpy(e, &w.w[k / V], sizeof(e));
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (locate<TL, R>(elem<TL>(t, k + i), ix.v, a.shape, g)) a.data[offset(a, g)] = e[i];
    }
  }
}
// a tile from an array: elements outside it get `pad` and are never read
template <class TL, int... Ord, class Arr, class... I>
__device__ __forceinline__ TL load(const Arr& a, typename traits<TL>::elem pad, I... idx) {
  constexpr int R = sizeof...(I), V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int64_t ix[R] = {int64_t(idx)...};
  const int t = tid();
  TL r;
  if constexpr (V > 1 && sizeof...(Ord) == 0 && traits<TL>::rank == R) {
    // The interior path with vector runs is straight-line code; the others (an edge tile,
    // unaligned or strided rows) are a function call, so that the paths meet on the runs'
    // machine words: a 16-bit tile then stays packed two values to a register until used.
    tile_words<TL> w;
    bool fast = false;
    const T* p0 = a.data;
    if constexpr (interior_ok<TL, 0, R>::value) {
      const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
      if (base >= 0) {
        p0 = a.data + base;
        fast = runs_ok<V>(a, p0);
      }
      if (fast) {
#pragma unroll
        for (int k = 0; k < TL::N; k += V)
          w.w[k / V] = vload_run<V>(p0 + interior_slot<TL, Arr, R>(a, k));
      }
    }
    if (!fast) w = load_runs<TL, Arr, R>(a, pad, index_of<R>{{int64_t(idx)...}});
#pragma unroll
    for (int k = 0; k < TL::N; k += V) memcpy(r.v + k, &w.w[k / V], sizeof(w.w[0]));
    return r;
  }
  if constexpr (interior_ok<TL, sizeof...(Ord), R>::value) {  // runs of one element
    const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; ++k) r.v[k] = a.data[base + interior_slot<TL, Arr, R>(a, k)];
      return r;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    int64_t g[R];
    bool in = locate<TL, R, Ord...>(elem<TL>(t, k), ix, a.shape, g);
    r.v[k] = in ? a.data[offset(a, g)] : pad;
  }
  return r;
}
// from shared memory: the block synchronizes before (thread code wrote it) and after
template <class TL, int... Ord, class Arr, class... I>
__device__ __forceinline__ TL load_shared(const Arr& a, typename traits<TL>::elem pad,
                                          I... idx) {
  __syncthreads();
  TL r = load<TL, Ord...>(a, pad, idx...);
  __syncthreads();
  return r;
}

// a tile into an array: elements outside it are skipped
template <int... Ord, class Arr, class TL, class... I>
__device__ __forceinline__ void store(const Arr& a, const TL& x, I... idx) {
  constexpr int R = sizeof...(I);
  const int64_t ix[R] = {int64_t(idx)...};
  const int t = tid();
  if (!owner<TL>(t)) return;
  if constexpr (traits<TL>::V > 1 && sizeof...(Ord) == 0 && traits<TL>::rank == R) {
    // as in load: the interior path with vector runs is straight-line code, the others a call
    constexpr int V = traits<TL>::V;
    tile_words<TL> w;
#pragma unroll
    for (int k = 0; k < TL::N; k += V) memcpy(&w.w[k / V], x.v + k, sizeof(w.w[0]));
    if constexpr (interior_ok<TL, 0, R>::value) {
      const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
      if (base >= 0 && runs_ok<V>(a, a.data + base)) {
#pragma unroll
        for (int k = 0; k < TL::N; k += V)
          vstore_run<V>(a.data + base + interior_slot<TL, Arr, R>(a, k), w.w[k / V]);
        return;
      }
    }
    store_runs<TL, Arr, R>(a, w, index_of<R>{{int64_t(idx)...}});
    return;
  }
  if constexpr (interior_ok<TL, sizeof...(Ord), R>::value) {  // runs of one element
    const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; ++k) a.data[base + interior_slot<TL, Arr, R>(a, k)] = x.v[k];
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    int64_t g[R];
    if (locate<TL, R, Ord...>(elem<TL>(t, k), ix, a.shape, g)) a.data[offset(a, g)] = x.v[k];
  }
}
template <int... Ord, class Arr, class TL, class... I>
__device__ __forceinline__ void store_shared(const Arr& a, const TL& x, I... idx) {
  __syncthreads();
  store<Ord...>(a, x, idx...);
  __syncthreads();
}

// ---- atomics ---------------------------------------------------------------------------------
enum MemOrder { RELAXED, ACQUIRE, RELEASE, ACQ_REL };
enum MemScope { BLOCK, DEVICE, SYSTEM };
template <int Scope> __device__ __forceinline__ void fence() {
  if (Scope == BLOCK) __threadfence_block();
  else if (Scope == SYSTEM) __threadfence_system();
  else __threadfence();
}

enum AtomOp { A_ADD, A_MAX, A_MIN, A_AND, A_OR, A_XOR, A_XCHG };
template <int Op, class T> __device__ __forceinline__ T rmw(T* p, T v) {
  if constexpr (Op == A_ADD) return ::tt::atomic_add(p, v);
  else if constexpr (Op == A_MAX) return ::tt::atomic_max(p, v);
  else if constexpr (Op == A_MIN) return ::tt::atomic_min(p, v);
  else if constexpr (Op == A_AND) return ::tt::atomic_and(p, v);
  else if constexpr (Op == A_OR) return ::tt::atomic_or(p, v);
  else if constexpr (Op == A_XOR) return ::tt::atomic_xor(p, v);
  else return ::tt::atomic_exch(p, v);
}

// a tile smaller than the block: the replicas take the owner's value of each element
template <class TL>
__device__ __forceinline__ void from_owners(TL& r) {
  if constexpr (TL::E < traits<TL>::NT) {
    typedef typename traits<TL>::elem T;
    static_assert(TL::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
    T* buf = scratch<T>();
    const int t = tid();
    __syncthreads();
    if (owner<TL>(t)) buf[t] = r.v[0];
    __syncthreads();
    r.v[0] = buf[t % TL::E];
  }
}

// one atomic per element (by one of its replicas); the old values come back as a tile, 0 where
// the index is outside the array. Orders are fences around relaxed atomics, at least as strong
// as asked.
template <class TL, int Op, int Order, int Scope, class Arr, class U, class... I>
__device__ __forceinline__ TL atomic(const Arr& a, const U& upd, const I&... idx) {
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I);
  const int t = tid();
  TL r;
  if (Order == RELEASE || Order == ACQ_REL) fence<Scope>();
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    const int64_t g[R] = {int64_t(at(idx, k))...};
    bool in = true;
#pragma unroll
    for (int d = 0; d < R; ++d) in = in && g[d] >= 0 && g[d] < a.shape[d];
    T old = to<T>(0);
    if (in && owner<TL>(t)) old = rmw<Op>(&a.data[offset(a, g)], T(at(upd, k)));
    r.v[k] = old;
  }
  if (Order == ACQUIRE || Order == ACQ_REL) fence<Scope>();
  from_owners(r);
  return r;
}
template <class TL, int Order, int Scope, class Arr, class U, class V, class... I>
__device__ __forceinline__ TL atomic_cas(const Arr& a, const U& expected, const V& desired,
                                         const I&... idx) {
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I);
  const int t = tid();
  TL r;
  if (Order == RELEASE || Order == ACQ_REL) fence<Scope>();
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    const int64_t g[R] = {int64_t(at(idx, k))...};
    bool in = true;
#pragma unroll
    for (int d = 0; d < R; ++d) in = in && g[d] >= 0 && g[d] < a.shape[d];
    T old = T(at(expected, k));
    if (in && owner<TL>(t))
      old = ::tt::atomic_cas(&a.data[offset(a, g)], T(at(expected, k)), T(at(desired, k)));
    r.v[k] = old;
  }
  if (Order == ACQUIRE || Order == ACQ_REL) fence<Scope>();
  from_owners(r);
  return r;
}

// ---- matrix multiply -------------------------------------------------------------------------
// float16, bfloat16 and tfloat32 run on tensor cores (mma.sync, float32 accumulators); other
// dtypes, and shapes the instruction does not tile, multiply with FMAs. Both stage the operands
// in the scratch (A row-major, rows of K + 16 bytes; B as it is, rows of N + 8 values: a
// warp's consecutive values of a row store without bank conflicts, and fragments read without
// them too, 16-bit B's through ldmatrix.trans), each warp computes 16x8 blocks of the result,
// and the result goes back to the tile's layout through the scratch.
template <class T> struct mma_kind { static constexpr int value = 0; };
#ifdef TT_HALF
template <> struct mma_kind<__half> { static constexpr int value = 1; };
template <> struct mma_kind<__nv_bfloat16> { static constexpr int value = 2; };
#endif
template <> struct mma_kind<tf32> { static constexpr int value = 3; };

template <class TA, int M, int N, int K_>
struct mma_plan {
  typedef TA elem;
  static constexpr int kind = mma_kind<TA>::value;
  static constexpr int K = K_;
  static constexpr int KS = kind == 3 ? 8 : 16;  // k per instruction
  static constexpr bool tc = kind != 0 && M % 16 == 0 && N % 8 == 0 && K_ % KS == 0;
  static constexpr int PAD = tc ? 16 / int(sizeof(TA)) : 0;  // rows apart by 16 more bytes
  static constexpr int LD = K_ + PAD;          // A's rows (of K)
  static constexpr int LDB = N + 8;              // B's rows (of N), as it is
  static constexpr int B_ELEMS = K_ * LDB;
  static constexpr int bytes = tc ? (M * LD + B_ELEMS) * int(sizeof(TA)) + M * N * 4
                                  : (M * K_ + K_ * N) * int(sizeof(TA));
};

__device__ __forceinline__ uint32_t word(const void* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}
template <int Kind>
__device__ __forceinline__ void mma_sync(float* d, const uint32_t* a, const uint32_t* b) {
  if constexpr (Kind == 1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Kind == 2) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// stage A and B of an mma in the scratch, as plan P lays them
template <class P, class TA, int NT, int M, int N, int K>
__device__ __forceinline__ void stage_operands(const Tile<TA, NT, M, K>& a,
                                               const Tile<TA, NT, K, N>& b, TA* As, TA* Bs) {
  constexpr int LD = P::LD;
  typedef Tile<TA, NT, M, K> XA;
  typedef Tile<TA, NT, K, N> XB;
  const int t = tid();
  if (owner<XA>(t)) {
#pragma unroll
    for (int k = 0; k < XA::N; ++k) {
      const int e = elem<XA>(t, k);
      As[(e / K) * LD + e % K] = a.v[k];
    }
  }
  if (owner<XB>(t)) {
#pragma unroll
    for (int k = 0; k < XB::N; ++k) {
      const int e = elem<XB>(t, k);
      Bs[(e / N) * P::LDB + e % N] = b.v[k];
    }
  }
}

// a lane's fragments of A (rows i0..i0+15, k0..k0+KS) and B (k0.., columns j0..j0+7)
template <class P, class TA>
__device__ __forceinline__ void frag_a(uint32_t* ra, const TA* As, int i0, int k0, int lane) {
  const int g = lane >> 2, q = lane & 3;
  const TA* a0 = As + (i0 + g) * P::LD + k0;
  const TA* a1 = a0 + 8 * P::LD;
  if constexpr (P::kind == 3) {  // one tf32 per register
    ra[0] = word(a0 + q), ra[1] = word(a1 + q), ra[2] = word(a0 + q + 4),
    ra[3] = word(a1 + q + 4);
  } else {  // two 16-bit values per register: k = 2q, 2q + 1 (and 8 more)
    ra[0] = word(a0 + 2 * q), ra[1] = word(a1 + 2 * q), ra[2] = word(a0 + 2 * q + 8),
    ra[3] = word(a1 + 2 * q + 8);
  }
}
template <class P, class TA>
__device__ __forceinline__ void frag_b(uint32_t* rb, const TA* Bs, int j0, int k0, int lane) {
  const int g = lane >> 2, q = lane & 3;
  if constexpr (P::kind == 3) {  // B as it is: row k, column n
    const TA* b0 = Bs + (k0 + q) * P::LDB + j0 + g;
    rb[0] = word(b0), rb[1] = word(b0 + 4 * P::LDB);
  } else {  // two 16-bit values of k = 2q, 2q + 1 (and 8 more) per register: the two 8x8
    // matrices of rows k0.. and k0 + 8.., transposed as they load; lanes 0-15 give the rows
    const TA* row = Bs + (k0 + (lane & 15)) * P::LDB + j0;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(rb[0]), "=r"(rb[1])
                 : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(row))));
  }
}

// d += A[i0:i0+16, :] @ B[:, j0:j0+8] for this lane's fragment d of the 16x8 block at (i0, j0)
template <class P, class TA>
__device__ __forceinline__ void mma_block(float* d, const TA* As, const TA* Bs, int i0, int j0,
                                          int lane) {
  for (int k0 = 0; k0 < P::K; k0 += P::KS) {
    uint32_t ra[4], rb[2];
    frag_a<P>(ra, As, i0, k0, lane);
    frag_b<P>(rb, Bs, j0, k0, lane);
    mma_sync<P::kind>(d, ra, rb);
  }
}

// acc (an MmaTile's registers, below) += A @ B from the staged operands, for this thread's
// warp: k step by k step, each A fragment loaded once for all the warp's blocks of its rows
// (when the warp's blocks share their rows, as they do when M = 16 NW)
// (Round: the operands are float32 as loaded, rounded to tfloat32 fragment by fragment)
__device__ __forceinline__ uint32_t round_tf32(uint32_t x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}
template <class P, int NT, int M, int N, bool Round = false, class TA>
__device__ __forceinline__ void warp_mma(float* acc, const TA* As, const TA* Bs) {
  constexpr int NW = NT / 32, MB = M / 16, BLOCKS = MB * (N / 8) / NW;
  constexpr bool same_rows = NW % MB == 0;  // block w + i NW has rows 16 ((w + i NW) % MB)
  const int t = tid(), w = t / 32, lane = t % 32;
#pragma unroll
  for (int k0 = 0; k0 < P::K; k0 += P::KS) {
    uint32_t ra[4], rb[2];
    auto a_of = [&](int i0) {
      frag_a<P>(ra, As, i0, k0, lane);
      if constexpr (Round)
        for (int j = 0; j < 4; ++j) ra[j] = round_tf32(ra[j]);
    };
    if constexpr (same_rows) a_of((w % MB) * 16);
#pragma unroll
    for (int i = 0; i < BLOCKS; ++i) {
      const int blk = w + i * NW;
      if constexpr (!same_rows) a_of((blk % MB) * 16);
      frag_b<P>(rb, Bs, (blk / MB) * 8, k0, lane);
      if constexpr (Round) rb[0] = round_tf32(rb[0]), rb[1] = round_tf32(rb[1]);
      mma_sync<P::kind>(acc + 4 * i, ra, rb);
    }
  }
}

// An accumulator kept in the tensor cores' fragment layout (the "mma" layout of ir/passes.py):
// warp w owns the 16x8 blocks w, w + NW, ... of the (M, N) result, numbered down the columns
// (block b is rows 16(b % (M/16)), columns 8(b / (M/16))), and lane l holds v[4i..4i+3] of its
// i-th block: rows l/4 and l/4 + 8, columns 2(l%4) and + 1. When M = 16 NW, warp w thus holds
// rows 16w..16w+15 entirely, which is wgmma's accumulator layout (tile_sm90.h).
template <typename T, int NT, int Rows, int Cols>
struct MmaTile {
  static constexpr int BLOCKS = (Rows / 16) * (Cols / 8) / (NT / 32);  // per warp
  static constexpr int E = Rows * Cols;
  static constexpr int N = BLOCKS * 4;  // registers per thread
  static_assert((Rows / 16) * (Cols / 8) % (NT / 32) == 0, "blocks shared evenly by warps");
  T v[N];
};
template <typename T, int NT_, int M, int N_>
struct traits<MmaTile<T, NT_, M, N_>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  typedef T elem;
};
// the (row, column) of value j of this lane's i-th block
template <int NT, int M, int N>
__device__ __forceinline__ int frag_index(int t, int i, int j) {
  const int blk = t / 32 + i * (NT / 32), lane = t % 32;
  const int row = (blk % (M / 16)) * 16 + (lane >> 2) + (j >> 1) * 8;
  const int col = (blk / (M / 16)) * 8 + 2 * (lane & 3) + (j & 1);
  return row * N + col;
}

template <class T, int NT, int M, int N>
__device__ __forceinline__ Tile<T, NT, M, N> to_blocked(const MmaTile<T, NT, M, N>& x) {
  typedef MmaTile<T, NT, M, N> X;
  typedef Tile<T, NT, M, N> R;
  static_assert(M * N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  const int t = tid();
  __syncthreads();
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) buf[frag_index<NT, M, N>(t, i, j)] = x.v[i * 4 + j];
  }
  __syncthreads();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = buf[elem<R>(t, k)];
  return r;
}

template <class T, int NT, int M, int N>
__device__ __forceinline__ MmaTile<T, NT, M, N> to_mma(const Tile<T, NT, M, N>& x) {
  typedef MmaTile<T, NT, M, N> R;
  static_assert(M * N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  R r;
  const int t = tid();
#pragma unroll
  for (int i = 0; i < R::BLOCKS; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) r.v[i * 4 + j] = buf[frag_index<NT, M, N>(t, i, j)];
  }
  return r;
}

// The epilogue straight from fragments (ir/passes.py lets a cast and a store of an accumulator
// keep the "mma" layout): a cast converts each register, and a store writes each lane's pairs
// of adjacent columns (store_fragments), as one 32-bit word where the array allows it (16-bit elements,
// contiguous rows of even length, a 4-byte aligned base), with no trip through shared memory.
template <class U, int Site = 0, class T, int NT, int M, int N>
__device__ __forceinline__ MmaTile<U, NT, M, N> astype(const MmaTile<T, NT, M, N>& x) {
  MmaTile<U, NT, M, N> r;
#pragma unroll
  for (int k = 0; k < MmaTile<T, NT, M, N>::N; ++k) r.v[k] = to<U>(x.v[k]);
  return r;
}

template <class T>
__device__ __forceinline__ bool pairs_ok(const ::tt::CArray<T, 2>& a) {
  return a.shape[1] % 2 == 0 && reinterpret_cast<unsigned long long>(a.data) % 4 == 0;
}
template <class T>
__device__ __forceinline__ bool pairs_ok(const ::tt::Array<T, 2>& a) {
  return a.strides[1] == 1 && a.strides[0] % 2 == 0 &&
         reinterpret_cast<unsigned long long>(a.data) % 4 == 0;
}
template <class T> __device__ __forceinline__ uint32_t bits16(const T& x) {
  uint16_t b;
  memcpy(&b, &x, 2);
  return b;
}

template <class Arr, class T, int NT, int M, int N, class I0, class I1>
__device__ __forceinline__ void store_fragments(const Arr& a, const MmaTile<T, NT, M, N>& x,
                                                I0 i0, I1 i1) {
  typedef MmaTile<T, NT, M, N> X;
  const int t = tid();
  const int64_t r0 = int64_t(i0) * M, c0 = int64_t(i1) * N;
  const bool pairs = sizeof(T) == 2 && pairs_ok(a);
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = frag_index<NT, M, N>(t, i, 2 * h);
      int64_t g[2] = {r0 + e / N, c0 + e % N};
      if (g[0] < 0 || g[1] < 0 || g[0] >= a.shape[0] || g[1] >= a.shape[1]) continue;
      const T lo = x.v[4 * i + 2 * h], hi = x.v[4 * i + 2 * h + 1];
      T* p = a.data + offset(a, g);
      const bool two = g[1] + 1 < a.shape[1];
      if constexpr (sizeof(T) == 2) {
        if (pairs && two) {
          *reinterpret_cast<uint32_t*>(p) = bits16(lo) | (bits16(hi) << 16);
          continue;
        }
      }
      *p = lo;
      if (two) {
        g[1] += 1;
        a.data[offset(a, g)] = hi;
      }
    }
  }
}

// mma into an accumulator in fragments: only A and B go through the scratch
template <class TA, int NT, int M, int N, int K>
__device__ __forceinline__ MmaTile<float, NT, M, N> mma(const Tile<TA, NT, M, K>& a,
                                                        const Tile<TA, NT, K, N>& b,
                                                        const MmaTile<float, NT, M, N>& c) {
  typedef mma_plan<TA, M, N, K> P;
  static_assert(P::tc, "fragment accumulators need tensor-core operands and shapes");
  static_assert((M * P::LD + P::B_ELEMS) * sizeof(TA) <= TT_SCRATCH_BYTES,
                "tile scratch too small");
  TA* As = scratch<TA>();
  TA* Bs = As + M * P::LD;
  __syncthreads();
  stage_operands<P>(a, b, As, Bs);
  __syncthreads();
  MmaTile<float, NT, M, N> r = c;
  warp_mma<P, NT, M, N>(r.v, As, Bs);
  return r;
}

template <class TA, class TC, int NT, int M, int N, int K>
__device__ __forceinline__ Tile<TC, NT, M, N> mma(const Tile<TA, NT, M, K>& a,
                                                  const Tile<TA, NT, K, N>& b,
                                                  const Tile<TC, NT, M, N>& c) {
  typedef mma_plan<TA, M, N, K> P;
  typedef Tile<TA, NT, M, K> XA;
  typedef Tile<TA, NT, K, N> XB;
  typedef Tile<TC, NT, M, N> XC;
  static_assert(P::bytes <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int t = tid();
  TA* As = scratch<TA>();
  if constexpr (P::tc) {
    constexpr int LD = P::LD;
    TA* Bs = As + M * LD;
    float* Cs = reinterpret_cast<float*>(Bs + P::B_ELEMS);
    __syncthreads();
    stage_operands<P>(a, b, As, Bs);
    if (owner<XC>(t)) {
#pragma unroll
      for (int k = 0; k < XC::N; ++k) Cs[elem<XC>(t, k)] = float(wide(c.v[k]));
    }
    __syncthreads();
    const int lane = t % 32, g = lane >> 2, q = lane & 3;
    for (int blk = t / 32; blk < (M / 16) * (N / 8); blk += NT / 32) {
      const int i0 = (blk / (N / 8)) * 16, j0 = (blk % (N / 8)) * 8;
      float* c0 = Cs + (i0 + g) * N + j0 + 2 * q;
      float* c1 = c0 + 8 * N;
      float d[4] = {c0[0], c0[1], c1[0], c1[1]};
      mma_block<P>(d, As, Bs, i0, j0, lane);
      c0[0] = d[0], c0[1] = d[1], c1[0] = d[2], c1[1] = d[3];
    }
    __syncthreads();
    XC r;
#pragma unroll
    for (int k = 0; k < XC::N; ++k) r.v[k] = to<TC>(Cs[elem<XC>(t, k)]);
    return r;
  } else {
    TA* Bs = As + M * K;
    to_scratch(a, As);  // (its barriers also cover the second copy)
    if (owner<XB>(t)) {
#pragma unroll
      for (int k = 0; k < XB::N; ++k) Bs[elem<XB>(t, k)] = b.v[k];
    }
    __syncthreads();
    XC r;
#pragma unroll
    for (int k = 0; k < XC::N; ++k) {
      const int e = elem<XC>(t, k), i = e / N, j = e % N;
      auto acc = wide(c.v[k]);
      for (int kk = 0; kk < K; ++kk) acc += wide(As[i * K + kk]) * wide(Bs[kk * N + j]);
      r.v[k] = to<TC>(acc);
    }
    return r;
  }
}

}  // namespace tile
}  // namespace tt

#include "tile_sm90.h"

namespace tt {
namespace tile {

// ---- the k loop of a matrix multiply ---------------------------------------------------------
// The k loop on sm_80 and later where every tile of the loop lies inside its array with
// 16-byte aligned rows: cp.async copies A and B into STAGES buffers of the scratch (the layout
// of mma_plan) STAGES - 1 steps ahead of the multiplies, straight from global memory; float32
// arrays through tfloat32 round as warp_mma loads fragments. Returns false, having done
// nothing, where the tiles do not allow it.
constexpr int STAGES = 3;                // (backends/cuda/tiles.py mirrors both)
constexpr int STAGED_MAX = 163 * 1024;  // an sm_80 block's dynamic shared memory
template <class P, int NT, int M, int N, class ArrA, class ArrB>
__device__ __forceinline__ bool mma_loop_async(const ArrA& A, const ArrB& B, int64_t bi,
                                               int64_t bj, int64_t lo, int64_t hi, float* acc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef typename cond<P::kind == 3, float, typename P::elem>::type T;  // as in the arrays
  constexpr int K = P::K, LD = P::LD, LDB = P::LDB, AS = M * LD, BUF = AS + P::B_ELEMS;
  constexpr int S = STAGES, C = 16 / int(sizeof(T));  // elements per 16-byte copy
  static_assert(S * BUF * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int64_t lda = stride_of(A, 0), ldb = stride_of(B, 0);
  const T* pa = A.data + bi * M * lda + lo * K;
  const T* pb = B.data + lo * K * ldb + bj * N;
  const bool fits = stride_of(A, 1) == 1 && stride_of(B, 1) == 1 && lda % C == 0 &&
                    ldb % C == 0 && reinterpret_cast<unsigned long long>(pa) % 16 == 0 &&
                    reinterpret_cast<unsigned long long>(pb) % 16 == 0 && bi >= 0 && bj >= 0 &&
                    lo >= 0 && (bi + 1) * M <= A.shape[0] && hi * K <= A.shape[1] &&
                    hi * K <= B.shape[0] && (bj + 1) * N <= B.shape[1];
  if (!fits) return false;
  T* buf = scratch<T>();
  const int t = tid();
  auto issue = [&](int64_t k, int s) {  // step k's tiles into buffer s
    T* as = buf + s * BUF;
    T* bs = as + AS;
    const T* ga = pa + (k - lo) * K;
    const T* gb = pb + (k - lo) * K * ldb;
#pragma unroll
    for (int c = t; c < M * K / C; c += NT) {
      const int r = c / (K / C), q = C * (c % (K / C));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<uint32_t>(__cvta_generic_to_shared(as + r * LD + q))),
                   "l"(ga + r * lda + q) : "memory");
    }
#pragma unroll
    for (int c = t; c < K * N / C; c += NT) {
      const int r = c / (N / C), q = C * (c % (N / C));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<uint32_t>(__cvta_generic_to_shared(bs + r * LDB + q))),
                   "l"(gb + r * ldb + q) : "memory");
    }
  };
  __syncthreads();  // the scratch's previous user is done with it
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (lo + s < hi) issue(lo + s, s);
    asm volatile("cp.async.commit_group;" ::: "memory");  // empty groups keep the count
  }
  for (int64_t k = lo; k < hi; ++k) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory");  // step k has landed
    __syncthreads();  // for every thread; and every warp is done with step k - 1's buffer
    if (k + S - 1 < hi) issue(k + S - 1, int((k - lo + S - 1) % S));
    asm volatile("cp.async.commit_group;" ::: "memory");
    const T* cur = buf + ((k - lo) % S) * BUF;
    warp_mma<P, NT, M, N, P::kind == 3>(acc, cur, cur + AS);
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();  // the scratch is free again
  return true;
#else
  return false;
#endif
}

// mma_loop_staged's path for tfloat32 where cp.async cannot copy the tiles: through registers
// into two buffers, one barrier per step (the loop as written has two), the next step's loads
// in flight while the tensor cores multiply this step's operands where registers allow
template <class TM, class TLA, class TLB, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_registers(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc) {
  constexpr int K = traits<TLA>::dim(1);
  typedef mma_plan<TM, M, N, K> P;
  constexpr int AS = M * P::LD, BUF = AS + P::B_ELEMS;  // elements of one buffer
  static_assert(2 * BUF * sizeof(TM) <= TT_SCRATCH_BYTES, "tile scratch too small");
  MmaTile<TC, NT, M, N> r = acc;
  TM* buf = scratch<TM>();
  TLA a = load<TLA>(A, pad, bi, lo);
  TLB b = load<TLB>(B, pad, lo, bj);
  __syncthreads();  // the scratch's previous user is done with it
  stage_operands<P>(astype<TM>(a), astype<TM>(b), buf, buf + AS);
  __syncthreads();
  // the next step's loads go ahead of the multiplies where the operands are few registers
  // per thread and threads have 255 (holding more across the multiplies spills), else after
  constexpr bool ahead = TLA::N + TLB::N <= 32 && NT <= 256;
  for (int64_t k = lo; k < hi; ++k) {
    const TM* cur = buf + ((k - lo) & 1) * BUF;
    const bool more = k + 1 < hi;
    if (ahead && more) {
      a = load<TLA>(A, pad, bi, k + 1);
      b = load<TLB>(B, pad, k + 1, bj);
    }
    warp_mma<P, NT, M, N>(r.v, cur, cur + AS);
    if (more) {  // the other buffer: every warp finished reading it before the last barrier
      if (!ahead) {
        a = load<TLA>(A, pad, bi, k + 1);
        b = load<TLB>(B, pad, k + 1, bj);
      }
      TM* next = buf + ((k + 1 - lo) & 1) * BUF;
      stage_operands<P>(astype<TM>(a), astype<TM>(b), next, next + AS);
    }
    __syncthreads();
  }
  return r;
}

// for (k = lo; k < hi; ++k)
//   acc = mma(astype<TM>(load<TLA>(A, pad, bi, k)), astype<TM>(load<TLB>(B, pad, k, bj)), acc)
// with cp.async where the tiles allow it (mma_loop_async); else tfloat32 through registers
// (mma_loop_registers) and 16-bit operands as written.
template <class TM, class TLA, class TLB, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_staged(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc) {
  constexpr int K = traits<TLA>::dim(1);
  typedef mma_plan<TM, M, N, K> P;
  static_assert(P::tc && same<TC, float>::value, "mma_loop_staged: tensor-core operands");
  MmaTile<TC, NT, M, N> r = acc;
  if (lo >= hi) return r;
  if (mma_loop_async<P, NT, M, N>(A, B, bi, bj, lo, hi, r.v)) return r;
  if constexpr (P::kind != 3) {  // 16-bit: the loop as written (staged through registers, it
    for (int64_t k = lo; k < hi; ++k)  // measured slower as often as faster)
      r = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), r);
    return r;
  } else {
    return mma_loop_registers<TM, TLA, TLB>(A, B, pad, bi, bj, lo, hi, r);
  }
}

// for (k = lo; k < hi; ++k) acc = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), acc),
// recognised by the code generator (backends/cuda/tiles.py, mma_loops) and run here as one
// operation: on sm_90a with TMA-ready operands by the pipelined main loop of tile_sm90.h, else
// by mma_loop_staged where its buffers fit (cp.async where the arrays allow), else as written.
template <class TLA, class TLB, class TC, int NT, int M, int N, class ArrA, class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc, const sm90::TensorMap& ma,
    const sm90::TensorMap& mb) {
  typedef typename traits<TLA>::elem TA;
  constexpr int K = traits<TLA>::dim(1);
  MmaTile<TC, NT, M, N> r = acc;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (sm90::Plan<TA, NT, M, N, K>::ok && same<TC, float>::value) {
    if (sm90::present(ma) && sm90::present(mb)) {
      sm90::mainloop<TA, NT, M, N, K>(ma, mb, bi, bj, lo, hi, r.v);
      return r;
    }
  }
#endif
  typedef mma_plan<TA, M, N, K> P;
  if constexpr (NT / 32 % (M / 16) == 0 &&
                STAGES * (M * P::LD + P::B_ELEMS) * sizeof(TA) <= STAGED_MAX) {
    return mma_loop_staged<TA, TLA, TLB>(A, B, pad, bi, bj, lo, hi, r);  // tiles.py sizes it
  } else {
    for (int64_t k = lo; k < hi; ++k) {
      TLA a = load<TLA>(A, pad, bi, k);
      TLB b = load<TLB>(B, pad, k, bj);
      r = mma(a, b, r);
    }
    return r;
  }
}

}  // namespace tile
}  // namespace tt
