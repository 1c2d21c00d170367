// tile/mma.h: the matrix multiply c + a @ b of tiles. mma_plan lays the operands out in the
// scratch and says whether tensor cores take them; the mma.sync fragments; MmaTile, an
// accumulator kept in the tensor cores' fragment layout, and its conversions to and from
// Tile; the epilogue straight from fragments (astype, store_fragments).
//
// Paths of mma:
//   fragments      an MmaTile accumulator (ir/tiling.py, fragments_ok: float32 from
//                  float16, bfloat16 or tfloat32 on shapes the instruction tiles, the 16x8
//                  blocks shared evenly by the warps): A and B through the scratch, the
//                  result stays in the warps' registers
//   tensor cores   a Tile accumulator where mma_plan::tc holds (those dtypes; N a multiple
//                  of 8, K of the instruction's k; M any, A padded with zero rows to MP, a
//                  multiple of 16): A, B and C through the scratch
//   FMA            other dtypes or shapes: A and B through the scratch, a loop of FMAs
// Paths of store_fragments, and of load_fragments, its mirror (ir/passes.py lets a cast and a
// store of an accumulator keep the fragment layout, and a load read only alongside one take
// it: a 2-d global array, axes in order):
//   staged         (stores) where the scratch holds the tile: through it, then 16-byte
//                  pieces of whole rows (store_fragments_staged)
//   pairs          16-bit elements where pairs_ok holds (contiguous rows of even length, a
//                  4-byte aligned base): two adjacent columns as one 32-bit word
//   one by one     anything else, and a pair's second column past the array's edge
#pragma once

#include "elementwise.h"
#include "shapes.h"
#include "memory.h"

namespace tt {
namespace tile {

// ---- matrix multiply -------------------------------------------------------------------------
// float16, bfloat16 and tfloat32 run on tensor cores (mma.sync, float32 accumulators); other
// dtypes, and shapes the instruction does not tile, multiply with FMAs. Both stage the operands
// in the scratch (A row-major, rows of K + 16 bytes; B as it is, rows of N + 8 values: a
// warp's consecutive values of a row store without bank conflicts, and fragments read without
// them too, 16-bit B's through ldmatrix.trans), each warp computes 16x8 blocks of the result,
// and the result goes back to the tile's layout through the scratch.
template <class T> struct mma_kind { static constexpr int value = 0; };
#ifdef TT_HALF
template <> struct mma_kind<__half> { static constexpr int value = 1; };
template <> struct mma_kind<__nv_bfloat16> { static constexpr int value = 2; };
#endif
template <> struct mma_kind<tf32> { static constexpr int value = 3; };

// TC: whether tensor cores multiply these operands, which the compiler decides
// (ir/tiling.py, tensor_core); the assertion is the instruction's own requirement.
// the rows a fragment tile of M rows holds: at least one 16-row strip (MmaTile, below)
template <int M>
__host__ __device__ constexpr int frag_rows() { return M < 16 ? 16 : M; }

template <class TA, int M, int N, int K_, bool TC>
struct mma_plan {
  typedef TA elem;
  static constexpr int kind = mma_kind<TA>::value;
  static constexpr int K = K_;
  static constexpr int KS = kind == 3 ? TT_MMA_KTF32 : TT_MMA_K16;  // k per instruction
  static constexpr bool tc = TC;
  static_assert(!TC || (kind != 0 && N % TT_MMA_N == 0 && K_ % KS == 0),
                "mma_plan: tensor cores do not take these operands");
  // A's rows as tensor cores take them: M padded with zero rows to a multiple of 16
  static constexpr int MP = tc ? (M + TT_MMA_M - 1) / TT_MMA_M * TT_MMA_M : M;
  static constexpr int PAD = tc ? TT_A_PAD_BYTES / int(sizeof(TA)) : 0;  // rows 16 bytes apart
  static constexpr int LD = K_ + PAD;            // A's rows (of K)
  static constexpr int LDB = N + TT_B_PAD;       // B's rows (of N), as it is
  static constexpr int B_ELEMS = K_ * LDB;
  // C's rows (float32) in the scratch: 8 words past a multiple of 32, so that a fragment's
  // 64-bit accesses (rows g, g + 8 and columns 2q, 2q + 1 of its 16x8 block) hit distinct banks
  static constexpr int LDC = (N + 31) / 32 * 32 + 8;
  static constexpr int bytes = tc ? (MP * LD + B_ELEMS) * int(sizeof(TA)) + MP * LDC * 4
                                  : (M * K_ + K_ * N) * int(sizeof(TA));
};

__device__ __forceinline__ uint32_t word(const void* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}
template <int Kind>
__device__ __forceinline__ void mma_sync(float* d, const uint32_t* a, const uint32_t* b) {
  if constexpr (Kind == 1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Kind == 2) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// A (M x K) into the scratch at As for tensor cores, rows P::LD apart, its rows M..MP-1 zeros
// (fewer than 16 rows: the products read whole 16-row strips)
template <class P, class TA, int NT, int M, int K>
__device__ __forceinline__ void stage_a(const Tile<TA, NT, M, K>& a, TA* As) {
  typedef Tile<TA, NT, M, K> XA;
  const int t = tid();
  if (owner<XA>(t)) {
#pragma unroll
    for (int k = 0; k < XA::N; ++k) {
      const int e = elem<XA>(t, k);
      As[(e / K) * P::LD + e % K] = a.v[k];
    }
  }
  if constexpr (P::MP > M) {
    for (int c = t; c < (P::MP - M) * P::LD; c += NT) As[M * P::LD + c] = TA{};
  }
}

// stage A and B of an mma in the scratch, as plan P lays them
template <class P, class TA, int NT, int M, int N, int K>
__device__ __forceinline__ void stage_operands(const Tile<TA, NT, M, K>& a,
                                               const Tile<TA, NT, K, N>& b, TA* As, TA* Bs) {
  constexpr int LD = P::LD;
  typedef Tile<TA, NT, M, K> XA;
  typedef Tile<TA, NT, K, N> XB;
  const int t = tid();
  if (owner<XA>(t)) {
#pragma unroll
    for (int k = 0; k < XA::N; ++k) {
      const int e = elem<XA>(t, k);
      As[(e / K) * LD + e % K] = a.v[k];
    }
  }
  if (owner<XB>(t)) {
#pragma unroll
    for (int k = 0; k < XB::N; ++k) {
      const int e = elem<XB>(t, k);
      Bs[(e / N) * P::LDB + e % N] = b.v[k];
    }
  }
  if constexpr (P::MP > M) {  // A's padding rows: zeros
    for (int c = t; c < (P::MP - M) * LD; c += NT) As[M * LD + c] = TA{};
  }
}

// a lane's fragments of A (rows i0..i0+15, k0..k0+KS) and B (k0.., columns j0..j0+7)
template <class P, class TA>
__device__ __forceinline__ void frag_a(uint32_t* ra, const TA* As, int i0, int k0, int lane) {
  if constexpr (P::kind == 3) {  // one tf32 per register: rows g, g + 8; k = q, q + 4
    const int g = lane >> 2, q = lane & 3;
    const TA* a0 = As + (i0 + g) * P::LD + k0;
    const TA* a1 = a0 + 8 * P::LD;
    ra[0] = word(a0 + q), ra[1] = word(a1 + q), ra[2] = word(a0 + q + 4),
    ra[3] = word(a1 + q + 4);
  } else {  // two 16-bit values per register: k = 2q, 2q + 1 (and 8 more); one ldmatrix of
    // the four 8x8 matrices (rows i0.., i0 + 8.. at k0, then at k0 + 8): lane l gives row
    // i0 + l % 16 at column k0 + 8 (l / 16), rows 16 bytes aligned (A's padded rows, LD)
    const TA* row = As + (i0 + (lane & 15)) * P::LD + k0 + 8 * (lane >> 4);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
                 : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(row))));
  }
}
template <class P, class TA>
__device__ __forceinline__ void frag_b(uint32_t* rb, const TA* Bs, int j0, int k0, int lane) {
  const int g = lane >> 2, q = lane & 3;
  if constexpr (P::kind == 3) {  // B as it is: row k, column n
    const TA* b0 = Bs + (k0 + q) * P::LDB + j0 + g;
    rb[0] = word(b0), rb[1] = word(b0 + 4 * P::LDB);
  } else {  // two 16-bit values of k = 2q, 2q + 1 (and 8 more) per register: the two 8x8
    // matrices of rows k0.. and k0 + 8.., transposed as they load; lanes 0-15 give the rows
    const TA* row = Bs + (k0 + (lane & 15)) * P::LDB + j0;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(rb[0]), "=r"(rb[1])
                 : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(row))));
  }
}

