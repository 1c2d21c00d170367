// tile/operands.h: an mma's B operand loaded from global memory straight into shared memory
// (ir/operands.py decides which loads: a tile read only as the B operand of one mma in
// fragments), never through registers, and the mma that reads its fragments there.
//
//   SmemTile<T, NT, K, N, Swap, LD>  the (K, N) operand in its own buffer after the scratch
//                                    (TT_OPERAND_BYTES at the scratch's end), rows of LD
//                                    elements as memory has them: [K][N] as loaded, or [N][K]
//                                    (Swap) where the load's order swaps the last two axes
//                                    (attention's K^T). Rows of whole 128-byte lines are
//                                    unpadded (LD the row's elements: XS), their 16-byte pieces
//                                    swizzled by the row (piece j of row r at j ^ r % 8), so
//                                    that a warp's copy of two rows writes whole lines and the
//                                    fragments' reads of 8 rows meet 8 different bank groups;
//                                    other rows are padded by 16 bytes (ir/operands.py pitch)
//   load_operand   a barrier (the buffer's last reader is done), then 16-byte cp.async copies
//                  for runs inside the array, contiguous and aligned, element copies (the
//                  padding past the edges) otherwise; one commit group
//   gather_operand an A operand's rows gathered from a 2-d array: the row indices through the
//                  scratch, then load_operand's copies, row by row; one commit group
//   mma            waits for all but the Wait commit groups issued after this operand's
//                  (ir/operands.py counts them), a barrier, then B fragments from the buffer:
//                  ldmatrix.trans for [K][N], 32-bit words for [N][K]; A from registers (an
//                  MmaTile), its own buffer (a loop-invariant A loaded once: attention's Q) or
//                  staged in the scratch (a Tile); the accumulator in fragments (an MmaTile),
//                  or a Tile through the scratch (few rows: flash decoding's query heads)
#pragma once

#include "fragments.h"
#include "kloop_sm90.h"

#ifndef TT_OPERAND_BYTES
#define TT_OPERAND_BYTES 0
#endif

