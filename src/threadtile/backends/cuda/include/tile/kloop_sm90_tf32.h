// tile/kloop_sm90_tf32.h: the Hopper main loop of a k loop of float32 operands cast to
// tfloat32 (sm_90a): TMA and wgmma, as kloop_sm90.h's loop for 16-bit operands.
//
// Path: kloop.h's mma_loop takes sm90::mainloop_tf32 where it would take sm90::mainloop, for
// operands loaded as float32 (Plan<float, ...>::ok: K of 64 bytes or a multiple of 128; M, the
// result's rows, one of 64, 128, 192, 256; N a multiple of 64 per warpgroup; at most 128
// accumulator registers a thread, 64 in blocks over 256 threads).
//
// wgmma reads 32-bit operands from shared memory K-major only, and B arrives N-major (rows of
// B are rows of the array). So the loop computes the transposed product,
//
//   acc^T += sum over k of B[k*K : +K, bj*N : +N]^T @ A[bi*M : +M, k*K : +K]^T,
//
// with B^T as wgmma's first operand, taken from registers (each thread loads its fragment from
// B's stage and rounds it to tfloat32), and A's stage, which is K-major as copied, as the
// second operand read from shared memory. wgmma would read A's float32 bits as they are (their
// low 13 bits dropped), so the stage is first rounded in place (to nearest, ties to even:
// elementwise.h's tf32_bits, the rounding of `astype(tfloat32)` everywhere else): by the
// loop's threads, or, in a build with TT_PRODUCER_ROUND, by the producer warpgroup's warps 1-3
// (kloop_sm90.h producer_round), which the loop's threads wait for on a third barrier a stage.
// An accumulator that comes in as zeros (Zero) starts as zeros in the transposed layout.
//
// TMA copies A in chunks of M rows of AW floats (128-byte rows, 128-byte swizzle; or one chunk
// of 64-byte rows and the 64-byte swizzle), and B in N / 32 chunks of K rows of 32 floats
// (128-byte swizzle), S stages deep, as kloop_sm90.h does (its producer warpgroup included).
// Warpgroup g multiplies the 64-column slices g, g + WG, ... of the result (R of them), each as
// 64 rows of acc^T against all M columns: m64nMk8, a step's K / 8 substeps in one commit group,
// one group left running while the next step's fragments load (into a second set of registers:
// the loop is unrolled by two steps).
//
// A warp's 16 fragment rows are not 16 consecutive columns of B: row g + 8h of warp w4 (of its
// warpgroup) is column 8(w4 % 2) + 32(w4 / 2) + g % 4 + 16(g / 4) + 4h of its slice, which
// makes each fragment load hit 32 distinct banks of the swizzled stage. The accumulator comes
// in and goes out in the MmaTile layout (mma.h), through the stages' memory as C[m][n] with rows
// of N + TT_SM90_TF32_PAD floats.
#pragma once

#include "kloop_sm90.h"


