// tile/layout.h: the Tile type and its traits, the small metaprogramming the other sections
// use, where each element of a tile lives (thread and register slot), and the scratch.
//
// A Tile<T, NT, S...> is a tile of shape S... spread over the NT threads of a block, one
// function call per tile operation, executed by every thread of the block together:
//
//   layout: a tile with E elements spreads over the NT threads in runs of V consecutive
//           row-major elements: element e lives in thread (e / V) % NT, register slot
//           (e / (V NT)) V + e % V. V (vec_width) is the largest power of two up to TT_VEC
//           for which the last axis is a multiple of V NT, else 1; it depends on the shape and
//           NT only, never on the dtype, so tiles of one shape share a layout whatever their
//           types. A thread's run of V elements is one vector access of memory (16 bytes for
//           float32), and a warp's runs are consecutive, so loads and stores stay coalesced.
//           A tile smaller than the block (E < NT) is replicated: thread t holds element
//           t % E, and a one-element tile is in every thread.
//   free:   elementwise operations, reshapes between shapes of one vector width (the row-major
//           order does not change), broadcasts that add leading axes or expand a one-element
//           tile, loads and stores.
//   shared: operations that move elements between threads (reductions, transposes, other
//           broadcasts, mma) stage through the scratch at the start of dynamic shared memory
//           (TT_SCRATCH_BYTES, sized by the code generator for the largest user); each starts
//           with block_sync() so that the previous user has finished reading it.
//
// The generated code defines TT_SCRATCH_BYTES before it includes tile.h; the sizes tile code
// shares with the compiler (TT_VEC, the tensor cores' shape, the k loops' buffers) are in
// config.h, generated from ir/tiling.py. No paths here: the sections after this one choose
// theirs.
#pragma once

#include "config.h"

#ifndef TT_SCRATCH_BYTES
#define TT_SCRATCH_BYTES 0
#endif
// TT_PRODUCER (a build option, jit.build): the block has a producer warpgroup after the
// TT_BLOCK_THREADS threads of the kernel's code (the generated code defines it)
#ifdef TT_PRODUCER
#ifndef TT_BLOCK_THREADS
#error "TT_PRODUCER needs TT_BLOCK_THREADS"
#endif
#define TT_PRODUCER_THREADS 128  // a warpgroup: setmaxnreg hands its registers over
#else
#define TT_PRODUCER_THREADS 0
#endif

extern __shared__ __align__(16) unsigned char tt_dynamic_smem[];

namespace tt {
namespace tile {

// TensorFloat-32: float bits rounded to 10 mantissa bits (what the tensor cores read)
struct tf32 {
  float x;
};

// the vector width of a tile whose last axis has d elements (ir/tiling.py, vec_width)
__host__ __device__ constexpr int vec_width(int nt, int d) {
  int v = TT_VEC;
  while (v > 1 && d % (v * nt) != 0) v /= 2;
  return v;
}
template <int... S> __host__ __device__ constexpr int last_dim() {
  constexpr int s[] = {1, S...};
  return s[sizeof...(S)];
}

template <typename T, int NT, int... S>
struct Tile {
  static constexpr int E = (1 * ... * S);           // elements
  static constexpr int N = E >= NT ? E / NT : 1;    // register slots per thread
  static constexpr int V = vec_width(NT, last_dim<S...>());  // consecutive elements per run
  T v[N];
};

// ---- small metaprogramming (NVRTC has no <type_traits>) -------------------------------------
template <bool C, class A, class B> struct cond { typedef A type; };
template <class A, class B> struct cond<false, A, B> { typedef B type; };
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };

template <class X> struct traits {
  static constexpr bool tile = false;
  typedef X elem;
};
template <class T, int NT_, int... S>
struct traits<Tile<T, NT_, S...>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  static constexpr int rank = sizeof...(S);
  static constexpr int E = Tile<T, NT_, S...>::E;
  static constexpr int N = Tile<T, NT_, S...>::N;
  static constexpr int V = Tile<T, NT_, S...>::V;
  typedef T elem;
  template <class U> using with = Tile<U, NT_, S...>;
  template <int A, int B> using with2 = Tile<T, NT_, A, B>;  // (memory.h squeezed_tile)
  __host__ __device__ static constexpr int dim(int d) {
    constexpr int s[] = {S..., 1};
    return s[d];
  }
};
// the tile type among the operands of an elementwise operation (scalars broadcast)
template <class A, class B> using carrier = typename cond<traits<A>::tile, A, B>::type;
template <int I, int... S> struct pack_at;
template <int I, int H, int... S> struct pack_at<I, H, S...> {
  static constexpr int value = pack_at<I - 1, S...>::value;
};
template <int H, int... S> struct pack_at<0, H, S...> { static constexpr int value = H; };

