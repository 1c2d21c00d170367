// coop/memory.h: a block's tile of an array into the items of its threads and back
// (cub::BlockLoad/BlockStore's arrangements) and cub::BlockExchange. A is a threadtile array
// view (threadtile.h's Array or CArray, 1-d): a(i) is element i.
#pragma once
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include "common.h"

namespace tt {
namespace coop {

template <class X>
struct Contiguous { static constexpr bool value = false; };
template <class T>
struct Contiguous<tt::CArray<T, 1>> { static constexpr bool value = true; };

// "vectorize" where it can: a contiguous array at a 16-byte boundary, every item valid
template <class A>
__device__ __forceinline__ bool vectorizable(const A& a, int valid, int n) {
  return valid >= n && ((unsigned long long)(a.data) % 16) == 0;
}

template <class T, int BX, int BY, int BZ, int I>
using ExchangeT = cub::BlockExchange<T, BX, I, false, BY, BZ>;

template <class T, int BX, int BY, int BZ, int BOUND, int I>
__device__ __forceinline__ typename ExchangeT<T, BX, BY, BZ, I>::TempStorage& exchange_storage() {
  using E = ExchangeT<T, BX, BY, BZ, I>;
  static_assert(sizeof(typename E::TempStorage) <= BOUND,
                "cub::BlockExchange's storage outgrew threadtile's bound (ir/coop.py)");
  __shared__ typename E::TempStorage tmp;
  __syncthreads();
  return tmp;
}

// ALG: 0 direct, 1 striped, 2 vectorize, 3 transpose (ir/coop.py LOAD_ALGORITHMS)
template <class T, int BX, int BY, int BZ, int BOUND, int ALG, bool OOB, class A, int I>
__device__ __forceinline__ void block_load(const A& a, T (&items)[I], int valid, T oob) {
  constexpr int N = BX * BY * BZ;
  const int t = linear_tid<BX, BY>();
  if constexpr (ALG == 2 && Contiguous<A>::value) {
    if (vectorizable(a, valid, N * I)) {
      cub::LoadDirectBlockedVectorized(t, (T*)(a.data), items);
      return;
    }
  }
  const bool striped = ALG == 1 || ALG == 3;
#pragma unroll
  for (int k = 0; k < I; ++k) {
    const int i = striped ? k * N + t : t * I + k;
    if (i < valid) items[k] = a(i);
    else if (OOB) items[k] = oob;
  }
  if constexpr (ALG == 3) {
    ExchangeT<T, BX, BY, BZ, I>(exchange_storage<T, BX, BY, BZ, BOUND, I>())
        .StripedToBlocked(items, items);
  }
}

template <class T, int BX, int BY, int BZ, int BOUND, int ALG, class A, int I>
__device__ __forceinline__ void block_store(const A& a, T (&items)[I], int valid) {
  constexpr int N = BX * BY * BZ;
  const int t = linear_tid<BX, BY>();
  if constexpr (ALG == 2 && Contiguous<A>::value) {
    if (vectorizable(a, valid, N * I)) {
      cub::StoreDirectBlockedVectorized(t, (T*)(a.data), items);
      return;
    }
  }
  T tmp[I];
#pragma unroll
  for (int k = 0; k < I; ++k) tmp[k] = items[k];
  if constexpr (ALG == 3) {
    ExchangeT<T, BX, BY, BZ, I>(exchange_storage<T, BX, BY, BZ, BOUND, I>())
        .BlockedToStriped(tmp, tmp);
  }
  const bool striped = ALG == 1 || ALG == 3;
#pragma unroll
  for (int k = 0; k < I; ++k) {
    const int i = striped ? k * N + t : t * I + k;
    if (i < valid) a(i) = tmp[k];
  }
}

template <class T, int BX, int BY, int BZ, int BOUND, bool TO_BLOCKED, int I>
__device__ __forceinline__ void block_exchange(T (&in)[I], T (&out)[I]) {
  ExchangeT<T, BX, BY, BZ, I> e(exchange_storage<T, BX, BY, BZ, BOUND, I>());
  if constexpr (TO_BLOCKED) e.StripedToBlocked(in, out);
  else e.BlockedToStriped(in, out);
}

}  // namespace coop
}  // namespace tt
