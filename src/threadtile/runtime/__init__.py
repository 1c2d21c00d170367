"""The runtime: NVRTC compilation, the disk cache, the CUDA driver, arguments and launches, and
numba's host API (device arrays, streams, events, devices), on the GPU or in the simulator.

Importing it loads neither CUDA nor NVRTC; they load on first use. ``get_version()`` and
``is_supported_version()`` answer numba's ``cuda.runtime`` questions.
"""

from __future__ import annotations

from .arrays import HostArrayWarning
from .devicearray import DeviceArray, DeviceNDArray, SimDeviceArray
from .devices import (
    Context,
    Device,
    close,
    current_context,
    detect,
    get_current_device,
    gpus,
    is_available,
    is_bfloat16_supported,
    is_float16_supported,
    list_devices,
    select_device,
    synchronize,
)
from .driver import gpu_available
from .hostarrays import (
    MappedArray,
    as_cuda_array,
    auto_device,
    defer_cleanup,
    device_array,
    device_array_like,
    from_cuda_array_interface,
    is_cuda_array,
    managed_array,
    mapped_array,
    mapped_array_like,
    pinned,
    pinned_array,
    pinned_array_like,
    to_device,
)
from .launcher import cdiv, dim3
from .raw import RawKernel
from .streams import (
    Event,
    Stream,
    default_stream,
    event,
    event_elapsed_time,
    external_stream,
    legacy_default_stream,
    per_thread_default_stream,
    stream,
)

__all__ = ["Context", "Device", "DeviceArray", "DeviceNDArray", "Event", "HostArrayWarning",
           "MappedArray", "RawKernel", "SimDeviceArray", "Stream", "as_cuda_array",
           "auto_device", "cdiv", "close", "current_context", "default_stream",
           "defer_cleanup", "detect", "device_array", "device_array_like", "dim3", "event",
           "event_elapsed_time", "external_stream", "from_cuda_array_interface",
           "get_current_device", "get_version", "gpu_available", "gpus", "is_available",
           "is_bfloat16_supported", "is_cuda_array", "is_float16_supported",
           "is_supported_version", "legacy_default_stream", "list_devices", "managed_array",
           "mapped_array", "mapped_array_like", "per_thread_default_stream", "pinned",
           "pinned_array", "pinned_array_like", "select_device", "stream", "synchronize",
           "to_device"]


def get_version() -> tuple[int, int]:
    """The CUDA toolkit version kernels compile with (NVRTC's, e.g. ``(13, 0)``): numba's
    ``cuda.runtime.get_version()``; ``(-1, -1)`` where NVRTC cannot be loaded."""
    from .nvrtc import nvrtc_version  # noqa: PLC0415  (loads NVRTC: only when asked)

    try:
        return nvrtc_version()
    except Exception:  # noqa: BLE001  (no NVRTC: an answer, not an error, as numba's simulator)
        return (-1, -1)


def is_supported_version() -> bool:
    """Whether the toolkit is one threadtile compiles with (any NVRTC that loads)."""
    return get_version() >= (12, 0)
