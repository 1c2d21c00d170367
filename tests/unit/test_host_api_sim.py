"""numba's host API in the simulator, without a GPU: device arrays in the simulator's memory
(runtime/devicearray.py, hostarrays.py, memory.py), streams and events (streams.py), devices
and contexts (devices.py), and the errors for arrays of one kind used by the other.

Every array result is checked against NumPy doing the same on a host copy.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import threadtile as cuda
from threadtile.errors import CudaDriverError
from threadtile.runtime import memory
from threadtile.runtime.devicearray import SimDeviceArray


@cuda.jit
def add_scalar(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += v


@cuda.jit
def add_2d(x, v):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] += v


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng()


# -- device arrays ------------------------------------------------------------------------------

def test_to_device_copy_to_host_and_a_kernel_in_place(rng):
    a = rng.standard_normal(37)
    with cuda.simulate():
        d = cuda.to_device(a)
        assert isinstance(d, SimDeviceArray) and isinstance(d, cuda.DeviceArray)
        assert d.simulated and (d.shape, d.strides, d.dtype) == (a.shape, a.strides, a.dtype)
        assert (d.size, d.ndim, d.nbytes, len(d)) == (37, 1, a.nbytes, 37)
        add_scalar[2, 32](d, 1.5)
        got = d.copy_to_host()
    np.testing.assert_array_equal(got, a + 1.5)
    np.testing.assert_array_equal(a, a)  # the host array was copied, not used
    np.testing.assert_array_equal(d.copy_to_host(), a + 1.5)  # still readable after simulate()
    out = np.empty_like(a)
    assert d.copy_to_host(out) is out
    np.testing.assert_array_equal(out, a + 1.5)
    np.testing.assert_array_equal(np.asarray(d), a + 1.5)  # __array__ copies


def test_simulated_memory_is_aligned_and_uninitialised_arrays_have_any_values():
    with cuda.simulate():
        for n in (1, 3, 1000):
            d = cuda.device_array(n, np.int8)
            assert d.ptr % memory.ALIGN == 0
            assert d.copy_to_host().shape == (n,)


def test_device_array_orders_strides_and_like(rng):
    with cuda.simulate():
        c = cuda.device_array((3, 4), np.float32)
        f = cuda.device_array((3, 4), np.float32, order="F")
        assert c.strides == (16, 4) and f.strides == (4, 12)
        assert c.flags == {"C_CONTIGUOUS": True, "F_CONTIGUOUS": False}
        assert f.is_f_contiguous() and not f.is_c_contiguous()
        for like_fn in (cuda.device_array_like, cuda.pinned_array_like, cuda.mapped_array_like):
            for src, ref in ((np.zeros((10, 12)), None), (np.zeros((10, 12), order="F"), None),
                             (np.zeros((10, 12))[::2, ::2], None),
                             (cuda.device_array((10, 12))[::2, ::2],
                              np.zeros((10, 12))[::2, ::2]),
                             (cuda.device_array((10, 12), order="F")[::2, ::2],
                              np.zeros((10, 12), order="F")[::2, ::2]),
                             (np.zeros((4, 5, 6)).transpose(1, 0, 2), None)):
                like = like_fn(src)
                want = np.zeros_like(src if ref is None else ref)
                assert (like.shape, like.dtype) == (src.shape, src.dtype)
                assert like.strides == want.strides, (like_fn, src.shape, src.strides)
        assert cuda.device_array(()).shape == ()
        assert cuda.device_array_like(np.ndarray(())).shape == ()


def test_indexing_slicing_and_elements_as_numpy(rng):
    h = rng.standard_normal((6, 7))
    with cuda.simulate():
        d = cuda.to_device(h)
    for key in (2, (1, 3), (-1, -2), np.int64(4), slice(1, 5), (slice(None), 3),
                (slice(None, None, 2), slice(6, 0, -2)), Ellipsis, (Ellipsis, 1), (None, 2),
                (1, None), (slice(2, 2),), (slice(None), slice(10, 20))):
        got, want = d[key], h[key]
        if isinstance(want, np.ndarray):
            assert got.shape == want.shape and got.strides == want.strides, key
            if not any(s < 0 for s in got.strides):
                np.testing.assert_array_equal(got.copy_to_host(), want)
        else:
            assert got == want and type(got) is type(want)
    with pytest.raises(IndexError, match="out of bounds"):
        d[6]
    with pytest.raises(IndexError, match="too many indices"):
        d[1, 2, 3]
    with pytest.raises(IndexError, match="integers, slices"):
        d[np.array([1, 2])]
    with pytest.raises(NotImplementedError, match="negative strides"):
        d[::-1].copy_to_host()


def test_views_share_memory_and_kernels_write_through_them(rng):
    h = rng.standard_normal((8, 8))
    with cuda.simulate():
        d = cuda.to_device(h)
        add_2d[(1, 1), (8, 8)](d[1:5, ::2], 10.0)
        add_scalar[1, 32](d[7], -1.0)
        add_scalar[1, 32](d.reshape(64)[:3], 100.0)
    want = h.copy()
    want[1:5, ::2] += 10
    want[7] -= 1
    want.reshape(64)[:3] += 100
    np.testing.assert_array_equal(d.copy_to_host(), want)


def test_setitem_broadcasts_casts_and_copies_between_views(rng):
    h = rng.standard_normal(10)
    with cuda.simulate():
        d = cuda.to_device(h)
        d[:5] = np.pi
        d[7] = 3  # cast as a kernel's assignment casts
        d[::3] = d[1:5]  # a device array, overlapping
        e = cuda.to_device(np.zeros((3, 4), np.int32))
        e[:] = np.arange(4)  # broadcast along the first axis
        e[1:, 1:] = [[7, 8, 9]]
        with pytest.raises(ValueError, match="Can't copy sequence"):
            e[:] = np.arange(3)
        with pytest.raises(ValueError, match="Can't assign 3-D array"):
            e[0] = np.zeros((1, 1, 4))
    want = h.copy()
    want[:5] = np.pi
    want[7] = 3
    want[::3] = want[1:5].copy()
    np.testing.assert_array_equal(d.copy_to_host(), want)
    we = np.zeros((3, 4), np.int32)
    we[:] = np.arange(4)
    we[1:, 1:] = [[7, 8, 9]]
    np.testing.assert_array_equal(e.copy_to_host(), we)


def test_reshape_ravel_view_squeeze_split_transpose(rng):
    h = rng.standard_normal((4, 6))
    with cuda.simulate():
        d = cuda.to_device(h)
        f = cuda.to_device(np.asfortranarray(h))
    np.testing.assert_array_equal(d.reshape(3, 8).copy_to_host(), h.reshape(3, 8))
    np.testing.assert_array_equal(d.reshape((-1, 4)).copy_to_host(), h.reshape(-1, 4))
    np.testing.assert_array_equal(f.reshape(8, 3, order="F").copy_to_host(),
                                  h.reshape(8, 3, order="F"))
    np.testing.assert_array_equal(f.ravel(order="A").copy_to_host(), h.ravel(order="F"))
    np.testing.assert_array_equal(d.ravel().copy_to_host(), h.ravel())
    with pytest.raises(NotImplementedError, match="requires copying"):
        d[:, ::2].reshape(12)
    with pytest.raises(NotImplementedError, match="non-contiguous"):
        d[:, ::2].ravel()
    with pytest.raises(ValueError, match="only specify one unknown"):
        d.reshape(-1, -1)
    with pytest.raises(ValueError, match="cannot reshape"):
        d.reshape(5, 5)
    v = d.view(np.int64)
    assert v.gpu_data is d.gpu_data
    np.testing.assert_array_equal(v.copy_to_host(), h.view(np.int64))
    np.testing.assert_array_equal(d.view(np.float32).copy_to_host(), h.view(np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        f.view(np.float32)
    s = d.reshape(1, 4, 1, 6)
    assert s.squeeze().shape == (4, 6) and s.squeeze(axis=2).shape == (1, 4, 6)
    with pytest.raises(ValueError, match="size not equal to one"):
        s.squeeze(axis=1)
    parts = d.ravel().split(10)
    assert [p.size for p in parts] == [10, 10, 4]
    np.testing.assert_array_equal(np.concatenate([p.copy_to_host() for p in parts]),
                                  h.ravel())
    t = d[::2, ::2].T  # numba's device arrays transpose into a new C-contiguous array
    assert t.shape == (3, 2) and t.strides == (16, 8) and t.gpu_data is not d.gpu_data
    np.testing.assert_array_equal(t.copy_to_host(), h[::2, ::2].T)
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="non-2D"):
        d.reshape(2, 3, 4).transpose()


def test_copy_to_device_checks_like_numba(rng):
    h = rng.standard_normal((3, 4))
    with cuda.simulate():
        d = cuda.device_array((3, 4))
        d.copy_to_device(h)
        np.testing.assert_array_equal(d.copy_to_host(), h)
        e = cuda.device_array((3, 4))
        e.copy_to_device(d)  # device to device
        np.testing.assert_array_equal(e.copy_to_host(), h)
        cuda.to_device(h * 2, to=e)
        np.testing.assert_array_equal(e.copy_to_host(), h * 2)
        with pytest.raises(TypeError, match="incompatible dtype"):
            d.copy_to_device(h.astype(np.float32))
        with pytest.raises(ValueError, match="incompatible shape"):
            d.copy_to_device(np.zeros((4, 3)))
        with pytest.raises(ValueError, match="non-contiguous"):
            d[:, ::2].copy_to_device(np.zeros((3, 2)))
        with pytest.raises(ValueError, match="non-contiguous"):
            cuda.to_device(h[:, ::2])
        d.copy_to_device(np.zeros((0,)))  # nothing to copy: numba returns at once
        z = cuda.to_device(np.arange(0))
        assert z.shape == (0,) and z.copy_to_host().shape == (0,)
        assert z.__cuda_array_interface__["data"][0] == 0
        z[:] = cuda.to_device(range(0))
        assert cuda.to_device(d) is d  # device memory comes back as it is
        d0, new = cuda.devicearray.auto_device(2)
        assert new and d0.shape == () and d0.copy_to_host() == 2
        with pytest.raises(ValueError, match="non-contiguous"):
            cuda.devicearray.auto_device(np.arange(10.0)[:-1:2])


def test_cuda_array_interface_of_simulated_arrays_resolves_to_their_memory(rng):
    class Foreign:  # numba's ForeignArray: only the interface
        def __init__(self, arr):
            self._arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    h = rng.standard_normal((4, 5))
    with cuda.simulate():
        d = cuda.to_device(h)
        cai = d.__cuda_array_interface__
        assert cai["strides"] is None and cai["stream"] is None and cai["version"] == 3
        assert d[:, 1].__cuda_array_interface__["strides"] == (40,)
        assert cuda.is_cuda_array(d) and not cuda.is_cuda_array(h)
        f = Foreign(d)
        assert cuda.is_cuda_array(f)
        w = cuda.as_cuda_array(f)
        assert isinstance(w, SimDeviceArray) and w.ptr == d.ptr
        add_2d[(1, 1), (8, 8)](f, 1.0)  # a kernel takes the foreign object in place
        np.testing.assert_array_equal(w.copy_to_host(), h + 1)
        sliced = cuda.from_cuda_array_interface(d[1:, ::2].__cuda_array_interface__)
        np.testing.assert_array_equal(sliced.copy_to_host(), h[1:, ::2] + 1)
        masked = dict(cai, mask=d)
        with pytest.raises(NotImplementedError, match="Masked arrays"):
            cuda.from_cuda_array_interface(masked)
        s = cuda.stream()
        bound = cuda.device_array(3, stream=s)
        assert bound.__cuda_array_interface__["stream"] == s.handle
        imported = cuda.as_cuda_array(Foreign(bound))
        assert imported.stream.external and imported.stream.handle == s.handle
        assert cuda.as_cuda_array(Foreign(cuda.device_array(3))).stream == 0


def test_pinned_mapped_and_managed_arrays_in_the_simulator(rng):
    with cuda.simulate():
        p = cuda.pinned_array((2, 3), np.float32)
        assert type(p) is np.ndarray and p.shape == (2, 3)
        for m in (cuda.mapped_array(10), cuda.managed_array(10), cuda.mapped_array_like(p)):
            assert isinstance(m, np.ndarray) and cuda.is_cuda_array(m)
            assert m.__cuda_array_interface__["stream"] is None
        m = cuda.mapped_array(10, np.float64)
        m[:] = rng.standard_normal(10)
        want = m + 2.5
        add_scalar[1, 32](m, 2.5)  # the kernel writes the host array itself
        np.testing.assert_array_equal(m, want)
        add_scalar[1, 32](cuda.as_cuda_array(m), 1.0)
        np.testing.assert_array_equal(m, want + 1)
        s = cuda.stream()
        assert cuda.mapped_array(4, stream=s).__cuda_array_interface__["stream"] == s.handle
        with cuda.pinned(p), cuda.defer_cleanup():
            pass


# -- arrays of one kind used by the other -------------------------------------------------------

def test_a_simulated_array_outside_simulation_is_refused_by_a_launch_with_the_fix():
    with cuda.simulate():
        d = cuda.to_device(np.zeros(4))
        m = cuda.mapped_array(4)
    with pytest.raises(TypeError, match=r"device array of the simulator .* "
                                        r"threadtile.to_device\(a.copy_to_host\(\)\)"):
        add_scalar[1, 32](d, 1.0)
    with pytest.raises(TypeError, match="mapped array of the simulator"):
        add_scalar[1, 32](m, 1.0)
    d[1] = 5  # its own methods still work on the host
    np.testing.assert_array_equal(d.copy_to_host(), [0, 5, 0, 0])


def test_simulated_streams_are_refused_by_gpu_work():
    with cuda.simulate():
        s = cuda.stream()
        assert s.__cuda_stream__() == (0, s.handle)
    with pytest.raises(TypeError, match="was made under threadtile.simulate"):
        s.__cuda_stream__()
    assert cuda.default_stream().__cuda_stream__() == (0, 0)


def test_the_environment_variable_simulates_the_host_api_too(monkeypatch):
    monkeypatch.setenv("THREADTILE_SIMULATE", "1")
    d = cuda.to_device(np.arange(5.0))
    assert d.simulated
    add_scalar[1, 8](d, 1.0)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(5.0) + 1)
    assert cuda.is_available() and cuda.get_current_device().simulated


def test_memory_of_a_collected_simulated_array_is_forgotten():
    with cuda.simulate():
        d = cuda.device_array(100)
        ptr = d.ptr
        assert memory.find_simulated(ptr + 8) is d.gpu_data
        del d
    import gc

    gc.collect()
    found = memory.find_simulated(ptr)
    assert found is None or found.ptr != ptr or found.nbytes != 800


# -- streams and events -------------------------------------------------------------------------

def test_streams_run_work_at_once_in_the_simulator():
    calls = []
    with cuda.simulate():
        s = cuda.stream()
        assert s.simulated and not s.external and int(s) == s.handle
        assert s.handle not in (0, 1, 2) and cuda.stream().handle != s.handle
        assert cuda.default_stream().handle == 0
        assert cuda.legacy_default_stream().handle == 1
        assert cuda.per_thread_default_stream().handle == 2
        e = cuda.external_stream(0x12345678)
        assert e.external and int(e.handle) == 0x12345678
        for st in (s, e, cuda.default_stream()):
            st.synchronize()
        with s.auto_synchronize():
            d = cuda.to_device(np.arange(4.0), stream=s)
            add_scalar[1, 32, s](d, 1.0)
        np.testing.assert_array_equal(d.copy_to_host(stream=s), np.arange(4.0) + 1)
        s.add_callback(lambda *a: calls.append(a), "arg")
        assert calls == [(s, 0, "arg")]

        async def wait():
            return await s.async_done()

        assert asyncio.run(wait()) is None
        assert d.bind(s).stream is s


def test_events_time_the_host_clock():
    import time

    with cuda.simulate():
        start, end = cuda.event(), cuda.event(timing=True)
        start.record()
        time.sleep(0.02)
        end.record(stream=cuda.stream())
        end.synchronize()
        end.wait(cuda.stream())
        assert start.query() and end.query()
        ms = start.elapsed_time(end)
        assert 15 <= ms < 5000 and cuda.event_elapsed_time(start, end) == ms
        with pytest.raises(CudaDriverError, match="not been recorded"):
            cuda.event().elapsed_time(end)
        untimed = cuda.event(timing=False)
        untimed.record()
        with pytest.raises(CudaDriverError, match="timing=False"):
            start.elapsed_time(untimed)


# -- devices and contexts -----------------------------------------------------------------------

def test_the_simulated_device(capsys):
    with cuda.simulate():
        dev = cuda.get_current_device()
        assert dev.simulated and dev.id == 0 and dev.compute_capability == (9, 0)
        assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE == 32
        assert dev.MULTIPROCESSOR_COUNT == 132 and dev.MAX_SHARED_MEMORY_PER_BLOCK == 49152
        assert dev.uuid.startswith("GPU-") and dev.name
        with pytest.raises(AttributeError, match="simulated device has no attribute"):
            getattr(dev, "NO_SUCH_ATTRIBUTE")  # noqa: B009  (the attribute read is the test)
        assert len(cuda.gpus) == 1 and cuda.gpus[0] is dev and cuda.gpus.current is dev
        assert list(cuda.gpus) == [dev] and cuda.list_devices() is cuda.gpus
        with cuda.gpus[0] as inside:
            assert inside is dev
        assert cuda.select_device(0) is dev
        with pytest.raises(ValueError, match="one device"):
            cuda.select_device(1)
        ctx = cuda.current_context()
        assert ctx.device is dev and ctx.compute_capability == (9, 0)
        free, total = ctx.get_memory_info()
        assert 0 < free <= total
        ctx.synchronize()
        ctx.reset()
        assert ctx.create_stream().simulated and ctx.create_event().simulated
        cuda.synchronize()
        cuda.close()
        assert cuda.is_available() and cuda.is_float16_supported()
        assert cuda.is_bfloat16_supported()
        assert cuda.detect() is True
    out = capsys.readouterr().out
    assert "Found 1 CUDA devices" in out and "[SUPPORTED]" in out and "1/1 devices" in out


def test_synchronize_needs_no_gpu():
    cuda.synchronize()  # outside simulation too: nothing was queued on a GPU
    with cuda.simulate():
        cuda.synchronize()


def test_runtime_version_names_the_toolkit_kernels_compile_with():
    major, minor = cuda.runtime.get_version()
    assert (major, minor) == (-1, -1) or major >= 12
    assert cuda.runtime.is_supported_version() == (major >= 12)


def test_a_gpu_launch_waits_for_the_stream_an_interface_names(monkeypatch):
    from threadtile.runtime import arrays, driver

    waited = []
    monkeypatch.setattr(driver, "stream_synchronize", waited.append)

    class OnStream:  # another library's array, still being written on stream 0x77
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False),
                                    "version": 3, "strides": None, "stream": 0x77}

    class NoStream:
        __cuda_array_interface__ = dict(OnStream.__cuda_array_interface__, stream=None)

    info = arrays.describe(OnStream())
    assert waited == [0x77] and info.ptr == 0x1000 and info.shape == (4,)
    arrays.describe(NoStream())
    assert arrays.kernel_type(OnStream()) == info.type  # a type question waits for nothing
    assert waited == [0x77]


def test_broadcast_arrays_copy_their_core(rng):
    with cuda.simulate():
        a = np.broadcast_to(rng.standard_normal(1), (10,))
        d = cuda.to_device(a)
        assert d.strides == (0,) and d.alloc_size == 8
        np.testing.assert_array_equal(d.copy_to_host(), a)
        b = np.broadcast_to(rng.standard_normal((3, 1)), (3, 4))
        e = cuda.to_device(b)
        np.testing.assert_array_equal(e.copy_to_host(), b)
        e.copy_to_device(np.broadcast_to(np.arange(3.0)[:, None], (3, 4)))
        np.testing.assert_array_equal(e.copy_to_host(), np.repeat(np.arange(3.0)[:, None], 4, 1))


def test_ufuncs_take_and_return_foreign_device_arrays(rng):
    """A vectorize/guvectorize output given as an object with only __cuda_array_interface__
    comes back as threadtile's device array on its memory (numba returns its own)."""
    class Foreign:
        def __init__(self, arr):
            self._arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    @cuda.vectorize(["f8(f8, f8)"], target="cuda")
    def vadd(a, b):
        return a + b

    @cuda.guvectorize(["(f8, f8, f8[:])"], "(),()->()", target="cuda")
    def gadd(a, b, out):
        out[0] = a + b

    h = rng.standard_normal(10)
    with cuda.simulate():
        for f in (vadd, gadd):
            np.testing.assert_array_equal(f(Foreign(cuda.to_device(h)), 6.0).copy_to_host(),
                                          h + 6)
            out = Foreign(cuda.device_array(h.shape))
            got = f(h, 6.0, out=out)
            assert got.device_ctypes_pointer.value == out._arr.device_ctypes_pointer.value
            np.testing.assert_array_equal(got.copy_to_host(), h + 6)
