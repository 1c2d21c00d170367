// coop/common.h: what the sections of threadtile.coop share (docs/coop.md). CUB's TempStorage
// of each class is a __shared__ variable of an accessor templated on that class (the dtype,
// block and items), so one class has one storage however many calls use it; the accessor
// starts with __syncthreads(), which ends any earlier use of it (the same call in a loop, or
// another call of the class). The storage's size is bounded by what ir/coop.py's
// scratch_bytes counts (BOUND), checked here at compile time.
#pragma once

namespace tt {
namespace coop {

struct Sum {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return T(a + b); }
};
struct Min {  // b where b < a, else a: the first of equal values, as Python's min
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
struct Max {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

template <int BX, int BY>
__device__ __forceinline__ int linear_tid() {
  return int(threadIdx.x) + BX * (int(threadIdx.y) + BY * int(threadIdx.z));
}

// the lanes of the logical warp of W lanes that the calling lane belongs to
template <int W>
__device__ __forceinline__ unsigned warp_mask() {
  if (W == 32) return 0xffffffffu;
  unsigned lane;  // the hardware lane (of the linear thread id, in blocks of several axes)
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return ((1u << W) - 1u) << (lane & ~unsigned(W - 1));
}

}  // namespace coop
}  // namespace tt
