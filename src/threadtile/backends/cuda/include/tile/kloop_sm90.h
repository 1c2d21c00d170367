// tile/kloop_sm90.h: the Hopper main loop of a tile matrix multiply's k loop (sm_90a), with
// the mbarrier, TMA and wgmma wrappers it needs, and the TensorMap parameter it reads.
//
// Path: sm90::mainloop, which kloop.h's mma_loop takes when built for sm_90a
// (__CUDA_ARCH_FEAT_SM90_ALL), Plan::ok holds (16-bit operands; K of 64 bytes or a multiple of
// 128; M a multiple of 64 per warpgroup, up to 256; N a multiple of 64 up to 256; at most 128
// accumulator registers a thread, 64 in blocks over 256 threads; two stages or more in
// 200 KiB), the accumulator is float32
// and both tensor maps are present (the host zeros a map that TMA cannot use:
// runtime/tensormaps.py).
//
//   acc += sum over k in [lo, hi) of A[bi*M : +M, k*K : +K] @ B[k*K : +K, bj*N : +N]
//
// (rows counted from a_row0 and b_row0 of the maps' arrays: a batch of a batched loop, whose
// maps are of the 3-d arrays' rows)
//
// The bulk tensor copy engine (TMA) brings A and B tiles into shared memory, S stages deep, each
// stage completing on an mbarrier ("full"); A lands K-major in chunks of 128-byte rows (64
// 16-bit values) with the 128-byte swizzle, or, where K is 32, in 64-byte rows with the 64-byte
// swizzle; B N-major in chunks of 64 columns with the 128-byte swizzle. Warpgroup g (4 warps)
// multiplies the 64-row slices g, g + WG, ... of the block's M with wgmma, reading both operands
// from shared memory, into float32 accumulators that stay in registers. When a warp's wgmmas of
// a stage have finished it arrives on that stage's "empty" mbarrier; thread 0 waits for all the
// warps there before it refills the stage, S - 1 stages ahead of the multiplies.
//
// The accumulators are those of mma.h's MmaTile: warp w holds the 16-row strips w, w + NW, ...
// (NW warps) and all N columns; in strip r, value 4i + j of a lane is register 4(iR + r) + j:
// row lane/4 + 8(j/2), column 8i + 2(lane%4) + j%2 - exactly wgmma's m64nNk16 fragment, read
// with a stride (wgmma.h), so the loop hands its result back without moving it.
#pragma once

#include "layout.h"
#include "elementwise.h"
#include "wgmma.h"

