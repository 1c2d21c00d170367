"""Devices and contexts, numba's host API: ``gpus``, ``get_current_device()``,
``select_device``, ``current_context()``, ``detect()``, ``is_available()``...

Outside simulation these describe the machine's GPUs through ``runtime/driver.py``; threadtile
works in each device's primary context (the one torch and CuPy use), so ``close()`` and a
context's ``reset()`` wait for the device and release nothing another library may hold.

Under ``simulate()`` (or with ``THREADTILE_SIMULATE`` set) there is one device, the
simulator's: device 0, an sm_90 (compute capability 9.0) with an H100's limits under numba's
attribute names (``MAX_THREADS_PER_BLOCK``, ``MAX_SHARED_MEMORY_PER_BLOCK``,
``MULTIPROCESSOR_COUNT``, ``WARP_SIZE``...), the host's memory as its memory, and bfloat16 and
float16 support. Every query works without a GPU.
"""

from __future__ import annotations

import collections
import os

from . import driver, mode, streams

__all__ = ["Device", "Context", "MemoryInfo", "gpus", "get_current_device", "list_devices",
           "select_device", "close", "current_context", "is_available", "detect",
           "is_float16_supported", "is_bfloat16_supported", "synchronize", "SIMULATED_ATTRIBUTES"]

MemoryInfo = collections.namedtuple("MemoryInfo", "free total")

SIMULATED_NAME = "threadtile simulator (sm_90)"
SIMULATED_UUID = "GPU-00000000-0000-0000-0000-000000000000"
# The simulated device's attributes: CU_DEVICE_ATTRIBUTE_<name> of an H100 SXM, under the names
# numba reads them by; the simulator refuses blocks past these limits as the GPU does.
SIMULATED_ATTRIBUTES = {
    "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0,
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64, "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535, "WARP_SIZE": 32,
    "MAX_SHARED_MEMORY_PER_BLOCK": 48 * 1024, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 227 * 1024,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 228 * 1024, "TOTAL_CONSTANT_MEMORY": 64 * 1024,
    "MAX_REGISTERS_PER_BLOCK": 65536, "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
    "MULTIPROCESSOR_COUNT": 132, "MAX_THREADS_PER_MULTI_PROCESSOR": 2048,
    "MAX_BLOCKS_PER_MULTIPROCESSOR": 32, "L2_CACHE_SIZE": 50 * 1024 * 1024,
    "CLOCK_RATE": 1980000, "MEMORY_CLOCK_RATE": 2619000, "GLOBAL_MEMORY_BUS_WIDTH": 5120,
    "UNIFIED_ADDRESSING": 1, "CAN_MAP_HOST_MEMORY": 1, "MANAGED_MEMORY": 1,
    "CONCURRENT_MANAGED_ACCESS": 1, "CONCURRENT_KERNELS": 1, "COOPERATIVE_LAUNCH": 1,
    "ASYNC_ENGINE_COUNT": 2, "INTEGRATED": 0, "ECC_ENABLED": 0, "KERNEL_EXEC_TIMEOUT": 0,
    "TCC_DRIVER": 0, "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0,
    "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": 2, "COMPUTE_MODE": 0,
}


class Device:
    """One CUDA device (numba's ``Device``): ``id``, ``name``, ``compute_capability``, ``uuid``,
    ``supports_float16``, ``supports_bfloat16``, ``simulated``; numba's attribute names
    (``dev.MAX_THREADS_PER_BLOCK``: any ``CU_DEVICE_ATTRIBUTE_`` suffix) read as attributes.
    ``with device:`` makes it current for the block (``with cuda.gpus[1]: ...``)."""

    def __init__(self, index: int, simulated: bool):
        self.id = int(index)
        self.simulated = simulated
        if simulated:
            self.name = SIMULATED_NAME
            self.compute_capability = (9, 0)
            self.uuid = SIMULATED_UUID
        else:
            info = driver.get_device(self.id)
            self.name = info.name
            self.compute_capability = info.compute_capability
            try:
                self.uuid = driver.device_uuid(self.id)
            except Exception:  # noqa: BLE001  (informational; older bindings spell it otherwise)
                self.uuid = ""
        self._previous: list[int] = []

    def __getattr__(self, name: str):
        if not name.isupper():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if self.simulated:
            try:
                value = SIMULATED_ATTRIBUTES[name]
            except KeyError:
                raise AttributeError(f"the simulated device has no attribute {name!r}; it "
                                     f"has {sorted(SIMULATED_ATTRIBUTES)}") from None
        else:
            value = driver.device_attribute(self.id, name)
        setattr(self, name, value)
        return value

    @property
    def supports_float16(self) -> bool:
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self) -> bool:
        return self.compute_capability >= (8, 0)

    def get_primary_context(self) -> Context:
        """The device's primary context (the one threadtile launches in)."""
        return Context(self)

    def reset(self) -> None:
        """Wait for the device (see the module docstring: nothing is released)."""
        self.get_primary_context().reset()

    def __enter__(self) -> Device:
        self._previous.append(get_current_device().id)
        select_device(self.id)
        return self

    def __exit__(self, *exc) -> bool:
        select_device(self._previous.pop())
        return False

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.id, self.simulated) == (other.id,
                                                                         other.simulated)

    def __hash__(self) -> int:
        return hash((self.id, self.simulated))

    def __repr__(self) -> str:
        return f"<CUDA device {self.id} '{self.name}'>"


