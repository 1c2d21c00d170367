"""Hand-written CUDA C++, compiled in-process with NVRTC and launched on torch tensors.

The lecture builds this with torch's load_inline (a C++ toolchain and tens of seconds); here it
is NVRTC, in well under a second, with no compiler installed.

    python examples/raw_kernel.py
"""

import numpy as np

import threadtile

SRC = r"""
extern "C" __global__ void rgb_to_grey(const unsigned char* x, unsigned char* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.2989f * x[i] + 0.5870f * x[i + n] + 0.1140f * x[i + 2 * n];
}
"""


def main() -> None:
    k = threadtile.RawKernel(SRC, "rgb_to_grey")
    cubin = k.compile(arch="sm_90")
    print(f"compiled without a GPU: {len(cubin):,} bytes of sm_90 cubin")
    from threadtile.runtime.driver import gpu_available

    if not gpu_available():
        return
    img = np.random.default_rng().integers(0, 256, (3, 64, 64), dtype=np.uint8)
    x = threadtile.to_device(img)
    out = threadtile.device_array((64, 64), np.uint8)
    n = 64 * 64
    k[threadtile.cdiv(n, 256), 256](x, out, n)
    ref = (0.2989 * img[0] + 0.5870 * img[1] + 0.1140 * img[2]).astype(np.uint8)
    print("max difference from NumPy:", np.abs(out.copy_to_host().astype(int) - ref).max())


if __name__ == "__main__":
    main()