// d += A[i0:i0+16, :] @ B[:, j0:j0+8] for this lane's fragment d of the 16x8 block at (i0, j0)
template <class P, class TA>
__device__ __forceinline__ void mma_block(float* d, const TA* As, const TA* Bs, int i0, int j0,
                                          int lane) {
  for (int k0 = 0; k0 < P::K; k0 += P::KS) {
    uint32_t ra[4], rb[2];
    frag_a<P>(ra, As, i0, k0, lane);
    frag_b<P>(rb, Bs, j0, k0, lane);
    mma_sync<P::kind>(d, ra, rb);
  }
}

// acc (an MmaTile's registers, below) += A @ B from the staged operands, for this thread's
// warp: k step by k step, each A fragment loaded once for all the warp's blocks of its rows
// (when the warp's blocks share their rows, as they do when M = 16 NW; when the warp holds R
// strips, M = 16 R NW, its R A fragments once and each B fragment once for the R strips)
// (Round: the operands are float32 as loaded, rounded to tfloat32 fragment by fragment)
__device__ __forceinline__ uint32_t round_tf32(uint32_t x) { return tf32_bits(x); }
template <class P, int NT, int M, int N, bool Round = false, class TA>
__device__ __forceinline__ void warp_mma(float* acc, const TA* As, const TA* Bs) {
  constexpr int NW = NT / 32, MB = frag_rows<M>() / 16, BLOCKS = MB * (N / 8) / NW;
  constexpr bool same_rows = NW % MB == 0;  // block w + i NW has rows 16 ((w + i NW) % MB)
  constexpr bool strips = !same_rows && MB % NW == 0;  // R strips a warp: w, w + NW, ...
  constexpr int R = strips ? MB / NW : 1;
  const int t = tid(), w = t / 32, lane = t % 32;
#pragma unroll
  for (int k0 = 0; k0 < P::K; k0 += P::KS) {
    uint32_t ra[R][4], rb[2];
    auto a_of = [&](uint32_t* x, int i0) {
      frag_a<P>(x, As, i0, k0, lane);
      if constexpr (Round)
        for (int j = 0; j < 4; ++j) x[j] = round_tf32(x[j]);
    };
    auto b_of = [&](int j0) {
      frag_b<P>(rb, Bs, j0, k0, lane);
      if constexpr (Round) rb[0] = round_tf32(rb[0]), rb[1] = round_tf32(rb[1]);
    };
    if constexpr (strips) {  // each A fragment once, each B fragment once for the R strips
#pragma unroll
      for (int r = 0; r < R; ++r) a_of(ra[r], (w + r * NW) * 16);
#pragma unroll
      for (int c = 0; c < N / 8; ++c) {
        b_of(c * 8);
#pragma unroll
        for (int r = 0; r < R; ++r) mma_sync<P::kind>(acc + 4 * (c * R + r), ra[r], rb);
      }
    } else {
      if constexpr (same_rows) a_of(ra[0], (w % MB) * 16);
#pragma unroll
      for (int i = 0; i < BLOCKS; ++i) {
        const int blk = w + i * NW;
        if constexpr (!same_rows) a_of(ra[0], (blk % MB) * 16);
        b_of((blk / MB) * 8);
        mma_sync<P::kind>(acc + 4 * i, ra[0], rb);
      }
    }
  }
}

