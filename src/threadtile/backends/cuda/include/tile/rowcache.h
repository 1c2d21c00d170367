// tile/rowcache.h: tiles a loop loads kept in shared memory for later loops over the same range
// that load them again (ir/rowcache.py). A row read in three passes (cuTile's LayerNorm sample:
// the mean, the variance, the output) is then read from memory once.
//
// The cache sits after the scratch, in the rest of the block's dynamic shared memory (the
// launch sizes it from the array's shape, jit.py; a launch with less gets fewer slots: the
// kernel reads its size). Slot c holds the tiles the first loop's iteration c loaded, each
// thread's own registers of each at byte OFF of the slot: word j of thread t at
// OFF + (j NT + t) W, in words of W bytes (16 where the thread's bytes allow), so a warp's
// accesses are consecutive. A thread reads back only what it wrote itself: no barrier.
#pragma once

#include "layout.h"

namespace tt {
namespace tile {

// the cache's first byte: the scratch's end rounded up to 16
__device__ __forceinline__ unsigned char* cache_base() {
  return tt_dynamic_smem + ((TT_SCRATCH_BYTES + 15) / 16) * 16;
}

// the slots of SLOT bytes the block's dynamic shared memory holds after the scratch
__device__ __forceinline__ int cache_slots(int slot) {
  const int rest = int(dynamic_smem_size()) - ((TT_SCRATCH_BYTES + 15) / 16) * 16;
  return rest > 0 ? rest / slot : 0;
}

template <class X> struct cache_word {
  typedef typename traits<X>::elem T;
  static constexpr int BYTES = traits<X>::N * int(sizeof(T));  // a thread's bytes
  static constexpr int W = BYTES % 16 == 0 ? 16 : BYTES % 8 == 0 ? 8 : BYTES % 4 == 0 ? 4 :
                           BYTES % 2 == 0 ? 2 : 1;
  static constexpr int WORDS = BYTES / W;
  typedef typename cond<W == 16, uint4, typename cond<W == 8, uint2,
          typename cond<W == 4, uint32_t, typename cond<W == 2, uint16_t,
          uint8_t>::type>::type>::type>::type type;
};

// thread tid()'s registers of x into slot c (SLOT bytes a slot, x at byte OFF of it)
template <int SLOT, int OFF, class X>
__device__ __forceinline__ void cache_put(unsigned char* base, int c, const X& x) {
  typedef cache_word<X> CW;
  typedef typename CW::type Word;
  constexpr int NT = traits<X>::NT;
  Word* p = reinterpret_cast<Word*>(base + c * SLOT + OFF) + tid();
#pragma unroll
  for (int j = 0; j < CW::WORDS; ++j) {
    Word w;
    memcpy(&w, reinterpret_cast<const unsigned char*>(x.v) + j * CW::W, CW::W);
    p[j * NT] = w;
  }
}

// the tile cache_put<SLOT, OFF> wrote into slot c, as this thread holds it
template <class X, int SLOT, int OFF>
__device__ __forceinline__ X cache_get(unsigned char* base, int c) {
  typedef cache_word<X> CW;
  typedef typename CW::type Word;
  constexpr int NT = traits<X>::NT;
  const Word* p = reinterpret_cast<const Word*>(base + c * SLOT + OFF) + tid();
  X x;
#pragma unroll
  for (int j = 0; j < CW::WORDS; ++j) {
    const Word w = p[j * NT];
    memcpy(reinterpret_cast<unsigned char*>(x.v) + j * CW::W, &w, CW::W);
  }
  return x;
}

}  // namespace tile
}  // namespace tt
