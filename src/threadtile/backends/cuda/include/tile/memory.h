// tile/memory.h: load and store of the tile at a tile index of an array (load_shared and
// store_shared for shared memory), the array offsets under them, and a tile's runs of V
// elements as machine words.
//
// Paths of load and store: the tile's type chooses at compile time, where the tile lies (a
// block-uniform test) and the array's strides and alignment at run time:
//   vector interior  V > 1, axes in order, the tile's rank the array's (1 or 2), the tile
//                    wholly inside, rows contiguous and aligned to a run: straight-line vector
//                    accesses from one base per thread
//   runs, interior   the same but rows strided or unaligned: load_runs / store_runs (a call),
//                    element by element from one base
//   runs, edge       V > 1 otherwise (the tile crosses the array's edge, or rank 3 and up):
//                    load_runs / store_runs, a run wholly inside, contiguous and aligned one
//                    vector access, any other element by element with bounds tests
//   scalar interior  V = 1, axes in order, rank 1 or 2, the tile wholly inside: one base plus
//                    compile-time offsets per slot
//   per element      anything else (an axis order, the tile's rank not the array's, an edge
//                    tile of V = 1, a tile smaller than the block): coordinates and a bounds
//                    test per element
//   shared           load_shared / store_shared: one of the above between two barriers
// (An accumulator kept in fragments is stored by mma.h's store_fragments.)
#pragma once

#include "layout.h"

namespace tt {
namespace tile {

// ---- memory ----------------------------------------------------------------------------------
template <class T, int R>
__device__ __forceinline__ int64_t offset(const ::tt::Array<T, R>& a, const int64_t* ix) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < R; ++d) off += ix[d] * a.strides[d];
  return off;
}
template <class T, int R>
__device__ __forceinline__ int64_t offset(const ::tt::CArray<T, R>& a, const int64_t* ix) {
  int64_t off = ix[0];
#pragma unroll
  for (int d = 1; d < R; ++d) off = off * a.shape[d] + ix[d];
  return off;
}

// the array index of element e of the tile at tile index ix (array axis Ord[d] is tile axis d)
template <class TL, int R, int... Ord>
__device__ __forceinline__ bool locate(int e, const int64_t* ix, const int64_t* shape,
                                       int64_t* g) {
  constexpr int ord[] = {Ord..., 0};
  int c[R + 1];
  coords<TL>(e, c);
  bool in = true;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    const int a = sizeof...(Ord) ? ord[d] : d;
    g[a] = ix[d] * traits<TL>::dim(d) + c[d];
    in = in && g[a] >= 0 && g[a] < shape[a];
  }
  return in;
}