// An accumulator kept in the tensor cores' fragment layout (the "mma" layout of ir/passes.py):
// warp w owns the 16x8 blocks w, w + NW, ... of the (M, N) result, numbered down the columns
// (block b is rows 16(b % (M/16)), columns 8(b / (M/16))), and lane l holds v[4i..4i+3] of its
// i-th block: rows l/4 and l/4 + 8, columns 2(l%4) and + 1. When M = 16 NW, warp w thus holds
// rows 16w..16w+15 entirely, which is wgmma's accumulator layout (kloop_sm90.h).
//
// Fewer than 16 rows (1, 2, 4 or 8: flash decoding's query heads of one KV head, in a block of
// one warp) are held as a 16-row strip whose rows past M are padding: every operation on the
// registers computes them too (no row mixes with another: products, row reductions,
// broadcasts, elementwise), and what meets memory or the blocked layout (to_blocked, to_mma,
// load_fragments, store_fragments, MmaRows' conversions) skips them or reads them as zeros
// (frag_rows, at the top of this file, is the rows held).

template <typename T, int NT, int Rows, int Cols>
struct MmaTile {
  static constexpr int RP = frag_rows<Rows>();  // rows held, the padding included
  static constexpr int BLOCKS = (RP / 16) * (Cols / 8) / (NT / 32);  // per warp
  static constexpr int E = Rows * Cols;
  static constexpr int ROWS = Rows, COLS = Cols;
  static constexpr int N = BLOCKS * 4;  // registers per thread
  static_assert((RP / 16) * (Cols / 8) % (NT / 32) == 0, "blocks shared evenly by warps");
  static_assert(Rows >= 16 || (16 % Rows == 0 && NT == 32),
                "fewer than 16 rows: a power of two, one warp");
  T v[N];
};
template <typename T, int NT_, int M, int N_>
struct traits<MmaTile<T, NT_, M, N_>> {
  static constexpr bool tile = true;
  static constexpr int NT = NT_;
  static constexpr int rank = 2;
  static constexpr int E = M * N_;
  static constexpr int N = MmaTile<T, NT_, M, N_>::N;
  typedef T elem;
  template <class U> using with = MmaTile<U, NT_, M, N_>;
};
// extract<R>(x, 0, J) of fragments: columns J*RN ... of an (M, N) fragment tile, where the
// 16x8 blocks before them are whole rounds of the warps (ir/fraglayout.py frag_extract): the
// same lanes hold them, blocks OFF/NW further along
template <class R, int J, class T, int NT, int M, int N>
__device__ __forceinline__ R extract_frag(const MmaTile<T, NT, M, N>& x) {
  constexpr int RN = R::E / M, NW = NT / 32, OFF = (J * RN / 8) * (frag_rows<M>() / 16);
  static_assert(R::E % M == 0 && RN % 8 == 0 && OFF % NW == 0 && (J + 1) * RN <= N,
                "extract_frag: whole columns, whole rounds of the warps before them");
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = x.v[k + OFF / NW * 4];
  return r;
}

// the (row, column) of value j of this lane's i-th block, as row * N + column (a padding row
// of a tile of fewer than 16 rows gives M * N or more)
template <int NT, int M, int N>
__device__ __forceinline__ int frag_index(int t, int i, int j) {
  constexpr int MB = frag_rows<M>() / 16;
  const int blk = t / 32 + i * (NT / 32), lane = t % 32;
  const int row = (blk % MB) * 16 + (lane >> 2) + (j >> 1) * 8;
  const int col = (blk / MB) * 8 + 2 * (lane & 3) + (j & 1);
  return row * N + col;
}

template <class T, int NT, int M, int N>
__device__ __forceinline__ Tile<T, NT, M, N> to_blocked(const MmaTile<T, NT, M, N>& x) {
  typedef MmaTile<T, NT, M, N> X;
  typedef Tile<T, NT, M, N> R;
  static_assert(M * N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  const int t = tid();
  block_sync();
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int e = frag_index<NT, M, N>(t, i, j);
      if (M >= 16 || e < M * N) buf[e] = x.v[i * 4 + j];
    }
  }
  block_sync();
  R r;
