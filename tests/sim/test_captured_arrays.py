"""Global device arrays read by name (numba-cuda's capture): read and written in place, in both
simulation modes; the address is baked into the C++, and a kernel compiled for one array is
never served for another."""

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.frontend.deps import fingerprint


class Foreign:
    """Any object with a ``__cuda_array_interface__`` (numba's ForeignArray)."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def _sim(mode):
    return cuda.simulate(mode="python") if mode == "python" else cuda.simulate()


@pytest.mark.parametrize("wrap", [lambda a: a, Foreign], ids=["device", "foreign"])
def test_read_write_in_place(wrap):
    with cuda.simulate():
        host = np.arange(6, dtype=np.float32).reshape(3, 2)
        dev = cuda.to_device(host)
        g = wrap(dev)

        @cuda.jit(device=True)
        def twice(i, j):
            return g[i, j] * 2.0

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            if i < 6:
                out[i] = twice(i // 2, i % 2)
                g[i // 2, i % 2] = i + 100.0

        out = np.zeros(6, np.float32)
        k[1, 6](out)
        np.testing.assert_array_equal(out, host.ravel() * 2.0)
        np.testing.assert_array_equal(dev.copy_to_host().ravel(), np.arange(100, 106))
        # a later write by the host is seen by the next launch: the array is not frozen
        dev.copy_to_device(np.full((3, 2), 7, np.float32))
        k[1, 6](out)
        np.testing.assert_array_equal(out, np.full(6, 14.0))


def test_zero_dimensional_and_cpp():
    with cuda.simulate():
        g0 = cuda.to_device(np.array(21.0))

        @cuda.jit
        def k(out):
            out[()] = g0[()] * 2.0

        out = np.zeros((), np.float64)
        k[1, 1](out)
        assert out[()] == 42.0
        ptr = g0.__cuda_array_interface__["data"][0]
        assert f"(double*){ptr:#x}ULL" in k.cuda_source(out)
        for arch in ("sm_80", "sm_90"):
            assert compile_cubin(k, out, arch=arch)[:4] == b"\x7fELF"


def test_python_mode_reads_the_same_memory():
    with _sim("python"):
        dev = cuda.to_device(np.arange(4, dtype=np.int32))

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            out[i] = dev[i] + 1

        out = np.zeros(4, np.int32)
        k[1, 4](out)
        np.testing.assert_array_equal(out, [1, 2, 3, 4])


def test_cache_key_follows_the_array():
    with cuda.simulate():
        a = cuda.to_device(np.zeros(4, np.float32))
        b = cuda.to_device(np.zeros(4, np.float32))
        c = cuda.to_device(np.zeros(5, np.float32))
    fa, fb, fc = fingerprint(a), fingerprint(b), fingerprint(c)
    assert fa != fb and fa != fc
    assert fingerprint(a) == fa


def test_race_on_captured_array_is_reported():
    with cuda.simulate():
        flag = cuda.to_device(np.zeros(1, np.int32))

        @cuda.jit
        def k(out):
            i = cuda.grid(1)
            flag[0] = i
            out[i] = 0

        with pytest.raises(cuda.RaceError):
            k[1, 32](np.zeros(32, np.int32))
