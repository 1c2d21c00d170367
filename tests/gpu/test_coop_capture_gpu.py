"""Cooperative launches and captured global device arrays on the GPU (H100)."""

import numpy as np
import pytest
from conftest import HAVE_GPU

import threadtile as cuda
from threadtile import int32
from threadtile.errors import LaunchError

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no GPU")]


def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, M.shape[0]):
        M[row, col] = M[row - 1, M.shape[1] - col - 1] + 1
        g.sync()

def test_grid_sync_on_gpu():
    sig = (int32[:, ::1],)
    k = cuda.jit(sig)(sequential_rows)
    A = np.zeros((256, 1024), np.int32)
    blocks = 1024 // 32
    assert k.overloads[sig].max_cooperative_grid_blocks(32) >= blocks
    k[blocks, 32](A)
    np.testing.assert_array_equal(A, np.tile(np.arange(256)[:, None], (1, 1024)))
    assert k.overloads[sig].cooperative
    with pytest.raises(LaunchError, match="cooperatively"):
        k[k.overloads[sig].max_cooperative_grid_blocks(1024) + 1, 1024](
            np.zeros((2, 1 << 20), np.int32))

def test_captured_on_gpu():
    dev = cuda.to_device(np.arange(8, dtype=np.float64))

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < 8:
            out[i] = dev[i] * 3.0
            dev[i] = -1.0

    out = cuda.device_array(8, np.float64)
    k[1, 8](out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(8) * 3.0)
    np.testing.assert_array_equal(dev.copy_to_host(), np.full(8, -1.0))