#pragma unroll
  for (int k = 0; k < R::N; ++k) r.v[k] = buf[elem<R>(t, k)];
  return r;
}

template <class T, int NT, int M, int N>
__device__ __forceinline__ MmaTile<T, NT, M, N> to_mma(const Tile<T, NT, M, N>& x) {
  typedef MmaTile<T, NT, M, N> R;
  static_assert(M * N * sizeof(T) <= TT_SCRATCH_BYTES, "tile scratch too small");
  T* buf = scratch<T>();
  to_scratch(x, buf);
  R r;
  const int t = tid();
#pragma unroll
  for (int i = 0; i < R::BLOCKS; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int e = frag_index<NT, M, N>(t, i, j);
      r.v[i * 4 + j] = M >= 16 || e < M * N ? buf[e] : T{};
    }
  }
  return r;
}

// The epilogue straight from fragments (ir/passes.py lets a cast and a store of an accumulator
// keep the "mma" layout): a cast converts each register, and a store writes each lane's pairs
// of adjacent columns (store_fragments), as one 32-bit word where the array allows it (16-bit elements,
// contiguous rows of even length, a 4-byte aligned base), with no trip through shared memory.
template <class U, int Site = 0, class T, int NT, int M, int N>
__device__ __forceinline__ MmaTile<U, NT, M, N> astype(const MmaTile<T, NT, M, N>& x) {
  MmaTile<U, NT, M, N> r;
#pragma unroll
  for (int k = 0; k < MmaTile<T, NT, M, N>::N; ++k) r.v[k] = to<U>(x.v[k]);
  return r;
}

template <class T, int R>
__device__ __forceinline__ bool pairs_ok(const ::tt::CArray<T, R>& a) {
  return a.shape[R - 1] % 2 == 0 && reinterpret_cast<unsigned long long>(a.data) % 4 == 0;
}
template <class T, int R>
__device__ __forceinline__ bool pairs_ok(const ::tt::Array<T, R>& a) {
  bool ok = a.strides[R - 1] == 1;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) ok = ok && a.strides[d] % 2 == 0;
  return ok && reinterpret_cast<unsigned long long>(a.data) % 4 == 0;
}
template <class T> __device__ __forceinline__ uint32_t bits16(const T& x) {
  uint16_t b;
  memcpy(&b, &x, 2);
  return b;
}

// a lane's pair of adjacent columns, lo at coordinates g (R of them) and hi at the next
// column: one 32-bit word where `pairs` allows (16-bit elements, pairs_ok, an even column and
// both inside), else each element where it is inside (`one`, `two`)
template <int R, class Arr, class T>
__device__ __forceinline__ void store_pair(const Arr& a, int64_t* g, T lo, T hi, bool pairs,
                                           bool one, bool two) {
  if constexpr (sizeof(T) == 2) {
    if (pairs && one && two) {
      *reinterpret_cast<uint32_t*>(a.data + offset(a, g)) = bits16(lo) | (bits16(hi) << 16);
      return;
    }
  }
  if (one) a.data[offset(a, g)] = lo;
  if (two) {
    g[R - 1] += 1;
    a.data[offset(a, g)] = hi;
    g[R - 1] -= 1;
  }
}

// the row indices of a tile gathered or scattered by rows (gather_operand, scatter_fragments)
// in the scratch, one int64 a row, between two barriers (the first: the scratch's previous
// readers have finished)
template <class RT>
__device__ __forceinline__ const int64_t* stage_rows(const RT& rows) {
  int64_t* ridx = scratch<int64_t>();
  const int t = tid();
  block_sync();
  if (owner<RT>(t)) {
#pragma unroll
    for (int k = 0; k < traits<RT>::N; ++k) ridx[elem<RT>(t, k)] = int64_t(rows.v[k]);
  }
  block_sync();
  return ridx;
}

