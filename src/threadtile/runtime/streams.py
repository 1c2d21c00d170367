"""Streams and events, numba's host API (``cuda.stream()``, ``cuda.event()``...): on the GPU,
or in the simulator.

Outside simulation they are CUDA streams and events (``runtime/driver.py``). Made under
``simulate()`` (or with ``THREADTILE_SIMULATE`` set) they belong to the simulator, where a
launch or a copy runs to the end before it returns: a stream never has work pending, so
``synchronize`` returns at once, a callback runs as it is added, ``async_done()`` is already
done; an event records the host's clock (``time.perf_counter``), so ``elapsed_time`` measures
host time between two records.

Handles are numba's: the default stream is 0, the legacy default stream 1
(``CU_STREAM_LEGACY``), the per-thread default stream 2 (``CU_STREAM_PER_THREAD``), in both
modes. A stream that ``stream()`` makes in the simulator has a handle of its own that is no
CUDA stream: a GPU launch or copy refuses it. ``external_stream(ptr)`` wraps a handle another
library made (in the simulator too, where nothing waits on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import weakref

from ..errors import CudaDriverError
from . import driver, mode

__all__ = ["Stream", "Event", "stream", "default_stream", "legacy_default_stream",
           "per_thread_default_stream", "external_stream", "event", "event_elapsed_time"]

LEGACY, PER_THREAD = 1, 2  # CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
_fake = itertools.count(0x5170_0000, 0x100)  # simulated streams' and events' handles


class Stream:
    """A CUDA stream (numba's ``Stream``): ``handle`` (an int; ``int(stream)`` too),
    ``external`` (made by another library), ``simulated``."""

    __slots__ = ("handle", "external", "simulated", "_finalizer", "__weakref__")

    def __init__(self, handle: int, *, external: bool = False, simulated: bool = False,
                 owned: bool = False):
        self.handle = int(handle)
        self.external = external
        self.simulated = simulated
        self._finalizer = weakref.finalize(self, driver.stream_destroy, self.handle) \
            if owned else None

    def __int__(self) -> int:
        return self.handle

    def __repr__(self) -> str:
        names = {0: "default", LEGACY: "legacy default", PER_THREAD: "per-thread default"}
        what = names.get(self.handle) or ("external" if self.external else "stream")
        where = " (simulated)" if self.simulated else ""
        return f"<CUDA {what} stream 0x{self.handle:x}{where}>"

    def __cuda_stream__(self) -> tuple[int, int]:
        """The CUDA stream protocol: ``(0, handle)``. A stream the simulator made is no CUDA
        stream, which a GPU launch must not be given."""
        if self.simulated and not self.external and self.handle > PER_THREAD and \
                not mode.requested():
            raise TypeError(f"{self!r} was made under threadtile.simulate(): it is no CUDA "
                            "stream, and this work runs on the GPU. Make the stream with "
                            "threadtile.stream() outside simulate()")
        return 0, self.handle

    def synchronize(self) -> None:
        """Wait until the work queued on this stream has completed."""
        if not self.simulated:
            driver.stream_synchronize(self.handle)

    @contextlib.contextmanager
    def auto_synchronize(self):
        """A context whose exit waits for this stream (``with s.auto_synchronize(): ...``)."""
        yield self
        self.synchronize()

    def add_callback(self, callback, arg=None) -> None:
        """Call ``callback(stream, status, arg)`` once the work queued so far is done (status
        0). Here it is called before ``add_callback`` returns: after the stream's work in the
        simulator (there is none pending), after a synchronize on the GPU."""
        self.synchronize()
        callback(self, 0, arg)

    def async_done(self) -> asyncio.Future:
        """A future of the running event loop that completes (with None) when the work queued
        so far has."""
        loop = asyncio.get_running_loop()
        if self.simulated:
            fut = loop.create_future()
            fut.set_result(None)
            return fut
        return loop.run_in_executor(None, self._wait)

    def _wait(self) -> None:
        self.synchronize()


def _simulating() -> bool:
    return mode.requested()


def stream() -> Stream:
    """A new stream."""
    if _simulating():
        return Stream(next(_fake), simulated=True)
    driver.ensure_device(driver.current_index())
    return Stream(driver.stream_create(), owned=True)


def default_stream() -> Stream:
    """The default stream (handle 0: the legacy default stream, which waits for and blocks
    the other blocking streams)."""
    return Stream(0, simulated=_simulating())


def legacy_default_stream() -> Stream:
    """The legacy default stream, by its own handle (``CU_STREAM_LEGACY``)."""
    return Stream(LEGACY, simulated=_simulating())


def per_thread_default_stream() -> Stream:
    """This thread's default stream (``CU_STREAM_PER_THREAD``)."""
    return Stream(PER_THREAD, simulated=_simulating())


def external_stream(ptr: int) -> Stream:
    """A stream another library made, by its handle (``ptr``, an int). Not destroyed here."""
    return Stream(int(ptr), external=True, simulated=_simulating())


class Event:
    """A CUDA event (numba's ``Event``): ``record``, ``synchronize``, ``wait``, ``query``,
    ``elapsed_time``; ``timing`` says whether it can be timed."""

    __slots__ = ("handle", "timing", "simulated", "_time", "_finalizer", "__weakref__")

    def __init__(self, timing: bool = True):
        self.timing = bool(timing)
        self.simulated = _simulating()
        self._time: float | None = None
        if self.simulated:
            self.handle = next(_fake)
            self._finalizer = None
        else:
            driver.ensure_device(driver.current_index())
            self.handle = driver.event_create(self.timing)
            self._finalizer = weakref.finalize(self, driver.event_destroy, self.handle)

    def __repr__(self) -> str:
        where = " (simulated)" if self.simulated else ""
        return f"<CUDA event 0x{self.handle:x}{where}>"

    def record(self, stream=0) -> None:
        """Record the event on ``stream``: it completes when the work queued before it has."""
        if self.simulated:
            self._time = time.perf_counter()
        else:
            driver.event_record(self.handle, driver.stream_handle(stream))

    def synchronize(self) -> None:
        """Wait until the event has completed."""
        if not self.simulated:
            driver.event_synchronize(self.handle)

    def wait(self, stream=0) -> None:
        """Make the work queued on ``stream`` after this call wait for the event."""
        if not self.simulated:
            driver.stream_wait_event(driver.stream_handle(stream), self.handle)

    def query(self) -> bool:
        """Whether the event has completed."""
        return True if self.simulated else driver.event_query(self.handle)

    def elapsed_time(self, evtend: Event) -> float:
        """Milliseconds from this event to ``evtend`` (both recorded, both timed)."""
        return event_elapsed_time(self, evtend)


def event(timing: bool = True) -> Event:
    """A new event; ``timing=False`` makes one that cannot be timed (and costs less)."""
    return Event(timing)


def event_elapsed_time(evtstart: Event, evtend: Event) -> float:
    """Milliseconds between two recorded events. In the simulator, host time between the two
    ``record`` calls."""
    if evtstart.simulated != evtend.simulated:
        raise ValueError("elapsed time between an event of the simulator and one of the GPU")
    if not evtstart.simulated:
        return driver.event_elapsed_ms(evtstart.handle, evtend.handle)
    for e in (evtstart, evtend):
        if not e.timing:
            raise CudaDriverError(f"{e!r} was made with timing=False and cannot be timed",
                                  name="CUDA_ERROR_INVALID_HANDLE")
        if e._time is None:
            raise CudaDriverError(f"{e!r} has not been recorded",
                                  name="CUDA_ERROR_INVALID_HANDLE")
    return (evtend._time - evtstart._time) * 1000.0