namespace tt {
namespace tile {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TT_OPERAND_WGMMA 1
#else
#define TT_OPERAND_WGMMA 0
#endif

template <class T, int NT_, int K_, int N_, bool Swap_, int LD_, bool Wg_ = false>
struct SmemTile {
  typedef T elem;
  static constexpr int NT = NT_, K = K_, N = N_, LD = LD_;
  static constexpr bool Swap = Swap_;
  static constexpr int ROWS = Swap ? N : K, COLS = Swap ? K : N;  // as memory has them
  // on sm_90a, for wgmma (ir/operands.py decides): chunks of 64 columns, rows of 128 bytes
  // with the 128-byte swizzle (16-byte piece j of row r at j ^ r % 8), chunk after chunk
  static constexpr bool SW = Wg_ && TT_OPERAND_WGMMA;
  // otherwise unpadded rows of whole 128-byte lines, pieces swizzled by row (smem_at below)
  static constexpr bool XS = !SW && LD == COLS;
  static_assert(!XS || COLS * sizeof(T) % 128 == 0, "SmemTile: unpadded rows of 128-byte lines");
  T* p;
  // copied by TMA (load_operand_tma): the shared address of its mbarrier and this thread's
  // arrival token on it (tma false: a buffer the threads filled with cp.async)
  bool tma = false;
  uint32_t bar = 0;
  uint64_t tok = 0;
};

// the operand buffers' region starts on a 1024-byte boundary (the swizzle's atoms); the
// compiler leaves 1024 bytes of slack (TT_OPERAND_BYTES)
template <class T>
__device__ __forceinline__ T* operand_smem(int off) {
  unsigned char* base = tt_dynamic_smem + TT_SCRATCH_BYTES - TT_OPERAND_BYTES;
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(base));
  return reinterpret_cast<T*>(base + ((1024 - (s & 1023)) & 1023) + off);
}
// where element (row, col) of an operand's memory rows lies in a buffer that is not wgmma's
template <class ST>
__device__ __forceinline__ int smem_at(int row, int col) {
  constexpr int CH = 16 / int(sizeof(typename ST::elem));
  if constexpr (ST::XS) return row * ST::LD + (((col / CH) ^ (row % 8)) * CH) + col % CH;
  return row * ST::LD + col;
}
// where the 16-byte piece at (row, col) of an operand's memory rows goes
template <class ST>
__device__ __forceinline__ int piece_at(int row, int col) {
  typedef typename ST::elem T;
  if constexpr (ST::SW) {
    constexpr int W = 128 / int(sizeof(T));  // a chunk's columns
    const int c = col / W, j = (col % W) / (16 / int(sizeof(T)));
    return (c * ST::ROWS * 128 + row * 128 + ((j ^ (row % 8)) * 16)) / int(sizeof(T));
  } else {
    return smem_at<ST>(row, col);
  }
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
#else
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#endif
}
// a 16-byte piece of an operand buffer filled with the padding (a row outside the array): one
// store where the element loop would make CH (16-byte aligned, as cp_async16's destination)
template <class T>
__device__ __forceinline__ void fill_pad16(T* dst, T pad) {
  union {
    T e[16 / sizeof(T)];
    uint4 v;
  } u;
#pragma unroll
  for (int k = 0; k < int(16 / sizeof(T)); ++k) u.e[k] = pad;
  *reinterpret_cast<uint4*>(dst) = u.v;
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// the operand at tile index idx... (in the array's axis order) of a rank-R array: memory
// rows (K as the mma sees them, or N where Swap) step along array axis RA, each row runs along
// the last axis; the other axes are the tile's ones. At Off bytes into the operand buffers.
// Sync false: no barrier first, the statement before it being another operand's copy (whose
// barrier follows every read of this buffer too: backends/cuda/emit.py)
template <class ST, int RA, bool Sync = true, class Arr, class... I>
__device__ __forceinline__ ST load_operand_at(int off, const Arr& a, typename ST::elem pad,
                                              I... idx) {
  typedef typename ST::elem T;
  constexpr int R = sizeof...(I), CH = 16 / int(sizeof(T));
  constexpr int MR = ST::ROWS, MC = ST::COLS, PER = MC / CH;
  static_assert(MC % CH == 0, "load_operand: rows of 16-byte runs");
  static_assert(RA >= 0 && RA < R - 1, "load_operand: rows along an axis before the last");
  const int64_t ix[R] = {int64_t(idx)...};
  int64_t g0[R];
#pragma unroll
  for (int d = 0; d < R; ++d) g0[d] = ix[d] * (d == RA ? MR : d == R - 1 ? MC : 1);
  ST out{operand_smem<T>(off)};
  const bool contiguous = stride_of(a, R - 1) == 1;
  // a tile wholly inside the array, its rows contiguous, 16-byte aligned and a multiple of 16
  // bytes apart (a block-uniform test): one cp.async per 16-byte piece from a base pointer, in
  // an unrolled loop with no per-piece bounds or index arithmetic
  bool inside = contiguous;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    const int64_t ext = d == RA ? MR : d == R - 1 ? MC : 1;
    inside = inside && g0[d] >= 0 && g0[d] + ext <= a.shape[d];
  }
  const T* base = a.data;
  int64_t ld = 0;
  if (inside) {
    base = a.data + offset(a, g0);
    ld = MR > 1 ? stride_of(a, RA) : 0;  // from one memory row to the next
    inside = reinterpret_cast<unsigned long long>(base) % 16 == 0 && ld % CH == 0;
  }
  if (Sync) block_sync();  // the buffer's previous reader has finished
  if (inside) {
    const int t = tid();
    constexpr int RS = ST::NT / PER;  // rows a round of the block's pieces covers
    if constexpr (ST::NT % PER == 0 && (MR * PER) % ST::NT == 0 &&
                  (!(ST::SW || ST::XS) || RS % 8 == 0)) {
      // each thread's pieces in one column, RS rows apart: a base address and a constant step
      // (the swizzle, where there is one, is the same for rows 8 apart)
      const int r0 = t / PER, col = (t % PER) * CH;
      const T* src = base + r0 * ld + col;
      T* dst = out.p + piece_at<ST>(r0, col);
      constexpr int DSTEP = RS * (ST::SW ? 128 / int(sizeof(T)) : ST::LD);
#pragma unroll
      for (int i = 0; i < MR * PER / ST::NT; ++i) cp_async16(dst + i * DSTEP, src + i * RS * ld);
      cp_async_commit();
      return out;
    }
#pragma unroll
    for (int i = 0; i < (MR * PER + ST::NT - 1) / ST::NT; ++i) {
      const int c = t + i * ST::NT;
      if ((MR * PER) % ST::NT == 0 || c < MR * PER) {
        const int row = c / PER, col = (c % PER) * CH;
        cp_async16(out.p + piece_at<ST>(row, col), base + row * ld + col);
      }
    }
    cp_async_commit();
    return out;
  }
  for (int c = tid(); c < MR * PER; c += ST::NT) {
    const int row = c / PER, col = (c % PER) * CH;
    int64_t g[R];
    bool in = true;
#pragma unroll
    for (int d = 0; d < R; ++d) {
      g[d] = g0[d] + (d == RA ? row : d == R - 1 ? col : 0);
      if (d < R - 1) in = in && g[d] >= 0 && g[d] < a.shape[d];
    }
    T* dst = out.p + piece_at<ST>(row, col);
    if (!in) {
      fill_pad16(dst, pad);
      continue;
    }
    if (contiguous && g[R - 1] >= 0 && g[R - 1] + CH <= a.shape[R - 1]) {
      const T* src = a.data + offset(a, g);
      if (reinterpret_cast<unsigned long long>(src) % 16 == 0) {
        cp_async16(dst, src);
        continue;
      }
    }
#pragma unroll
    for (int e = 0; e < CH; ++e) {
      const int64_t x = g[R - 1] + e;
      T v = pad;
      if (in && x >= 0 && x < a.shape[R - 1]) {
        const int64_t keep = g[R - 1];
        g[R - 1] = x;
        v = a.data[offset(a, g)];
        g[R - 1] = keep;
      }
      dst[e] = v;
    }
  }
  cp_async_commit();
  return out;
}

template <class ST, int Off, int RA, bool Sync, class Arr, class... I>
__device__ __forceinline__ ST load_operand(const Arr& a, typename ST::elem pad, I... idx) {
  return load_operand_at<ST, RA, Sync>(Off, a, pad, idx...);
}

// ---- load_operand by TMA (sm_90a builds without the portable loops, TT_TMA_ONLY) ----------
// ir: backends/cuda/tiles.py operand_maps picks the loads (a wgmma buffer of a 16-bit array
// parameter, zero padding); each has a tensor map of the array at its own rank (the host's
// runtime/tensormaps.py; a map TMA cannot make sends the launch to the portable build) and an
// mbarrier of its own (site Site) after the operand buffers (TT_TMA_BARS bytes in). Thread 0
// copies the tile in boxes of 128-byte rows (the 128-byte swizzle, the buffer's layout), one
// box a chunk of 64 columns; the array's edges read zeros. Every thread arrives on the
// mbarrier (its count is the block's threads) and keeps its token: the mma waits on it.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(TT_TMA_ONLY) && defined(TT_TMA_SITES)
#define TT_OPERAND_TMA 1
__device__ __forceinline__ uint64_t* operand_bars() {
  return reinterpret_cast<uint64_t*>(operand_smem<unsigned char>(TT_TMA_BARS));
}
__device__ __forceinline__ uint32_t operand_bar(int site) {
  return sm90::saddr(operand_bars() + site);
}
// wait for the phase of the mbarrier at shared address bar that this thread's arrival
// (token tok) belongs to
__device__ __forceinline__ void bar_wait_token(uint32_t bar, uint64_t tok) {
  uint32_t done;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(bar), "l"(tok)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void operand_tma_init() {
  if (tid() == 0) {
#pragma unroll
    for (int s = 0; s < TT_TMA_SITES; ++s) sm90::bar_init(operand_bars() + s, TT_TMA_THREADS);
#ifdef TT_REFILL_WAIT
#pragma unroll
    for (int s = 0; s < TT_TMA_SITES; ++s)
      sm90::bar_init(operand_bars() + TT_TMA_SITES + s, TT_TMA_THREADS);
#endif
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  block_sync();
}
#define TT_TMA_INIT() ::tt::tile::operand_tma_init()
// the box at coordinates c (innermost first) of an R-axis map into dst, completing on bar
template <int R>
__device__ __forceinline__ void tma_load_nd(uint32_t dst, const sm90::TensorMap* m, const int* c,
                                            uint32_t bar) {
  const uint64_t mp = reinterpret_cast<uint64_t>(m);
  if constexpr (R == 2) {
    sm90::tma_load_at(dst, m, c[0], c[1], bar);
  } else if constexpr (R == 3) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst), "l"(mp), "r"(c[0]), "r"(c[1]),
                 "r"(c[2]), "r"(bar)
                 : "memory");
  } else if constexpr (R == 4) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst), "l"(mp), "r"(c[0]),
                 "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar)
                 : "memory");
  } else {
    static_assert(R == 5, "load_operand by TMA: arrays of 2 to 5 axes");
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst), "l"(mp), "r"(c[0]),
                 "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar)
                 : "memory");
  }
}
__device__ __forceinline__ int tma_coord(int64_t g) {  // past int32: outside any array TMA reads
  return int(g < -2147483647LL - 1 ? -2147483647LL - 1 : g > 2147483647LL ? 2147483647LL : g);
}
#else
#define TT_OPERAND_TMA 0
#define TT_TMA_INIT() \
  do {                \
  } while (0)
