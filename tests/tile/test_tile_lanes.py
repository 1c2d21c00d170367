"""Small tiles moved by shuffles (tile/shapes.h ``in_lanes``): a tile of at most 32 elements
that divide 32 is held whole by every warp, so permute, extract, insert, cat, broadcasts and
the scalar mma of such tiles read the elements they need from the lane that holds them, with
no scratch and no barrier. cuTile's FFT sample is a chain of them: 7.8 -> 3.8 us on the H200
(300 barriers a warp before). Checked in the simulator and on the GPU (``target``) against
NumPy in float64 with fresh inputs and poisoned outputs, and in the PTX (no barrier)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct
from threadtile.runtime import nvrtc

ConstInt = ct.Constant[int]


@ct.kernel
def small_chain(X, W, Out, Parts):
    """A batch of (2, 2, 4) tiles through every lanes path: a 3-d matmul by a (2, 2) matrix
    (the frontend's per-batch extract, mma and insert), a permute, a broadcast of a (4, 1)
    column, a cat and an extract; Parts gets the real and imaginary halves of X."""
    bid = ct.bid(0)
    x = ct.load(X, index=(bid, 0, 0), shape=(2, 2, 4))
    w = ct.reshape(ct.load(W, index=(0, 0), shape=(2, 2)), (1, 2, 2))
    y = ct.matmul(w, x)                                   # (2, 2, 4)
    y = ct.permute(y, (0, 2, 1))                          # (2, 4, 2)
    col = ct.reshape(ct.load(W, index=(0, 0), shape=(2, 2)), (4, 1))
    y = y * col                                           # broadcast (4, 1) -> (2, 4, 2)
    both = ct.cat((y, x.reshape((2, 4, 2))), axis=-1)     # (2, 4, 4)
    ct.store(Out, index=(bid, 0, 0), tile=both)
    re = ct.extract(both, index=(0, 0, 0), shape=(2, 4, 2))
    im = ct.extract(both, index=(0, 0, 1), shape=(2, 4, 2))
    ct.store(Parts, index=(bid, 0, 0), tile=re - im)


def _reference(x, w):
    x, w = x.astype(np.float64), w.astype(np.float64)
    y = np.einsum("ij,bjk->bik", w, x).transpose(0, 2, 1) * w.reshape(4, 1)
    both = np.concatenate([y, x.reshape(2, 4, 2)], axis=-1)
    return both, both[..., :2] - both[..., 2:]


@pytest.mark.parametrize("blocks", [1, 3])
def test_small_chain(target, rng, blocks):
    x = rng.standard_normal((2 * blocks, 2, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2)).astype(np.float32)
    out = target.to_device(poison((2 * blocks, 4, 4), np.float32))
    parts = target.to_device(poison((2 * blocks, 4, 2), np.float32))
    target.launch_tile(small_chain, (blocks,), target.to_device(x), target.to_device(w), out,
                       parts)
    got, got_parts = target.to_host(out), target.to_host(parts)
    for b in range(blocks):
        both, diff = _reference(x[2 * b:2 * b + 2], w)
        np.testing.assert_allclose(got[2 * b:2 * b + 2], both, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got_parts[2 * b:2 * b + 2], diff, rtol=1e-5, atol=1e-5)


def _args():
    z = np.zeros
    return z((4, 2, 4), np.float32), z((2, 2), np.float32), z((4, 4, 4), np.float32), \
        z((4, 4, 2), np.float32)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_no_barrier(arch):
    src = small_chain.cuda_source(*_args())
    ptx = nvrtc.compile_ptx(src, arch)
    ptx = ptx if isinstance(ptx, str) else ptx.code.decode()
    assert "shfl.sync.idx" in ptx
    assert "bar.sync" not in ptx and "barrier.sync" not in ptx
    assert compile_cubin(small_chain, *_args(), arch=arch)[:4] == b"\x7fELF"
