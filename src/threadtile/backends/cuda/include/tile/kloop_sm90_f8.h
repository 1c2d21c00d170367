// tile/kloop_sm90_f8.h: the Hopper main loop of a k loop of 8-bit float operands
// (float8_e4m3fn, float8_e5m2; sm_90a): TMA and 8-bit wgmma.
//
// Path: kloop.h's mma_loop takes sm90::mainloop_f8 for operands loaded as 8-bit floats
// (Plan<__nv_fp8_e4m3 or __nv_fp8_e5m2, ...>::ok, ir/tiling.py sm90_f8_bytes: M a multiple of
// 64 per warpgroup up to 256, N 128 or 256, K 64, 128 or 256, registers for the accumulator
// and two parts, below). Elsewhere the loop runs as written (kloop.h mma_loop_plain: 8-bit
// values widened to float16, exact products, float32 sums).
//
// The numbers: each step (one mma of the loop as written, K deep) sums its K products on the
// tensor cores from zero -- with the 8-bit wgmma's own rounding, not float32's: its terms
// are aligned to the largest with fewer bits -- and that sum is added to the float32
// accumulator. cuBLAS's 8-bit GEMM (torch._scaled_mm without fast accumulation) sums 128 k at
// a time the same way, so with K = 128 the two agree bit for bit (H200).
//
// wgmma reads 8-bit operands K-major only. TMA copies A K-major (chunks of M rows of
// ROW = min(K, 128) bytes, the 128- or 64-byte swizzle) and B as its rows lie, N-major (N / 128
// chunks of K rows of 128 columns, 128-byte swizzle), S stages deep. When a stage has landed
// the block transposes its B in place, K-major in the layout A has (N rows of ROW bytes in
// chunks of 128 k, the same swizzle): each warp takes 4x4-byte blocks, lane l the block at
// k rows 4 (l ^ c) and n columns 4 (l + 32 h) (whose four 32-bit loads and, after the block
// has read all of them, four 32-bit stores hit 32 distinct banks: 16 where ROW is 64), the
// bytes permuted in registers. Then both operands are descriptors: warpgroup g multiplies the
// 64-row slices g, g + WG, ... (R of them) of M, each in parts of PN columns (m64nPNk32), a
// part's K / 32 instructions one group; two parts in flight, each added into the
// accumulator when it is done. The accumulator is mma.h's MmaTile, as in kloop_sm90.h: warp
// w's strip r is slice r of its warpgroup, value 4i + j of a lane register 4(iR + r) + j.
#pragma once

#include "kloop_sm90.h"