#endif

template <class ST, int Off, int RA, int Site, bool Sync, class Arr, class... I>
__device__ __forceinline__ ST load_operand_tma(const sm90::TensorMap& map, const Arr& a,
                                               typename ST::elem pad, I... idx) {
#if TT_OPERAND_TMA
  typedef typename ST::elem T;
  constexpr int R = sizeof...(I), W = 128 / int(sizeof(T)), MR = ST::ROWS, MC = ST::COLS;
  static_assert(ST::SW && MC % W == 0 && MR % 8 == 0 && MR <= 256,
                "load_operand by TMA: a wgmma buffer of 128-byte rows");
  static_assert(RA >= 0 && RA < R - 1, "load_operand: rows along an axis before the last");
  const int64_t ix[R] = {int64_t(idx)...};
  int c[R];  // the first chunk's box, innermost axis first
#pragma unroll
  for (int d = 0; d < R; ++d) {
    c[R - 1 - d] = tma_coord(ix[d] * (d == RA ? MR : d == R - 1 ? MC : 1));
  }
  ST out{operand_smem<T>(Off)};
  out.tma = true;
  out.bar = operand_bar(Site);
#ifdef TT_REFILL_WAIT
  // the buffer's previous reader has finished: every thread arrives on the site's second
  // mbarrier and goes on; thread 0, which copies, waits there for all of them
  if (Sync) {
    uint64_t rt;
    const uint32_t rel = operand_bar(TT_TMA_SITES + Site);
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(rt) : "r"(rel) : "memory");
    if (tid() == 0) bar_wait_token(rel, rt);
  }