namespace tt {
namespace tile {
namespace sm90 {

// A CUtensorMap (cuda.h), passed by value as a __grid_constant__ kernel parameter. The host
// (runtime/tensormaps.py) fills it with zeros when the array cannot be copied by TMA (alignment,
// strides), and the kernel then takes the portable path.
struct alignas(64) TensorMap {
  unsigned long long v[16];
};

__device__ __forceinline__ bool present(const TensorMap& m) {
  unsigned long long x = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) x |= m.v[i];
  return x != 0;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint32_t saddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers -------------------------------------------------------------------------------
__device__ __forceinline__ void bar_init(uint64_t* b, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(saddr(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_inval(uint64_t* b) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(saddr(b)) : "memory");
}
// (the *_at forms take shared-memory addresses)
__device__ __forceinline__ void bar_expect_at(uint32_t b, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bar_expect(uint64_t* b, uint32_t bytes) {
  bar_expect_at(saddr(b), bytes);
}
__device__ __forceinline__ void bar_arrive_at(uint32_t b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
}
__device__ __forceinline__ void bar_arrive(uint64_t* b) { bar_arrive_at(saddr(b)); }
__device__ __forceinline__ void bar_wait_at(uint32_t b, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(b), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void bar_wait(uint64_t* b, uint32_t parity) {
  bar_wait_at(saddr(b), parity);
}

// ---- TMA -------------------------------------------------------------------------------------
// the box at element coordinates (c0 innermost, c1) of the map's array into dst, completing on bar
__device__ __forceinline__ void tma_load_at(uint32_t dst, const TensorMap* m, int c0, int c1,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(m)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TensorMap* m, int c0, int c1,
                                         uint64_t* bar) {
  tma_load_at(saddr(dst), m, c0, c1, saddr(bar));
}

#ifdef TT_CLUSTER
// ---- clusters of TT_CLUSTER (2) blocks along x that share B's tiles (EXPERIMENTAL: builds.py
// asks for them only with THREADTILE_CLUSTERS=1; correct on the GPU, slower) --------------
// Each block copies half of B's boxes, multicast into both blocks' stages; every warp
// releases a stage in both blocks, so each block's "empty" barriers count 2 NT / 32
// arrivals; a cluster barrier follows the barriers' initialisation and ends the loop.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// every thread of both blocks (the producer warpgroup's first thread takes part separately)
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_sync_one() {  // one thread alone in its warp
  asm volatile("barrier.cluster.arrive.release;\n"
               "barrier.cluster.wait.acquire;" ::: "memory");
}
// arrive on the barrier at the same place in block `rank`'s shared memory
__device__ __forceinline__ void bar_arrive_at_rank(uint32_t b, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(b), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
               : "memory");
}
// a box into the same place of every block of the cluster, completing on each one's `bar`
__device__ __forceinline__ void tma_load_mcast_at(uint32_t dst, const TensorMap* m, int c0,
                                                  int c1, uint32_t bar) {
  const uint16_t mask = (1u << TT_CLUSTER) - 1;
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(m)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}
#endif

#ifdef TT_PRODUCER
// ---- the producer warpgroup ------------------------------------------------------------------
// A build with TT_PRODUCER (builds.build: a Hopper build of a tile kernel whose k loops take
// this main loop, where compiler.wants_producer says so) launches a warpgroup more than the TT_BLOCK_THREADS threads that run the
// kernel's code, and its first thread issues every k loop's TMA copies: none of the
// multiplying warps stops to refill a stage. A whole warpgroup, because ptxas allots
// registers for blocks of whole warpgroups, and setmaxnreg moves them by warpgroups: the
// producer keeps PRODUCER_REGS, the kernel's threads get the rest (CONSUMER_REGS), for one
// block a multiprocessor. The kernel's threads tell it of each loop by a
// letter in shared memory (Mail, posted by thread 0 on tt_mail_bar): where the stages and
// their barriers lie, the maps, the boxes and the range of k. At each of the kernel's exits
// thread 0 posts one that says it is done (producer_done). A letter is posted only for a loop
// of one step or more, and the loop cannot end before the producer has read it, so a letter
// is never overwritten unread.
struct Mail {
  const TensorMap* ma;
  const TensorMap* mb;
  uint32_t as, bs, full, empty;  // shared addresses: stage 0's A and B, the barriers
  int stages, a_stage, b_stage;  // stages; bytes of A and of B a stage
  int a_chunks, a_chunk, aw;     // A's boxes a stage, their distance in bytes, their width
  int b_chunks, b_chunk, b_w;    // B's boxes a stage, their distance, their width
  int k_step, a_row, b_col, b_row0, lo, nk, done;  // lo: the first step's column of A
#ifdef TT_CLUSTER
  int rank;  // the block's rank in its cluster; -1: its copies are its own (the tfloat32 loop)
#endif
  uint32_t ready;   // (TT_PRODUCER_ROUND) the stages' barriers: A's stage rounded
  int round_bytes;  // (TT_PRODUCER_ROUND) bytes of A a stage to round to tfloat32
};
__shared__ Mail tt_mail;
__shared__ uint64_t tt_mail_bar;

#ifdef TT_PRODUCER_ROUND
// A build whose Hopper k loops are all tfloat32 loops (builds.py): the producer warpgroup's
// warps 1 to 3 round each stage of A to tfloat32 in place once its copy has landed (full),
// and arrive on the stage's `ready` barrier, which the kernel's threads wait for instead of
// rounding A themselves and holding the block at a barrier each step (kloop_sm90_tf32.h).
// Every letter of such a build has a stage to round for each of its steps, so a letter is
// not overwritten before these threads have read it: the loop cannot end before they have
// rounded its last stage.
constexpr int ROUNDERS = TT_PRODUCER_THREADS - 32;
__device__ __noinline__ void producer_round(int r) {
  uint32_t mph = 0;
  for (;;) {
    bar_wait(&tt_mail_bar, mph);
    mph ^= 1u;
    if (tt_mail.done) return;
    const int nk = tt_mail.nk, stages = tt_mail.stages, a_stage = tt_mail.a_stage;
    const int pieces = tt_mail.round_bytes / 16;
    const uint32_t full = tt_mail.full, ready = tt_mail.ready, as = tt_mail.as;
    int s = 0;
    uint32_t ph = 0;
    for (int k = 0; k < nk; ++k) {
      bar_wait_at(full + 8 * s, ph);
      const uint32_t a = as + uint32_t(s * a_stage);
      for (int i = r; i < pieces; i += ROUNDERS) {
        uint32_t x, y, z, w;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                     : "r"(a + 16 * i));
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a + 16 * i),
                     "r"(tf32_bits(x)), "r"(tf32_bits(y)), "r"(tf32_bits(z)), "r"(tf32_bits(w))
                     : "memory");
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      bar_arrive_at(ready + 8 * s);
      if (++s == stages) s = 0, ph ^= 1u;
    }
  }
}
#endif

// the producer's loop: one letter after another, until the one that says done
__device__ __noinline__ void producer_loop() {
  uint32_t mph = 0;
  for (;;) {
    bar_wait(&tt_mail_bar, mph);
    mph ^= 1u;
    const Mail m = tt_mail;
    if (m.done) return;
#ifdef TT_CLUSTER
    if (m.rank >= 0) cluster_sync_one();  // the consumers' barrier after the initialisation
#endif
    int s = 0, round = 0;
    for (int k = 0; k < m.nk; ++k) {
      const uint32_t full = m.full + 8 * s;
      if (round > 0) bar_wait_at(m.empty + 8 * s, uint32_t(round - 1) & 1u);
      bar_expect_at(full, m.a_stage + m.b_stage);
      const int kc = m.lo + k * m.k_step;
      for (int c = 0; c < m.a_chunks; ++c)
        tma_load_at(m.as + s * m.a_stage + c * m.a_chunk, m.ma, kc + c * m.aw, m.a_row, full);
      for (int c = 0; c < m.b_chunks; ++c) {
        const uint32_t dst = m.bs + s * m.b_stage + c * m.b_chunk;
#ifdef TT_CLUSTER
        if (m.rank >= 0) {  // half of B's boxes each, into both blocks
          if (c % TT_CLUSTER == m.rank)
            tma_load_mcast_at(dst, m.mb, m.b_col + m.b_w * c, m.b_row0 + kc, full);
          continue;
        }
#endif
        tma_load_at(dst, m.mb, m.b_col + m.b_w * c, m.b_row0 + kc, full);
      }
      if (++s == m.stages) s = 0, ++round;
    }
#ifdef TT_CLUSTER
    if (m.rank >= 0) cluster_sync_one();  // the consumers' barrier at the loop's end
#endif
  }
}

// ptxas allots a block's registers for its launch bounds (whole warpgroups, 8 registers a
// thread at a time): R0 each, R0 T in all. setmaxnreg then moves them: the producer's
// warpgroup keeps PRODUCER_REGS, the kernel's threads take what that frees (an increase that
// the block's registers cannot cover would wait forever).
constexpr int BLOCK_ALL = TT_BLOCK_THREADS + TT_PRODUCER_THREADS;
constexpr int R0 = 65536 / BLOCK_ALL / 8 * 8;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS_ =
    (R0 * BLOCK_ALL - PRODUCER_REGS * TT_PRODUCER_THREADS) / TT_BLOCK_THREADS / 8 * 8;
constexpr int CONSUMER_REGS = CONSUMER_REGS_ > 256 ? 256 : CONSUMER_REGS_;
// whether to move registers: where the block's threads have fewer than 255 each
constexpr bool MOVE_REGS = R0 < 255;
static_assert(!MOVE_REGS || (CONSUMER_REGS >= R0 && PRODUCER_REGS <= R0 &&
                             CONSUMER_REGS * TT_BLOCK_THREADS +
                                     PRODUCER_REGS * TT_PRODUCER_THREADS <= R0 * BLOCK_ALL),
              "setmaxnreg: the registers moved must be the block's own");

// TT_PRODUCER_ENTRY: the producer warpgroup leaves the kernel's code here (true), after its
// first thread has run the producer's loop
__device__ __forceinline__ bool producer_split() {
  if (threadIdx.x == TT_BLOCK_THREADS) {
    bar_init(&tt_mail_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < TT_BLOCK_THREADS) {
    if constexpr (MOVE_REGS)
      asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
    return false;
  }
  if constexpr (MOVE_REGS)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
  if (threadIdx.x == TT_BLOCK_THREADS) producer_loop();
#ifdef TT_PRODUCER_ROUND
  if (threadIdx.x >= TT_BLOCK_THREADS + 32) producer_round(threadIdx.x - TT_BLOCK_THREADS - 32);
#endif
  return true;
}

// TT_PRODUCER_EXIT: the kernel's code ends here; the producer may stop
__device__ __forceinline__ void producer_done() {
  if (threadIdx.x == 0) {
    tt_mail.done = 1;
    bar_arrive(&tt_mail_bar);
  }
}
#endif  // TT_PRODUCER

// ---- wgmma -----------------------------------------------------------------------------------
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// keep the compiler from moving accumulator registers across wgmma's asynchronous use of them
template <int R> __device__ __forceinline__ void pin(float* d) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// a shared-memory matrix descriptor as two words: the low one the address in 16-byte units
// (shared addresses stay under 256 KiB) and the leading byte offset, so that a stage's or a k
// step's descriptor is another's low word plus a constant (desc_word's offset); the high one
// the stride byte offset and the swizzle of rows of `row` bytes (128: layout 1, 64: layout 2).
// Offsets in bytes
__device__ __forceinline__ uint32_t desc_lo(const void* p, uint32_t lbo) {
  return ((saddr(p) & 0x3FFFF) >> 4) | ((lbo >> 4) << 16);
}
__host__ __device__ constexpr uint32_t desc_hi(uint32_t sbo, int row = 128) {
  return (sbo >> 4) | ((row == 128 ? 1u : 2u) << 30);
}
__device__ __forceinline__ uint64_t desc_word(uint32_t lo, uint32_t hi, uint32_t off = 0) {
  return (uint64_t(hi) << 32) | (lo + (off >> 4));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <class T> struct kind { static constexpr int value = 0; };
#ifdef TT_HALF
template <> struct kind<__half> { static constexpr int value = 1; };
template <> struct kind<__nv_bfloat16> { static constexpr int value = 2; };
#endif

// Whether a block of NT threads with stages of `stage` bytes holds its multiprocessor alone
// (ir/tiling.py, sm90_alone): 8 warps or more, or 4 stages over half its shared memory
__host__ __device__ constexpr bool alone(int stage, int nt) {
  return nt >= 256 || 2 * (TT_SM90_STAGE_BUDGET / stage < TT_SM90_MAX_STAGES ?
                           TT_SM90_STAGE_BUDGET / stage : TT_SM90_MAX_STAGES) * stage >
                          TT_SM90_SHARED_PER_SM;
}
// The stages for a block of NT threads (ir/tiling.py, sm90_stages): 4, or 5 where the block
// has its multiprocessor anyway, within the budget
__host__ __device__ constexpr int stages_for(int stage, int nt) {
  const int fit = TT_SM90_STAGE_BUDGET / stage;
  const int s4 = fit < TT_SM90_MAX_STAGES ? fit : TT_SM90_MAX_STAGES;
  return !alone(stage, nt) ? s4 : fit < TT_SM90_MAX_STAGES_WHOLE ? fit
                                                                 : TT_SM90_MAX_STAGES_WHOLE;
}
// The depth of a step (ir/tiling.py, sm90_step): K, halved while its stages would be fewer
// than 4 (or, 16-bit on 4 warps, would hold the multiprocessor alone) and halves keep whole
// rows of TT_SM90_ROW_BYTES; a 16-bit K of 32 (rows of 64 bytes) doubled where the doubled
// stages still number TT_SM90_MAX_STAGES: two of the loop's k a step, the last step half of
// one where their count is odd
__host__ __device__ constexpr int step_for(int m, int n, int k, int isz, int nt) {
  if (isz == 2 && k * isz == TT_SM90_ROW_BYTES_MIN &&
      stages_for((m * 2 * k + 2 * k * n) * isz, nt) >= TT_SM90_MAX_STAGES)
    return 2 * k;
  int step = k;
  while (step * isz > TT_SM90_ROW_BYTES && (step / 2 * isz) % TT_SM90_ROW_BYTES == 0 &&
         (stages_for((m * step + step * n) * isz, nt) < 4 ||
          (isz == 2 && nt < 256 && alone((m * step + step * n) * isz, nt))))
    step /= 2;
  return step;
}

// The shared memory the loop needs (the formula of ir/tiling.py, sm90_bytes):
// 1024 bytes of alignment slack, S stages of A and B, and 2 S mbarriers. A step is K deep
// (the loop's K_, a part of it, or two of it: step_for); a stage holds A in K / AW chunks of
// M rows of AW elements (rows of 128 bytes, or one chunk of 64-byte rows), then B in N / 64
// chunks of K rows of 64 columns.
template <class TA, int NT, int M, int N, int K_>
struct Plan {
  static constexpr int ISZ = int(sizeof(TA));
  static constexpr int K = step_for(M, N, K_, ISZ, NT);  // the depth of a step
  static constexpr int WG = NT / 128;                     // warpgroups
  static constexpr int R = WG > 0 ? M / (64 * WG) : 0;    // 64-row slices per warpgroup
  static constexpr int ROW = K * ISZ < TT_SM90_ROW_BYTES ? K * ISZ : TT_SM90_ROW_BYTES;
  static constexpr int AW = ROW / ISZ;                    // A's chunks: rows of AW elements
  static constexpr int A_BYTES = M * K * ISZ;
  static constexpr int B_BYTES = K * N * ISZ;
  static constexpr int STAGE = A_BYTES + B_BYTES;
  static constexpr int S = stages_for(STAGE, NT);
  static constexpr bool ok = kind<TA>::value != 0 && NT % 128 == 0 &&
                             (ROW == TT_SM90_ROW_BYTES || ROW == TT_SM90_ROW_BYTES_MIN) &&
                             (K * ISZ) % ROW == 0 && WG > 0 && M % (64 * WG) == 0 &&
                             M <= TT_SM90_MAX_BOX && K <= TT_SM90_MAX_BOX &&
                             R * N / 2 <= (NT <= 256 ? TT_SM90_MAX_ACC : TT_SM90_MAX_ACC / 2) &&
                             N % TT_SM90_N_STEP == 0 &&
                             N <= TT_SM90_MAX_N && S > TT_SM90_INFLIGHT;
  static constexpr int bytes = ok ? TT_SM90_ALIGN + S * STAGE + 2 * S * 8 : 0;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <int V> struct substeps { static constexpr int value = V; };

template <class TA, int NT, int M, int N, int K_>
__device__ __forceinline__ void mainloop(const TensorMap& ma, const TensorMap& mb, int64_t bi,
                                         int64_t bj, int64_t lo_, int64_t hi_, float* acc,
                                         int64_t a_row0 = 0, int64_t b_row0 = 0) {
  typedef Plan<TA, NT, M, N, K_> P;
  constexpr int K = P::K;  // the depth of a step: the loop's k range in steps
  // the loop's columns of A from c0, in nk steps; where a step is two of the loop's k
  // (step_for) and their count is odd, the last step multiplies only its first K_ columns
  // (its copies bring K, the rest beyond the loop's range or zeros past the array's end)
  const int64_t c0 = lo_ * K_, cols = hi_ > lo_ ? (hi_ - lo_) * K_ : 0;
  const int nk = int((cols + K - 1) / K);
  const bool tail = K > K_ && cols % K != 0;
  constexpr int S = P::S, R = P::R, AW = P::AW, REGS = R * N / 2;
  constexpr int G = TT_SM90_INFLIGHT;  // groups of multiplies left running at a step's end
  static_assert(P::ok, "no Hopper main loop for these shapes");
  static_assert(P::bytes <= TT_SCRATCH_BYTES, "tile scratch too small");
  unsigned char* base = tt_dynamic_smem;
  base += (1024 - (saddr(base) & 1023)) & 1023;  // swizzle atoms start at 1024-byte boundaries
  TA* As = reinterpret_cast<TA*>(base);
  TA* Bs = reinterpret_cast<TA*>(base + S * P::A_BYTES);
  uint64_t* full = reinterpret_cast<uint64_t*>(base + S * P::STAGE);
  uint64_t* empty = full + S;
  const int t = tid(), lane = t & 31, wg = t >> 7;

#ifdef TT_CLUSTER
  static_assert((N / 64) % TT_CLUSTER == 0, "a cluster's blocks copy B's boxes in turn");
  const uint32_t rank = cluster_rank(), peer = rank ^ 1u;
  const bool paired = nk > 0;  // (the same in both blocks: the compiler checked)
  constexpr int EMPTY = TT_CLUSTER * NT / 32;
#else
  constexpr int EMPTY = NT / 32;
#endif
  block_sync();  // the scratch's previous user is done with it
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_init(&full[s], 1), bar_init(&empty[s], EMPTY);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#ifdef TT_PRODUCER
    if (nk > 0) {  // the letter to the producer
      tt_mail = Mail{&ma, &mb, saddr(As), saddr(Bs), saddr(full), saddr(empty), S, P::A_BYTES,
                     P::B_BYTES, K / AW, M * AW * P::ISZ, AW, N / 64, 64 * K * P::ISZ, 64, K,
                     int(a_row0 + bi * M), int(bj * N), int(b_row0), int(c0), nk, 0
#ifdef TT_CLUSTER
                     , int(rank)
#endif
      };
      bar_arrive(&tt_mail_bar);
    }
#endif
  }
#ifdef TT_CLUSTER
  if (paired) cluster_sync();  // both blocks' barriers are ready for the other's copies
  else block_sync();
#else
  block_sync();
#endif

#ifndef TT_PRODUCER
  auto issue = [&](int k, int s) {
    bar_expect(&full[s], P::STAGE);
    const int kc = int(c0) + k * K;
#pragma unroll
    for (int c = 0; c < K / AW; ++c)
      tma_load(As + s * (M * K) + c * (M * AW), &ma, kc + c * AW, int(a_row0 + bi * M),
               &full[s]);
#pragma unroll
    for (int c = 0; c < N / 64; ++c) {
#ifdef TT_CLUSTER
      if (c % TT_CLUSTER == int(rank))  // half of B's boxes, into both blocks
        tma_load_mcast_at(saddr(Bs + s * (K * N) + c * (64 * K)), &mb, int(bj * N + 64 * c),
                          int(b_row0 + kc), saddr(&full[s]));
#else
      tma_load(Bs + s * (K * N) + c * (64 * K), &mb, int(bj * N + 64 * c), int(b_row0 + kc),
               &full[s]);
#endif
    }
  };
#endif
#ifndef TT_PRODUCER
  if (t == 0) {
    for (int s = 0; s < S - G && s < nk; ++s) issue(s, s);
  }
#endif
  // The descriptors' words (desc_lo, desc_hi): the low one holds the address, so a stage's or
  // a k step's descriptor is the first one's plus a constant (addresses stay under 256 KiB).
  constexpr int ISZ = P::ISZ;
  const uint32_t a_lo = desc_lo(As + 64 * wg * AW, 16), b_lo = desc_lo(Bs, 64 * K * ISZ);
  constexpr uint32_t a_hi = desc_hi(8 * P::ROW, P::ROW), b_hi = desc_hi(1024);
  int s = 0, rs = 0;          // this step's stage, and the next one to release
  uint32_t ph = 0, rph = 0;   // the parities of their uses
  // step k, its first SUB::value substeps of 16 (all K / 16 but in a tail)
  auto step = [&](int k, auto sub) {
    constexpr int SUB = decltype(sub)::value;
    bar_wait(&full[s], ph);
    pin<REGS>(acc);
    wg_fence();
    const uint32_t sa = a_lo + uint32_t(s * (P::A_BYTES >> 4));
    const uint32_t sb = b_lo + uint32_t(s * (P::B_BYTES >> 4));
#pragma unroll
    for (int kk = 0; kk < SUB; ++kk) {
      // A K-major: chunks of M rows of AW elements, rows of ROW bytes; B chunks of 64 columns
      constexpr int CH = AW / 16;
      const uint64_t db = desc_word(sb, b_hi, kk * 16 * 64 * ISZ);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int off = ((kk / CH) * (M * AW) + (kk % CH) * 16 + 64 * P::WG * r * AW) * ISZ;
        wgmma<N, kind<TA>::value, R>(acc + 4 * r, desc_word(sa, a_hi, off), db);
      }
    }
    wg_commit();
    wg_wait<G>();  // step k - G's multiplies are done: release its stage
    pin<REGS>(acc);
#ifdef TT_PRODUCER
    if (k >= G) {  // the producer refills it
      if (lane == 0) {
        bar_arrive(&empty[rs]);
#ifdef TT_CLUSTER
        bar_arrive_at_rank(saddr(&empty[rs]), peer);
#endif
      }
      if (++rs == S) rs = 0;
    }
    (void)rph;
#else
    if (k >= G) {
      if (lane == 0) {
        bar_arrive(&empty[rs]);
#ifdef TT_CLUSTER
        bar_arrive_at_rank(saddr(&empty[rs]), peer);
#endif
      }
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
  typedef substeps<K / 16> whole;
  typedef substeps<(K > K_ ? K_ : K) / 16> half;
  const int nw = nk - int(tail);
  for (int k = 0; k < nw; ++k) step(k, whole{});
  if constexpr (K > K_) {
    if (tail) step(nw, half{});
  }
  wg_wait<0>();
  pin<REGS>(acc);
#ifdef TT_CLUSTER
  // the peer's last arrivals on these barriers and copies into these stages are done
  if (paired) cluster_sync();
  else block_sync();
#else
  block_sync();
#endif
  if (t == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) bar_inval(&full[s]), bar_inval(&empty[s]);
  }
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace sm90
}  // namespace tile
}  // namespace tt

// A kernel with k loops on this main loop is declared with TT_CLUSTER_DIMS: clusters of
// TT_CLUSTER blocks along x in a build that pairs its blocks (builds.py, ir/clusters.py)
#ifdef TT_CLUSTER
#define TT_CLUSTER_DIMS __cluster_dims__(TT_CLUSTER, 1, 1)
#else
#define TT_CLUSTER_DIMS
#endif

// The kernel's entry and exits in generated code of kernels with k loops on this main loop
// (backends/cuda/emit.py): the producer warp's split and the letter that stops it
#if defined(TT_PRODUCER) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TT_PRODUCER_ENTRY() \
  if (::tt::tile::sm90::producer_split()) return
#define TT_PRODUCER_EXIT() ::tt::tile::sm90::producer_done()
#else
#define TT_PRODUCER_ENTRY() \
  do {                      \
  } while (0)
#define TT_PRODUCER_EXIT() \
  do {                     \
  } while (0)
#endif
