"""numba's host API the same way on both targets: device arrays, their views and copies,
streams, events, mapped and managed memory, device queries (the ``target`` fixture: in the
simulator's memory under ``simulate()``, in GPU memory on the GPU); then GPU-only tests of the
real streams, events and device queries, and of arrays of one kind used by the other.

Results are compared with NumPy on the host, in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import threadtile as cuda
from threadtile.errors import CudaDriverError
from threadtile.runtime import driver


@cuda.jit
def axpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def scale_2d(x, v):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] *= v


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng()


def test_device_arrays_round_trip_through_a_kernel(target, rng):
    x, y = rng.standard_normal(300), rng.standard_normal(300)
    with target.running():
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        out = cuda.device_array_like(dx)
        axpy[cuda.cdiv(300, 128), 128](out, 2.0, dx, dy)
        got = out.copy_to_host()
        into = np.empty(300)
        out.copy_to_host(into)
        again = cuda.device_array(300)
        again.copy_to_device(out)
        third = cuda.to_device(np.zeros(300), to=cuda.device_array(300))
        third[:] = again
        final = third.copy_to_host()
    want = 2.0 * x + y
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_array_equal(into, got)
    np.testing.assert_array_equal(final, got)


def test_views_reshapes_and_assignments(target, rng):
    h = rng.standard_normal((16, 12))
    with target.running():
        d = cuda.to_device(h)
        scale_2d[(1, 1), (16, 16)](d[2:10, ::3], 3.0)  # a strided view as an argument
        d[0] = -1.0
        d[1, ::2] = np.arange(6)
        d[-1] = d[-2]
        flat = d.reshape(192)
        flat[:4] = 7
        col = d[:, 5].copy_to_host()
        t = d.T.copy_to_host()
        as_int = d.view(np.int64).copy_to_host()
        pieces = [p.copy_to_host() for p in d.ravel().split(50)]
        elem = d[3, 4]
        got = d.copy_to_host()
    want = h.copy()
    want[2:10, ::3] *= 3.0
    want[0] = -1.0
    want[1, ::2] = np.arange(6)
    want[-1] = want[-2]
    want.reshape(192)[:4] = 7
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(col, want[:, 5])
    np.testing.assert_array_equal(t, want.T)
    np.testing.assert_array_equal(as_int, want.view(np.int64))
    np.testing.assert_array_equal(np.concatenate(pieces), want.ravel())
    assert elem == want[3, 4]


def test_streams_and_events(target, rng):
    x = rng.standard_normal(1000)
    with target.running():
        s = cuda.stream()
        start, end = cuda.event(), cuda.event()
        start.record(s)
        with s.auto_synchronize():
            dx = cuda.to_device(x, stream=s)
            out = cuda.device_array(1000, stream=s)
            axpy[8, 128, s](out, -1.0, dx, dx)
        end.record(s)
        end.synchronize()
        ms = cuda.event_elapsed_time(start, end)
        got = out.copy_to_host(stream=s)
        for other in (cuda.default_stream(), cuda.legacy_default_stream(),
                      cuda.per_thread_default_stream()):
            other.synchronize()
        cuda.synchronize()
    assert ms >= 0.0 and start.query() and end.query()
    np.testing.assert_array_equal(got, np.zeros(1000))


def test_mapped_and_managed_arrays_are_written_in_place(target, rng):
    x = rng.standard_normal(64)
    with target.running():
        for make in (cuda.mapped_array, cuda.managed_array):
            m = make(64, np.float64)
            m[:] = 0.0
            axpy[1, 64](m, 1.0, cuda.to_device(x), cuda.to_device(x))
            cuda.synchronize()
            np.testing.assert_array_equal(np.asarray(m), 2 * x)
        p = cuda.pinned_array(64)
        p[:] = x
        np.testing.assert_array_equal(cuda.to_device(p).copy_to_host(), x)


def test_foreign_arrays_through_the_interface(target, rng):
    class Foreign:
        def __init__(self, arr):
            self._arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    h = rng.standard_normal((8, 8))
    with target.running():
        d = cuda.to_device(h)
        f = Foreign(d)
        scale_2d[(1, 1), (8, 8)](f, 0.5)
        w = cuda.as_cuda_array(f)
        got = w.copy_to_host()
        assert w.ptr == d.ptr and cuda.is_cuda_array(f)
    np.testing.assert_array_equal(got, h * 0.5)


def test_device_queries(target):
    with target.running():
        dev = cuda.get_current_device()
        assert dev.compute_capability >= (7, 0) and dev.WARP_SIZE == 32
        assert dev.MAX_THREADS_PER_BLOCK == 1024 and len(cuda.gpus) >= 1
        assert cuda.gpus.current == dev and cuda.current_context().device == dev
        free, total = cuda.current_context().get_memory_info()
        assert 0 < free <= total
        assert cuda.is_available() and cuda.is_float16_supported()
        assert cuda.is_bfloat16_supported() == (dev.compute_capability >= (8, 0))


# -- the GPU only -------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not driver.gpu_available(), reason="needs a GPU")
def test_gpu_device_arrays_are_gpu_memory():
    d = cuda.to_device(np.arange(10.0))
    assert not d.simulated and d.device >= 0 and d.gpu_data.host is None
    assert driver.pointer_device(d.ptr) == d.device
    dev = cuda.get_current_device()
    assert not dev.simulated and dev.name == driver.current_device().name
    assert dev.MULTIPROCESSOR_COUNT == driver.current_device().multiprocessor_count
    assert cuda.select_device(dev.id) == dev
    with cuda.gpus[dev.id]:
        assert cuda.gpus.current == dev


@pytest.mark.gpu
@pytest.mark.skipif(not driver.gpu_available(), reason="needs a GPU")
def test_gpu_streams_events_and_callbacks():
    import asyncio
    import time

    s = cuda.stream()
    assert not s.simulated and s.handle not in (0, 1, 2)
    assert s.__cuda_stream__() == (0, s.handle)
    calls = []
    s.add_callback(lambda *a: calls.append(a), 7)
    assert calls == [(s, 0, 7)]

    async def wait():
        return await s.async_done()

    assert asyncio.run(wait()) is None
    a, b = cuda.event(), cuda.event()
    a.record()
    time.sleep(0.01)
    b.record()
    b.synchronize()
    assert b.elapsed_time(a) <= 0.0 <= a.elapsed_time(b)
    untimed = cuda.event(timing=False)
    untimed.record()
    untimed.synchronize()
    with pytest.raises(CudaDriverError):
        a.elapsed_time(untimed)
    ext = cuda.external_stream(s.handle)
    assert ext.external and int(ext) == s.handle
    ext.synchronize()


@pytest.mark.gpu
@pytest.mark.skipif(not driver.gpu_available(), reason="needs a GPU")
def test_gpu_and_simulated_arrays_meet():
    h = np.arange(12.0)
    g = cuda.to_device(h)
    with cuda.simulate():
        s = cuda.to_device(g)  # a GPU array under simulation: copied to the simulator
        assert s.simulated
        axpy[1, 32](g, 2.0, g, g)  # a GPU array in a simulated launch: there and back
        s2 = cuda.device_array(12)
        s2.copy_to_device(g)
    np.testing.assert_array_equal(g.copy_to_host(), 3 * h)
    np.testing.assert_array_equal(s.copy_to_host(), h)
    np.testing.assert_array_equal(s2.copy_to_host(), 3 * h)
    back = cuda.to_device(s2)  # and a simulated one outside: copied to the GPU
    assert not back.simulated
    np.testing.assert_array_equal(back.copy_to_host(), 3 * h)
    with pytest.raises(TypeError, match="device array of the simulator"):
        axpy[1, 32](s2, 1.0, g, g)