#else
  if (Sync) block_sync();  // the buffer's previous reader has finished
#endif
  if (tid() == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(out.tok)
                 : "r"(out.bar), "n"(MR * MC * int(sizeof(T)))
                 : "memory");
    const uint32_t dst = sm90::saddr(out.p);
#pragma unroll
    for (int k = 0; k < MC / W; ++k) {
      tma_load_nd<R>(dst + k * MR * 128, &map, c, out.bar);
      c[0] += W;
    }
  } else {
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(out.tok) : "r"(out.bar)
                 : "memory");
  }
  cp_async_commit();  // an empty group: the mmas' counts of copies (ir/operands.py) still hold
  return out;
#else
  (void)map;
  return load_operand_at<ST, RA, Sync>(Off, a, pad, idx...);
#endif
}

// after a loop that copied an operand one iteration ahead (ir/prefetch.py): the last copy,
// read by no product, has landed (none is left in flight when the block exits)
template <class ST>
__device__ __forceinline__ void operand_drain(const ST& b);

// wait until a buffer copied by TMA has landed (nothing for one filled with cp.async)
template <class ST>
__device__ __forceinline__ void operand_ready(const ST& b) {
#if TT_OPERAND_TMA
  if (b.tma) bar_wait_token(b.bar, b.tok);
#else
  (void)b;
#endif
}
template <class ST>
__device__ __forceinline__ void operand_drain(const ST& b) {
  cp_async_wait<0>();
  operand_ready(b);
}

