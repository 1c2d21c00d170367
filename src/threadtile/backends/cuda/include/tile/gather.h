// tile/gather.h: gather and scatter, an array's elements at tiles of indices (one integer
// tile or scalar per array axis, broadcast by the compiler to one shape, the result's).
//
// Each thread handles the elements it holds of the indices' tile: element elem(t, k) of slot
// k, its array coordinates the slot-k values of the index operands. An element is accessed
// where the mask is true and, with CheckBounds, every coordinate lies in [0, shape) (an
// index is int64 here, so a uint64 index past 2^63 is negative and outside); gather gives
// the padding elsewhere, scatter skips it. Without CheckBounds the caller promises the
// indices are inside (cuTile's check_bounds=False); nothing is tested but the mask.
//
// Paths:
//   each thread its own  a tile of at least NT elements: each thread reads or writes its slots
//   replicated           a tile smaller than the block: every replica of an element reads
//                        it (gather), the owner alone writes it (scatter)
//   shared               gather_shared / scatter_shared: one of the above between two barriers
#pragma once

#include "elementwise.h"
#include "memory.h"

namespace tt {
namespace tile {

// whether the element at array coordinates g is inside the array (always, unchecked)
template <bool CheckBounds, int R, class Arr>
__device__ __forceinline__ bool indexed_in(const Arr& a, const int64_t* g) {
  bool in = true;
  if constexpr (CheckBounds && R > 0) {
#pragma unroll
    for (int d = 0; d < R; ++d) in = in && g[d] >= 0 && g[d] < a.shape[d];
  }
  return in;
}
// the address of the element at coordinates g (a 0-d array has its one element)
template <int R, class Arr>
__device__ __forceinline__ auto indexed_at(const Arr& a, const int64_t* g) {
  if constexpr (R == 0) return a.data;
  else return a.data + offset(a, g);
}

// the array's elements at the indices, `pad` where the mask is false or (CheckBounds) an index
// is outside the array
template <class TL, bool CheckBounds, class Arr, class M, class P, class... I>
__device__ __forceinline__ TL gather(const Arr& a, const M& mask, const P& pad,
                                     const I&... idx) {
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I);
  TL r;
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};
    const bool in = bool(at(mask, k)) && indexed_in<CheckBounds, R>(a, g);
    r.v[k] = in ? *indexed_at<R>(a, g) : T(at(pad, k));
  }
  return r;
}
template <class TL, bool CheckBounds, class Arr, class M, class P, class... I>
__device__ __forceinline__ TL gather_shared(const Arr& a, const M& mask, const P& pad,
                                            const I&... idx) {
  block_sync();
  TL r = gather<TL, CheckBounds>(a, mask, pad, idx...);
  block_sync();
  return r;
}

// the tile's elements into the array at the indices, where the mask is true and (CheckBounds)
// the index inside the array; elements of one index are written in no particular order
template <bool CheckBounds, class Arr, class TL, class M, class... I>
__device__ __forceinline__ void scatter(const Arr& a, const TL& x, const M& mask,
                                        const I&... idx) {
  constexpr int R = sizeof...(I);
  if (!owner<TL>(tid())) return;
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};
    if (bool(at(mask, k)) && indexed_in<CheckBounds, R>(a, g)) *indexed_at<R>(a, g) = x.v[k];
  }
}
template <bool CheckBounds, class Arr, class TL, class M, class... I>
__device__ __forceinline__ void scatter_shared(const Arr& a, const TL& x, const M& mask,
                                               const I&... idx) {
  block_sync();
  scatter<CheckBounds>(a, x, mask, idx...);
  block_sync();
}

}  // namespace tile
}  // namespace tt