namespace tt {
namespace tile {
namespace sm90 {

template <class T> struct f8_kind { static constexpr int value = 0; };
#ifdef TT_FP8
template <> struct f8_kind<__nv_fp8_e4m3> { static constexpr int value = 1; };
template <> struct f8_kind<__nv_fp8_e5m2> { static constexpr int value = 2; };
#endif

// The 4x4-byte blocks of B's transposition a warp takes a step
__host__ __device__ constexpr int f8_tasks(int n, int k, int nt) {
  return nt >= 32 ? (k / 4) * (n / 4) / 32 / (nt / 32) : 0;
}
// The columns of a part (wgmma's N) for an accumulator of R slices of N columns in blocks of
// NT threads (ir/tiling.py sm90_f8_part): the widest of 256, 128, 64, 32 that divides N and
// leaves the registers of a thread (65536 / NT, at most 255) room for the accumulator
// (R N / 2) and the larger of two parts in flight (PN) and the transposition's words
// (4 tasks), with TT_SM90_F8_SPARE more; 0 for none
__host__ __device__ constexpr int f8_part(int r, int n, int k, int nt) {
  const int regs = nt > 0 ? (65536 / nt < 255 ? 65536 / nt : 255) : 0;
  const int fixed = r * n / 2 + TT_SM90_F8_SPARE, words = 4 * f8_tasks(n, k, nt);
  for (int pn = 256; pn >= 32; pn /= 2)
    if (pn <= n && n % pn == 0 && fixed + (pn > words ? pn : words) <= regs) return pn;
  return 0;
}

template <int NT, int M, int N, int K_>
struct PlanF8 {
  static constexpr int ISZ = 1;
  static constexpr int K = K_;      // a step is the loop's own k: its sum is one product's
  static constexpr int SPLIT = 1;
  static constexpr int WG = NT / 128;
  static constexpr int R = WG > 0 && M % (64 * WG) == 0 ? M / (64 * WG) : 0;  // slices each
  static constexpr int ROW = K < TT_SM90_ROW_BYTES ? K : TT_SM90_ROW_BYTES;
  static constexpr int AW = ROW;                   // A's chunks: rows of AW bytes
  static constexpr int BW = TT_SM90_F8_B_BOX;      // B's chunks: K rows of BW columns
  static constexpr int A_BYTES = M * K;
  static constexpr int B_BYTES = K * N;
  static constexpr int STAGE = A_BYTES + B_BYTES;
  static constexpr int S = stages_for(STAGE, NT);
  static constexpr int TASKS = f8_tasks(N, K, NT);
  static constexpr int PN = R > 0 ? f8_part(R, N, K, NT) : 0;
  static constexpr bool ok = NT % 128 == 0 && R > 0 && PN > 0 && M <= TT_SM90_MAX_BOX &&
                             (ROW == TT_SM90_ROW_BYTES || ROW == TT_SM90_ROW_BYTES_MIN) &&
                             K % ROW == 0 && K <= TT_SM90_MAX_BOX && N % BW == 0 &&
                             N <= TT_SM90_MAX_N && TASKS > 0 &&
                             TASKS * 32 * (NT / 32) == (K / 4) * (N / 4) &&
                             S > TT_SM90_INFLIGHT;
  static constexpr int bytes = ok ? TT_SM90_ALIGN + S * STAGE + 2 * S * 8 : 0;
};
#ifdef TT_FP8
template <int NT, int M, int N, int K_>
struct Plan<__nv_fp8_e4m3, NT, M, N, K_> : PlanF8<NT, M, N, K_> {};
template <int NT, int M, int N, int K_>
struct Plan<__nv_fp8_e5m2, NT, M, N, K_> : PlanF8<NT, M, N, K_> {};
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void sts32(uint32_t a, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t v;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(b), "r"(sel));
  return v;
}

template <class T, int NT, int M, int N, int K_>
__device__ __forceinline__ void mainloop_f8(const TensorMap& ma, const TensorMap& mb, int64_t bi,
                                            int64_t bj, int64_t lo, int64_t hi, float* acc,
                                            int64_t a_row0 = 0, int64_t b_row0 = 0) {
  typedef Plan<T, NT, M, N, K_> P;
  constexpr int K = P::K, S = P::S, R = P::R, ROW = P::ROW, BW = P::BW, WG = P::WG;
  constexpr int PN = P::PN, QP = PN / 2, NP = N / PN, KIND = f8_kind<T>::value;
  constexpr int TASKS = P::TASKS, KB = K / 4, KMASK = (KB < 32 ? KB : 32) - 1;
  constexpr int NW = NT / 32, REGS = R * N / 2;
  static_assert(P::ok && KIND != 0, "no Hopper float8 main loop for these shapes");
#if defined(TT_CLUSTER) || defined(TT_PRODUCER)
  static_assert(NT == 0, "the float8 loop takes no clusters and no producer (compiler.py)");
#endif
  static_assert(P::bytes <= TT_SCRATCH_BYTES, "tile scratch too small");
  unsigned char* base = tt_dynamic_smem;
  base += (1024 - (saddr(base) & 1023)) & 1023;  // swizzle atoms start at 1024-byte boundaries
  unsigned char* As = base;
  unsigned char* Bs = base + S * P::A_BYTES;
  uint64_t* full = reinterpret_cast<uint64_t*>(base + S * P::STAGE);
  uint64_t* empty = full + S;
  const int t = tid(), lane = t & 31, w = t >> 5, wg = t >> 7;
  const int nk = hi > lo ? int(hi - lo) : 0;

  auto issue = [&](int k, int s) {
    bar_expect(&full[s], P::STAGE);
    const int kc = int(lo + k) * K;
#pragma unroll
    for (int c = 0; c < K / ROW; ++c)
      tma_load(As + s * P::A_BYTES + c * (M * ROW), &ma, kc + c * ROW, int(a_row0 + bi * M),
               &full[s]);
#pragma unroll
    for (int c = 0; c < N / BW; ++c)
      tma_load(Bs + s * P::B_BYTES + c * (BW * K), &mb, int(bj * N + BW * c),
               int(b_row0 + kc), &full[s]);
  };
  block_sync();  // the scratch's previous user is done with it
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_init(&full[s], 1), bar_init(&empty[s], NW);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (int s = 0; s < S && s < nk; ++s) issue(s, s);
  }
  block_sync();

