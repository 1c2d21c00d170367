"""Fuzzer regression (seed 1, minimized by hand from the NVRTC failure it caused): ``-(-x)``.

The CUDA backend printed a negation of a negation as ``--x``, which C++ reads as a
pre-decrement: on an integer the kernel silently computed ``x - 1`` *and* decremented ``x``
(here ``out[1]`` would be wrong too); on a ``float16`` NVRTC refused it ("no operator "--"
matches these operands"). It prints ``- -x`` now. The simulator's modes agree (``x``), so
only the generated source shows it, without a GPU.
"""

import numpy as np
import pytest

import threadtile as cuda


@cuda.jit
def negneg(a, out):
    x = a[0]
    out[0] = -(-x)  # noqa: B002  (ruff's AST check sees --x too; the parentheses are the point)
    out[1] = x


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_negation_of_negation_is_not_a_decrement(dtype):
    src = negneg.cuda_source(np.zeros(2, dtype), np.zeros(2, dtype))
    assert "--x" not in src
    # int32 negates through tt::wneg (a wrapping negation: -INT_MIN is INT_MIN, as in NumPy)
    assert ("- -x" in src) if dtype != np.int32 else ("tt::wneg(tt::wneg(x))" in src)


def test_simulator_keeps_x():
    from threadtile.backends.sim import simulate  # noqa: PLC0415

    out = np.zeros(2, np.int32)
    with simulate():
        negneg[1, 1](np.array([5], np.int32), out)
    assert out.tolist() == [5, 5]