namespace tt {
namespace tile {
namespace sm90 {

template <int NT, int M, int N, int K_>
struct Plan<float, NT, M, N, K_> {
  static constexpr int ISZ = 4;
  static constexpr int K = step_for(M, N, K_, ISZ, NT);  // the depth of a step
  static constexpr int SPLIT = K_ / K;                    // steps a k of the loop as written
  static constexpr int WG = NT / 128;                     // warpgroups
  static constexpr int R = WG > 0 && N % (64 * WG) == 0 ? N / (64 * WG) : 0;  // slices each
  static constexpr int ROW = K * ISZ < TT_SM90_ROW_BYTES ? K * ISZ : TT_SM90_ROW_BYTES;
  static constexpr int AW = ROW / ISZ;   // A's chunks: rows of AW floats
  static constexpr int BW = TT_SM90_TF32_B_BOX;  // B's chunks: K rows of BW floats
  static constexpr int A_BYTES = M * K * ISZ;
  static constexpr int B_BYTES = K * N * ISZ;
  static constexpr int STAGE = A_BYTES + B_BYTES;
  static constexpr int S = stages_for(STAGE, NT);
  static constexpr int LD = N + TT_SM90_TF32_PAD;  // the transposing buffer's rows, in floats
  static constexpr bool ok = NT % 128 == 0 && R > 0 &&
                             (M == 64 || M == 128 || M == 192 || M == 256) &&
                             (ROW == TT_SM90_ROW_BYTES || ROW == TT_SM90_ROW_BYTES_MIN) &&
                             (K * ISZ) % ROW == 0 && K <= TT_SM90_MAX_BOX &&
                             R * M / 2 <= (NT <= 256 ? TT_SM90_MAX_ACC : TT_SM90_MAX_ACC / 2) &&
                             N % BW == 0 && S > TT_SM90_INFLIGHT && S * STAGE >= M * LD * ISZ;
  // the stages' barriers: full, empty and ready (TT_PRODUCER_ROUND: A rounded by the producer)
  static constexpr int bytes = ok ? TT_SM90_ALIGN + S * STAGE + 3 * S * 8 : 0;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ uint32_t lds32(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(a));
  return v;
}
template <int R> __device__ __forceinline__ void pin_u(uint32_t* x) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(x[i])::"memory");
}

// Zero: the accumulator comes in as zeros (the IR's `full(0)` just before the loop: ir/kloop.py
// `zero`), so it is not carried into the transposed layout through the stages' memory
template <int NT, int M, int N, int K_, bool Zero = false>
__device__ __forceinline__ void mainloop_tf32(const TensorMap& ma, const TensorMap& mb,
                                              int64_t bi, int64_t bj, int64_t lo_, int64_t hi_,
                                              float* acc, int64_t a_row0 = 0,
                                              int64_t b_row0 = 0) {
  typedef Plan<float, NT, M, N, K_> P;
  constexpr int K = P::K, S = P::S, R = P::R, AW = P::AW, BW = P::BW, WG = P::WG, LD = P::LD;
  constexpr int Q = M / 2;  // accumulators a slice
  constexpr int G = TT_SM90_INFLIGHT;
  static_assert(P::ok, "no Hopper tfloat32 main loop for these shapes");
#ifdef TT_CLUSTER
  static_assert(NT == 0, "the tfloat32 loop takes no clusters (ir/clusters.py)");
#endif
  static_assert(P::bytes <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int64_t lo = lo_ * P::SPLIT, hi = hi_ * P::SPLIT;
  unsigned char* base = tt_dynamic_smem;
  base += (1024 - (saddr(base) & 1023)) & 1023;  // swizzle atoms start at 1024-byte boundaries
  float* As = reinterpret_cast<float*>(base);
  float* Bs = reinterpret_cast<float*>(base + S * P::A_BYTES);
  uint64_t* full = reinterpret_cast<uint64_t*>(base + S * P::STAGE);
  uint64_t* empty = full + S;
#ifdef TT_PRODUCER_ROUND
  uint64_t* ready = empty + S;  // A's stage rounded by the producer's warps
#endif
  float* X = reinterpret_cast<float*>(base);  // C[m][n], rows of LD floats, outside the loop
  const int t = tid(), lane = t & 31, g = lane >> 2, q4 = lane & 3, w4 = (t >> 5) & 3;
  const int wg = t >> 7;
  const int nk = hi > lo ? int(hi - lo) : 0;
  // column (of the result) of fragment row g + 8h of slice r
  auto col = [&](int r, int h) {
    return 64 * (wg + WG * r) + 8 * (w4 & 1) + 32 * (w4 >> 1) + (g & 3) + 16 * (g >> 2) + 4 * h;
  };
  // the MmaTile's blocks: warp w holds blocks w, w + NW, ... (rows 16 (b % MB), columns
  // 8 (b / MB)), two float pairs each: rows g and g + 8, columns 2 q4 and + 1
  constexpr int NW = NT / 32, MB = M / 16, BLOCKS = MB * (N / 8) / NW;
  const int w = t >> 5;
  auto pair = [&](int i, int h) {
    const int b = w + i * NW;
    return X + (16 * (b % MB) + g + 8 * h) * LD + 8 * (b / MB) + 2 * q4;
  };
  float d[R][Q];

  if constexpr (Zero) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int q = 0; q < Q; ++q) d[r][q] = 0.f;
    pin<R * Q>(&d[0][0]);
  } else {
    block_sync();  // the scratch's previous user is done with it
#pragma unroll
    for (int i = 0; i < BLOCKS; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(pair(i, h)) =
            make_float2(acc[4 * i + 2 * h], acc[4 * i + 2 * h + 1]);
    block_sync();
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int q = 0; q < Q; ++q)
        d[r][q] = X[(8 * (q >> 2) + 2 * q4 + (q & 1)) * LD + col(r, (q >> 1) & 1)];
  }
  block_sync();  // X is read: the stages may fill
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_init(&full[s], 1), bar_init(&empty[s], NT / 32);
#ifdef TT_PRODUCER_ROUND
    for (int s = 0; s < S; ++s) bar_init(&ready[s], ROUNDERS);
#endif
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#ifdef TT_PRODUCER
    if (nk > 0) {  // the letter to the producer
      tt_mail = Mail{&ma, &mb, saddr(As), saddr(Bs), saddr(full), saddr(empty), S, P::A_BYTES,
                     P::B_BYTES, K / AW, M * AW * P::ISZ, AW, N / BW, BW * K * P::ISZ, BW, K,
                     int(a_row0 + bi * M), int(bj * N), int(b_row0), int(lo) * K, nk, 0};
#ifdef TT_PRODUCER_ROUND
      tt_mail.ready = saddr(ready);
      tt_mail.round_bytes = P::A_BYTES;
#endif
      bar_arrive(&tt_mail_bar);
    }
#endif
  }
  block_sync();

