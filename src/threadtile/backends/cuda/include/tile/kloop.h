// tile/kloop.h: the k loop of a matrix multiply as one operation,
//   for (k = lo; k < hi; ++k) acc = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), acc)
// with the accumulator in fragments (MmaTile): the IR's mma_loop operation (ir/kloop.py). The
// code generator calls mma_loop where the shapes have a Hopper main loop (it then passes two
// tensor maps, and says whether the staged loop applies), else mma_loop_staged.
//
// Paths, in the order they are tried:
//   Hopper main loop  mma_loop, built for sm_90a, sm90::Plan::ok, a float32 accumulator and
//                     both tensor maps present: sm90::mainloop (kloop_sm90.h), TMA + wgmma;
//                     for float32 operands cast to tfloat32, sm90::mainloop_tf32
//                     (kloop_sm90_tf32.h: the transposed product, B^T from registers); for
//                     8-bit floats, sm90::mainloop_f8 (kloop_sm90_f8.h, the same way)
//   cp.async          mma_loop_staged<..., Stages> (the compiler gives Stages, STAGES or 2,
//                     where that many buffers fit an sm_80 block and each warp's blocks lie in
//                     one row strip or hold whole strips: ir/tiling.py staged_stages), on
//                     sm_80 and later where the arrays' rows are contiguous with 16-byte
//                     aligned starts: mma_loop_async, copies Stages - 1 steps ahead, zeros
//                     past the arrays' edges; each step's k split over the warps where a
//                     warp holds one or two 16x8 blocks of the accumulator (k_split)
//   guarded           otherwise (strided or unaligned arrays, buffers too large, and mma_loop
//                     off the Hopper path, in a function of its own there): mma_loop_guarded,
//                     one buffer filled element by element
//   plain             8-bit float operands off the Hopper path: mma_loop_plain, the loop as
//                     written (each step's tiles loaded, widened to float16, multiplied)
#pragma once

#include "elementwise.h"
#include "memory.h"
#include "mma.h"
#include "kloop_sm90.h"
#include "kloop_sm90_tf32.h"
#include "kloop_sm90_f8.h"