// The interior fast path of loads and stores: a tile of rank 1 or 2 whose rows span a
// multiple of V NT elements, axes in order, lying wholly inside the array (a block-uniform test).
// Slot k of thread t is then row c / D, column c % D + t V + k % V of the tile, with
// c = (k / V) V NT, so every address is one base per thread plus compile-time multiples of
// the strides: no per-element coordinates or bounds tests. Each run of V slots is one vector
// access when the rows are contiguous and the address is aligned to the run's size. A 2-d
// tile of runs of one element (V = 1) whose rows are shorter than the block and divide it
// (cuTile's Transpose sample: 128x128 on 256 threads) takes it too: slot k of thread t is
// row t / D + k NT / D, column t % D.
template <class T, int R>
__device__ __forceinline__ int64_t stride_of(const ::tt::Array<T, R>& a, int d) {
  return a.strides[d];
}
template <class T, int R>
__device__ __forceinline__ int64_t stride_of(const ::tt::CArray<T, R>& a, int d) {
  int64_t s = 1;  // (a C-contiguous array's strides come from its shape)
#pragma unroll
  for (int e = R - 1; e > 0; --e)
    if (e > d) s *= a.shape[e];
  return s;
}
// rows shorter than the block, which they divide, in runs of one element (above)
template <class TL, int R>
struct short_rows {
  static constexpr bool value = R == 2 && traits<TL>::V == 1 &&
                                traits<TL>::NT % traits<TL>::dim(R - 1) == 0 &&
                                traits<TL>::dim(R - 1) % traits<TL>::NT != 0;
};
template <class TL, int NO, int R>
struct interior_ok {
  static constexpr bool value = NO == 0 && traits<TL>::rank == R && (R == 1 || R == 2) &&
                                traits<TL>::E >= traits<TL>::NT &&
                                (traits<TL>::dim(R - 1) % (traits<TL>::NT * traits<TL>::V) == 0 ||
                                 short_rows<TL, R>::value);
};
// the element offset of thread t's slot 0 of the tile at ix, or -1 when the tile is not
// wholly inside the array
template <class TL, class Arr, int R>
__device__ __forceinline__ int64_t interior_base(const Arr& a, const int64_t* ix, int t) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    const int64_t lo = ix[d] * traits<TL>::dim(d);
    if (lo < 0 || lo + traits<TL>::dim(d) > a.shape[d]) return -1;
    constexpr int D = traits<TL>::dim(R - 1);
    if constexpr (short_rows<TL, R>::value)
      off += (d == R - 1 ? lo + t % D : lo + t / D) * stride_of(a, d);
    else
      off += (d == R - 1 ? lo + t * traits<TL>::V : lo) * stride_of(a, d);
  }
  return off;
}
template <class TL, class Arr, int R>
__device__ __forceinline__ int64_t interior_slot(const Arr& a, int k) {
  constexpr int NT = traits<TL>::NT, V = traits<TL>::V, D = traits<TL>::dim(R - 1);
  if constexpr (short_rows<TL, R>::value) return int64_t(k * (NT / D)) * stride_of(a, 0);
  const int c = (k / V) * (V * NT);
  if constexpr (R == 1) return int64_t(c + k % V) * stride_of(a, 0);
  else return int64_t(c / D) * stride_of(a, 0) + int64_t(c % D + k % V) * stride_of(a, 1);
}
// whether the runs of V elements from p are contiguous and aligned for vector accesses
template <int V, class T, int R, template <class, int> class Arr>
__device__ __forceinline__ bool runs_ok(const Arr<T, R>& a, const T* p) {
  return stride_of(a, R - 1) == 1 && (R == 1 || stride_of(a, 0) % V == 0) &&
         reinterpret_cast<unsigned long long>(p) % (V * sizeof(T)) == 0;
}
// whether the run of V elements at array index g (inside the array), address p, of an edge
// tile lies wholly inside the array, contiguous and aligned: then it is one vector access
template <int V, class T, int R, template <class, int> class Arr>
__device__ __forceinline__ bool run_inside(const Arr<T, R>& a, const int64_t* g, const T* p) {
  return g[R - 1] + V <= a.shape[R - 1] && stride_of(a, R - 1) == 1 &&
         reinterpret_cast<unsigned long long>(p) % (V * sizeof(T)) == 0;
}
// moving V elements of T as machine words: 16-byte words for runs of 16 bytes or more
template <int B> struct word_of { typedef uint4 type; };
template <> struct word_of<2> { typedef unsigned short type; };
template <> struct word_of<4> { typedef unsigned int type; };
template <> struct word_of<8> { typedef uint2 type; };
// the words of one run of V elements of T (a vector access moves them at once)
template <int V, class T> struct run_words {
  static constexpr int B = V * int(sizeof(T)), W = B < 16 ? B : 16;
  typedef typename word_of<W>::type Word;
  Word w[B / W];
};
template <int V, class T>
__device__ __forceinline__ run_words<V, T> vload_run(const T* p) {
  run_words<V, T> r;
#pragma unroll
  for (int i = 0; i < int(sizeof(r.w) / sizeof(r.w[0])); ++i)
    r.w[i] = reinterpret_cast<const typename run_words<V, T>::Word*>(p)[i];
  return r;
}
template <int V, class T>
__device__ __forceinline__ run_words<V, T> pack_run(const T* e) {
  run_words<V, T> r;
  memcpy(&r, e, sizeof r);
  return r;
}
// a tile's runs as machine words, and a tile index, passed to and from load_runs
template <class TL> struct tile_words {
  run_words<traits<TL>::V, typename traits<TL>::elem> w[TL::N / traits<TL>::V];
};
template <int R> struct index_of {
  int64_t v[R];
};
// load's paths other than an interior tile with vector runs, each run as its words: an
// interior tile of unaligned or strided rows, or an edge tile, whose runs wholly inside the
// array, contiguous and aligned, are still one vector access each (a run never crosses a row:
// the last axis is a multiple of V)
template <class TL, class Arr, int R>
__device__ __noinline__ tile_words<TL> load_runs(const Arr a, typename traits<TL>::elem pad,
                                                 const index_of<R> ix) {
  constexpr int V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int t = tid();
  tile_words<TL> w;
  if constexpr (interior_ok<TL, 0, R>::value) {
    const int64_t base = interior_base<TL, Arr, R>(a, ix.v, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; k += V) {
        T e[V];
#pragma unroll
        for (int i = 0; i < V; ++i) e[i] = a.data[base + interior_slot<TL, Arr, R>(a, k + i)];
        w.w[k / V] = pack_run<V>(e);
      }
      return w;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; k += V) {
    int64_t g[R];
    const bool in = locate<TL, R>(elem<TL>(t, k), ix.v, a.shape, g);
    const T* p = a.data + offset(a, g);
    if (in && run_inside<V>(a, g, p)) {
      w.w[k / V] = vload_run<V>(p);
    } else {
      T e[V];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const bool e_in = locate<TL, R>(elem<TL>(t, k + i), ix.v, a.shape, g);
        e[i] = e_in ? a.data[offset(a, g)] : pad;
      }
      w.w[k / V] = pack_run<V>(e);
    }
  }
  return w;
}
template <int V, class T>
__device__ __forceinline__ void vstore_run(T* p, const run_words<V, T>& w) {
#pragma unroll
  for (int i = 0; i < int(sizeof(w.w) / sizeof(w.w[0])); ++i)
    reinterpret_cast<typename run_words<V, T>::Word*>(p)[i] = w.w[i];
}
// store's paths other than an interior tile with vector runs (as load_runs)
template <class TL, class Arr, int R>
__device__ __noinline__ void store_runs(const Arr a, const tile_words<TL> w, const index_of<R> ix) {
  constexpr int V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int t = tid();
  if constexpr (interior_ok<TL, 0, R>::value) {
    const int64_t base = interior_base<TL, Arr, R>(a, ix.v, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; k += V) {
        T e[V];
        memcpy(e, &w.w[k / V], sizeof(e));
#pragma unroll
        for (int i = 0; i < V; ++i) a.data[base + interior_slot<TL, Arr, R>(a, k + i)] = e[i];
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; k += V) {
    int64_t g[R];
    const bool in = locate<TL, R>(elem<TL>(t, k), ix.v, a.shape, g);
    T* p = a.data + offset(a, g);
    if (in && run_inside<V>(a, g, p)) {
      vstore_run<V>(p, w.w[k / V]);
    } else {
      T e[V];
      memcpy(e, &w.w[k / V], sizeof(e));
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (locate<TL, R>(elem<TL>(t, k + i), ix.v, a.shape, g)) a.data[offset(a, g)] = e[i];
    }
  }
}
// A tile of rank 3 or more whose axes are ones but its last and one other (attention's V
// tile (1, TN, 1, D) of a (batch, seq, heads, dim) cache) loads and stores as the 2-d tile of
// those two axes over a 2-d view of the array (the fixed indices folded into its base), so it
// takes the 2-d paths (vector runs from one base): the same elements in the same slots.
template <class TL>
__host__ __device__ constexpr int squeeze_axis() {
  constexpr int R = traits<TL>::rank;
  int p = -1;
  for (int d = 0; d < R - 1; ++d) {
    if (traits<TL>::dim(d) == 1) continue;
    if (p >= 0) return -1;
    p = d;
  }
  return R > 2 && traits<TL>::dim(R - 1) > 1 && p >= 0 ? p : -1;
}
template <class TL>
using squeezed_tile = typename traits<TL>::template with2<traits<TL>::dim(squeeze_axis<TL>()),
                                                          traits<TL>::dim(traits<TL>::rank - 1)>;
// the element type of a global array (void for other kinds: no fast path assumes them)
template <class A> struct array_elem { typedef void type; };
template <class U, int N> struct array_elem<::tt::Array<U, N>> { typedef U type; };
template <class U, int N> struct array_elem<::tt::CArray<U, N>> { typedef U type; };
// the 2-d view of axes P and R - 1 at the fixed indices ix (false: one lies outside the array)
template <int P, class T, int R, template <class, int> class Arr>
__device__ __forceinline__ bool view2(const Arr<T, R>& a, const int64_t* ix,
                                      ::tt::Array<T, 2>& v) {
  int64_t off = 0;
  bool in = true;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) {
    if (d == P) continue;
    in = in && ix[d] >= 0 && ix[d] < a.shape[d];
    off += ix[d] * stride_of(a, d);
  }
  v.data = a.data + off;
  v.shape[0] = a.shape[P], v.shape[1] = a.shape[R - 1];
  v.strides[0] = stride_of(a, P), v.strides[1] = stride_of(a, R - 1);
  return in;
}