// an A operand gathered by rows (ir/operands.py, gather_operand): row r of the tile is array
// row rows[r] (the r-th element of the index tile), columns col0 ... col0 + COLS - 1 of a 2-d
// array; with CheckBounds a row or column outside the array reads the padding (gather's
// rule). The row indices pass through the scratch (int64, one a row) between two barriers;
// then each thread copies its 16-byte pieces as load_operand does: one commit group
template <class ST, int Off, bool CheckBounds, class Arr, class RT>
__device__ __forceinline__ ST gather_operand(const Arr& a, typename ST::elem pad, const RT& rows,
                                             int64_t col0) {
  typedef typename ST::elem T;
  constexpr int CH = 16 / int(sizeof(T)), MR = ST::ROWS, MC = ST::COLS, PER = MC / CH;
  static_assert(!ST::Swap && MC % CH == 0, "gather_operand: the tile's rows are memory rows");
  static_assert(traits<RT>::E == MR, "gather_operand: one index a row");
  ST out{operand_smem<T>(Off)};
  const int64_t* ridx = stage_rows(rows);  // (its first barrier: the buffer's readers too)
  const int t = tid();
  const bool contiguous = stride_of(a, 1) == 1;
#pragma unroll
  for (int i = 0; i < (MR * PER + ST::NT - 1) / ST::NT; ++i) {
    const int c = t + i * ST::NT;
    if ((MR * PER) % ST::NT != 0 && c >= MR * PER) break;
    const int row = c / PER, col = (c % PER) * CH;
    int64_t g[2] = {ridx[row], col0 + col};
    T* dst = out.p + piece_at<ST>(row, col);
    const bool rin = !CheckBounds || (g[0] >= 0 && g[0] < a.shape[0]);
    if (!rin) {  // (MoE's padding tokens: most rows of a block)
      fill_pad16(dst, pad);
      continue;
    }
    if (contiguous && g[1] >= 0 && g[1] + CH <= a.shape[1]) {
      const T* src = a.data + offset(a, g);
      if (reinterpret_cast<unsigned long long>(src) % 16 == 0) {
        cp_async16(dst, src);
        continue;
      }
    }
    const int64_t x0 = g[1];
#pragma unroll
    for (int e = 0; e < CH; ++e) {
      g[1] = x0 + e;
      const bool in = rin && (!CheckBounds || (g[1] >= 0 && g[1] < a.shape[1]));
      dst[e] = in ? a.data[offset(a, g)] : pad;
    }
  }
  cp_async_commit();
  return out;
}

template <class X> struct is_mma_tile { static constexpr bool value = false; };
template <class T, int NT, int M, int N> struct is_mma_tile<MmaTile<T, NT, M, N>> {
  static constexpr bool value = true;
};

template <class X> struct is_smem_tile { static constexpr bool value = false; };
template <class T, int NT, int K, int N, bool Swap, int LD, bool Wg>
struct is_smem_tile<SmemTile<T, NT, K, N, Swap, LD, Wg>> {
  static constexpr bool value = !Swap;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// c + a @ b on wgmma (ir/operands.py chose the operands' layouts for it): A in registers (an
// MmaTile) with B N-major (attention's P @ V), or A and B K-major in their buffers (Q @ K^T)
template <class AT, class BT, int NT, int M, int N, int K>
__device__ __forceinline__ void wgmma_operands(const AT& a, const BT& b, float* acc) {
  typedef typename BT::elem T;
  constexpr int WG = NT / 128, R = M / (64 * WG), REGS = R * N / 2, KD = sm90::kind<T>::value;
  const int t = tid(), wg = WG == 1 ? 0 : t >> 7;  // (one warpgroup: uniform descriptors)
  // buffers the threads filled with cp.async: each thread's copies made visible to the
  // tensor cores (the async proxy), then a barrier for the other threads' copies; a buffer
  // copied by TMA is ready once its mbarrier completes (operand_ready)
  bool by_threads = !b.tma;
  if constexpr (!is_mma_tile<AT>::value) by_threads = by_threads || !a.tma;
  if (by_threads) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    block_sync();
  }
  // A's fragments packed into words before the fence: no instruction defines a wgmma's
  // input registers between two of them, so ptxas keeps them one group (else each wgmma is
  // a group of its own, with a warpgroup arrive before it)
  uint32_t ra[is_mma_tile<AT>::value ? K / 16 : 1][R][4];
  if constexpr (is_mma_tile<AT>::value) {
#pragma unroll
    for (int s = 0; s < K / 16; ++s) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const T* lo = a.v + 4 * (2 * s * R + r);
        const T* hi = a.v + 4 * ((2 * s + 1) * R + r);
        ra[s][r][0] = pack16(lo[0], lo[1]), ra[s][r][1] = pack16(lo[2], lo[3]);
        ra[s][r][2] = pack16(hi[0], hi[1]), ra[s][r][3] = pack16(hi[2], hi[3]);
      }
    }
  }
  // the descriptors built once (sm90::desc_lo): a k step's is the first one's plus its offset;
  // rows of 128 bytes with the 128-byte swizzle, 8 of them 1024 bytes apart
  constexpr uint32_t HI = sm90::desc_hi(1024);
  constexpr int ISZ = int(sizeof(T));
  const uint32_t b_lo = sm90::desc_lo(b.p, is_mma_tile<AT>::value ? BT::ROWS * 128 : 16);
  uint32_t a_lo = 0;
  if constexpr (!is_mma_tile<AT>::value) a_lo = sm90::desc_lo(a.p + 64 * wg * 64, 16);
  sm90::pin<REGS>(acc);
  sm90::wg_fence();