// store_fragments' pairs one by one, each tested against the array's bounds: the edge tiles
// (and layouts the interior path does not take)
template <int RR, int R, class Arr, class T, int NT, int M, int N>
__device__ __forceinline__ void store_fragments_checked(const Arr& a,
                                                        const MmaTile<T, NT, M, N>& x,
                                                        const int64_t* ix) {
  typedef MmaTile<T, NT, M, N> X;
  const int t = tid();
  const int64_t r0 = ix[RR] * M, c0 = ix[R - 1] * N;
  const bool pairs = sizeof(T) == 2 && pairs_ok(a);
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = frag_index<NT, M, N>(t, i, 2 * h);
      if (M < 16 && e >= M * N) continue;  // a padding row
      int64_t g[R];
#pragma unroll
      for (int d = 0; d < R - 1; ++d) g[d] = ix[d];
      g[RR] = r0 + e / N, g[R - 1] = c0 + e % N;
      if (g[RR] < 0 || g[R - 1] < 0 || g[RR] >= a.shape[RR] || g[R - 1] >= a.shape[R - 1])
        continue;
      store_pair<R>(a, g, x.v[4 * i + 2 * h], x.v[4 * i + 2 * h + 1], pairs, true,
                    g[R - 1] + 1 < a.shape[R - 1]);
    }
  }
}
// ... the same where each warp's blocks are a fixed step of strips and column blocks apart
// (the interior path's layouts) and the last axis is contiguous: a thread's first element's
// address and the rows and columns left from it once, then each pair a constant offset and
// two comparisons with constants (a fifth of the code of the one above: 256x64 tiles on 4
// warps, 64 pairs a thread, compiled in 0.55 s of which 0.35 s went to the store). Returns
// false (nothing stored) where the array is not so
template <int RR, int R, class Arr, class T, int NT, int M, int N>
__device__ __forceinline__ bool store_fragments_guarded(const Arr& a,
                                                        const MmaTile<T, NT, M, N>& x,
                                                        const int64_t* ix) {
  typedef MmaTile<T, NT, M, N> X;
  constexpr int MB = M / 16, NW = NT / 32;
  if constexpr (M % 16 != 0 || (MB % NW != 0 && NW % MB != 0)) {
    return false;
  } else {
    if (stride_of(a, R - 1) != 1) return false;
    const int64_t r0 = ix[RR] * M, c0 = ix[R - 1] * N;
    if (r0 < 0 || c0 < 0) return true;  // (a tile of a negative index lies wholly outside)
    const int t = tid(), w = t / 32, lane = t % 32;
    int64_t g[R];
#pragma unroll
    for (int d = 0; d < R - 1; ++d) g[d] = ix[d];
    g[RR] = r0 + (w % MB) * 16 + (lane >> 2);
    g[R - 1] = c0 + (w / MB) * 8 + 2 * (lane & 3);
    // the rows and columns of the array from this thread's first element on (at most what
    // the tile spans past it, so that they fit an int)
    const int64_t rows = a.shape[RR] - g[RR], cols = a.shape[R - 1] - g[R - 1];
    const int rl = rows < 0 ? 0 : rows > M ? M : int(rows);
    const int cl = cols < 0 ? 0 : cols > N ? N : int(cols);
    T* p = a.data + offset(a, g);
    const int64_t ld = stride_of(a, RR);
    const bool pairs = sizeof(T) == 2 && pairs_ok(a);
#pragma unroll
    for (int i = 0; i < X::BLOCKS; ++i) {
      const int ds = (i * NW) % MB, dc = (i * NW) / MB;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int dr = ds * 16 + 8 * h, col = dc * 8;
        if (dr >= rl || col >= cl) continue;
        T* q = p + dr * ld + col;
        const T lo = x.v[4 * i + 2 * h], hi = x.v[4 * i + 2 * h + 1];
        if constexpr (sizeof(T) == 2) {
          if (pairs && col + 1 < cl) {
            *reinterpret_cast<uint32_t*>(q) = bits16(lo) | (bits16(hi) << 16);
            continue;
          }
        }
        q[0] = lo;
        if (col + 1 < cl) q[1] = hi;
      }
    }
    return true;
  }
}
// ... through the scratch, where it holds the tile (staged_fits, at compile time; the Hopper
// loop's stages have room after the loop): each lane's pairs go to the scratch (rows padded by
// STAGED_PAD elements: a warp's 4-byte pairs of 8 rows meet 32 banks, and each half-warp's
// 8-byte pairs of 4 rows too), then each thread stores whole 16-byte pieces of the tile's
// rows, a warp's 32 pieces two 256-byte runs of a 128-column tile's rows: whole 128-byte
// lines, where from the fragments each store instruction wrote 16 bytes in each of 8 rows. An
// edge tile, or an array whose last axis is not contiguous or whose rows are not 16-byte
// aligned, is stored from the scratch element by element. H200, plain 4096^2 float16 matmul,
// 128x128x64 tiles on 8 warps: the store from the fragments took about 2.9 us of the 4.4 us a
// block spends outside its k loop (the loop's own time measured apart as the slope over K;
// cuTile's blocks 2.4 us), 1.6 us without it.
constexpr int STAGED_PAD = 8;
template <class T, int M, int N> __host__ __device__ constexpr bool staged_fits() {
  return M % 16 == 0 && (sizeof(T) == 2 || sizeof(T) == 4) && N % (16 / sizeof(T)) == 0 &&
         M * (N + STAGED_PAD) * int(sizeof(T)) <= TT_SCRATCH_BYTES;
}
template <int RR, int R, class Arr, class T, int NT, int M, int N>
__device__ __forceinline__ void store_fragments_staged(const Arr& a,
                                                       const MmaTile<T, NT, M, N>& x,
                                                       const int64_t* ix) {
  typedef MmaTile<T, NT, M, N> X;
  constexpr int ISZ = int(sizeof(T)), W = 16 / ISZ;  // elements a piece
  constexpr int PITCH = N + STAGED_PAD;              // a staged row, elements
  constexpr int PIECES = N / W;                      // pieces a row
  static_assert(staged_fits<T, M, N>(), "store_fragments_staged: no room in the scratch");
  const int64_t r0 = ix[RR] * M, c0 = ix[R - 1] * N;
  if (r0 < 0 || c0 < 0) return;  // (a tile of a negative index lies wholly outside)
  if (r0 >= a.shape[RR] || c0 >= a.shape[R - 1]) return;
  int64_t g[R];
#pragma unroll
  for (int d = 0; d < R - 1; ++d) g[d] = ix[d];
  g[RR] = r0, g[R - 1] = c0;
  T* p0 = a.data + offset(a, g);
  const int64_t ld = stride_of(a, RR), sl = stride_of(a, R - 1);
  T* buf = scratch<T>();
  const int t = tid();
  block_sync();  // the scratch's previous user has finished
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = frag_index<NT, M, N>(t, i, 2 * h);
      T* q = buf + (e / N) * PITCH + e % N;
      if constexpr (ISZ == 2) {
        *reinterpret_cast<uint32_t*>(q) =
            bits16(x.v[4 * i + 2 * h]) | (bits16(x.v[4 * i + 2 * h + 1]) << 16);
      } else {
        uint2 w;
        memcpy(&w.x, &x.v[4 * i + 2 * h], 4);
        memcpy(&w.y, &x.v[4 * i + 2 * h + 1], 4);
        *reinterpret_cast<uint2*>(q) = w;
      }
    }
  }
  block_sync();
  const int64_t rows = a.shape[RR] - r0, cols = a.shape[R - 1] - c0;
  constexpr int ROUNDS = (M * PIECES + NT - 1) / NT;
  if (rows >= M && cols >= N && sl == 1 && (ld * ISZ) % 16 == 0 &&
      reinterpret_cast<unsigned long long>(p0) % 16 == 0) {
    // the tile wholly inside rows of 16-byte pieces: no tests
#pragma unroll
    for (int k = 0; k < ROUNDS; ++k) {
      const int pc = t + k * NT;
      if ((M * PIECES) % NT != 0 && pc >= M * PIECES) break;
      const int row = pc / PIECES, col = (pc % PIECES) * W;
      *reinterpret_cast<uint4*>(p0 + row * ld + col) =
          *reinterpret_cast<const uint4*>(buf + row * PITCH + col);
    }
    return;
  }
  // an edge tile, or an array of other strides: each element inside, one by one
  const int rl = rows > M ? M : int(rows), cl = cols > N ? N : int(cols);
