"""threadtile: GPU kernels for Python programmers, from threads to tiles.

``import threadtile as cuda`` gives numba.cuda's names for thread-level kernels: ``jit``,
``threadIdx``..., ``shared.array``, ``syncthreads``, ``atomic``, warp shuffles, ``to_device``...
Kernels run on the GPU through CUDA C++ compiled by NVRTC, or on the CPU under ``simulate()``.
See docs/language.md for what a kernel may contain.
"""

from .backends.sim import simulate
from .errors import (
    BarrierDivergenceError,
    KernelCompileError,
    KernelRuntimeError,
    LaunchError,
    NvrtcError,
    OutOfBoundsError,
    RaceError,
    ThreadtileError,
    UninitializedReadError,
)
from .frontend.specialize import Constant
from .jit import Kernel, jit
from .lang.thread import (
    activemask,
    all_sync,
    any_sync,
    atomic,
    ballot_sync,
    blockDim,
    blockIdx,
    brev,
    cbrt,
    clz,
    const,
    eq_sync,
    ffs,
    fma,
    fp16,
    grid,
    gridDim,
    gridsize,
    laneid,
    lanemask_lt,
    local,
    match_all_sync,
    match_any_sync,
    popc,
    selp,
    shared,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    threadIdx,
    warpsize,
)
from .lang.types import (
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .runtime import (
    DeviceArray,
    HostArrayWarning,
    RawKernel,
    as_cuda_array,
    cdiv,
    device_array,
    device_array_like,
    dim3,
    gpu_available,
    synchronize,
    to_device,
)

__all__ = [n for n in dir() if not n.startswith("_")]
from .version import __version__