  // The transposition's blocks: task i of this warp is u = w + NW i, at k rows 4 kb and n
  // columns 4 nb, kb = (lane & KMASK) ^ (u % KB), nb = lane + 32 (u / KB). rd[i]: the byte of
  // its first row in B's stage as copied (chunks of K rows of BW columns, 128-byte rows, the
  // 16-byte units swizzled by the row: its next rows are 128 bytes on, their units XOR-ed
  // with the row's low bits, which the first row's leave 0 in bits 0..1); wr[i]: the byte
  // of its first column in the transposed B (chunks of 128 k of N rows of ROW bytes, units
  // swizzled by the row as A's are)
  uint32_t rd[TASKS], wr[TASKS];
#pragma unroll
  for (int i = 0; i < TASKS; ++i) {
    const int u = w + NW * i, kb = (lane & KMASK) ^ (u % KB), nb = lane + 32 * (u / KB);
    const int k = 4 * kb, n = 4 * nb, nc = n % BW;
    rd[i] = uint32_t((n / BW) * (BW * K) + k * BW + (((nc >> 4) ^ (k & 7)) << 4) + (nc & 15));
    const int kc = k % ROW, sw = ROW == 128 ? (n & 7) : ((n >> 1) & 3);
    wr[i] = uint32_t((k / ROW) * (N * ROW) + n * ROW + (((kc >> 4) ^ sw) << 4) + (kc & 15));
  }
  // row n + j of the transposed B against row n's: n is a multiple of 4, so j only changes
  // the swizzle's low bits (row bits 0..2 swizzle 128-byte rows, bits 1..2 64-byte ones)
  auto wr_at = [](uint32_t a, int j) {
    return (a + uint32_t(j * ROW)) ^ uint32_t((ROW == 128 ? j : j >> 1) << 4);
  };
  const uint32_t a_lo = desc_lo(As + 64 * wg * ROW, 16), b_lo = desc_lo(Bs, 16);
  constexpr uint32_t hi_ = desc_hi(8 * ROW, ROW);
  const uint32_t bs0 = saddr(Bs);
  int s = 0;
  uint32_t ph = 0;
  for (int k = 0; k < nk; ++k) {
    bar_wait(&full[s], ph);
    const uint32_t sb = bs0 + uint32_t(s * P::B_BYTES);
    {  // B's stage transposed in place: every block read, then written
      uint32_t x[TASKS][4];
#pragma unroll
      for (int i = 0; i < TASKS; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          x[i][j] = lds32((sb + rd[i] + uint32_t(j * BW)) ^ uint32_t((j & 3) << 4));
      block_sync();
#pragma unroll
      for (int i = 0; i < TASKS; ++i) {
        // x[i][j] holds row k + j's bytes of columns n..n+3; column n + c's four rows:
        const uint32_t lo01 = prmt(x[i][0], x[i][1], 0x5140);
        const uint32_t lo23 = prmt(x[i][2], x[i][3], 0x5140);
        const uint32_t hi01 = prmt(x[i][0], x[i][1], 0x7362);
        const uint32_t hi23 = prmt(x[i][2], x[i][3], 0x7362);
        const uint32_t a = sb + wr[i];
        sts32(wr_at(a, 0), prmt(lo01, lo23, 0x5410));
        sts32(wr_at(a, 1), prmt(lo01, lo23, 0x7632));
        sts32(wr_at(a, 2), prmt(hi01, hi23, 0x5410));
        sts32(wr_at(a, 3), prmt(hi01, hi23, 0x7632));
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      block_sync();
    }
    const uint32_t sa = a_lo + uint32_t(s * (P::A_BYTES >> 4));
    const uint32_t sbd = b_lo + uint32_t(s * (P::B_BYTES >> 4));
    float part[2][QP];
    // part u of the step: slice u / NP, columns PN (u % NP) ...: its K / 32 instructions
    auto chain = [&](float* d, int u) {
      const int r = u / NP, p = u % NP;
#pragma unroll
      for (int q = 0; q < QP; ++q) d[q] = 0.f;
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < K / 32; ++kk) {
        const int ka = (kk * 32 / ROW) * (M * ROW) + (kk * 32) % ROW + 64 * WG * r * ROW;
        const int kb2 = (kk * 32 / ROW) * (N * ROW) + (kk * 32) % ROW + p * PN * ROW;
        wgmma_f8<PN, KIND>(d, desc_word(sa, hi_, ka), desc_word(sbd, hi_, kb2), kk > 0);
      }
      wg_commit();
    };
    auto add = [&](const float* d, int u) {
      const int r = u / NP, p = u % NP;
#pragma unroll
      for (int i = 0; i < PN / 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[4 * ((p * PN / 8 + i) * R + r) + j] += d[4 * i + j];
    };
#pragma unroll
    for (int u = 0; u < R * NP; ++u) {
      chain(part[u & 1], u);
      if (u > 0) {
        wg_wait<1>();
        pin<QP>(part[(u - 1) & 1]);
        add(part[(u - 1) & 1], u - 1);
      }
    }
    wg_wait<0>();
    pin<QP>(part[(R * NP - 1) & 1]);
    add(part[(R * NP - 1) & 1], R * NP - 1);
    pin<REGS>(acc);
    if (lane == 0) bar_arrive(&empty[s]);  // this warp's wgmmas of the stage are done
    if (t == 0 && k + S < nk) {  // step k + S into the stage released
      bar_wait(&empty[s], ph);
      issue(k + S, s);
    }
    if (++s == S) s = 0, ph ^= 1u;
  }
  block_sync();
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_inval(&full[s]), bar_inval(&empty[s]);
  }
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace sm90
}  // namespace tile
}  // namespace tt