#pragma unroll 1
  for (int pc = t; pc < M * PIECES; pc += NT) {
    const int row = pc / PIECES, col = (pc % PIECES) * W;
    if (row >= rl || col >= cl) continue;
    const T* src = buf + row * PITCH + col;
    T* dst = p0 + row * ld + col * sl;
#pragma unroll 1
    for (int j = 0; j < W && col + j < cl; ++j) dst[j * sl] = src[j];
  }
}
// ... out of line, where the interior path is inline beside it: its per-pair coordinates and
// bounds then take no registers on the interior's path (a persistent 128x256 matmul's loop
// over tiles spilled 1.2 KiB with them inline, H200 490 against 618 TFLOP/s)
// (everything by value: an argument by reference must have an address, and the tile and the
// array then went through local memory on every call of store_fragments, taken or not)
template <int R> struct Coords { int64_t v[R]; };
template <int RR, int R, class Arr, class X>
__device__ __noinline__ void store_fragments_edge(const Arr a, const X x, const Coords<R> ix) {
  store_fragments_checked<RR, R>(a, x, ix.v);
}

// an R-d array (R >= 2) takes the tile's rows along axis RA (RA < 0: R - 2) and its columns
// along the last; the other axes are tiles of one (ir/tiling.py matrix_axes). Where the
// scratch holds the tile, it goes through it (store_fragments_staged). Else a store inside
// a loop (Looped: the compiler says so) of a build without a producer warpgroup takes the
// interior path where it can: a tile wholly inside the array, its rows contiguous (a
// block-uniform test), whose warps are a whole number of its 16-row strips or the reverse.
// Block i of warp w is strip (w + i NW) % MB, column block (w + i NW) / MB: warp w's first
// block plus (i NW) % MB strips and (i NW) / MB column blocks, known at compile time, so every
// pair is one base address a thread plus a multiple of the row stride and a constant; the
// tested path is then out of line. Elsewhere every pair is tested inline
// (store_fragments_checked): on the H200 the interior path measured slower in stores after
// the kernel's loops (attention 328 -> 309 TFLOP/s) and with a producer warpgroup (plain
// 128x128x64 600 -> 575, persistent 561 -> 511).
template <int RA = -1, bool Looped = false, class Arr, class T, int NT, int M, int N,
          class... I>
__device__ __forceinline__ void store_fragments(const Arr& a, const MmaTile<T, NT, M, N>& x,
                                                I... idx) {
  typedef MmaTile<T, NT, M, N> X;
  constexpr int R = sizeof...(I), RR = RA < 0 ? R - 2 : RA;
  static_assert(R >= 2 && RR < R - 1, "store_fragments: rows along an axis before the last");
  const int64_t ix[R] = {int64_t(idx)...};
  bool lead = true;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) lead = lead && (d == RR || (ix[d] >= 0 && ix[d] < a.shape[d]));
  if (!lead) return;
  constexpr int MB = M / 16, NW = NT / 32;
  if constexpr (staged_fits<T, M, N>()) {
    store_fragments_staged<RR, R>(a, x, ix);
    return;
  }
#ifdef TT_PRODUCER
  constexpr bool interior = false;
#else
  constexpr bool interior = Looped && M % 16 == 0 && (MB % NW == 0 || NW % MB == 0);