#ifndef TT_PRODUCER
  auto issue = [&](int k, int s) {
    bar_expect(&full[s], P::STAGE);
    const int kc = int(lo + k) * K;
#pragma unroll
    for (int c = 0; c < K / AW; ++c)
      tma_load(As + s * (M * K) + c * (M * AW), &ma, kc + c * AW, int(a_row0 + bi * M),
               &full[s]);
#pragma unroll
    for (int c = 0; c < N / BW; ++c)
      tma_load(Bs + s * (K * N) + c * (BW * K), &mb, int(bj * N + BW * c), int(b_row0 + kc),
               &full[s]);
  };
  if (t == 0) {
    for (int s = 0; s < S - G && s < nk; ++s) issue(s, s);
  }
#endif
  // A's stage as wgmma's second operand: K-major, all M rows, rows of ROW bytes swizzled
  const uint32_t a_lo = desc_lo(As, 16);
  constexpr uint32_t a_hi = desc_hi(8 * P::ROW, P::ROW);
  // B^T's fragments: a[h + 2 jj] is row g + 8h (column col(r, h) of B), k = q4 + 4 jj of the
  // substep; its byte offset in a stage's B, the substep adding 8 rows of 128 bytes
  uint32_t boff[R][4];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int n = col(r, e & 1), kr = q4 + 4 * (e >> 1), c = n % BW;
      boff[r][e] = uint32_t((n / BW) * (BW * K * 4) + kr * 128 + (((c >> 2) ^ (kr & 7)) << 4) +
                            (c & 3) * 4);
    }
  const uint32_t bs0 = saddr(Bs);
  int s = 0, rs = 0;          // this step's stage, and the next one to release
  uint32_t ph = 0, rph = 0;   // the parities of their uses
  // One step: B^T's fragments of all its substeps loaded into f (ptxas keeps a wgmma's
  // pipeline only where its register operands are written before the fence: loads between
  // the substeps' wgmmas serialize them), the K / 8 substeps' wgmmas in one group, then the
  // step before waited for, whose fragments (`prev`) and stage are then free.
  auto step = [&](int k, uint32_t(&f)[K / 8][R][4], uint32_t(&prev)[K / 8][R][4]) {
    bar_wait(&full[s], ph);
#ifdef TT_PRODUCER_ROUND
    bar_wait(&ready[s], ph);  // A's stage rounded by the producer's warps
#else
    {  // A's stage rounded to tfloat32 in place, then seen by wgmma (the async proxy)
      uint4* a4 = reinterpret_cast<uint4*>(As + s * (M * K));
#pragma unroll
      for (int i = t; i < P::A_BYTES / 16; i += NT) {
        uint4 v = a4[i];
        v.x = tf32_bits(v.x), v.y = tf32_bits(v.y), v.z = tf32_bits(v.z), v.w = tf32_bits(v.w);
        a4[i] = v;
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
#endif
    const uint32_t sa = a_lo + uint32_t(s * (P::A_BYTES >> 4));
    const uint32_t sb = bs0 + uint32_t(s * P::B_BYTES);
#pragma unroll
    for (int kk = 0; kk < K / 8; ++kk)
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int e = 0; e < 4; ++e) f[kk][r][e] = tf32_bits(lds32(sb + boff[r][e] + kk * 1024));
#ifndef TT_PRODUCER_ROUND
    block_sync();  // every thread's part of A is rounded
#endif
    pin<R * Q>(&d[0][0]);
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < K / 8; ++kk) {
      const int koff = ((kk * 8) / AW) * (M * AW * 4) + ((kk * 8) % AW) * 4;  // bytes
      const uint64_t db = desc_word(sa, a_hi, koff);
#pragma unroll
      for (int r = 0; r < R; ++r) wgmma_tf32<M>(d[r], f[kk][r], db);
    }
    wg_commit();
    wg_wait<G>();  // step k - G is done: its stage and fragments are free
    pin<R * Q>(&d[0][0]);
    pin_u<K / 8 * R * 4>(&prev[0][0][0]);
#ifdef TT_PRODUCER
    if (k >= G) {  // the producer refills it
      if (lane == 0) bar_arrive(&empty[rs]);
      if (++rs == S) rs = 0;
    }
    (void)rph;
#else
    if (k >= G) {
      if (lane == 0) bar_arrive(&empty[rs]);
      if (t == 0 && k + S - G < nk) {  // step k + S - G into the stage released
        bar_wait(&empty[rs], rph);
        issue(k + S - G, rs);
      }
      if (++rs == S) rs = 0, rph ^= 1u;
    } else if (t == 0 && k + S - G < nk) {
      issue(k + S - G, k + S - G);  // a stage not used yet
    }
#endif
    if (++s == S) s = 0, ph ^= 1u;
  };
  static_assert(G == 1, "two sets of fragments: one step's group left running");
  uint32_t f0[K / 8][R][4], f1[K / 8][R][4];
  int k = 0;
  for (; k + 1 < nk; k += 2) {
    step(k, f0, f1);
    step(k + 1, f1, f0);
  }
  if (k < nk) step(k, f0, f1);
  wg_wait<0>();
  pin<R * Q>(&d[0][0]);
  block_sync();
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_inval(&full[s]), bar_inval(&empty[s]);
#ifdef TT_PRODUCER_ROUND
    for (int s = 0; s < S; ++s) bar_inval(&ready[s]);
#endif
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int q = 0; q < Q; ++q)
      X[(8 * (q >> 2) + 2 * q4 + (q & 1)) * LD + col(r, (q >> 1) & 1)] = d[r][q];
  block_sync();
#pragma unroll
  for (int i = 0; i < BLOCKS; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 v = *reinterpret_cast<const float2*>(pair(i, h));
      acc[4 * i + 2 * h] = v.x, acc[4 * i + 2 * h + 1] = v.y;
    }
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace sm90
}  // namespace tile
}  // namespace tt