// the tile axis that an axis order puts on the array's last axis (R - 1 for none)
template <int R, int... Ord>
__host__ __device__ constexpr int tile_axis_of_last() {
  constexpr int ord[] = {Ord..., 0};
  for (int d = 0; d < R; ++d)
    if (sizeof...(Ord) && ord[d] == R - 1) return d;
  return R - 1;
}
// scratch index of tile element e where a load goes by memory rows: one element of padding
// every 32, so that threads writing down a column of the tile hit different banks
__device__ __forceinline__ int by_rows_slot(int e) { return e + (e >> 5); }
// whether a load of TL in axis order Ord goes through the scratch by memory rows (below);
// backends/cuda/tiles.py reserves the scratch for it by the same rule
template <class TL, int R, int... Ord>
struct by_memory_rows {
  static constexpr int IA = tile_axis_of_last<R, Ord...>();
  static constexpr bool value = IA != R - 1 && traits<TL>::rank == R &&
      traits<TL>::dim(IA) >= 8 &&
      (traits<TL>::E + traits<TL>::E / 32) * sizeof(typename traits<TL>::elem) <=
          TT_SCRATCH_BYTES;
};
// each thread's elements of TL from the scratch that load_by_memory_rows filled (once every
// thread has written its part), the scratch free again after
template <class TL>
__device__ __forceinline__ TL from_rows_scratch(const typename traits<TL>::elem* buf) {
  block_sync();
  TL r;
  const int t = tid();
#pragma unroll
  for (int k = 0; k < TL::N; ++k) r.v[k] = buf[by_rows_slot(elem<TL>(t, k))];
  block_sync();  // the scratch is free again
  return r;
}
// A load whose order puts the array's contiguous last axis on another tile axis than the
// last (K^T read from a (batch, seq, heads, dim) cache): per element, neighbouring threads
// would read elements a whole array row apart. The block reads the tile in memory's order
// instead (neighbouring threads, neighbouring addresses) into the scratch, then each thread
// takes its own elements from there.
template <class TL, int R, int... Ord, class Arr>
__device__ __noinline__ TL load_by_memory_rows(const Arr a, typename traits<TL>::elem pad,
                                               index_of<R> at) {
  typedef typename traits<TL>::elem T;
  constexpr int IA = by_memory_rows<TL, R, Ord...>::IA, NT = traits<TL>::NT;
  constexpr int ord[] = {Ord..., 0};
  constexpr int E = traits<TL>::E, PER = (E + NT - 1) / NT;
  T* buf = scratch<T>();
  // Runs of VW elements along the array's contiguous axis, one 16-byte load each, where the
  // tile's extent on that axis is a multiple of VW and the runs come out even over the block
  // (a block-uniform choice: the array's last axis unit-stride, its base aligned to 16
  // bytes, the tile wholly inside the array; each run's address is then aligned too when the
  // other axes' strides are multiples of VW, which the test checks as well).
  constexpr int VW = 16 / int(sizeof(T));
  constexpr int DI = traits<TL>::dim(IA);
  if constexpr (VW > 1 && DI % VW == 0 && (E / VW) % NT == 0 &&
                same<T, typename array_elem<Arr>::type>::value) {
    bool fast = stride_of(a, R - 1) == 1 &&
                reinterpret_cast<unsigned long long>(a.data) % 16 == 0;
#pragma unroll
    for (int d = 0; d < R; ++d) {
      const int64_t lo = at.v[d] * traits<TL>::dim(d);
      fast = fast && lo >= 0 && lo + traits<TL>::dim(d) <= a.shape[ord[d]] &&
             (ord[d] == R - 1 || stride_of(a, ord[d]) % VW == 0);
    }
    if (fast) {
      constexpr int RUNS = E / VW / NT;
      run_words<VW, T> w[RUNS];
      int co0[RUNS][R];
      const int t0 = tid();
#pragma unroll
      for (int i = 0; i < RUNS; ++i) {  // every run's load issued before any is stored
        int rest = t0 + i * NT;
        co0[i][IA] = (rest % (DI / VW)) * VW;
        rest /= DI / VW;
#pragma unroll
        for (int d = R - 1; d >= 0; --d) {
          if (d == IA) continue;
          co0[i][d] = rest % traits<TL>::dim(d);
          rest /= traits<TL>::dim(d);
        }
        int64_t g[R];
#pragma unroll
        for (int d = 0; d < R; ++d) g[ord[d]] = at.v[d] * traits<TL>::dim(d) + co0[i][d];
        w[i] = vload_run<VW>(a.data + offset(a, g));
      }
      block_sync();  // the scratch's last reader is done
#pragma unroll
      for (int i = 0; i < RUNS; ++i) {
        T e[VW];
        memcpy(e, &w[i], sizeof e);
        int co[R];
#pragma unroll
        for (int d = 0; d < R; ++d) co[d] = co0[i][d];
#pragma unroll
        for (int u = 0; u < VW; ++u) {
          co[IA] = co0[i][IA] + u;
          buf[by_rows_slot(flat<TL>(co))] = e[u];
        }
      }
      return from_rows_scratch<TL>(buf);
    }
  }
  // every element's load issued before any is stored (a loop of load, store would wait for
  // each load in turn)
  T v[PER];
  int slot[PER];
  const int t0 = tid();
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int c = t0 + i * NT;
    int co[R], rest = c;
    co[IA] = rest % traits<TL>::dim(IA);
    rest /= traits<TL>::dim(IA);
#pragma unroll
    for (int d = R - 1; d >= 0; --d) {
      if (d == IA) continue;
      co[d] = rest % traits<TL>::dim(d);
      rest /= traits<TL>::dim(d);
    }
    int64_t g[R];
    bool in = E % NT == 0 || c < E;
#pragma unroll
    for (int d = 0; d < R; ++d) {
      g[ord[d]] = at.v[d] * traits<TL>::dim(d) + co[d];
      in = in && g[ord[d]] >= 0 && g[ord[d]] < a.shape[ord[d]];
    }
    v[i] = in ? a.data[offset(a, g)] : pad;
    slot[i] = by_rows_slot(flat<TL>(co));
  }
  block_sync();  // the scratch's last reader is done