namespace tt {
namespace tile {

// ---- the k loop of a matrix multiply ---------------------------------------------------------
// The k loop on sm_80 and later where the arrays' rows are contiguous with 16-byte aligned
// starts: cp.async copies A and B into S buffers of the scratch (the layout of mma_plan)
// S - 1 steps ahead of the multiplies, straight from global memory, zeros where a tile
// extends past its array; float32 arrays through tfloat32 round as warp_mma loads fragments.
// Returns false, having done nothing, where the arrays do not allow it.
constexpr int STAGES = TT_STAGES;  // config.h (ir/tiling.py)

// Whether the staged loop splits each step's k over the warps (SPLIT, below): where a warp's
// own blocks of the accumulator are one or two 16x8 blocks (a tile of few rows or columns, as
// decoding's 32-row products), its products are one or two dependent chains of K / KS mmas a
// step, and a lone warp a scheduler waits on each. Split instead, each warp multiplies every
// block of the tile over its share of the step's k: many chains of a few mmas, half the
// fragment loads; the warps' sums meet once, after the loop, through the scratch.
template <class P, int NT, int M, int N>
__host__ __device__ constexpr bool k_split() {
  constexpr int NW = NT / 32, NBLK = (frag_rows<M>() / 16) * (N / 8);
  return NW > 1 && M >= 16 && NBLK <= 16 && NBLK <= 2 * NW && NBLK % NW == 0 &&
         (P::K / P::KS) % NW == 0 && NW * NBLK * 32 * 16 <= TT_SCRATCH_BYTES;
}

// part (every 16x8 block of the (M, N) tile, block b = c MB + r at rows 16 r, columns 8 c:
// lane l's four values of it at part[4b]) += this warp's share of A @ B from the staged
// operands: k sub-steps w, w + NW, ... (Round: float32 operands rounded to tfloat32)
template <class P, int NT, int M, int N, bool Round, class TA>
__device__ __forceinline__ void warp_mma_ksplit(float* part, const TA* As, const TA* Bs) {
  constexpr int NW = NT / 32, MB = frag_rows<M>() / 16, NB = N / 8;
  const int t = tid(), w = t / 32, lane = t % 32;
#pragma unroll
  for (int i = 0; i < P::K / P::KS / NW; ++i) {
    const int k0 = (w + i * NW) * P::KS;
    uint32_t ra[MB][4];
#pragma unroll
    for (int r = 0; r < MB; ++r) {
      frag_a<P>(ra[r], As, r * 16, k0, lane);
      if constexpr (Round)
        for (int j = 0; j < 4; ++j) ra[r][j] = round_tf32(ra[r][j]);
    }
#pragma unroll
    for (int c = 0; c < NB; ++c) {
      uint32_t rb[2];
      frag_b<P>(rb, Bs, c * 8, k0, lane);
      if constexpr (Round) rb[0] = round_tf32(rb[0]), rb[1] = round_tf32(rb[1]);
#pragma unroll
      for (int r = 0; r < MB; ++r) mma_sync<P::kind>(part + 4 * (c * MB + r), ra[r], rb);
    }
  }
}
template <class P, int NT, int M, int N, int S, class ArrA, class ArrB>
__device__ __forceinline__ bool mma_loop_async(const ArrA& A, const ArrB& B, int64_t bi,
                                               int64_t bj, int64_t lo, int64_t hi, float* acc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef typename cond<P::kind == 3, float, typename P::elem>::type T;  // as in the arrays
  constexpr int K = P::K, LD = P::LD, LDB = P::LDB, AS = M * LD, BUF = AS + P::B_ELEMS;
  static_assert(S >= 2, "mma_loop_async: two buffers or more");
  constexpr int C = 16 / int(sizeof(T));  // elements per 16-byte copy
  static_assert(S * BUF * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int64_t lda = stride_of(A, 0), ldb = stride_of(B, 0);
  const bool fits = stride_of(A, 1) == 1 && stride_of(B, 1) == 1 && lda % C == 0 &&
                    ldb % C == 0 && reinterpret_cast<unsigned long long>(A.data) % 16 == 0 &&
                    reinterpret_cast<unsigned long long>(B.data) % 16 == 0 && bi >= 0 &&
                    bj >= 0 && lo >= 0;
  if (!fits) return false;
  T* buf = scratch<T>();
  const int t = tid();
  // 16 bytes from global memory, of which the first `bytes` are read and the rest zeros
  auto copy = [](T* dst, const T* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
                 "l"(src), "r"(bytes) : "memory");
  };
  // of the run of C elements at (row, col) of a (rows, cols) array, the bytes inside it
  auto inside = [](int64_t row, int64_t col, int64_t rows, int64_t cols) {
    const int64_t n = cols - col;
    return row < rows && n > 0 ? int(n < C ? n : C) * int(sizeof(T)) : 0;
  };
  constexpr int KC = K / C, NC = N / C;      // 16-byte copies in a row of A's, B's tile
  constexpr int CA = M * KC, CB = K * NC;     // copies of a step
  constexpr int IA = (CA + NT - 1) / NT, IB = (CB + NT - 1) / NT;  // a thread's, at most
  // Where the block's threads cover whole rows (NT a multiple of a row's copies), thread t's
  // copies of every step are rows r0 + i NT / KC (A) and r0' + i NT / NC (B), at one column:
  // their addresses are a base fixed over the loop plus compile-time multiples of the row
  // stride, their bounds a compare or two; the steady step is a few instructions a copy.
  constexpr bool ROWS = NT % KC == 0 && NT % NC == 0;
  const int64_t rows_a = A.shape[0], cols_a = A.shape[1], rows_b = B.shape[0];
  const int ra0 = t / KC, qa = C * (t % KC), rb0 = t / NC, qb = C * (t % NC);
  const int64_t a_left = rows_a - (bi * M + ra0);  // A's copy i inside iff i NT / KC < this
  const T* pa = A.data + (bi * M + ra0) * lda + qa;
  const T* pb = B.data + rb0 * ldb + bj * N + qb;
  const int nb = inside(0, bj * N + qb, 1, B.shape[1]);  // B's column: bytes inside
  // ROWS's interior steps (the step's k inside A's columns and B's rows): each copy's source
  // a pointer the steps advance (by K columns of A, K rows of B), its bytes fixed over the
  // loop (a row of A past the array's end, a column of B past its edge: none, from a row or
  // column inside); a few instructions a copy
  const T* fa[ROWS ? IA : 1];
  const T* fb[ROWS ? IB : 1];
  int fna[ROWS ? IA : 1];
  const int64_t kstep_b = K * ldb;
  if constexpr (ROWS) {
#pragma unroll
    for (int i = 0; i < IA; ++i) {
      const bool in = i * (NT / KC) < a_left;
      fa[i] = (in ? pa + i * (NT / KC) * lda : A.data + qa) + lo * K;
      fna[i] = in ? 16 : 0;
    }
    const T* pb0 = (nb ? pb : B.data + rb0 * ldb) + lo * kstep_b;
#pragma unroll
    for (int i = 0; i < IB; ++i) fb[i] = pb0 + i * (NT / NC) * ldb;
  }
  auto issue = [&](int64_t k, int s) {  // step k's tiles into buffer s (k = lo, lo + 1, ...)
    T* as = buf + s * BUF;
    T* bs = as + AS;
    if constexpr (ROWS) {
      const int64_t kk = k * K;
      const bool interior = kk + K <= cols_a && kk + K <= rows_b;
      if (interior) {
#pragma unroll
        for (int i = 0; i < IA; ++i) {
          const int r = ra0 + i * (NT / KC);
          if (CA % NT == 0 || r < M) copy(as + r * LD + qa, fa[i], fna[i]);
        }
#pragma unroll
        for (int i = 0; i < IB; ++i) {
          const int r = rb0 + i * (NT / NC);
          if (CB % NT == 0 || r < K) copy(bs + r * LDB + qb, fb[i], nb);
        }
      }
#pragma unroll
      for (int i = 0; i < IA; ++i) fa[i] += K;
#pragma unroll
      for (int i = 0; i < IB; ++i) fb[i] += kstep_b;
      if (interior) return;
      const int na = inside(0, kk + qa, 1, cols_a);  // A's column this step
#pragma unroll
      for (int i = 0; i < IA; ++i) {
        const int r = ra0 + i * (NT / KC);
        if (CA % NT == 0 || r < M) {
          const int n = i * (NT / KC) < a_left ? na : 0;
          copy(as + r * LD + qa, n ? pa + i * (NT / KC) * lda + kk : A.data, n);
        }
      }
#pragma unroll
      for (int i = 0; i < IB; ++i) {
        const int r = rb0 + i * (NT / NC);
        if (CB % NT == 0 || r < K) {
          const int n = kk + r < rows_b ? nb : 0;
          copy(bs + r * LDB + qb, n ? pb + (kk + i * (NT / NC)) * ldb : B.data, n);
        }
      }
    } else {
#pragma unroll
      for (int c = t; c < CA; c += NT) {
        const int r = c / KC, q = C * (c % KC);
        const int64_t gr = bi * M + r, gc = k * K + q;
        const int n = inside(gr, gc, rows_a, cols_a);
        copy(as + r * LD + q, n ? A.data + gr * lda + gc : A.data, n);
      }
#pragma unroll
      for (int c = t; c < CB; c += NT) {
        const int r = c / NC, q = C * (c % NC);
        const int64_t gr = k * K + r, gc = bj * N + q;
        const int n = inside(gr, gc, rows_b, B.shape[1]);
        copy(bs + r * LDB + q, n ? B.data + gr * ldb + gc : B.data, n);
      }
    }
  };
  block_sync();  // the scratch's previous user is done with it
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (lo + s < hi) issue(lo + s, s);
    asm volatile("cp.async.commit_group;" ::: "memory");  // empty groups keep the count
  }
  constexpr bool SPLIT = k_split<P, NT, M, N>();
  constexpr int NBLK = (frag_rows<M>() / 16) * (N / 8), NW = NT / 32;
  float part[SPLIT ? NBLK * 4 : 1] = {};  // every block of the tile, this warp's share of k
  int cur = 0;  // step k's buffer; step k + S - 1's is the one before it (step k - 1's)
  for (int64_t k = lo; k < hi; ++k) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory");  // step k has landed
    block_sync();  // for every thread; and every warp is done with step k - 1's buffer
    if (k + S - 1 < hi) issue(k + S - 1, cur == 0 ? S - 1 : cur - 1);
    asm volatile("cp.async.commit_group;" ::: "memory");
    const T* b = buf + cur * BUF;
    if constexpr (SPLIT)
      warp_mma_ksplit<P, NT, M, N, P::kind == 3>(part, b, b + AS);
    else
      warp_mma<P, NT, M, N, P::kind == 3>(acc, b, b + AS);
    cur = cur == S - 1 ? 0 : cur + 1;
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  block_sync();  // the scratch is free again
  if constexpr (SPLIT) {  // the warps' sums: each warp's blocks of the tile, then its own blocks
    float4* red = scratch<float4>();  // [warp][block][lane]
    const int w = t / 32, lane = t % 32;
#pragma unroll
    for (int b = 0; b < NBLK; ++b)
      red[(w * NBLK + b) * 32 + lane] =
          make_float4(part[4 * b], part[4 * b + 1], part[4 * b + 2], part[4 * b + 3]);
    block_sync();
#pragma unroll
    for (int i = 0; i < NBLK / NW; ++i) {  // block w + i NW is the accumulator's i-th
#pragma unroll
      for (int u = 0; u < NW; ++u) {
        const float4 x = red[(u * NBLK + w + i * NW) * 32 + lane];
        acc[4 * i] += x.x, acc[4 * i + 1] += x.y, acc[4 * i + 2] += x.z, acc[4 * i + 3] += x.w;
      }
    }
    block_sync();  // the scratch is free again
  }
  return true;
#else
  return false;
#endif
}

// The k loop where cp.async cannot copy the tiles (strided or unaligned arrays), or its
// buffers do not fit: each step's tiles copied element by element into one buffer of the
// scratch (zeros outside the arrays), then multiplied; few registers besides the accumulator.
template <class P, int NT, int M, int N, class ArrA, class ArrB>
__device__ __forceinline__ void mma_loop_guarded(const ArrA& A, const ArrB& B, int64_t bi,
                                                 int64_t bj, int64_t lo, int64_t hi,
                                                 float* acc) {
  typedef typename cond<P::kind == 3, float, typename P::elem>::type T;  // as in the arrays
  constexpr int K = P::K, LD = P::LD, LDB = P::LDB, AS = M * LD;
  static_assert((AS + P::B_ELEMS) * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* as = scratch<T>();
  T* bs = as + AS;
  const int t = tid();
  for (int64_t k = lo; k < hi; ++k) {
    block_sync();  // every warp is done with the last step's buffer
    for (int e = t; e < M * K; e += NT) {
      const int64_t g[2] = {bi * M + e / K, k * K + e % K};
      const bool in = g[0] >= 0 && g[1] >= 0 && g[0] < A.shape[0] && g[1] < A.shape[1];
      as[(e / K) * LD + e % K] = in ? A.data[offset(A, g)] : T(0.0f);
    }
    for (int e = t; e < K * N; e += NT) {
      const int64_t g[2] = {k * K + e / N, bj * N + e % N};
      const bool in = g[0] >= 0 && g[1] >= 0 && g[0] < B.shape[0] && g[1] < B.shape[1];
      bs[(e / N) * LDB + e % N] = in ? B.data[offset(B, g)] : T(0.0f);
    }
    block_sync();
    warp_mma<P, NT, M, N, P::kind == 3>(acc, as, bs);
  }
  block_sync();  // the scratch is free again
}

// for (k = lo; k < hi; ++k)
//   acc = mma(astype<TM>(load<TLA>(A, pad, bi, k)), astype<TM>(load<TLB>(B, pad, k, bj)), acc)
// (pad zero or undetermined) with cp.async into Stages buffers where the arrays allow it and
// the compiler gives Stages >= 2 (mma_loop_async), else one buffer filled element by element
// (mma_loop_guarded).
template <class TM, class TLA, class TLB, int Stages, class TC, int NT, int M, int N,
          class ArrA, class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_staged(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc) {
  constexpr int K = traits<TLA>::dim(1);
  typedef mma_plan<TM, M, N, K, true> P;
  static_assert(same<TC, float>::value, "mma_loop_staged: tensor-core operands");
  MmaTile<TC, NT, M, N> r = acc;
  if (lo >= hi) return r;
  if constexpr (Stages >= 2) {
    if (mma_loop_async<P, NT, M, N, Stages>(A, B, bi, bj, lo, hi, r.v)) return r;
  }
  mma_loop_guarded<P, NT, M, N>(A, B, bi, bj, lo, hi, r.v);
  return r;
}

// A batched k loop's operand: the 2-d array A[z] of a 3-d array (ir/kloop.py, batch); for a
// z outside the array, an empty one (its tiles load as zeros, as the loads past it would)
template <class T>
__device__ __forceinline__ ::tt::CArray<T, 2> batch_view(const ::tt::CArray<T, 3>& a,
                                                        int64_t z) {
  const bool in = z >= 0 && z < a.shape[0];
  return {a.data + (in ? z : 0) * a.shape[1] * a.shape[2], {in ? a.shape[1] : 0, a.shape[2]},
          {a.shape[2], 1}};
}
template <class T>
__device__ __forceinline__ ::tt::Array<T, 2> batch_view(const ::tt::Array<T, 3>& a, int64_t z) {
  const bool in = z >= 0 && z < a.shape[0];
  return {a.data + (in ? z : 0) * a.strides[0], {in ? a.shape[1] : 0, a.shape[2]},
          {a.strides[1], a.strides[2]}};
}

// The k loop of 8-bit float operands off the Hopper path, as written: each step's tiles
// loaded, widened to float16 (exactly) and multiplied into the accumulator
template <class TLA, class TLB, class TC, int NT, int M, int N, class ArrA, class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_plain(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, MmaTile<TC, NT, M, N> r) {
  for (int64_t k = lo; k < hi; ++k)
    r = mma<true>(astype<__half>(load<TLA>(A, pad, bi, k)),
                  astype<__half>(load<TLB>(B, pad, k, bj)), r);
  return r;
}

// mma_loop off the Hopper path (arrays TMA cannot copy): a function of its own where the
// Hopper loop is compiled too, so that its registers are its own and not the main loop's
template <class TLA, class TLB, int Staged, class TC, int NT, int M, int N, class ArrA,
          class ArrB>
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __noinline__
#else
__device__ __forceinline__
#endif
MmaTile<TC, NT, M, N> mma_loop_portable(const ArrA& A, const ArrB& B,
                                        typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
                                        int64_t lo, int64_t hi, MmaTile<TC, NT, M, N> r) {
  typedef typename traits<TLA>::elem TE;  // float32 operands multiply as tfloat32
  if constexpr (sm90::f8_kind<TE>::value != 0) {
    return mma_loop_plain<TLA, TLB>(A, B, pad, bi, bj, lo, hi, r);
  } else {
    typedef typename cond<same<TE, float>::value, tf32, TE>::type TM;
    return mma_loop_staged<TM, TLA, TLB, Staged>(A, B, pad, bi, bj, lo, hi, r);
  }
}

// for (k = lo; k < hi; ++k) acc = mma(load<TLA>(A, pad, bi, k), load<TLB>(B, pad, k, bj), acc),
// the IR's mma_loop operation (ir/kloop.py), run here as one operation: on sm_90a with
// TMA-ready operands (and `tma`) by the pipelined main loop of kloop_sm90.h, its rows counted
// from a_row0 and b_row0 of the maps' arrays, else by mma_loop_staged.
// Staged: the buffers of mma_loop_staged's cp.async, 0 for none (ir/tiling.py staged_stages,
// which also sizes the scratch). Zero: acc is zeros (ir/kloop.py `zero`; the tfloat32 loop
// then starts from zeros in its own layout).
template <class TLA, class TLB, int Staged, bool Zero = false, class TC, int NT, int M, int N,
          class ArrA, class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t bi, int64_t bj,
    int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc, const sm90::TensorMap& ma,
    const sm90::TensorMap& mb, int64_t a_row0 = 0, int64_t b_row0 = 0, bool tma = true) {
  typedef typename traits<TLA>::elem TA;
  constexpr int K = traits<TLA>::dim(1);
  MmaTile<TC, NT, M, N> r = acc;
  static_assert(sm90::Plan<TA, NT, M, N, K>::ok && same<TC, float>::value,
                "mma_loop: the compiler asks for the Hopper main loop where it applies only "
                "(ir/tiling.py, sm90_bytes)");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (tma && sm90::present(ma) && sm90::present(mb)) {
    if constexpr (same<TA, float>::value)  // operands cast to tfloat32
      sm90::mainloop_tf32<NT, M, N, K, Zero>(ma, mb, bi, bj, lo, hi, r.v, a_row0, b_row0);
    else if constexpr (sm90::f8_kind<TA>::value != 0)  // 8-bit floats
      sm90::mainloop_f8<TA, NT, M, N, K>(ma, mb, bi, bj, lo, hi, r.v, a_row0, b_row0);
    else
      sm90::mainloop<TA, NT, M, N, K>(ma, mb, bi, bj, lo, hi, r.v, a_row0, b_row0);
    return r;
  }
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(TT_TMA_ONLY)
  // a build without the portable loop (it takes half the compile time): the launcher takes
  // the build that has it wherever a map is absent (jit.build, CompiledKernel.fallback)
  __trap();
  return r;
#else
  return mma_loop_portable<TLA, TLB, Staged>(A, B, pad, bi, bj, lo, hi, r);
#endif
}

// A batched k loop (ir/kloop.py, batch): mma_loop on the 2-d views of batches za and zb, the
// maps being of the 3-d arrays' rows, which the Hopper main loop reads where its tiles cannot
// cross into the next batch (M divides A's rows, K divides B's: the launcher passes zero maps
// otherwise, backends/cuda/tiles.py tensormap_rows, so that a build without the portable loop
// never meets such arrays). A batch outside the array reads as zeros either way: its rows are
// taken from just before or just past the array (clamped), which TMA fills with zeros.
template <class TLA, class TLB, int Staged, bool Zero = false, class TC, int NT, int M, int N,
          class ArrA, class ArrB>
__device__ __forceinline__ MmaTile<TC, NT, M, N> mma_loop_batched(
    const ArrA& A, const ArrB& B, typename traits<TLA>::elem pad, int64_t za, int64_t zb,
    int64_t bi, int64_t bj, int64_t lo, int64_t hi, const MmaTile<TC, NT, M, N>& acc,
    const sm90::TensorMap& ma, const sm90::TensorMap& mb) {
  const bool whole = A.shape[1] % M == 0 && B.shape[1] % traits<TLA>::dim(1) == 0;
  const int64_t ca = za < 0 ? -1 : za > A.shape[0] ? A.shape[0] : za;
  const int64_t cb = zb < 0 ? -1 : zb > B.shape[0] ? B.shape[0] : zb;
  return mma_loop<TLA, TLB, Staged, Zero>(batch_view(A, za), batch_view(B, zb), pad, bi, bj, lo,
                                          hi, acc, ma, mb, ca * A.shape[1], cb * B.shape[1],
                                          whole);
}

}  // namespace tile
}  // namespace tt
