// tile/reduce.h: reductions over a set of axes (sum, prod, max, min, argmax, argmin) and
// inclusive scans along one axis; 16-bit floats and small integers accumulate wider (acc_of).
//
// Paths (reduce_rows or reduce is the code generator's choice: backends/cuda/tiles.py,
// rows_reduction):
//   reduce_rows  the trailing axes, each result combining a multiple of NT elements: each
//                thread combines its own slots, then the warp through shuffles, then the
//                warps through the scratch
//   reduce_split the trailing axes into fewer results than threads (not the arg kinds): each
//                result's run of the scratch split over a group of lanes, then shuffles
//   reduce       any other reduction: through the scratch, each result combining its inputs
//                in order
//   scan         always through the scratch
#pragma once

#include "elementwise.h"
#include "shapes.h"

namespace tt {
namespace tile {

// ---- reductions and scans --------------------------------------------------------------------
// the _NAN kinds are propagate_nan=True: a NaN wins (max/min: the result is NaN; argmax/argmin:
// the first NaN's index); the others ignore NaNs (all NaN: NaN, or index 0)
enum Op { SUM, PROD, MAX, MIN, ARGMAX, ARGMIN, MAX_NAN, MIN_NAN, ARGMAX_NAN, ARGMIN_NAN };
__host__ __device__ constexpr bool is_arg(int K) {
  return K == ARGMAX || K == ARGMIN || K == ARGMAX_NAN || K == ARGMIN_NAN;
}
__host__ __device__ constexpr bool is_max(int K) {
  return K == MAX || K == ARGMAX || K == MAX_NAN || K == ARGMAX_NAN;
}

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
  if constexpr (K == MAX_NAN || K == MIN_NAN) {
    if (a != a) return a;
    if (b != b) return b;
    return combine<K == MAX_NAN ? MAX : MIN, A>(a, b);
  } else if constexpr (K == SUM) return ::tt::wadd(a, b);  // signed integers wrap
  else if constexpr (K == PROD) return ::tt::wmul(a, b);
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
// argmax/argmin: the better value, the lower index on ties; a NaN loses to any number (or,
// for the _NAN kinds, wins), two NaNs go to the lower index: the same answer in any order
template <int K, class A>
__device__ __forceinline__ void combine_arg(A& a, int& ia, A b, int ib) {
  const bool an = a != a, bn = b != b;
  const bool better = is_max(K) ? (b > a || (b == a && ib < ia)) : (b < a || (b == a && ib < ia));
  bool take;
  if constexpr (K == ARGMAX_NAN || K == ARGMIN_NAN) take = bn ? (!an || ib < ia) : (!an && better);
  else take = an ? (!bn || ib < ia) : (!bn && better);
  if (take) {
    a = b;
    ia = ib;
  }
}

// generic: through the scratch, each result element combining its inputs in order
template <int K, int Mask, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename cond<is_arg(K), int32_t, T>::type RT;
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
      if (is_arg(K)) combine_arg<K>(acc, best, v, i);
      else acc = combine<K>(acc, v);
    }
    if (is_arg(K)) r.v[k] = RT(best);
    else r.v[k] = to<RT>(acc);
  }
  return r;
}

template <int K, class A>
__device__ __forceinline__ void warp_combine(A& a, int& ia) {
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    A b = __shfl_xor_sync(0xffffffffu, a, s);
    if (is_arg(K)) {
      int ib = __shfl_xor_sync(0xffffffffu, ia, s);
      combine_arg<K>(a, ia, b, ib);
    } else {
      a = combine<K>(a, b);
    }
  }
}