#pragma unroll
  for (int i = 0; i < PER; ++i)
    if (E % NT == 0 || t0 + i * NT < E) buf[slot[i]] = v[i];
  return from_rows_scratch<TL>(buf);
}
// a tile from an array: elements outside it get `pad` and are never read
template <class TL, int... Ord, class Arr, class... I>
__device__ __forceinline__ TL load(const Arr& a, typename traits<TL>::elem pad, I... idx) {
  constexpr int R = sizeof...(I), V = traits<TL>::V;
  typedef typename traits<TL>::elem T;
  const int64_t ix[R] = {int64_t(idx)...};
  const int t = tid();
  TL r;
  if constexpr (sizeof...(Ord) == 0 && traits<TL>::rank == R && squeeze_axis<TL>() >= 0) {
    constexpr int P = squeeze_axis<TL>();
    typedef squeezed_tile<TL> T2;
    static_assert(T2::N == TL::N && traits<T2>::V == V, "the same slots");
    ::tt::Array<T, 2> v;
    if (!view2<P>(a, ix, v)) {
#pragma unroll
      for (int k = 0; k < TL::N; ++k) r.v[k] = pad;
      return r;
    }
    const T2 x = load<T2>(v, pad, ix[P], ix[R - 1]);
#pragma unroll
    for (int k = 0; k < TL::N; ++k) r.v[k] = x.v[k];
    return r;
  }
  if constexpr (V > 1 && sizeof...(Ord) == 0 && traits<TL>::rank == R) {
    // The interior path with vector runs is straight-line code; the others (an edge tile,
    // unaligned or strided rows) are a function call, so that the paths meet on the runs'
    // machine words: a 16-bit tile then stays packed two values to a register until used.
    tile_words<TL> w;
    bool fast = false;
    const T* p0 = a.data;
    if constexpr (interior_ok<TL, 0, R>::value) {
      const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
      if (base >= 0) {
        p0 = a.data + base;
        fast = runs_ok<V>(a, p0);
      }
      if (fast) {
#pragma unroll
        for (int k = 0; k < TL::N; k += V)
          w.w[k / V] = vload_run<V>(p0 + interior_slot<TL, Arr, R>(a, k));
      }
    }
    if (!fast) w = load_runs<TL, Arr, R>(a, pad, index_of<R>{{int64_t(idx)...}});
#pragma unroll
    for (int k = 0; k < TL::N; k += V) memcpy(r.v + k, &w.w[k / V], sizeof(w.w[0]));
    return r;
  }
  if constexpr (interior_ok<TL, sizeof...(Ord), R>::value) {  // runs of one element
    const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; ++k) r.v[k] = a.data[base + interior_slot<TL, Arr, R>(a, k)];
      return r;
    }
  }
  if constexpr (by_memory_rows<TL, R, Ord...>::value)
    return load_by_memory_rows<TL, R, Ord...>(a, pad, index_of<R>{{int64_t(idx)...}});
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    int64_t g[R];
    bool in = locate<TL, R, Ord...>(elem<TL>(t, k), ix, a.shape, g);
    r.v[k] = in ? a.data[offset(a, g)] : pad;
  }
  return r;
}
// from shared memory: the block synchronizes before (thread code wrote it) and after
template <class TL, int... Ord, class Arr, class... I>
__device__ __forceinline__ TL load_shared(const Arr& a, typename traits<TL>::elem pad,
                                          I... idx) {
  block_sync();
  TL r = load<TL, Ord...>(a, pad, idx...);
  block_sync();
  return r;
}

