"""threadtile: GPU kernels for Python programmers, from threads to tiles.

``import threadtile as cuda`` gives numba.cuda's names for thread-level kernels: ``jit``,
``threadIdx``..., ``shared.array``, ``syncthreads``, ``atomic``, warp shuffles; and numba's host
API: ``to_device``, ``device_array``, ``stream()``, ``event()``, ``gpus``,
``get_current_device()``... Kernels run on the GPU through CUDA C++ compiled by NVRTC, or on the
CPU under ``simulate()``, where the host API works on the host too (docs/simulator.md).
See docs/language.md for what a kernel may contain.
"""

from . import coop
from .backends.sim import simulate
from .comparison import compare
from .compile_api import (
    compile,
    compile_for_current_device,
    compile_ptx,
    compile_ptx_for_current_device,
)
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
from .frontend import execsource as _execsource
from .frontend.specialize import Constant
from .jit import Kernel, jit
from .lang.bf16 import bf16
from .lang.coop import cg
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
    Signature,
    bfloat16,
    bool_,
    complex64,
    complex128,
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
    void,
)

# numba's other names of the scalar types, for signatures (``void(f4[:], i8)``) as for casts
# (lang/signatures.py NAMES has every name a signature string may use)
from .lang.types import bool_ as b1
from .lang.types import bool_ as boolean
from .lang.types import complex64 as c8
from .lang.types import complex128 as c16
from .lang.types import float16 as f2
from .lang.types import float32 as f4
from .lang.types import float64 as double
from .lang.types import float64 as f8
from .lang.types import int8 as i1
from .lang.types import int16 as i2
from .lang.types import int32 as i4
from .lang.types import int64 as i8
from .lang.types import int64 as intp
from .lang.types import uint8 as u1
from .lang.types import uint16 as u2
from .lang.types import uint32 as u4
from .lang.types import uint64 as u8
from .lang.types import uint64 as uintp
from .lang.types import void as none
from .lang.vectors import *  # noqa: F403  (float32x4, float4, int2...: CUDA's vector types)
from .reduction import Reduce, reduce
from .runtime import (
    Context,
    Device,
    DeviceArray,
    Event,
    HostArrayWarning,
    RawKernel,
    Stream,
    as_cuda_array,
    cdiv,
    close,
    current_context,
    default_stream,
    defer_cleanup,
    detect,
    device_array,
    device_array_like,
    devicearray,
    dim3,
    event,
    event_elapsed_time,
    external_stream,
    from_cuda_array_interface,
    get_current_device,
    gpu_available,
    gpus,
    is_available,
    is_bfloat16_supported,
    is_cuda_array,
    is_float16_supported,
    is_supported_version,
    legacy_default_stream,
    list_devices,
    managed_array,
    mapped_array,
    mapped_array_like,
    per_thread_default_stream,
    pinned,
    pinned_array,
    pinned_array_like,
    select_device,
    stream,
    synchronize,
    to_device,
)
from .runtime.argwrap import In, InOut, Out
from .tuning import Config, autotune
from .ufuncs import guvectorize, vectorize

__all__ = [n for n in dir() if not n.startswith("_")]
# numba's ``cuda.random`` (not in ``__all__``: a star import must not shadow the standard
# library's random)
from . import random  # noqa: E402
from .version import __version__

# remember the sources of functions built with exec from now on (frontend/execsource.py)
_execsource.install()


def __getattr__(name: str):
    # ``threadtile.torch`` (torch_ops.py: kernels as torch custom ops) imports torch, so it
    # loads on first use: ``import threadtile`` must not import torch
    if name == "torch":
        try:
            from . import torch_ops  # noqa: PLC0415
        except ModuleNotFoundError as e:
            if e.name != "torch":
                raise
            raise ModuleNotFoundError(
                "threadtile.torch makes threadtile kernels torch operators, and PyTorch is not "
                "installed: pip install torch", name="torch") from None
        globals()["torch"] = torch_ops  # later lookups skip this function
        return torch_ops
    raise AttributeError(f"module 'threadtile' has no attribute {name!r}")
