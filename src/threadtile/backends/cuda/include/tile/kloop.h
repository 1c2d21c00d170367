// tile/kloop.h: the k loop of a matrix multiply as one operation,
//   for (k = lo; k < hi; ++k) acc = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), acc)
// with the accumulator in fragments (MmaTile): the IR's mma_loop operation (ir/kloop.py). The
// code generator calls mma_loop where the shapes have a Hopper main loop (it then passes two
// tensor maps, and says whether the staged loop applies), else mma_loop_staged.
//
// Paths, in the order they are tried:
//   Hopper main loop  mma_loop, built for sm_90a, sm90::Plan::ok, a float32 accumulator and
//                     both tensor maps present: sm90::mainloop (kloop_sm90.h), TMA + wgmma
//   cp.async          mma_loop_staged (mma_loop takes it where the compiler says Staged: each
//                     warp's blocks in one row strip, the buffers within an sm_80 block's
//                     shared memory, ir/tiling.py staged_ok), on sm_80 and later where
//                     every tile lies inside its array with 16-byte aligned rows:
//                     mma_loop_async, STAGES buffers, copies STAGES - 1 steps ahead
//   registers         mma_loop_staged otherwise, tfloat32: mma_loop_registers, two buffers,
//                     the next step's loads in flight during this step's multiplies
//   as written        mma_loop_staged otherwise, float16 and bfloat16; and mma_loop where the
//                     staged loop does not apply: a load, load, mma per step
#pragma once

#include "elementwise.h"
#include "memory.h"
#include "mma.h"
#include "kloop_sm90.h"

namespace tt {
namespace tile {

// ---- the k loop of a matrix multiply ---------------------------------------------------------
// The k loop on sm_80 and later where every tile of the loop lies inside its array with
// 16-byte aligned rows: cp.async copies A and B into STAGES buffers of the scratch (the layout
// of mma_plan) STAGES - 1 steps ahead of the multiplies, straight from global memory; float32
// arrays through tfloat32 round as warp_mma loads fragments. Returns false, having done
// nothing, where the tiles do not allow it.
constexpr int STAGES = TT_STAGES;  // config.h (ir/tiling.py)
template <class P, int NT, int M, int N, class ArrA, class ArrB>
__device__ __forceinline__ bool mma_loop_async(const ArrA& A, const ArrB& B, int64_t bi,
                                               int64_t bj, int64_t lo, int64_t hi, float* acc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef typename cond<P::kind == 3, float, typename P::elem>::type T;  // as in the arrays
  constexpr int K = P::K, LD = P::LD, LDB = P::LDB, AS = M * LD, BUF = AS + P::B_ELEMS;
  constexpr int S = STAGES, C = 16 / int(sizeof(T));  // elements per 16-byte copy
  static_assert(S * BUF * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int64_t lda = stride_of(A, 0), ldb = stride_of(B, 0);
  const T* pa = A.data + bi * M * lda + lo * K;
  const T* pb = B.data + lo * K * ldb + bj * N;
  const bool fits = stride_of(A, 1) == 1 && stride_of(B, 1) == 1 && lda % C == 0 &&
                    ldb % C == 0 && reinterpret_cast<unsigned long long>(pa) % 16 == 0 &&
                    reinterpret_cast<unsigned long long>(pb) % 16 == 0 && bi >= 0 && bj >= 0 &&
                    lo >= 0 && (bi + 1) * M <= A.shape[0] && hi * K <= A.shape[1] &&
                    hi * K <= B.shape[0] && (bj + 1) * N <= B.shape[1];
  if (!fits) return false;
  T* buf = scratch<T>();
  const int t = tid();
  auto issue = [&](int64_t k, int s) {  // step k's tiles into buffer s
    T* as = buf + s * BUF;
    T* bs = as + AS;
    const T* ga = pa + (k - lo) * K;
    const T* gb = pb + (k - lo) * K * ldb;
#pragma unroll
    for (int c = t; c < M * K / C; c += NT) {
      const int r = c / (K / C), q = C * (c % (K / C));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<uint32_t>(__cvta_generic_to_shared(as + r * LD + q))),
                   "l"(ga + r * lda + q) : "memory");
    }
#pragma unroll
    for (int c = t; c < K * N / C; c += NT) {
      const int r = c / (N / C), q = C * (c % (N / C));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<uint32_t>(__cvta_generic_to_shared(bs + r * LDB + q))),
                   "l"(gb + r * ldb + q) : "memory");
    }
  };
  __syncthreads();  // the scratch's previous user is done with it
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (lo + s < hi) issue(lo + s, s);
    asm volatile("cp.async.commit_group;" ::: "memory");  // empty groups keep the count
  }
  for (int64_t k = lo; k < hi; ++k) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory");  // step k has landed
    __syncthreads();  // for every thread; and every warp is done with step k - 1's buffer
    if (k + S - 1 < hi) issue(k + S - 1, int((k - lo + S - 1) % S));
    asm volatile("cp.async.commit_group;" ::: "memory");
    const T* cur = buf + ((k - lo) % S) * BUF;
    warp_mma<P, NT, M, N, P::kind == 3>(acc, cur, cur + AS);
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();  // the scratch is free again
  return true;
