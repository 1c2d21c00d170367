// tile/fragments.h: tiles that stay in the tensor cores' fragment layout between matrix
// multiplies: elementwise operations on MmaTile, the rows of an MmaTile (MmaRows: what a
// reduction along the rows gives and what broadcasts back over them), and an mma whose A
// operand is an MmaTile in registers. ir/fraglayout.py decides which tiles take these layouts;
// it gives them only to tiles whose warps hold whole rows (M a multiple of 16 NW), where:
//
//   MmaTile<T, NT, M, N>  warp w holds the row strips w, w + NW, ... (R = M / (16 NW) of
//                         them); its i-th 16x8 block is strip r = i % R, column block c = i / R,
//                         lane l holding rows l/4 and l/4 + 8, columns 2(l%4) and + 1 (mma.h)
//   MmaRows<T, NT, M>     a tile of shape (M, 1): lane l of warp w holds v[2r + h], row
//                         16(w + r NW) + l/4 + 8h: the rows of its MmaTile blocks, the same
//                         value in the four lanes of a quad
//   MmaCols<T, NT, N>     a tile of shape (1, N): lane l holds v[2c + e], column
//                         8c + 2(l%4) + e: the columns of its MmaTile blocks, the same values
//                         in every warp and in the eight lanes of a quad position (a causal
//                         mask's key positions, compared with MmaRows' query positions)
//
// Paths:
//   elementwise      per register, as Tile's (elementwise.h takes any tile type)
//   reduce_mma_rows  each lane combines its columns, then the quad through two shuffles: no
//                    shared memory and no barrier
//   broadcast_frag   MmaRows or a one-element Tile over an MmaTile's columns, MmaCols over
//                    its rows: in registers
//   mma (A in regs)  A's fragments are its registers (an accumulator block pair is an A
//                    fragment); only B goes through the scratch (operands.h)
//   to_mma_rows, to_mma_cols, to_blocked (MmaRows, MmaCols)  through the scratch
#pragma once

#include "mma.h"
#include "reduce.h"

namespace tt {
namespace tile {

template <typename T, int NT, int M>
struct MmaRows {
  static constexpr int R = frag_rows<M>() / 16 / (NT / 32);  // row strips per warp
  static constexpr int E = M;
  static constexpr int N = 2 * R;
  static_assert(frag_rows<M>() % (16 * (NT / 32)) == 0, "MmaRows: whole row strips per warp");
  T v[N];
};
template <typename T, int NT_, int M>
struct traits<MmaRows<T, NT_, M>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  static constexpr int rank = 2;
  static constexpr int E = M;
  static constexpr int N = MmaRows<T, NT_, M>::N;
  typedef T elem;
  template <class U> using with = MmaRows<U, NT_, M>;
};
template <typename T, int NT, int N_>
struct MmaCols {
  static constexpr int E = N_;
  static constexpr int N = N_ / 4;
  static_assert(N_ % 8 == 0, "MmaCols: whole 8-column blocks");
  T v[N];
};
template <typename T, int NT_, int N_>
struct traits<MmaCols<T, NT_, N_>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  static constexpr int rank = 2;
  static constexpr int E = N_;
  static constexpr int N = MmaCols<T, NT_, N_>::N;
  typedef T elem;
  template <class U> using with = MmaCols<U, NT_, N_>;
};
template <class T, int NT, int M>
__device__ __forceinline__ T at(const MmaRows<T, NT, M>& x, int k) { return x.v[k]; }
template <class T, int NT, int N>
__device__ __forceinline__ T at(const MmaCols<T, NT, N>& x, int k) { return x.v[k]; }
template <class T, int NT, int M, int N>
__device__ __forceinline__ T at(const MmaTile<T, NT, M, N>& x, int k) { return x.v[k]; }

// the row of slot k of an MmaRows (and of slots 4i + 2h.. of an MmaTile's block i = c R + r)
template <int NT, int M>
__device__ __forceinline__ int frag_row(int t, int r, int h) {
  return 16 * (t / 32 + r * (NT / 32)) + (t % 32) / 4 + 8 * h;
}

// each slot converted (the fragment vectors' astype)
template <class U, class X>
__device__ __forceinline__ typename traits<X>::template with<U> cast_slots(const X& x) {
  typename traits<X>::template with<U> r;
#pragma unroll
  for (int k = 0; k < traits<X>::N; ++k) r.v[k] = to<U>(x.v[k]);
  return r;
}
template <class U, int Site = 0, class T, int NT, int M>
__device__ __forceinline__ MmaRows<U, NT, M> astype(const MmaRows<T, NT, M>& x) {
  return cast_slots<U>(x);
}
// the column of slot 2c + e of an MmaCols (and of slots 4i + 2h + e of an MmaTile's block
// i = c R + r)
__device__ __forceinline__ int frag_col(int t, int c, int e) { return 8 * c + 2 * (t % 4) + e; }

template <class U, int Site = 0, class T, int NT, int N>
__device__ __forceinline__ MmaCols<U, NT, N> astype(const MmaCols<T, NT, N>& x) {
  return cast_slots<U>(x);
}