class Context:
    """A device's context (numba's ``Context``): ``device``, ``get_memory_info()``,
    ``synchronize()``, ``reset()``, streams and events made in it."""

    def __init__(self, device: Device):
        self.device = device

    @property
    def id(self) -> int:
        return self.device.id

    @property
    def compute_capability(self) -> tuple[int, int]:
        return self.device.compute_capability

    def get_memory_info(self) -> MemoryInfo:
        """``(free, total)`` bytes of device memory; for the simulated device, the host's."""
        if self.device.simulated:
            return _host_memory()
        driver.ensure_device(self.device.id)
        return MemoryInfo(*driver.mem_get_info())

    def synchronize(self) -> None:
        """Wait for all work on the device."""
        if not self.device.simulated:
            driver.ensure_device(self.device.id)
            driver.synchronize()

    def reset(self) -> None:
        """Wait for all work on the device; the primary context stays (it is shared)."""
        self.synchronize()

    def get_default_stream(self) -> streams.Stream:
        return streams.default_stream()

    def get_legacy_default_stream(self) -> streams.Stream:
        return streams.legacy_default_stream()

    def get_per_thread_default_stream(self) -> streams.Stream:
        return streams.per_thread_default_stream()

    def create_stream(self) -> streams.Stream:
        return streams.stream()

    def create_external_stream(self, ptr: int) -> streams.Stream:
        return streams.external_stream(ptr)

    def create_event(self, timing: bool = True) -> streams.Event:
        return streams.event(timing)

    def __enter__(self) -> Context:
        self.device.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        return self.device.__exit__(*exc)

    def __repr__(self) -> str:
        return f"<CUDA context of {self.device!r}>"


def _host_memory() -> MemoryInfo:
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return MemoryInfo(os.sysconf("SC_AVPHYS_PAGES") * page,
                          os.sysconf("SC_PHYS_PAGES") * page)
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
        return MemoryInfo(float("inf"), float("inf"))


_SIMULATED = Device(0, simulated=True)
_gpu_devices: dict[int, Device] = {}


def _device(index: int) -> Device:
    if mode.requested():
        if index != 0:
            raise ValueError(f"the simulator has one device, 0, not {index}")
        return _SIMULATED
    d = _gpu_devices.get(index)
    if d is None:
        d = _gpu_devices.setdefault(index, Device(index, simulated=False))
    return d


class DeviceList:
    """``cuda.gpus``: the devices (``len``, indexing, iteration) and ``current``, the device
    this thread works on. Under simulation, the simulator's one device."""

    def _count(self) -> int:
        return 1 if mode.requested() else driver.device_count()

    def __len__(self) -> int:
        return self._count()

    def __getitem__(self, index) -> Device:
        n = self._count()
        if isinstance(index, slice):
            return [_device(i) for i in range(n)[index]]
        index = int(index)
        if not -n <= index < n:
            raise IndexError(f"device index {index} out of range: there are {n} devices")
        return _device(index % n)

    def __iter__(self):
        return iter([_device(i) for i in range(self._count())])

    @property
    def current(self) -> Device:
        """The device this thread works on (device 0 until another is selected)."""
        return get_current_device()

    def __str__(self) -> str:
        return ", ".join(f"<Managed Device {d.id}>" for d in self)


gpus = DeviceList()


def get_current_device() -> Device:
    """The device this thread works on: the simulator's under simulation, else the one whose
    context is current (device 0 unless another was selected)."""
    return _SIMULATED if mode.requested() else _device(driver.current_index())


def list_devices() -> DeviceList:
    """The devices (``gpus``)."""
    return gpus


def select_device(device_id: int) -> Device:
    """Make ``device_id`` the device this thread works on, and return it."""
    dev = _device(int(device_id))
    if not dev.simulated:
        driver.activate(dev.id)
    return dev


def close() -> None:
    """Wait for the current device's work. numba's ``close`` destroys its contexts;
    threadtile's is the primary context, shared with other libraries, so it stays."""
    if not mode.requested():
        driver.synchronize()


def current_context(devnum: int | None = None) -> Context:
    """The context of device ``devnum`` (the current device when None)."""
    return Context(get_current_device() if devnum is None else _device(int(devnum)))


def is_available() -> bool:
    """Whether a device can run kernels: always under simulation, else whether the machine has
    a GPU and a driver. Never raises."""
    return True if mode.requested() else driver.gpu_available()


def is_float16_supported() -> bool:
    """Whether the current device does float16 arithmetic (it does: capability >= 5.3)."""
    return get_current_device().supports_float16


def is_bfloat16_supported() -> bool:
    """Whether the current device does bfloat16 arithmetic (capability >= 8.0; the simulated
    sm_90 does)."""
    return get_current_device().supports_bfloat16


def detect() -> bool:
    """Print the devices and what they support; return whether any can run threadtile's kernels
    (compute capability 7.0 or more)."""
    devices = list(gpus) if is_available() else []
    print(f"Found {len(devices)} CUDA devices")
    supported = 0
    for d in devices:
        ok = d.compute_capability >= (7, 0)
        supported += ok
        status = "[SUPPORTED]" if ok else "[NOT SUPPORTED: CC < 7.0]"
        print(f"id {d.id} {d.name:>40} {status:>30}")
        major, minor = d.compute_capability
        for key, value in (("Compute Capability", f"{major}.{minor}"),
                           ("PCI Device ID", d.PCI_DEVICE_ID), ("PCI Bus ID", d.PCI_BUS_ID),
                           ("UUID", d.uuid),
                           ("FP16 Support", "Yes" if d.supports_float16 else "No"),
                           ("BF16 Support", "Yes" if d.supports_bfloat16 else "No")):
            print(f"{key:>40}: {value}")
    print("Summary:")
    print(f"\t{supported}/{len(devices)} devices are supported")
    return supported > 0


def synchronize() -> None:
    """Wait for all work on the current GPU (numba's ``cuda.synchronize``). Under simulation
    work has finished when its call returns, so there is nothing to wait for, with or without
    a GPU; GPU work this thread queued before is still waited for."""
    driver.synchronize()
