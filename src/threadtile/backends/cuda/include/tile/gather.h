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
//   each thread its own  a tile of at least NT elements: each thread reads or writes its slots;
//                        a run of V slots (the layout's vector width) whose indices are V
//                        consecutive elements of a row of the array (the other coordinates
//                        equal), all unmasked and inside it, at an aligned address, is one
//                        vector access (checked as the kernel runs: an index tile of
//                        `offset + arange` is such runs)
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

// whether the run of V slots from k0 (first array coordinates g0, address p) is V consecutive
// elements of a row of the array, every one unmasked and (CheckBounds) inside the array,
// contiguous and aligned for one vector access
template <int V, bool CheckBounds, int R, class Arr, class M, class... I>
__device__ __forceinline__ bool run_of_row(const Arr& a, const M& mask, int k0,
                                           const int64_t* g0, const void* p, const I&... idx) {
  bool ok = stride_of(a, R - 1) == 1 &&
            reinterpret_cast<unsigned long long>(p) % (V * sizeof(*a.data)) == 0 &&
            indexed_in<CheckBounds, R>(a, g0) &&
            (!CheckBounds || g0[R - 1] + V <= a.shape[R - 1]);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t g[R + 1] = {int64_t(at(idx, k0 + i))..., 0};
    ok = ok && bool(at(mask, k0 + i)) && g[R - 1] == g0[R - 1] + i;
#pragma unroll
    for (int d = 0; d + 1 < R; ++d) ok = ok && g[d] == g0[d];
  }
  return ok;
}

// each slot k of the tile TL: run(k0, p) for a run of V slots from k0 that is a run of a row
// at address p (run_of_row), one(k) for every other slot
template <class TL, bool CheckBounds, class Arr, class M, class Run, class One, class... I>
__device__ __forceinline__ void by_runs(const Arr& a, const M& mask, Run run, One one,
                                        const I&... idx) {
  constexpr int R = sizeof...(I), V = traits<TL>::V;
  if constexpr (V > 1 && R > 0) {
#pragma unroll
    for (int k0 = 0; k0 < TL::N; k0 += V) {
      const int64_t g0[R + 1] = {int64_t(at(idx, k0))..., 0};
      auto* p = indexed_at<R>(a, g0);
      if (run_of_row<V, CheckBounds, R>(a, mask, k0, g0, p, idx...)) {
        run(k0, p);
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) one(k0 + i);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < TL::N; ++k) one(k);
  }
}

// the array's elements at the indices, `pad` where the mask is false or (CheckBounds) an index
// is outside the array
template <class TL, bool CheckBounds, class Arr, class M, class P, class... I>
__device__ __forceinline__ TL gather(const Arr& a, const M& mask, const P& pad,
                                     const I&... idx) {
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I), V = traits<TL>::V;
  TL r;
  auto one = [&](int k) {
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};
    const bool in = bool(at(mask, k)) && indexed_in<CheckBounds, R>(a, g);
    r.v[k] = in ? *indexed_at<R>(a, g) : T(at(pad, k));
  };
  auto run = [&](int k0, const T* p) {
    const run_words<V, T> w = vload_run<V>(p);
    memcpy(&r.v[k0], &w, sizeof w);
  };
  by_runs<TL, CheckBounds>(a, mask, run, one, idx...);
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
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I), V = traits<TL>::V;
  if (!owner<TL>(tid())) return;
  auto one = [&](int k) {
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};
    if (bool(at(mask, k)) && indexed_in<CheckBounds, R>(a, g)) *indexed_at<R>(a, g) = x.v[k];
  };
  auto run = [&](int k0, T* p) {
    typedef run_words<V, T> W;
    const W w = pack_run<V>(&x.v[k0]);
#pragma unroll
    for (int i = 0; i < int(sizeof(w.w) / sizeof(w.w[0])); ++i)
      reinterpret_cast<typename W::Word*>(p)[i] = w.w[i];
  };
  by_runs<TL, CheckBounds>(a, mask, run, one, idx...);
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
