// tile/kloop_sm90_f8.h: the Hopper main loop of a k loop of 8-bit float operands
// (float8_e4m3fn, float8_e5m2; sm_90a): TMA and 8-bit wgmma.
//
// Path: kloop.h's mma_loop takes sm90::mainloop_f8 for operands loaded as 8-bit floats
// (Plan<__nv_fp8_e4m3 or __nv_fp8_e5m2, ...>::ok, ir/tiling.py sm90_f8_bytes: M, the result's
// rows, a multiple of 32 up to 256; N a multiple of 128 and of 64 per warpgroup; K 64, 128 or
// 256; registers for the accumulator and one part's product, below). Elsewhere the loop runs
// as written (mma_loop_plain: 8-bit values widened to float16, exact products, float32 sums).
//
// The numbers: each step (one mma of the loop as written, K deep) sums its K products on the
// tensor cores from zero, with the 8-bit wgmma's own rounding (not float32's: its sum is
// aligned to the largest term with fewer bits), and that step's sum is added to the float32
// accumulator. cuBLAS's 8-bit GEMM (torch._scaled_mm without fast accumulation) sums 128 k at
// a time the same way, so with K = 128 the two agree bit for bit (H200, 4x512x256x1024).
//
// The layout is kloop_sm90_tf32.h's: wgmma reads 8-bit operands K-major only and B arrives
// N-major, so the loop computes acc^T += B^T A^T, B^T's fragments in registers (four bytes of
// four rows of B's stage each) and A's stage, K-major as copied, wgmma's second operand. TMA
// copies A in chunks of M rows of AW = min(K, 128) bytes (the 128- or 64-byte swizzle) and B
// in N / 128 chunks of K rows of 128 columns (128-byte swizzle), S stages deep. Warpgroup g
// holds the 64 columns of its slices g, g + WG, ... of the result as rows (R slices); a
// slice's M result rows are multiplied in parts of PN (m64nPNk32), each part's K / 32
// instructions one group that is waited for before its sum joins the accumulator: one part
// in flight, PN / 2 registers for it beside the accumulator's R M / 2. The accumulator comes in
// and goes out in the MmaTile layout (mma.h) through the stages' memory, as in the tfloat32
// loop.
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

// The rows of a part (wgmma's N) for an accumulator of R slices of M rows in blocks of NT
// threads (ir/tiling.py sm90_f8_part): the widest of 256, 128, 64, 32 that divides M and
// leaves the registers of a thread (65536 / NT, at most 255) room for the accumulator
// (R M / 2), the part (PN / 2), one slice's fragments of a step (K / 8), their byte offsets
// (8 R) and TT_SM90_F8_SPARE more; 0 for none
__host__ __device__ constexpr int f8_part(int m, int r, int k, int nt) {
  const int regs = nt > 0 ? (65536 / nt < 255 ? 65536 / nt : 255) : 0;
  const int fixed = r * m / 2 + k / 8 + 8 * r + TT_SM90_F8_SPARE;
  for (int pn = 256; pn >= 32; pn /= 2)
    if (pn <= m && m % pn == 0 && fixed + pn / 2 <= regs) return pn;
  return 0;
}

template <int NT, int M, int N, int K_>
struct PlanF8 {
  static constexpr int ISZ = 1;
  static constexpr int K = K_;      // a step is the loop's own k: its sum is one product's
  static constexpr int SPLIT = 1;
  static constexpr int WG = NT / 128;
  static constexpr int R = WG > 0 && N % (64 * WG) == 0 ? N / (64 * WG) : 0;
  static constexpr int ROW = K < TT_SM90_ROW_BYTES ? K : TT_SM90_ROW_BYTES;
  static constexpr int AW = ROW;                   // A's chunks: rows of AW bytes
  static constexpr int BW = TT_SM90_F8_B_BOX;      // B's chunks: K rows of BW columns
  static constexpr int A_BYTES = M * K;
  static constexpr int B_BYTES = K * N;
  static constexpr int STAGE = A_BYTES + B_BYTES;
  static constexpr int S = stages_for(STAGE, NT);
  static constexpr int LD = N + TT_SM90_TF32_PAD;  // the transposing buffer's rows, in floats
  static constexpr int PN = f8_part(M, R, K, NT);
  static constexpr bool ok = NT % 128 == 0 && R > 0 && PN > 0 && M <= TT_SM90_MAX_BOX &&
                             (ROW == TT_SM90_ROW_BYTES || ROW == TT_SM90_ROW_BYTES_MIN) &&
                             K % ROW == 0 && K <= TT_SM90_MAX_BOX && N % BW == 0 &&
                             S > TT_SM90_INFLIGHT && M * LD * 4 <= TT_SM90_STAGE_BUDGET;
  // the stages and their barriers, or the transposing buffer where it is larger (it is used
  // before the barriers are made and after they are done)
  static constexpr int LOOP = S * STAGE + 2 * S * 8;
  static constexpr int bytes = ok ? TT_SM90_ALIGN + (LOOP > M * LD * 4 ? LOOP : M * LD * 4) : 0;
};
#ifdef TT_FP8
template <int NT, int M, int N, int K_>
struct Plan<__nv_fp8_e4m3, NT, M, N, K_> : PlanF8<NT, M, N, K_> {};
template <int NT, int M, int N, int K_>
struct Plan<__nv_fp8_e5m2, NT, M, N, K_> : PlanF8<NT, M, N, K_> {};
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ uint32_t lds8(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared.u8 %0, [%1];" : "=r"(v) : "r"(a));
  return v;
}