#pragma unroll
  for (int s = 0; s < K / 16; ++s) {
    if constexpr (is_mma_tile<AT>::value) {  // B [K][N] in chunks of 64 columns
      const uint64_t db = sm90::desc_word(b_lo, HI, s * 16 * 64 * ISZ);
#pragma unroll
      for (int r = 0; r < R; ++r) sm90::wgmma_rs<N, KD, R>(acc + 4 * r, ra[s][r], db);
    } else {  // A [M][K], B [N][K]: K in chunks of 64
      const int ch = s / 4, in = (s % 4) * 16;
      const uint64_t db = sm90::desc_word(b_lo, HI, (ch * N * 64 + in) * ISZ);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        sm90::wgmma_kb<N, KD, R>(
            acc + 4 * r, sm90::desc_word(a_lo, HI, (ch * M * 64 + 64 * WG * r * 64 + in) * ISZ),
            db);
      }
    }
  }
  sm90::wg_commit();
  sm90::wg_wait<0>();
  sm90::pin<REGS>(acc);
}
#endif

// c + a @ b, b in shared memory; a an MmaTile (registers), a SmemTile of its own (rows of K, as
// loaded) or a Tile (staged in the scratch)
template <bool TensorCores, int Wait, class AT, class T, int NT, int M, int N, int K, bool Swap,
          int LD, bool Wg>
__device__ __forceinline__ MmaTile<float, NT, M, N> mma(
    const AT& a, const SmemTile<T, NT, K, N, Swap, LD, Wg>& b,
    const MmaTile<float, NT, M, N>& c) {
  static_assert(TensorCores && sizeof(T) == 2, "operands in shared memory: 16-bit tensor cores");
  static_assert(frag_rows<M>() % (16 * (NT / 32)) == 0 && K % 16 == 0,
                "whole row strips per warp");
  typedef mma_plan<T, M, N, K, true> P;
  typedef SmemTile<T, NT, K, N, Swap, LD, Wg> BT;
  constexpr int R = frag_rows<M>() / 16 / (NT / 32);
  const int t = tid(), lane = t % 32, w = t / 32, g = lane >> 2, q = lane & 3;
  constexpr bool regs = is_mma_tile<AT>::value, own = is_smem_tile<AT>::value;
  static_assert(!own || M >= 16, "an A operand in its own buffer: 16 rows or more");
  T* As = scratch<T>();
  if constexpr (!regs && !own) {
    static_assert(P::MP * P::LD * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
    block_sync();
    stage_a<P>(a, As);
  }
  cp_async_wait<Wait>();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (BT::SW) {
    operand_ready(b);
    if constexpr (own) operand_ready(a);
    MmaTile<float, NT, M, N> out = c;
    wgmma_operands<AT, BT, NT, M, N, K>(a, b, out.v);
    return out;
  }
#endif
  block_sync();
  MmaTile<float, NT, M, N> out = c;
#pragma unroll
  for (int s = 0; s < K / 16; ++s) {
    uint32_t ra[R][4];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if constexpr (regs) {
        const T* lo = a.v + 4 * (2 * s * R + r);
        const T* hi = a.v + 4 * ((2 * s + 1) * R + r);
        ra[r][0] = pack16(lo[0], lo[1]), ra[r][1] = pack16(lo[2], lo[3]);
        ra[r][2] = pack16(hi[0], hi[1]), ra[r][3] = pack16(hi[2], hi[3]);
      } else if constexpr (own) {  // rows g, g + 8; columns 2q, 2q + 8 of the strip
        const int i = (w + r * (NT / 32)) * 16 + g, k = s * 16 + 2 * q;
        ra[r][0] = word(a.p + smem_at<AT>(i, k)), ra[r][1] = word(a.p + smem_at<AT>(i + 8, k));
        ra[r][2] = word(a.p + smem_at<AT>(i, k + 8));
        ra[r][3] = word(a.p + smem_at<AT>(i + 8, k + 8));
      } else {
        frag_a<P>(ra[r], As, (w + r * (NT / 32)) * 16, s * 16, lane);
      }
    }
#pragma unroll
    for (int cb = 0; cb < N / 8; ++cb) {
      uint32_t rb[2];
      if constexpr (Swap) {  // [N][K]: k = 2q, 2q + 1 (and 8 more) of column n = g, one word
        rb[0] = word(b.p + smem_at<BT>(cb * 8 + g, s * 16 + 2 * q));
        rb[1] = word(b.p + smem_at<BT>(cb * 8 + g, s * 16 + 2 * q + 8));
      } else {  // [K][N]: the two 8x8 matrices of rows 16s.., transposed as they load
        const T* row = b.p + smem_at<BT>(s * 16 + (lane & 15), cb * 8);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                     : "=r"(rb[0]), "=r"(rb[1])
                     : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(row))));
      }