// a tile into an array: elements outside it are skipped
template <int... Ord, class Arr, class TL, class... I>
__device__ __forceinline__ void store(const Arr& a, const TL& x, I... idx) {
  constexpr int R = sizeof...(I);
  const int64_t ix[R] = {int64_t(idx)...};
  const int t = tid();
  if (!owner<TL>(t)) return;
  if constexpr (sizeof...(Ord) == 0 && traits<TL>::rank == R && squeeze_axis<TL>() >= 0) {
    typedef squeezed_tile<TL> T2;
    typedef typename traits<TL>::elem T;
    ::tt::Array<T, 2> v;
    if (!view2<squeeze_axis<TL>()>(a, ix, v)) return;
    T2 y;
#pragma unroll
    for (int k = 0; k < TL::N; ++k) y.v[k] = x.v[k];
    store(v, y, ix[squeeze_axis<TL>()], ix[R - 1]);
    return;
  }
  if constexpr (traits<TL>::V > 1 && sizeof...(Ord) == 0 && traits<TL>::rank == R) {
    // as in load: the interior path with vector runs is straight-line code, the others a call
    constexpr int V = traits<TL>::V;
    tile_words<TL> w;
#pragma unroll
    for (int k = 0; k < TL::N; k += V) memcpy(&w.w[k / V], x.v + k, sizeof(w.w[0]));
    if constexpr (interior_ok<TL, 0, R>::value) {
      const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
      if (base >= 0 && runs_ok<V>(a, a.data + base)) {
#pragma unroll
        for (int k = 0; k < TL::N; k += V)
          vstore_run<V>(a.data + base + interior_slot<TL, Arr, R>(a, k), w.w[k / V]);
        return;
      }
    }
    store_runs<TL, Arr, R>(a, w, index_of<R>{{int64_t(idx)...}});
    return;
  }
  if constexpr (interior_ok<TL, sizeof...(Ord), R>::value) {  // runs of one element
    const int64_t base = interior_base<TL, Arr, R>(a, ix, t);
    if (base >= 0) {
#pragma unroll
      for (int k = 0; k < TL::N; ++k) a.data[base + interior_slot<TL, Arr, R>(a, k)] = x.v[k];
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < TL::N; ++k) {
    int64_t g[R];
    if (locate<TL, R, Ord...>(elem<TL>(t, k), ix, a.shape, g)) a.data[offset(a, g)] = x.v[k];
  }
}
template <int... Ord, class Arr, class TL, class... I>
__device__ __forceinline__ void store_shared(const Arr& a, const TL& x, I... idx) {
  block_sync();
  store<Ord...>(a, x, idx...);
  block_sync();
}

}  // namespace tile
}  // namespace tt
