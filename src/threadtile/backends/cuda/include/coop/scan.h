// coop/scan.h: block and warp reductions and scans (cub::BlockReduce, cub::BlockScan,
// cub::WarpReduce, cub::WarpScan). A reduction's result is broadcast to every thread.
#pragma once
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include "common.h"

namespace tt {
namespace coop {

template <class T, int BX, int BY, int BZ>
using BlockReduceT = cub::BlockReduce<T, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY, BZ>;
template <class T, int BX, int BY, int BZ>
using BlockScanT = cub::BlockScan<T, BX, cub::BLOCK_SCAN_WARP_SCANS, BY, BZ>;

template <class T, int BX, int BY, int BZ>
struct ReduceStorage {
  typename BlockReduceT<T, BX, BY, BZ>::TempStorage cub;
  T out;  // thread 0's result, read by every thread
};

template <class T, int BX, int BY, int BZ, int BOUND>
__device__ __forceinline__ ReduceStorage<T, BX, BY, BZ>& reduce_storage() {
  static_assert(sizeof(ReduceStorage<T, BX, BY, BZ>) <= BOUND,
                "cub::BlockReduce's storage outgrew threadtile's bound (ir/coop.py)");
  __shared__ ReduceStorage<T, BX, BY, BZ> tmp;
  __syncthreads();
  return tmp;
}

// v: a T or a T[I]; SUM: cub's Sum (the user's op is ignored)
template <class T, int BX, int BY, int BZ, int BOUND, bool SUM, class V, class Op>
__device__ __forceinline__ T block_reduce(V&& v, Op op) {
  using R = BlockReduceT<T, BX, BY, BZ>;
  ReduceStorage<T, BX, BY, BZ>& tmp = reduce_storage<T, BX, BY, BZ, BOUND>();
  T r;
  if constexpr (SUM) r = R(tmp.cub).Sum(v);
  else r = R(tmp.cub).Reduce(v, op);
  if (linear_tid<BX, BY>() == 0) tmp.out = r;
  __syncthreads();
  return tmp.out;
}

template <class T, int BX, int BY, int BZ, int BOUND>
__device__ __forceinline__ typename BlockScanT<T, BX, BY, BZ>::TempStorage& scan_storage() {
  using S = BlockScanT<T, BX, BY, BZ>;
  static_assert(sizeof(typename S::TempStorage) <= BOUND,
                "cub::BlockScan's storage outgrew threadtile's bound (ir/coop.py)");
  __shared__ typename S::TempStorage tmp;
  __syncthreads();
  return tmp;
}

// MODE: 0 inclusive sum, 1 exclusive sum, 2 inclusive scan, 3 exclusive scan (with init)
template <class T, int BX, int BY, int BZ, int BOUND, int MODE, class Op>
__device__ __forceinline__ T block_scan(T v, Op op, T init) {
  using S = BlockScanT<T, BX, BY, BZ>;
  S s(scan_storage<T, BX, BY, BZ, BOUND>());
  T out;
  if constexpr (MODE == 0) s.InclusiveSum(v, out);
  else if constexpr (MODE == 1) s.ExclusiveSum(v, out);
  else if constexpr (MODE == 2) s.InclusiveScan(v, out, op);
  else s.ExclusiveScan(v, out, init, op);
  return out;
}

template <class T, int BX, int BY, int BZ, int BOUND, int MODE, int I, class Op>
__device__ __forceinline__ void block_scan(T (&in)[I], T (&out)[I], Op op, T init) {
  using S = BlockScanT<T, BX, BY, BZ>;
  S s(scan_storage<T, BX, BY, BZ, BOUND>());
  if constexpr (MODE == 0) s.InclusiveSum(in, out);
  else if constexpr (MODE == 1) s.ExclusiveSum(in, out);
  else if constexpr (MODE == 2) s.InclusiveScan(in, out, op);
  else s.ExclusiveScan(in, out, init, op);
}

// warps: shuffles only (a power-of-two logical warp), so CUB's storage is an empty struct
template <class T, int W, bool SUM, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  using R = cub::WarpReduce<T, W>;
  static_assert(sizeof(typename R::TempStorage) <= 1, "cub::WarpReduce needs storage");
  __shared__ typename R::TempStorage tmp;
  T r;
  if constexpr (SUM) r = R(tmp).Sum(v);
  else r = R(tmp).Reduce(v, op);
  return cub::ShuffleIndex<W>(r, 0, warp_mask<W>());  // lane 0's, to every lane
}

template <class T, int W, int MODE, class Op>
__device__ __forceinline__ T warp_scan(T v, Op op, T init) {
  using S = cub::WarpScan<T, W>;
  static_assert(sizeof(typename S::TempStorage) <= 1, "cub::WarpScan needs storage");
  __shared__ typename S::TempStorage tmp;
  T out;
  if constexpr (MODE == 0) S(tmp).InclusiveSum(v, out);
  else if constexpr (MODE == 1) S(tmp).ExclusiveSum(v, out);
  else if constexpr (MODE == 2) S(tmp).InclusiveScan(v, out, op);
  else S(tmp).ExclusiveScan(v, out, init, op);
  return out;
}

}  // namespace coop
}  // namespace tt