template <class T, int NT, int M, int N, int K_>
__device__ __forceinline__ void mainloop_f8(const TensorMap& ma, const TensorMap& mb, int64_t bi,
                                            int64_t bj, int64_t lo, int64_t hi, float* acc,
                                            int64_t a_row0 = 0, int64_t b_row0 = 0) {
  typedef Plan<T, NT, M, N, K_> P;
  constexpr int K = P::K, S = P::S, R = P::R, AW = P::AW, BW = P::BW, WG = P::WG, LD = P::LD;
  constexpr int PN = P::PN, Q = M / 2, QP = PN / 2, KIND = f8_kind<T>::value;
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
  float* X = reinterpret_cast<float*>(base);  // C[m][n], rows of LD floats, outside the loop
  const int t = tid(), lane = t & 31, g = lane >> 2, q4 = lane & 3, w4 = (t >> 5) & 3;
  const int wg = t >> 7;
  const int nk = hi > lo ? int(hi - lo) : 0;
  // column (of the result) of fragment row g + 8h of slice r
  auto col = [&](int r, int h) { return 64 * (wg + WG * r) + 16 * w4 + g + 8 * h; };
  // the MmaTile's blocks: warp w holds blocks w, w + NW, ... (rows 16 (b % MB), columns
  // 8 (b / MB)), two float pairs each: rows g and g + 8, columns 2 q4 and + 1
  constexpr int NW = NT / 32, MB = M / 16, BLOCKS = MB * (N / 8) / NW;
  const int w = t >> 5;
  auto pair = [&](int i, int h) {
    const int b = w + i * NW;
    return X + (16 * (b % MB) + g + 8 * h) * LD + 8 * (b / MB) + 2 * q4;
  };
  float d[R][Q];

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
  block_sync();  // X is read: the stages may fill
  auto issue = [&](int k, int s) {
    bar_expect(&full[s], P::STAGE);
    const int kc = int(lo + k) * K;
#pragma unroll
    for (int c = 0; c < K / AW; ++c)
      tma_load(As + s * P::A_BYTES + c * (M * AW), &ma, kc + c * AW, int(a_row0 + bi * M),
               &full[s]);
#pragma unroll
    for (int c = 0; c < N / BW; ++c)
      tma_load(Bs + s * P::B_BYTES + c * (BW * K), &mb, int(bj * N + BW * c),
               int(b_row0 + kc), &full[s]);
  };
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_init(&full[s], 1), bar_init(&empty[s], NT / 32);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (int s = 0; s < S && s < nk; ++s) issue(s, s);
  }
  block_sync();

  // A's stage as wgmma's second operand: K-major, all M rows, rows of ROW bytes swizzled
  const uint32_t a_lo = desc_lo(As, 16);
  constexpr uint32_t a_hi = desc_hi(8 * P::ROW, P::ROW);
  // B^T's fragments: register e of a substep holds column n = col(r, e & 1) of B, its byte j
  // the substep's row 16 (e >> 1) + 4 q4 + j. In a stage that byte lies at
  //   chunk(n) + row * BW + (((n % BW) >> 4) ^ (row & 7)) << 4 + n % 16
  // (128-byte rows, 16-byte units swizzled by the row), and since the substep's rows, the 16
  // more and j's 128-byte rows leave bits 0..6 alone, the address is (u + 128 j) ^ (j << 4)
  // plus multiples of 128, u = the stage + v[r][h] (the byte of row 4 q4): one register per
  // column, the loads' offsets immediate
  uint32_t v[R][2];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = col(r, h), kr = 4 * q4, c = n % BW;
      v[r][h] = uint32_t((n / BW) * (BW * K) + kr * BW + (((c >> 4) ^ (kr & 7)) << 4) + (c & 15));
    }
  const uint32_t bs0 = saddr(Bs);
  int s = 0;
  uint32_t ph = 0;
  for (int k = 0; k < nk; ++k) {
    bar_wait(&full[s], ph);
    const uint32_t sa = a_lo + uint32_t(s * (P::A_BYTES >> 4));
    const uint32_t sb = bs0 + uint32_t(s * P::B_BYTES);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      uint32_t u[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < 4; ++j) u[h][j] = (sb + v[r][h]) ^ uint32_t(j << 4);
      uint32_t f[K / 32][4];
#pragma unroll
      for (int kk = 0; kk < K / 32; ++kk)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const uint32_t* a = u[e & 1];
          constexpr int ROWB = BW;
          const uint32_t o = uint32_t((32 * kk + 16 * (e >> 1)) * ROWB);
          f[kk][e] = lds8(a[0] + o) | (lds8(a[1] + o + ROWB) << 8) |
                     (lds8(a[2] + o + 2 * ROWB) << 16) | (lds8(a[3] + o + 3 * ROWB) << 24);
        }
#pragma unroll
      for (int p = 0; p < M / PN; ++p) {
        float part[QP];
#pragma unroll
        for (int q = 0; q < QP; ++q) part[q] = 0.f;
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < K / 32; ++kk) {
          const int koff = ((kk * 32) / AW) * (M * AW) + (kk * 32) % AW + p * PN * P::ROW;
          wgmma_f8<PN, KIND>(part, f[kk], desc_word(sa, a_hi, koff), kk > 0);
        }
        wg_commit();
        wg_wait<0>();
        pin<QP>(part);
#pragma unroll
        for (int q = 0; q < QP; ++q) d[r][p * QP + q] += part[q];
      }
    }
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
