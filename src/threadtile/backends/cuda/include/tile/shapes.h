// tile/shapes.h: tiles to other shapes (broadcast, reshape, permute), and to_scratch, which
// stages a tile in the scratch for this section and the later ones.
//
// Paths (broadcast or broadcast_smem is the code generator's choice: backends/cuda/tiles.py,
// register_broadcast; reshape chooses at compile time, with the same rule as register_reshape):
//   broadcast       leading axes added or a one-element tile expanded, between tiles of one
//                   vector width: in registers
//   broadcast_smem  any other broadcast (NumPy's rules): through the scratch
//   reshape         in registers where both shapes have one vector width or the tile is
//                   smaller than the block; else through the scratch
//   permute         always through the scratch (rows padded where the last axis moves)
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
  T* buf = scratch<T>();
  const int t = tid();
  __syncthreads();  // the scratch's previous user has finished reading it
  if (owner<X>(t)) {
#pragma unroll
    for (int k = 0; k < X::N; ++k) {
      const int e = elem<X>(t, k);
      buf[(e / LAST) * LP + e % LAST] = x.v[k];
    }
  }
  __syncthreads();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) {
    int c[traits<R>::rank + 1], s[traits<X>::rank + 1];
    coords<R>(elem<R>(t, k), c);
#pragma unroll
    for (int d = 0; d < traits<R>::rank; ++d) s[perm[d]] = c[d];
    const int e = flat<X>(s);
    r.v[k] = buf[(e / LAST) * LP + e % LAST];
  }
  return r;
}

}  // namespace tile
}  // namespace tt