// ---- the rows of an MmaTile ------------------------------------------------------------------
template <int K, class T, int NT, int M, int N>
__device__ __forceinline__ MmaRows<T, NT, M> reduce_mma_rows(const MmaTile<T, NT, M, N>& x) {
  static_assert(K == SUM || K == PROD || K == MAX || K == MIN || K == MAX_NAN || K == MIN_NAN,
                "reduce_mma_rows: a combine");
  typedef typename acc_of<T>::type A;
  constexpr int R = MmaRows<T, NT, M>::R;
  MmaRows<T, NT, M> out;
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      A acc = A(wide(x.v[4 * r + 2 * h]));
      acc = combine<K, A>(acc, A(wide(x.v[4 * r + 2 * h + 1])));
#pragma unroll
      for (int c = 1; c < N / 8; ++c) {
        const int i = c * R + r;
        acc = combine<K, A>(acc, A(wide(x.v[4 * i + 2 * h])));
        acc = combine<K, A>(acc, A(wide(x.v[4 * i + 2 * h + 1])));
      }
      acc = combine<K, A>(acc, __shfl_xor_sync(0xffffffffu, acc, 1));
      acc = combine<K, A>(acc, __shfl_xor_sync(0xffffffffu, acc, 2));
      out.v[2 * r + h] = to<T>(acc);
    }
  }
  return out;
}

// MmaRows over the columns of an MmaTile TL (broadcast_frag<TL>(x))
template <class TL, class T, int NT, int M>
__device__ __forceinline__ TL broadcast_frag(const MmaRows<T, NT, M>& x) {
  constexpr int R = MmaRows<T, NT, M>::R;
  TL out;
#pragma unroll
  for (int k = 0; k < TL::N; ++k) out.v[k] = x.v[2 * ((k / 4) % R) + (k % 4) / 2];
  return out;
}
// MmaCols over the rows of an MmaTile TL
template <class TL, class T, int NT, int N>
__device__ __forceinline__ TL broadcast_frag(const MmaCols<T, NT, N>& x) {
  static_assert(TL::COLS == N, "broadcast_frag: the MmaTile's columns");
  constexpr int R = TL::N / 4 / (N / 8);  // its row strips per warp
  TL out;
#pragma unroll
  for (int k = 0; k < TL::N; ++k) out.v[k] = x.v[2 * ((k / 4) / R) + k % 2];
  return out;
}
// a one-element tile (in every thread) over a fragment tile
template <class TL, class T, int NT, int... S>
__device__ __forceinline__ TL broadcast_frag(const Tile<T, NT, S...>& x) {
  static_assert(Tile<T, NT, S...>::E == 1, "broadcast_frag: one element or MmaRows");
  return full<TL>(x.v[0]);
}

// ---- conversions through the scratch -----------------------------------------------------------
template <class T, int NT, int M>
__device__ __forceinline__ Tile<T, NT, M, 1> to_blocked(const MmaRows<T, NT, M>& x) {
  typedef Tile<T, NT, M, 1> R;
  static_assert(M * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  const int t = tid();
  block_sync();
  if (t % 4 == 0) {
#pragma unroll
    for (int k = 0; k < MmaRows<T, NT, M>::N; ++k) {
      const int row = frag_row<NT, M>(t, k / 2, k % 2);
      if (M >= 16 || row < M) buf[row] = x.v[k];
    }
  }
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = buf[elem<R>(t, k)];
  return r;
}
template <class T, int NT, int N>
__device__ __forceinline__ Tile<T, NT, 1, N> to_blocked(const MmaCols<T, NT, N>& x) {
  typedef Tile<T, NT, 1, N> R;
  static_assert(N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  const int t = tid();
  block_sync();
  if (t < 4) {
#pragma unroll
    for (int k = 0; k < MmaCols<T, NT, N>::N; ++k) buf[frag_col(t, k / 2, k % 2)] = x.v[k];
  }
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = buf[elem<R>(t, k)];
  return r;
}
template <class T, int NT, int N>
__device__ __forceinline__ MmaCols<T, NT, N> to_mma_cols(const Tile<T, NT, 1, N>& x) {
  static_assert(N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  MmaCols<T, NT, N> r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < MmaCols<T, NT, N>::N; ++k) r.v[k] = buf[frag_col(t, k / 2, k % 2)];
  return r;
}
template <class T, int NT, int M>
__device__ __forceinline__ MmaRows<T, NT, M> to_mma_rows(const Tile<T, NT, M, 1>& x) {
  static_assert(M * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  MmaRows<T, NT, M> r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < MmaRows<T, NT, M>::N; ++k) {
    const int row = frag_row<NT, M>(t, k / 2, k % 2);
    r.v[k] = M >= 16 || row < M ? buf[row] : T{};
  }
  return r;
}

// ---- mma with A in registers (the call is in operands.h, which stages B as an operand) -------
template <class T> __device__ __forceinline__ uint32_t pack16(T lo, T hi) {
  return bits16(lo) | (bits16(hi) << 16);
}

}  // namespace tile
}  // namespace tt