#else
  return false;
#endif
}

// mma_loop_staged's path for tfloat32 where cp.async cannot copy the tiles: through registers
// into two buffers, one barrier per step (the loop as written has two), the next step's loads
// in flight while the tensor cores multiply this step's operands where registers allow
template <class TM, class TLA, class TLB, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_registers(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc) {
  constexpr int K = traits<TLA>::dim(1);
  typedef mma_plan<TM, M, N, K, true> P;
  constexpr int AS = M * P::LD, BUF = AS + P::B_ELEMS;  // elements of one buffer
  static_assert(2 * BUF * sizeof(TM) <= TT_SCRATCH_BYTES, "tile scratch too small");
  MmaTile<TC, NT, M, N> r = acc;
  TM* buf = scratch<TM>();
  TLA a = load<TLA>(A, pad, bi, lo);
  TLB b = load<TLB>(B, pad, lo, bj);
  __syncthreads();  // the scratch's previous user is done with it
  stage_operands<P>(astype<TM>(a), astype<TM>(b), buf, buf + AS);
  __syncthreads();
  // the next step's loads go ahead of the multiplies where the operands are few registers
  // per thread and threads have 255 (holding more across the multiplies spills), else after
  constexpr bool ahead = TLA::N + TLB::N <= 32 && NT <= 256;
  for (int64_t k = lo; k < hi; ++k) {
    const TM* cur = buf + ((k - lo) & 1) * BUF;
    const bool more = k + 1 < hi;
    if (ahead && more) {
      a = load<TLA>(A, pad, bi, k + 1);
      b = load<TLB>(B, pad, k + 1, bj);
    }
    warp_mma<P, NT, M, N>(r.v, cur, cur + AS);
    if (more) {  // the other buffer: every warp finished reading it before the last barrier
      if (!ahead) {
        a = load<TLA>(A, pad, bi, k + 1);
        b = load<TLB>(B, pad, k + 1, bj);
      }
      TM* next = buf + ((k + 1 - lo) & 1) * BUF;
      stage_operands<P>(astype<TM>(a), astype<TM>(b), next, next + AS);
    }
    __syncthreads();
  }
  return r;
}

// for (k = lo; k < hi; ++k)
//   acc = mma(astype<TM>(load<TLA>(A, pad, bi, k)), astype<TM>(load<TLB>(B, pad, k, bj)), acc)
// with cp.async where the tiles allow it (mma_loop_async); else tfloat32 through registers
// (mma_loop_registers) and 16-bit operands as written.
template <class TM, class TLA, class TLB, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_staged(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc) {
  constexpr int K = traits<TLA>::dim(1);
  typedef mma_plan<TM, M, N, K, true> P;
  static_assert(same<TC, float>::value, "mma_loop_staged: tensor-core operands");
  MmaTile<TC, NT, M, N> r = acc;
  if (lo >= hi) return r;
  if (mma_loop_async<P, NT, M, N>(A, B, bi, bj, lo, hi, r.v)) return r;
  if constexpr (P::kind != 3) {  // 16-bit: the loop as written (staged through registers, it
    for (int64_t k = lo; k < hi; ++k)  // measured slower as often as faster)
      r = mma<true>(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), r);
    return r;
  } else {
    return mma_loop_registers<TM, TLA, TLB>(A, B, pad, bi, bj, lo, hi, r);
  }
}

// for (k = lo; k < hi; ++k) acc = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), acc),
// the IR's mma_loop operation (ir/kloop.py), run here as one operation: on sm_90a with TMA-ready operands by the pipelined main loop of kloop_sm90.h, else
// by mma_loop_staged where its buffers fit (cp.async where the arrays allow), else as written.
// Staged: whether mma_loop_staged runs the loop off the Hopper path (its buffers fit and each
// warp's blocks lie in one row strip: ir/tiling.py staged_ok, which also sizes the scratch).
template <class TLA, class TLB, bool Staged, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc, const sm90::TensorMap& ma,
    const sm90::TensorMap& mb) {
  typedef typename traits<TLA>::elem TA;
  constexpr int K = traits<TLA>::dim(1);
  MmaTile<TC, NT, M, N> r = acc;
  static_assert(sm90::Plan<TA, NT, M, N, K>::ok && same<TC, float>::value,
                "mma_loop: the compiler asks for the Hopper main loop where it applies only "
                "(ir/tiling.py, sm90_bytes)");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (sm90::present(ma) && sm90::present(mb)) {
    sm90::mainloop<TA, NT, M, N, K>(ma, mb, bi, bj, lo, hi, r.v);
    return r;
  }
#endif
  if constexpr (Staged) {
    return mma_loop_staged<TA, TLA, TLB>(A, B, pad, bi, bj, lo, hi, r);
  } else {
    for (int64_t k = lo; k < hi; ++k) {
      TLA a = load<TLA>(A, pad, bi, k);
      TLB b = load<TLB>(B, pad, k, bj);
      r = mma<true>(a, b, r);
    }
    return r;
  }
}

}  // namespace tile
}  // namespace tt
