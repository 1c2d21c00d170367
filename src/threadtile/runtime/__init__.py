"""The runtime: NVRTC compilation, the disk cache, the CUDA driver, arguments and launches.

Importing it loads neither CUDA nor NVRTC; they load on first use.
"""

from .arrays import (
    DeviceArray,
    HostArrayWarning,
    as_cuda_array,
    device_array,
    device_array_like,
    synchronize,
    to_device,
)
from .driver import gpu_available
from .launcher import cdiv, dim3
from .raw import RawKernel

__all__ = ["DeviceArray", "HostArrayWarning", "RawKernel", "as_cuda_array", "cdiv",
           "device_array", "device_array_like", "dim3", "gpu_available", "synchronize",
           "to_device"]