#endif
  if constexpr (interior) {
    const int64_t r0 = ix[RR] * M, c0 = ix[R - 1] * N;
    if (r0 < 0 || c0 < 0 || r0 + M > a.shape[RR] || c0 + N > a.shape[R - 1] ||
        stride_of(a, R - 1) != 1) {
      Coords<R> c;
#pragma unroll
      for (int d = 0; d < R; ++d) c.v[d] = ix[d];
      store_fragments_edge<RR, R>(a, x, c);
      return;
    }
    const int t = tid(), w = t / 32, lane = t % 32;
    const bool pairs = sizeof(T) == 2 && pairs_ok(a);
    int64_t g[R];
#pragma unroll
    for (int d = 0; d < R - 1; ++d) g[d] = ix[d];
    g[RR] = r0 + (w % MB) * 16 + (lane >> 2);
    g[R - 1] = c0 + (w / MB) * 8 + 2 * (lane & 3);
    T* p = a.data + offset(a, g);
    const int64_t ld = stride_of(a, RR);
#pragma unroll
    for (int i = 0; i < X::BLOCKS; ++i) {
      const int ds = (i * NW) % MB, dc = (i * NW) / MB;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        T* q = p + (ds * 16 + 8 * h) * ld + dc * 8;
        const T lo = x.v[4 * i + 2 * h], hi = x.v[4 * i + 2 * h + 1];
        if constexpr (sizeof(T) == 2) {
          if (pairs) {
            *reinterpret_cast<uint32_t*>(q) = bits16(lo) | (bits16(hi) << 16);
            continue;
          }
        }
        q[0] = lo, q[1] = hi;
      }
    }
  } else {
    if (!store_fragments_guarded<RR, R>(a, x, ix)) store_fragments_checked<RR, R>(a, x, ix);
  }
}

// a scatter of whole rows straight from fragments (ir/operands.py, scatter_fragments): row r
// of the tile goes to array row rows[r] (the r-th element of the index tile), columns col0 ...
// col0 + N - 1 of a 2-d array, as store_fragments writes a tile (pairs of adjacent columns as
// one word where the array allows); with CheckBounds a row or column outside the array is
// skipped (scatter's rule). The row indices pass through the scratch between two barriers
template <bool CheckBounds, class Arr, class T, int NT, int M, int N, class RT>
__device__ __forceinline__ void scatter_fragments(const Arr& a, const MmaTile<T, NT, M, N>& x,
                                                  const RT& rows, int64_t col0) {
  typedef MmaTile<T, NT, M, N> X;
  static_assert(traits<RT>::E == M, "scatter_fragments: one index a row");
  const int64_t* ridx = stage_rows(rows);
  const int t = tid();
  const bool pairs = sizeof(T) == 2 && pairs_ok(a) && (col0 & 1) == 0;
#pragma unroll
  for (int i = 0; i < X::BLOCKS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = frag_index<NT, M, N>(t, i, 2 * h);
      if (M < 16 && e >= M * N) continue;  // a padding row
      int64_t g[2] = {ridx[e / N], col0 + e % N};
      if (CheckBounds && (g[0] < 0 || g[0] >= a.shape[0] || g[1] < -1 || g[1] >= a.shape[1]))
        continue;
      store_pair<2>(a, g, x.v[4 * i + 2 * h], x.v[4 * i + 2 * h + 1], pairs,
                    !CheckBounds || g[1] >= 0, !CheckBounds || g[1] + 1 < a.shape[1]);
    }
  }
}

// a tile loaded straight into fragments (ir/fraglayout.py: read only by elementwise operations
// with an accumulator, as a residual added before the store): each lane reads its pairs of
// adjacent columns, as store_fragments writes them; past the array's edges, pad
template <class TL, int RA = -1, class Arr, class... I>
__device__ __forceinline__ TL load_fragments(const Arr& a, typename traits<TL>::elem pad,
                                             I... idx) {
  typedef typename traits<TL>::elem T;
  constexpr int R = sizeof...(I), M = TL::ROWS, N = TL::COLS, NT = traits<TL>::NT;
  constexpr int RR = RA < 0 ? R - 2 : RA;  // the rows' axis (store_fragments)
  static_assert(R >= 2 && RR < R - 1, "load_fragments: rows along an axis before the last");
  const int64_t ix[R] = {int64_t(idx)...};
  const int t = tid();
  const int64_t r0 = ix[RR] * M, c0 = ix[R - 1] * N;
  bool lead = true;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) lead = lead && (d == RR || (ix[d] >= 0 && ix[d] < a.shape[d]));
  const bool pairs = sizeof(T) == 2 && pairs_ok(a);
  TL x;
#pragma unroll
  for (int i = 0; i < TL::BLOCKS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = frag_index<NT, M, N>(t, i, 2 * h);
      int64_t g[R];
#pragma unroll
      for (int d = 0; d < R - 1; ++d) g[d] = ix[d];
      g[RR] = r0 + e / N, g[R - 1] = c0 + e % N;
      T lo = pad, hi = pad;
      if (lead && (M >= 16 || e < M * N) && g[RR] >= 0 && g[R - 1] >= 0 &&
          g[RR] < a.shape[RR] && g[R - 1] < a.shape[R - 1]) {
        const T* p = a.data + offset(a, g);
        const bool two = g[R - 1] + 1 < a.shape[R - 1];
        bool done = false;
        if constexpr (sizeof(T) == 2) {
          if (pairs && two) {
            const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
            const uint16_t b0 = uint16_t(w & 0xffffu), b1 = uint16_t(w >> 16);
            memcpy(&lo, &b0, 2);
            memcpy(&hi, &b1, 2);
            done = true;
          }
        }
        if (!done) {
          lo = *p;
          if (two) {
            g[R - 1] += 1;
            hi = a.data[offset(a, g)];
          }
        }
      }
      x.v[4 * i + 2 * h] = lo;
      x.v[4 * i + 2 * h + 1] = hi;
    }
  }
  return x;
}

