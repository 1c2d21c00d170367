"""``kernel.resources()`` on a GPU (the driver's attributes and occupancy calculator) against
the answers made without one (ptxas's report and ir/resources.py's limits) for the same
architecture; NVTX ranges around real launches."""

import numpy as np
import pytest

import threadtile as cuda
import threadtile.tile as ct
from threadtile.lang.types import float32
from threadtile.runtime import driver, profiling

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not driver.gpu_available(), reason="needs an NVIDIA GPU")]


def k_local_shared(x, n):
    lm = cuda.local.array(200, float32)
    sm = cuda.shared.array(100, float32)
    i = cuda.grid(1)
    for j in range(200):
        lm[j] = j * x[j % n]
    sm[i % 100] = 2
    cuda.syncthreads()
    if i < n:
        x[i] = lm[i % 200] + sm[i % 100]


@pytest.mark.parametrize("block, shared", [(32, 0), (128, 0), (256, 0), (1024, 0),
                                           (128, 40 * 1024), (256, 100 * 1024)])
def test_driver_and_ptxas_agree(block, shared):
    k = cuda.jit(k_local_shared)
    x = np.zeros(256, np.float32)
    gpu = k.resources(x, 256, block=block, shared_bytes=shared)
    arch = driver.current_device().arch
    cpu = k.resources(x, 256, block=block, shared_bytes=shared, arch=arch)
    assert gpu.source == "driver" and cpu.source == "ptxas" and gpu.arch == cpu.arch
    assert gpu.registers == cpu.registers
    assert gpu.static_shared == cpu.static_shared == 400
    assert gpu.local_bytes == cpu.local_bytes
    assert gpu.max_threads_per_block == cpu.max_threads_per_block
    if shared > driver.current_device().max_shared_per_block_optin:
        pytest.skip("more shared memory than this GPU allows a block")
    assert gpu.blocks_per_sm == cpu.blocks_per_sm, (str(gpu), str(cpu))
    assert gpu.limited_by == cpu.limited_by


@ct.kernel
def tile_mm(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    i = ct.bid(0)
    j = ct.bid(1)
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for kk in range(ct.cdiv(a.shape[1], TK)):
        acc = ct.mma(ct.load(a, index=(i, kk), shape=(TM, TK)),
                     ct.load(b, index=(kk, j), shape=(TK, TN)), acc)
    ct.store(c, index=(i, j), tile=acc.astype(c.dtype))


def test_tile_kernel_on_the_gpu():
    torch = pytest.importorskip("torch")
    a = torch.zeros((256, 256), dtype=torch.float16, device="cuda")
    r = tile_mm.resources(a, a, a, 128, 128, 64)
    assert r.source == "driver" and r.scratch > 0 and r.blocks_per_sm >= 1
    cpu = tile_mm.resources(a, a, a, 128, 128, 64, arch=driver.current_device().arch)
    assert (r.registers, r.dynamic_shared, r.blocks_per_sm) == (
        cpu.registers, cpu.dynamic_shared, cpu.blocks_per_sm)


def test_nvtx_ranges_around_real_launches(monkeypatch):
    """With a binding, launches run inside ranges and still compute the right thing."""
    profiling.reset()
    if profiling._find_binding() is None:
        pytest.skip("no NVTX binding (pip install nvtx)")
    monkeypatch.setenv(profiling.NVTX_ENV, "1")

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    d = cuda.to_device(np.zeros(64, np.float32))
    for _ in range(3):
        inc[1, 64](d)
    assert (d.copy_to_host() == 3).all()
    profiling.reset()