__device__ __forceinline__ int tid() {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  // (a block has at most 1024 threads: with t known to be small and non-negative the
  // compiler folds a slot's (t + k NT) / D and % D into t / D + k NT / D and t % D, one base
  // and compile-time offsets, instead of a division per slot)
  __builtin_assume(t < 1024u);
  return int(t);
}
// The barrier of tile code: every thread of the block, or, in a build with a producer warp
// (TT_PRODUCER: kloop_sm90.h), the TT_BLOCK_THREADS threads that run the kernel's code, on a
// named barrier of their own (the producer warp takes no part in it)
__device__ __forceinline__ void block_sync() {
#ifdef TT_PRODUCER
  asm volatile("bar.sync 1, %0;" ::"n"(TT_BLOCK_THREADS) : "memory");
#else
  __syncthreads();
#endif
}
// the element thread t holds in slot k
template <class TL>
__device__ __forceinline__ int elem(int t, int k) {
  constexpr int NT = traits<TL>::NT, V = traits<TL>::V;
  if constexpr (traits<TL>::E < NT) return t % traits<TL>::E;
  else if constexpr (V == 1) return t + k * NT;
  else return (k / V) * (V * NT) + t * V + k % V;
}
// whether thread t is the one (of the replicas) that writes element elem(t, k)
template <class TL>
__device__ __forceinline__ bool owner(int t) {
  return traits<TL>::E >= traits<TL>::NT || t < traits<TL>::E;
}
// row-major coordinates of element e
template <class TL>
__device__ __forceinline__ void coords(int e, int* c) {
#pragma unroll
  for (int d = traits<TL>::rank - 1; d >= 0; --d) {
    c[d] = e % traits<TL>::dim(d);
    e /= traits<TL>::dim(d);
  }
}
// row-major coordinates of the element thread t holds in slot k: coords(elem(t, k)), with the
// last axis split so that the compiler sees one per-thread base and compile-time offsets per
// slot (no division per slot) where a round of runs (V NT elements) covers whole rows of the
// last axis D, or a row covers whole rounds: slot k's element is (k / V) V NT + t V + k % V
template <class TL>
__device__ __forceinline__ void slot_coords(int t, int k, int* c) {
  constexpr int NT = traits<TL>::NT, V = traits<TL>::V, R = traits<TL>::rank;
  constexpr int D = traits<TL>::dim(R - 1 < 0 ? 0 : R - 1), RUN = V * NT;
  if constexpr (R >= 1 && traits<TL>::E >= NT && D % V == 0 && (RUN % D == 0 || D % RUN == 0)) {
    const int round = (k / V) * RUN;
    int q;
    if constexpr (RUN % D == 0) {
      q = round / D + (t * V) / D;
      c[R - 1] = (t * V) % D + k % V;
    } else {
      q = round / D;
      c[R - 1] = round % D + t * V + k % V;
    }
    if constexpr (R == 2) {
      c[0] = q;  // (a slot's row is inside the tile)
    } else {
#pragma unroll
      for (int d = R - 2; d >= 0; --d) {
        c[d] = q % traits<TL>::dim(d);
        q /= traits<TL>::dim(d);
      }
    }
  } else {
    coords<TL>(elem<TL>(t, k), c);
  }
}
template <class TL>
__device__ __forceinline__ int flat(const int* c) {
  int e = 0;
#pragma unroll
  for (int d = 0; d < traits<TL>::rank; ++d) e = e * traits<TL>::dim(d) + c[d];
  return e;
}
template <class T>
__device__ __forceinline__ T* scratch() {
  return reinterpret_cast<T*>(tt_dynamic_smem);
}

}  // namespace tile
}  // namespace tt