#pragma unroll
      for (int r = 0; r < R; ++r) mma_sync<P::kind>(out.v + 4 * (cb * R + r), ra[r], rb);
    }
  }
  return out;
}

// c + a @ b, b in shared memory, a and c Tiles (an accumulator outside fragments: M not whole
// 16-row strips per warp, as flash decoding's few query heads of one KV head): A staged in the
// scratch with zero rows up to MP, C's M rows through the scratch after it (the products' rows
// past M are neither read nor kept: a smaller scratch, more blocks a multiprocessor), the 16x8
// blocks of C shared by the warps, each reading B's fragments from the operand's buffer
template <bool TensorCores, int Wait, class TC, class T, int NT, int M, int N, int K, bool Swap,
          int LD, bool Wg>
__device__ __forceinline__ Tile<TC, NT, M, N> mma(const Tile<T, NT, M, K>& a,
                                                  const SmemTile<T, NT, K, N, Swap, LD, Wg>& b,
                                                  const Tile<TC, NT, M, N>& c) {
  static_assert(TensorCores && sizeof(T) == 2, "operands in shared memory: 16-bit tensor cores");
  typedef SmemTile<T, NT, K, N, Swap, LD, Wg> BT;
  static_assert(!BT::SW, "wgmma's buffers take fragments");
  typedef mma_plan<T, M, N, K, true> P;
  typedef Tile<TC, NT, M, N> XC;
  constexpr int LDA = P::LD, MP = P::MP;
  static_assert(MP * LDA * int(sizeof(T)) + M * P::LDC * 4 <= TT_SCRATCH_BYTES,
                "tile scratch too small");
  const int t = tid();
  T* As = scratch<T>();
  float* Cs = reinterpret_cast<float*>(As + MP * LDA);
  block_sync();  // the scratch's previous user has finished reading it
  stage_a<P>(a, As);
  if (owner<XC>(t)) {
#pragma unroll
    for (int k = 0; k < XC::N; ++k) {
      const int e = elem<XC>(t, k);
      Cs[(e / N) * P::LDC + e % N] = float(wide(c.v[k]));
    }
  }
  cp_async_wait<Wait>();
  block_sync();
  const int lane = t % 32, g = lane >> 2, q = lane & 3;
  // B's fragment of column block j0 at k step s
  auto b_frag = [&](uint32_t* rb, int j0, int s) {
    if constexpr (Swap) {  // [N][K]: k = 2q, 2q + 1 (and 8 more) of column n = g, one word
      rb[0] = word(b.p + smem_at<BT>(j0 + g, s * 16 + 2 * q));
      rb[1] = word(b.p + smem_at<BT>(j0 + g, s * 16 + 2 * q + 8));
    } else {  // [K][N]: the two 8x8 matrices of rows 16s.., transposed as they load
      const T* row = b.p + smem_at<BT>(s * 16 + (lane & 15), j0);
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                   : "=r"(rb[0]), "=r"(rb[1])
                   : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(row))));
    }
  };
  constexpr int NW = NT / 32, NB = (MP / 16) * (N / 8);
  if constexpr (MP == 16 && NB % NW == 0) {
    // one row strip (few rows: flash decoding's query heads): warp w takes the column blocks
    // w, w + NW, ...; each k step's A fragment is loaded once for all of them, and their
    // products are independent chains (the same sums in the same order as block by block)
    constexpr int PER = NB / NW;
    float d[PER][4];
#pragma unroll
    for (int i = 0; i < PER; ++i) {  // (rows g and g + 8 of the strip)
      const float* c0 = Cs + g * P::LDC + ((t / 32) + i * NW) * 8 + 2 * q;
      d[i][0] = g < M ? c0[0] : 0.f, d[i][1] = g < M ? c0[1] : 0.f;
      d[i][2] = g + 8 < M ? c0[8 * P::LDC] : 0.f, d[i][3] = g + 8 < M ? c0[8 * P::LDC + 1] : 0.f;
    }
#pragma unroll
    for (int s = 0; s < K / 16; ++s) {
      uint32_t ra[4];
      frag_a<P>(ra, As, 0, s * 16, lane);
#pragma unroll
      for (int i = 0; i < PER; ++i) {
        uint32_t rb[2];
        b_frag(rb, ((t / 32) + i * NW) * 8, s);
        mma_sync<P::kind>(d[i], ra, rb);
      }
    }
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      float* c0 = Cs + g * P::LDC + ((t / 32) + i * NW) * 8 + 2 * q;
      if (g < M) c0[0] = d[i][0], c0[1] = d[i][1];
      if (g + 8 < M) c0[8 * P::LDC] = d[i][2], c0[8 * P::LDC + 1] = d[i][3];
    }
  } else {
    for (int blk = t / 32; blk < NB; blk += NW) {
      const int i0 = (blk / (N / 8)) * 16, j0 = (blk % (N / 8)) * 8;
      float* c0 = Cs + (i0 + g) * P::LDC + j0 + 2 * q;
      float* c1 = c0 + 8 * P::LDC;
      const bool r0 = i0 + g < M, r1 = i0 + g + 8 < M;
      float d[4] = {r0 ? c0[0] : 0.f, r0 ? c0[1] : 0.f, r1 ? c1[0] : 0.f, r1 ? c1[1] : 0.f};
#pragma unroll 4
      for (int s = 0; s < K / 16; ++s) {
        uint32_t ra[4], rb[2];
        frag_a<P>(ra, As, i0, s * 16, lane);
        b_frag(rb, j0, s);
        mma_sync<P::kind>(d, ra, rb);
      }
      if (r0) c0[0] = d[0], c0[1] = d[1];
      if (r1) c1[0] = d[2], c1[1] = d[3];
    }
  }
  block_sync();
  XC r;
