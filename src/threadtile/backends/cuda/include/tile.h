// tile.h: the block-collective tiles behind threadtile's tile operations (docs/tiles.md), the
// one header that generated code includes (after threadtile.h, with TT_SCRATCH_BYTES defined).
//
// Layout (tile/layout.h has the whole rule): a Tile<T, NT, S...> of E elements spreads over
// the NT threads of a block in runs of V consecutive row-major elements, element e in thread
// (e / V) % NT (V: the largest power of two up to TT_VEC with the last axis a multiple of
// V NT, else 1; set by shape and NT, never by dtype); a tile smaller than the block is
// replicated. Elementwise operations, loads, stores and the reshapes and broadcasts that keep
// each element in its thread are free; operations that move elements between threads go
// through the scratch, the start of dynamic shared memory (TT_SCRATCH_BYTES), each behind a
// block_sync() (layout.h).
//
// Sections, in include order (each includes the earlier ones it uses):
//   tile/config.h       the sizes shared with the compiler (generated from ir/tiling.py)
//   tile/layout.h       Tile, traits, metaprogramming, element <-> (thread, slot), the scratch
//   tile/elementwise.h  scalar conversions, full/arange, astype, arithmetic, math, where
//   tile/shapes.h       broadcast, reshape, permute; to_scratch
//   tile/reduce.h       reductions and scans
//   tile/memory.h       load and store
//   tile/atomic.h       atomics and fences
//   tile/gather.h       gather and scatter: elements at tiles of indices
//   tile/mma.h          mma: its plan, fragments, MmaTile, the epilogue from fragments
//   tile/fragments.h    tiles kept in fragments between mmas: MmaTile elementwise, MmaRows,
//                       mma with A in registers
//   tile/operands.h     mma operands loaded straight into shared memory (SmemTile)
//   tile/wgmma.h        the wgmma instructions, one per (N, dtype) (tools/gen_wgmma.py writes it)
//   tile/kloop_sm90.h   the k loop's Hopper main loop (sm_90a: TMA + wgmma)
//   tile/kloop.h        the k loop of a matrix multiply as one operation
//
// Paths, and when each is chosen:
//   load, store (memory.h):
//     vector interior   V > 1, axes in order, rank 1 or 2, the tile inside the array, its rows
//                       contiguous and run-aligned
//     runs, interior    the same with strided or unaligned rows (load_runs / store_runs)
//     runs, edge        V > 1 otherwise: an edge tile, or rank 3 and up (load_runs / store_runs)
//     scalar interior   V = 1, axes in order, rank 1 or 2, the tile inside the array
//     per element       anything else (an axis order, a replicated tile, an edge tile of V = 1)
//     fragments         an accumulator stored as it is (mma.h store_fragments, ir/passes.py)
//   mma (mma.h):
//     fragments         an MmaTile accumulator (ir/tiling.py, fragments_ok)
//     tensor cores      a Tile accumulator of 16-bit or tfloat32 operands on shapes that tile
//     FMA               other dtypes or shapes
//   the k loop (kloop.h, kloop_sm90.h; the IR's mma_loop op, ir/kloop.py):
//     Hopper main loop  sm_90a, sm90::Plan::ok, both tensor maps present (mma_loop)
//     cp.async          the staged loop (mma_loop_staged with 3 or 2 buffers: each warp's
//                       blocks in one row strip or whole strips, the buffers within an sm_80
//                       block: ir/tiling.py staged_stages) on sm_80 and later, the arrays'
//                       rows contiguous with 16-byte aligned starts (zeros past the edges)
//     guarded           the staged loop otherwise: one buffer filled element by element
//   and within sections: astype's bfloat16 pairs (elementwise.h), broadcast and reshape in
//   registers or through the scratch (shapes.h), reduce_rows or reduce (reduce.h), atomics of
//   replicated tiles (atomic.h), gather and scatter of replicated tiles (gather.h).
#pragma once

#include "tile/layout.h"
#include "tile/elementwise.h"
#include "tile/shapes.h"
#include "tile/narrow.h"
#include "tile/reduce.h"
#include "tile/memory.h"
#include "tile/atomic.h"
#include "tile/gather.h"
#include "tile/mma.h"
#include "tile/fragments.h"
#include "tile/operands.h"
#include "tile/kloop_sm90.h"
#include "tile/kloop.h"