// a reshape that adds or drops axes of one keeps the fragments as they are (ir/tiling.py
// matrix_axes)
template <int... O, class T, int NT, int M, int N>
__device__ __forceinline__ MmaTile<T, NT, M, N> reshape(const MmaTile<T, NT, M, N>& x) {
  return x;
}

// mma<TensorCores>: the compiler says whether tensor cores take the operands (mma_plan)
// mma into an accumulator in fragments: only A and B go through the scratch
template <bool TensorCores, class TA, int NT, int M, int N, int K>
__device__ __forceinline__ MmaTile<float, NT, M, N> mma(const Tile<TA, NT, M, K>& a,
                                                        const Tile<TA, NT, K, N>& b,
                                                        const MmaTile<float, NT, M, N>& c) {
  static_assert(TensorCores, "fragment accumulators need tensor-core operands and shapes");
  typedef mma_plan<TA, M, N, K, true> P;
  static_assert((P::MP * P::LD + P::B_ELEMS) * sizeof(TA) <= TT_SCRATCH_BYTES,
                "tile scratch too small");
  TA* As = scratch<TA>();
  TA* Bs = As + P::MP * P::LD;  // (A's rows padded with zeros to 16: fewer rows than 16)
  block_sync();
  stage_operands<P>(a, b, As, Bs);
  block_sync();
  MmaTile<float, NT, M, N> r = c;
  warp_mma<P, NT, M, N>(r.v, As, Bs);
  return r;
}

template <bool TensorCores, class TA, class TC, int NT, int M, int N, int K>
__device__ __forceinline__ Tile<TC, NT, M, N> mma(const Tile<TA, NT, M, K>& a,
                                                  const Tile<TA, NT, K, N>& b,
                                                  const Tile<TC, NT, M, N>& c) {
  typedef mma_plan<TA, M, N, K, TensorCores> P;
  typedef Tile<TA, NT, M, K> XA;
  typedef Tile<TA, NT, K, N> XB;
  typedef Tile<TC, NT, M, N> XC;
  static_assert(P::bytes <= TT_SCRATCH_BYTES, "tile scratch too small");
  const int t = tid();
  TA* As = scratch<TA>();
  if constexpr (P::tc) {
    constexpr int LD = P::LD, MP = P::MP;  // (rows of A past M are zeros: their C is dropped)
    TA* Bs = As + MP * LD;
    float* Cs = reinterpret_cast<float*>(Bs + P::B_ELEMS);
    block_sync();
    stage_operands<P>(a, b, As, Bs);
    if (owner<XC>(t)) {
#pragma unroll
      for (int k = 0; k < XC::N; ++k) {
        const int e = elem<XC>(t, k);
        Cs[(e / N) * P::LDC + e % N] = float(wide(c.v[k]));
      }
    }
    block_sync();
    const int lane = t % 32, g = lane >> 2, q = lane & 3;
    for (int blk = t / 32; blk < (MP / 16) * (N / 8); blk += NT / 32) {
      const int i0 = (blk / (N / 8)) * 16, j0 = (blk % (N / 8)) * 8;
      float* c0 = Cs + (i0 + g) * P::LDC + j0 + 2 * q;
      float* c1 = c0 + 8 * P::LDC;
      float d[4] = {c0[0], c0[1], c1[0], c1[1]};
      mma_block<P>(d, As, Bs, i0, j0, lane);
      c0[0] = d[0], c0[1] = d[1], c1[0] = d[2], c1[1] = d[3];
    }
    block_sync();
    XC r;
#pragma unroll
    for (int k = 0; k < XC::N; ++k) {
      const int e = elem<XC>(t, k);
      r.v[k] = to<TC>(Cs[(e / N) * P::LDC + e % N]);
    }
    return r;
  } else {
    // operands in lanes (shapes.h) are read by shuffles, others through the scratch
    constexpr bool lanes = in_lanes<XA>::value && in_lanes<XB>::value;
    TA* Bs = As + M * K;
    if constexpr (!lanes) {
      to_scratch(a, As);  // (its barriers also cover the second copy)
      if (owner<XB>(t)) {
#pragma unroll
        for (int k = 0; k < XB::N; ++k) Bs[elem<XB>(t, k)] = b.v[k];
      }
      block_sync();
    }
    auto fa = [&](int e) { if constexpr (lanes) return shfl_bits(a.v[0], e); else return As[e]; };
    auto fb = [&](int e) { if constexpr (lanes) return shfl_bits(b.v[0], e); else return Bs[e]; };
    XC r;
#pragma unroll
    for (int k = 0; k < XC::N; ++k) {
      const int e = elem<XC>(t, k), i = e / N, j = e % N;
      auto acc = wide(c.v[k]);
      for (int kk = 0; kk < K; ++kk) acc += wide(fa(i * K + kk)) * wide(fb(kk * N + j));
      r.v[k] = to<TC>(acc);
    }
    return r;
  }
}

}  // namespace tile
}  // namespace tt