#pragma unroll
  for (int k = 0; k < XC::N; ++k) {
    const int e = elem<XC>(t, k);
    r.v[k] = to<TC>(Cs[(e / N) * P::LDC + e % N]);
  }
  return r;
}

// c + a @ b with A in registers and B a blocked tile: B staged in the scratch as an operand
template <bool TensorCores, class TA, int NT, int M, int N, int K>
__device__ __forceinline__ MmaTile<float, NT, M, N> mma(const MmaTile<TA, NT, M, K>& a,
                                                        const Tile<TA, NT, K, N>& b,
                                                        const MmaTile<float, NT, M, N>& c) {
  typedef mma_plan<TA, M, N, K, true> P;
  typedef Tile<TA, NT, K, N> XB;
  static_assert(P::B_ELEMS * sizeof(TA) <= TT_SCRATCH_BYTES, "tile scratch too small");
  TA* Bs = scratch<TA>();
  const int t = tid();
  block_sync();
  if (owner<XB>(t)) {
#pragma unroll
    for (int k = 0; k < XB::N; ++k) {
      const int e = elem<XB>(t, k);
      Bs[(e / N) * P::LDB + e % N] = b.v[k];
    }
  }
  typedef SmemTile<TA, NT, K, N, false, P::LDB> BS;
  static_assert(!BS::XS, "B staged in padded rows (TT_B_PAD), read as such");
  return mma<TensorCores, 0>(a, BS{Bs}, c);
}

}  // namespace tile
}  // namespace tt
