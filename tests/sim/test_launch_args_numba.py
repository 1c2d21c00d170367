"""numba's launch conveniences: In/Out/InOut, kernel.extensions, forall, launch errors."""

import numpy as np
import pytest

import threadtile as cuda


@cuda.jit
def set3(a):
    a[0] = 3


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i] * 2


@pytest.mark.parametrize("wrap, expected", [(cuda.In, 0), (cuda.InOut, 3), (cuda.Out, 3),
                                            (lambda a: a, 3)])
def test_in_out_inout(target, wrap, expected):
    h = np.zeros(1, np.int64)
    with target.running():
        set3[1, 1](wrap(h))
    assert h[0] == expected


def test_out_is_copied_back_and_in_is_read(target, rng):
    src = rng.standard_normal(100).astype(np.float32)
    keep = src.copy()
    dst = np.full(100, np.nan, np.float32)
    with target.running():
        copy.forall(100)(cuda.In(src), cuda.Out(dst))
    np.testing.assert_array_equal(dst, keep * 2)
    np.testing.assert_array_equal(src, keep)


def test_extensions_prepare_args_and_retrieve():
    seen, after = [], []

    class ReadOnly:
        def prepare_args(self, ty, val, *, stream, retr):
            seen.append(ty)
            retr.append(lambda: after.append(True))
            return ty, cuda.In(val) if isinstance(val, np.ndarray) else val

    k = cuda.jit(extensions=[ReadOnly()])(set3.py_func)
    h = np.zeros(1, np.int64)
    with cuda.simulate():
        k[1, 1](h)
    assert h[0] == 0 and after == [True] and seen[0] is not None
    with pytest.raises(ValueError, match="prepare_args"):
        cuda.jit(extensions=[object()])(set3.py_func)


def test_forall_zero_and_negative():
    h = np.zeros(1, np.int64)
    with cuda.simulate():
        set3.forall(0)(h)  # launches nothing
    assert h[0] == 0
    with pytest.raises(ValueError, match="negative task count"):
        set3.forall(-1)


def test_launch_configuration_errors():
    h = np.zeros(1, np.int64)
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        set3(h)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[1, 2, 3, 4\]"):
        set3[(1, 2, 3, 4), 1]
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[2.0\]"):
        set3[2.0, 1]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[3.0\]"):
        set3[2, 3.0]
    with pytest.raises(ValueError, match="blockdim must be >= 1"):
        set3[1, 0]
