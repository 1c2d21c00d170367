// tile/shapes.h: tiles to other shapes (broadcast, reshape, permute), and to_scratch, which
// stages a tile in the scratch for this section and the later ones.
//
// Paths (broadcast or broadcast_smem is the code generator's choice: backends/cuda/tiles.py,
// register_broadcast; reshape chooses at compile time, with the same rule as register_reshape):
//   broadcast       leading axes added or a one-element tile expanded, between tiles of one
//                   vector width: in registers
//   broadcast_smem  any other broadcast (NumPy's rules): through the scratch, or by warp
//                   shuffles from a replicated source of 32 elements or fewer
//   reshape         in registers where both shapes have one vector width or the tile is
//                   smaller than the block; else through the scratch
//   permute         always through the scratch (rows padded where the last axis moves)
//   extract, insert through the scratch (the whole tile, or the inserted subtile)
//   cat             through the scratch (both tiles, one after the other)
#pragma once

#include "layout.h"

namespace tt {
namespace tile {

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
  block_sync();  // the scratch's previous user has finished reading it
  if (owner<TL>(t)) {
#pragma unroll
    for (int k = 0; k < TL::N; ++k) buf[elem<TL>(t, k)] = x.v[k];
  }
  block_sync();
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

// v from lane `lane` of the warp (any type of up to 8 bytes, by its bits)
template <class T>
__device__ __forceinline__ T shfl_bits(const T& v, int lane) {
  static_assert(sizeof(T) <= 8, "shfl_bits: 8 bytes at most");
  T r;
  if constexpr (sizeof(T) == 8) {
    unsigned long long b;
    memcpy(&b, &v, 8);
    b = __shfl_sync(0xffffffffu, b, lane);
    memcpy(&r, &b, 8);
  } else {
    unsigned b = 0;
    memcpy(&b, &v, sizeof(T));
    b = __shfl_sync(0xffffffffu, b, lane);
    memcpy(&r, &b, sizeof(T));
  }
  return r;
}

// A tile of at most 32 elements that divide 32, of elements of 8 bytes at most, is held by
// every warp whole: lane l holds element l % E (replicated; E = NT = 32: one each). Any
// thread reads its element e by a shuffle from lane e, with no scratch and no barrier: the
// lanes paths of broadcast_smem, permute, extract, insert, cat and the scalar mma (cuTile's
// FFT sample: a chain of small tiles that went through the scratch behind 300 barriers).
template <class X>
struct in_lanes {
  static constexpr bool value = X::E <= 32 && 32 % X::E == 0 && traits<X>::NT % 32 == 0 &&
                                sizeof(typename traits<X>::elem) <= 8;
};

// any other broadcast (NumPy's rules, source axes right-aligned): through the scratch; or,
// from a source in lanes (above: flash decoding's (G, 1) row maxima and sums over its (G, TN)
// scores), each element by a shuffle from the lane that holds it
template <int... O, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, O...> broadcast_smem(const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, O...> R;
  constexpr bool lanes = in_lanes<X>::value;
  static_assert(lanes || X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  constexpr int off = traits<R>::rank - traits<X>::rank;
  T* buf = scratch<T>();
  if constexpr (!lanes) to_scratch(x, buf);
  R r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[traits<R>::rank + 1], s[traits<X>::rank + 1];
    slot_coords<R>(t, k, c);
#pragma unroll
    for (int d = 0; d < traits<X>::rank; ++d) s[d] = traits<X>::dim(d) == 1 ? 0 : c[d + off];
    if constexpr (lanes) {
      r.v[k] = shfl_bits(x.v[0], flat<X>(s));
    } else {
      r.v[k] = buf[flat<X>(s)];
    }
  }
  return r;
}

// axis d of the result is axis P[d] of x, through the scratch. Where the last axis moves (a
// transpose), the scratch's rows of x are padded to LP elements (4 bytes more, or one 8-byte
// element): the result's threads, which read down x's columns, then meet in distinct banks
// (unpadded, rows of 32 words put a warp's reads in one bank). The code generator sizes
// the scratch with the same rule (tiles.py, permute_scratch).
template <int... P, class T, int NT, int... S>
__device__ __forceinline__ Tile<T, NT, pack_at<P, S...>::value...> permute(
    const Tile<T, NT, S...>& x) {
  typedef Tile<T, NT, S...> X;
  typedef Tile<T, NT, pack_at<P, S...>::value...> R;
  constexpr int RANK = traits<X>::rank;
  constexpr int perm[] = {P..., 0};
  constexpr int LAST = traits<X>::dim(RANK - 1);
  constexpr int PAD = perm[RANK - 1] == RANK - 1 ? 0 : (sizeof(T) >= 4 ? 1 : 4 / int(sizeof(T)));
  constexpr int LP = LAST + PAD;
  static_assert(X::E / LAST * LP * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int t = tid();
  constexpr bool lanes = in_lanes<X>::value;
  T* buf = scratch<T>();
  if constexpr (!lanes) {
    block_sync();  // the scratch's previous user has finished reading it
    if (owner<X>(t)) {
#pragma unroll
      for (int k = 0; k < X::N; ++k) {
        int c[RANK + 1];
        slot_coords<X>(t, k, c);
        const int row = (flat<X>(c) - c[RANK - 1]) / LAST;  // (the row of x's last axis)
        buf[row * LP + c[RANK - 1]] = x.v[k];
      }
    }
    block_sync();
  }
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[traits<R>::rank + 1], s[traits<X>::rank + 1];
    slot_coords<R>(t, k, c);
#pragma unroll
    for (int d = 0; d < traits<R>::rank; ++d) s[perm[d]] = c[d];
    if constexpr (lanes) r.v[k] = shfl_bits(x.v[0], flat<X>(s));
    else r.v[k] = buf[(flat<X>(s) - s[RANK - 1]) / LAST * LP + s[RANK - 1]];
  }
  return r;
}

// ---- parts: a subtile at a cell of the grid a shape cuts a tile into, two tiles joined -------
// A cell index outside the grid is clamped into it (cuTile leaves it undefined; the
// simulator reports it).
template <class X, class S>
__device__ __forceinline__ int cell_start(long long i, int d) {
  const int n = traits<X>::dim(d) / traits<S>::dim(d);
  const int c = i < 0 ? 0 : i >= n ? n - 1 : (int)i;
  return c * traits<S>::dim(d);
}

// extract<R>(x, i...): the subtile R at cell (i...)
template <class R, class X, class... I>
__device__ __forceinline__ R extract(const X& x, I... idx) {
  typedef typename traits<X>::elem T;
  constexpr int rank = traits<X>::rank;
  static_assert(sizeof...(I) == rank && traits<R>::rank == rank, "one index per axis");
  static_assert(X::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const long long cell[] = {(long long)idx..., 0};
  constexpr bool lanes = in_lanes<X>::value;
  T* buf = scratch<T>();
  if constexpr (!lanes) to_scratch(x, buf);
  R r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[rank + 1];
    slot_coords<R>(t, k, c);
#pragma unroll
    for (int d = 0; d < rank; ++d) c[d] += cell_start<X, R>(cell[d], d);
    if constexpr (lanes) r.v[k] = shfl_bits(x.v[0], flat<X>(c));
    else r.v[k] = buf[flat<X>(c)];
  }
  return r;
}

// insert(x, v, i...): x with the subtile at cell (i...) of the grid V cuts it into set to v
template <class X, class V, class... I>
__device__ __forceinline__ X insert(const X& x, const V& v, I... idx) {
  typedef typename traits<X>::elem T;
  constexpr int rank = traits<X>::rank;
  static_assert(sizeof...(I) == rank && traits<V>::rank == rank, "one index per axis");
  static_assert(V::E * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const long long cell[] = {(long long)idx..., 0};
  constexpr bool lanes = in_lanes<V>::value;
  T* buf = scratch<T>();
  if constexpr (!lanes) to_scratch(v, buf);
  X r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < X::N; ++k) {
    int c[rank + 1];
    slot_coords<X>(t, k, c);
    bool in = true;
#pragma unroll
    for (int d = 0; d < rank; ++d) {
      c[d] -= cell_start<X, V>(cell[d], d);
      in = in && c[d] >= 0 && c[d] < traits<V>::dim(d);
    }
    if constexpr (lanes) {  // (every lane shuffles: the source lane of one outside is 0)
      const T s = shfl_bits(v.v[0], in ? flat<V>(c) : 0);
      r.v[k] = in ? s : x.v[k];
    } else {
      r.v[k] = in ? buf[flat<V>(c)] : x.v[k];
    }
  }
  return r;
}

// cat<R, A>(x, y): x and y joined along axis A
template <class R, int A, class X, class Y>
__device__ __forceinline__ R cat(const X& x, const Y& y) {
  typedef typename traits<X>::elem T;
  constexpr int rank = traits<X>::rank;
  static_assert((X::E + Y::E) * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  constexpr bool lanes = in_lanes<X>::value && in_lanes<Y>::value;
  T* buf = scratch<T>();
  if constexpr (!lanes) {
    to_scratch(x, buf);
    to_scratch(y, buf + X::E);
  }
  R r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[rank + 1];
    slot_coords<R>(t, k, c);
    const bool first = c[A] < traits<X>::dim(A);
    if constexpr (lanes) {  // (every lane shuffles from both: lane 0 of the one not read)
      int cy[rank + 1];
#pragma unroll
      for (int d = 0; d < rank; ++d) cy[d] = d == A ? (first ? 0 : c[d] - traits<X>::dim(A)) : c[d];
      if (!first) c[A] = 0;
      const T a = shfl_bits(x.v[0], flat<X>(c)), b = shfl_bits(y.v[0], flat<Y>(cy));
      r.v[k] = first ? a : b;
    } else if (first) {
      r.v[k] = buf[flat<X>(c)];
    } else {
      c[A] -= traits<X>::dim(A);
      r.v[k] = buf[X::E + flat<Y>(c)];
    }
  }
  return r;
}

// a tile staged in the scratch at a byte offset, for printf (its elements read by thread 0)
template <class TL>
__device__ __forceinline__ const typename traits<TL>::elem* print_stage(const TL& x,
                                                                        int offset) {
  typedef typename traits<TL>::elem T;
  T* buf = reinterpret_cast<T*>(tt_dynamic_smem + offset);
  to_scratch(x, buf);
  return buf;
}

}  // namespace tile
}  // namespace tt
