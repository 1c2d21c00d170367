// coop/sort.h: block radix sort (cub::BlockRadixSort) and merge sorts with a comparator
// (cub::BlockMergeSort, cub::WarpMergeSort), of keys and of keys with values.
#pragma once
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include "common.h"

namespace tt {
namespace coop {

template <class K, int BX, int BY, int BZ, int I, class V>
using RadixSortT = cub::BlockRadixSort<K, BX, I, V, 4, true, cub::BLOCK_SCAN_WARP_SCANS,
                                       cudaSharedMemBankSizeFourByte, BY, BZ>;

// each class's storage, shared by every call of it (the accessor's barrier ends the last use)
template <class S, int BOUND>
__device__ __forceinline__ typename S::TempStorage& storage_of() {
  static_assert(sizeof(typename S::TempStorage) <= BOUND,
                "CUB's storage outgrew threadtile's bound (ir/coop.py)");
  __shared__ typename S::TempStorage tmp;
  __syncthreads();
  return tmp;
}

template <class K, int BX, int BY, int BZ, int BOUND, bool DESC, int I>
__device__ __forceinline__ void block_radix_sort(K (&keys)[I], int begin, int end) {
  using S = RadixSortT<K, BX, BY, BZ, I, cub::NullType>;
  S s(storage_of<S, BOUND>());
  if constexpr (DESC) s.SortDescending(keys, begin, end);
  else s.Sort(keys, begin, end);
}

template <class K, int BX, int BY, int BZ, int BOUND, bool DESC, int I, class V>
__device__ __forceinline__ void block_radix_sort(K (&keys)[I], V (&values)[I], int begin,
                                                 int end) {
  using S = RadixSortT<K, BX, BY, BZ, I, V>;
  S s(storage_of<S, BOUND>());
  if constexpr (DESC) s.SortDescending(keys, values, begin, end);
  else s.Sort(keys, values, begin, end);
}

template <class K, int BX, int BY, int BZ, int BOUND, int I, class Cmp>
__device__ __forceinline__ void block_merge_sort(K (&keys)[I], Cmp cmp) {
  using S = cub::BlockMergeSort<K, BX, I, cub::NullType, BY, BZ>;
  S(storage_of<S, BOUND>()).StableSort(keys, cmp);
}

template <class K, int BX, int BY, int BZ, int BOUND, int I, class V, class Cmp>
__device__ __forceinline__ void block_merge_sort(K (&keys)[I], V (&values)[I], Cmp cmp) {
  using S = cub::BlockMergeSort<K, BX, I, V, BY, BZ>;
  S(storage_of<S, BOUND>()).StableSort(keys, values, cmp);
}

// one storage per logical warp of the block (no barrier: a warp's sort syncs its own lanes)
template <class S, int WARPS, int BOUND>
__device__ __forceinline__ typename S::TempStorage* warp_storage() {
  static_assert(sizeof(typename S::TempStorage) * WARPS <= BOUND,
                "cub::WarpMergeSort's storage outgrew threadtile's bound (ir/coop.py)");
  __shared__ typename S::TempStorage tmp[WARPS];
  return tmp;
}

template <class K, int BX, int BY, int BZ, int W, int BOUND, int I, class Cmp>
__device__ __forceinline__ void warp_merge_sort(K (&keys)[I], Cmp cmp) {
  using S = cub::WarpMergeSort<K, I, W>;
  __syncwarp(warp_mask<W>());  // the warp's last use of its storage is over
  S(warp_storage<S, BX * BY * BZ / W, BOUND>()[linear_tid<BX, BY>() / W]).StableSort(keys, cmp);
}

}  // namespace coop
}  // namespace tt
