// tile/atomic.h: memory orders and scopes (fences around relaxed atomics), and atomics on the
// elements of an array at a tile of indices: one read-modify-write or compare-and-swap per
// element, the old values back as a tile.
//
// Paths:
//   each thread its own  a tile of at least NT elements: every thread keeps the old values
//                        of its atomics
//   from the owners      a tile smaller than the block (replicated): one replica of each
//                        element does the atomic, and from_owners hands the old value to the
//                        others through the scratch
#pragma once

#include "elementwise.h"
#include "gather.h"
#include "memory.h"

namespace tt {
namespace tile {

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
    block_sync();
    if (owner<TL>(t)) buf[t] = r.v[0];
    block_sync();
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
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};  // (a 0-d array: no index)
    const bool in = indexed_in<true, R>(a, g);
    T old = to<T>(0);
    if (in && owner<TL>(t)) old = rmw<Op>(indexed_at<R>(a, g), T(at(upd, k)));
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
    const int64_t g[R + 1] = {int64_t(at(idx, k))..., 0};
    const bool in = indexed_in<true, R>(a, g);
    T old = T(at(expected, k));
    if (in && owner<TL>(t))
      old = ::tt::atomic_cas(indexed_at<R>(a, g), T(at(expected, k)), T(at(desired, k)));
    r.v[k] = old;
  }
  if (Order == ACQUIRE || Order == ACQ_REL) fence<Scope>();
  from_owners(r);
  return r;
}

}  // namespace tile
}  // namespace tt