// reducing the leading axes (a column sum: dW = sum(dY * X, axis=0)) where the kept axes hold a
// multiple of V NT elements: every input of a result lies in the thread that holds the result,
// in the same slot position of each of the R = E / E_out rows (slot j + r P V for result slot j,
// P = E_out / (V NT)), so each thread combines its own registers, with no
// barrier and no scratch; the arg kinds' index is the row r
template <int K, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce_cols(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename cond<is_arg(K), int32_t, T>::type RT;
  typedef Tile<RT, NT, O...> R;
  typedef typename acc_of<T>::type A;
  constexpr int V = X::V, EO = R::E, ROWS = X::E / EO, P = EO / (V * NT);
  static_assert(R::V == V && EO % (V * NT) == 0 && X::E % EO == 0,
                "reduce_cols: kept axes of a multiple of V NT elements");
  R r;
#pragma unroll
  for (int j = 0; j < R::N; ++j) {  // row 0's slot is j, row i's i P V further
    if constexpr (is_arg(K)) {
      A acc = A(wide(x.v[j]));
      int best = 0;
#pragma unroll
      for (int i = 1; i < ROWS; ++i) combine_arg<K>(acc, best, A(wide(x.v[j + i * P * V])), i);
      r.v[j] = RT(best);
    } else {
      r.v[j] = to<RT>(combine_chains<K, ROWS, A>(
          [&](int i) { return A(wide(x.v[j + i * P * V])); }));
    }
  }
  return r;
}

// reducing the trailing axes, R = E / E_out elements per result with R a multiple of NT: each
// thread combines its own registers (a result's inputs are slots [o*R/NT, (o+1)*R/NT) of
// every thread), then the warp through shuffles, then the warps through the scratch
template <int K, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce_rows(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef typename cond<is_arg(K), int32_t, T>::type RT;
  typedef Tile<RT, NT, O...> R;
  typedef typename acc_of<T>::type A;
  constexpr int EO = R::E, RS = X::N / EO, NW = NT / 32;
  static_assert(X::E % (EO * NT * X::V) == 0, "reduce_rows: rows of a multiple of V NT elements");
  static_assert(EO * NW * (sizeof(A) + 4) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int t = tid(), lane = t % 32, w = t / 32;
  A* part = scratch<A>();
  int* ipart = reinterpret_cast<int*>(part + EO * NW);
  block_sync();
#pragma unroll
  for (int o = 0; o < EO; ++o) {
    constexpr bool arg = is_arg(K);
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
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int o = elem<R>(t, k);
    A acc = part[o * NW];
    if constexpr (is_arg(K)) {
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

// reducing the trailing axes into fewer results than threads (a softmax's row maxima and sums
// over a few rows, where reduce_rows does not apply): the tile goes to the scratch, each result's
// elements (a contiguous run there) are split over a group of G lanes of one warp, lane i of
// the group combining elements i, i + G, ..., then the group through shuffles; the results
// through the scratch. Not for the arg kinds (their tie order is reduce's).
template <int K, int G, int... O, class T, int NT, int... S>
__device__ __forceinline__ auto reduce_split(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, O...> R;
  typedef typename acc_of<T>::type A;
  constexpr int NR = R::E, COUNT = X::E / NR, RES = (X::E * int(sizeof(T)) + 15) / 16 * 16;
  static_assert(!is_arg(K) && G >= 2 && G <= 32 && (G & (G - 1)) == 0 && NR * G <= NT &&
                    G <= COUNT,
                "reduce_split: groups of a power of two lanes, one per result, none idle");
  static_assert(RES + NR * int(sizeof(A)) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  A* res = reinterpret_cast<A*>(scratch<unsigned char>() + RES);
  to_scratch(x, buf);
  const int t = tid(), row = t / G, i0 = t % G;
  A acc = A{};
  if (row < NR) {  // (whole groups: a group's lanes agree)
    const T* in = buf + row * COUNT;
    acc = A(wide(in[i0]));
    for (int i = i0 + G; i < COUNT; i += G) acc = combine<K>(acc, A(wide(in[i])));
  }
#pragma unroll
  for (int s = G / 2; s > 0; s >>= 1) {  // every lane of the warp: no divergence around them
    acc = combine<K>(acc, A(__shfl_xor_sync(0xffffffffu, acc, s)));
  }
  if (row < NR && i0 == 0) res[row] = acc;
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = to<T>(res[elem<R>(t, k)]);
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
    slot_coords<X>(t, k, c);
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

}  // namespace tile
}  // namespace tt
