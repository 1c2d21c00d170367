"""``kernel.resources(...)`` without a GPU: ptxas's report through NVRTC, and the occupancy
the architecture's limits allow (ir/resources.py), for thread-level and tile kernels."""

import types

import numpy as np
import pytest

import threadtile as cuda
import threadtile.tile as ct
from threadtile import resources as kernel_resources
from threadtile.compiler import Target
from threadtile.ir.resources import ARCH_LIMITS, arch_limits, max_block_threads, occupancy
from threadtile.lang.types import float32, int64
from threadtile.runtime import driver


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path))


# -- the occupancy calculator's rules ---------------------------------------------------------

def test_occupancy_by_the_calculators_rules():
    sm80, sm90 = ARCH_LIMITS["sm_80"], ARCH_LIMITS["sm_90"]
    # 38 registers: 1280 a warp, 12 warps a sub-partition, 48 warps: 6 blocks of 8 warps
    o = occupancy(sm90, 256, 38, 400, 1)
    assert (o.blocks, o.limited_by, o.fraction) == (6, ("registers",), 0.75)
    # 32 registers, 128 threads: the warps and the registers both allow 16 blocks
    o = occupancy(sm80, 128, 32, 0)
    assert (o.blocks, o.limited_by) == (16, ("warps", "registers"))
    # 48 KiB a block, plus the driver's 1 KiB: three fit in 164 KiB
    o = occupancy(sm80, 128, 32, 48 * 1024)
    assert (o.blocks, o.limited_by) == (3, ("shared memory",))
    assert occupancy(sm80, 128, 32, 164 * 1024).blocks == 0  # past the 163 KiB opt-in
    assert occupancy(sm90, 1024, 255, 0).blocks == 0  # 255 registers x 1024 threads
    assert occupancy(sm90, 32, 16, 0).limited_by == ("blocks",)  # 32 blocks of one warp
    # sm_120 holds one barrier per block slot: two barriers a block halve its 24 blocks
    o = occupancy(ARCH_LIMITS["sm_120"], 32, 16, 0, barriers=2)
    assert (o.blocks, o.limited_by) == (12, ("barriers",))
    assert arch_limits("sm_90a") is sm90 and arch_limits("sm_999") is None


def test_largest_block_counts_registers_as_the_hardware_does():
    lim = ARCH_LIMITS["sm_90"]
    assert max_block_threads(lim, 32) == 1024
    assert max_block_threads(lim, 64) == 1024
    assert max_block_threads(lim, 128) == 512
    assert max_block_threads(lim, 255) == 256
    # 136 registers: 4352 a warp; 15 warps would fit 64 Ki, but the hardware counts whole
    # rounds of the four sub-partitions (16 warps), so 12
    assert max_block_threads(lim, 136) == 384


# -- thread-level kernels ---------------------------------------------------------------------

def k_local_shared(x, n):
    lm = cuda.local.array(1000, float32)
    sm = cuda.shared.array(100, float32)
    i = cuda.grid(1)
    for j in range(1000):
        lm[j] = j * x[j]
    sm[i % 100] = 2
    cuda.syncthreads()
    if i < n:
        x[i] = lm[i] + sm[i % 100]


X = np.zeros(1000, np.float32)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_thread_kernel_resources(arch):
    k = cuda.jit(k_local_shared)
    r = k.resources(X, 10, arch=arch)
    spec = k.specialization([float32[::1], int64], {})
    want = cuda.inspection.attributes(spec, arch, k.options)
    assert r.source == "ptxas" and r.arch == arch
    assert r.registers == want["num_regs"] > 0
    assert r.static_shared == 400 and r.dynamic_shared == 0 and r.scratch == 0
    assert r.local_bytes >= 4000 and r.spill_stores == r.spill_loads == 0
    assert r.barriers == 1
    assert (r.block, r.block_given) == (kernel_resources.DEFAULT_BLOCK, False)
    occ = occupancy(ARCH_LIMITS[arch], 256, r.registers, 400, 1)
    assert (r.blocks_per_sm, r.limited_by) == (occ.blocks, occ.limited_by)
    assert r.occupancy == occ.fraction
    table = str(r)
    assert table.startswith(f"k_local_shared(float32[::1], int64) on {arch}, from ptxas's")
    for row in ("registers per thread", "spill stores / loads", "400 static + 0 dynamic",
                "blocks / multiprocessor", "occupancy"):
        assert row in table, table


def test_block_and_dynamic_shared_memory_change_the_occupancy():
    k = cuda.jit(k_local_shared)
    sig = "void(float32[::1], int64)"  # a signature works too
    r = k.resources(sig, block=(16, 8), shared_bytes=48 * 1024, arch="sm_80")
    assert (r.block, r.block_given, r.dynamic_shared) == (128, True, 48 * 1024)
    assert r.blocks_per_sm == 3 and r.limited_by == ("shared memory",)
    assert k.resources(sig, block=1024, arch="sm_80").warps_per_block == 32
    with pytest.raises(ValueError, match="block must be"):
        k.resources(sig, block=0, arch="sm_80")
    with pytest.raises(ValueError, match="shared_bytes"):
        k.resources(sig, shared_bytes=-1, arch="sm_80")


def test_unknown_architecture_reports_no_occupancy(monkeypatch):
    monkeypatch.delitem(ARCH_LIMITS, "sm_86")
    r = cuda.jit(k_local_shared).resources(X, 10, arch="sm_86")
    assert r.registers > 0 and r.blocks_per_sm is None and r.occupancy is None
    assert "not in threadtile's table" in str(r)


def k_pressure(x, y):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = x[i + 1]
    a2 = x[i + 2]
    a3 = x[i + 3]
    a4 = x[i + 4]
    a5 = x[i + 5]
    a6 = x[i + 6]
    a7 = x[i + 7]
    for j in range(64):
        a0, a1, a2, a3 = a1 * a4 + a0, a2 * a5 + a1, a3 * a6 + a2, a0 * a7 + a3
        a4, a5, a6, a7 = a5 + a0 * y[j], a6 + a1 * y[j + 1], a7 + a2 * y[j + 2], a4 + a3 * y[j]
    x[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


def test_spills_show_under_a_register_cap():
    """24 registers a thread (the fewest ptxas takes) leave too few for eight float64 values
    and the loop: ptxas spills, and the report says how many bytes."""
    sig = "void(float64[::1], float64[::1])"
    loose = cuda.jit(k_pressure).resources(sig, arch="sm_90")
    tight = cuda.jit(k_pressure, max_registers=24).resources(sig, arch="sm_90")
    assert loose.spill_stores == 0 and loose.registers > 24
    assert tight.registers <= 24 and tight.spill_stores > 0 and tight.spill_loads > 0


def test_simulated_device_is_an_sm_90():
    with cuda.simulate():
        r = cuda.jit(k_local_shared).resources(X, 10)
    assert r.arch == "sm_90a" and r.source == "ptxas"


# -- tile kernels -----------------------------------------------------------------------------

@ct.kernel
def tile_mm(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    i = ct.bid(0)
    j = ct.bid(1)
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for kk in range(ct.cdiv(a.shape[1], TK)):
        acc = ct.mma(ct.load(a, index=(i, kk), shape=(TM, TK)),
                     ct.load(b, index=(kk, j), shape=(TK, TN)), acc)
    ct.store(c, index=(i, j), tile=acc.astype(c.dtype))


def test_tile_kernel_resources():
    a = np.zeros((128, 128), np.float16)
    r = tile_mm.resources(a, a, a, 64, 64, 32, arch="sm_80")
    spec = tile_mm._spec_for((a, a, a, 64, 64, 32), {})
    assert r.block == spec.module.threads and r.block_given
    assert r.scratch == spec.cuda.scratch_for("sm_80") > 0
    assert r.dynamic_shared == r.scratch
    assert r.blocks_per_sm == occupancy(ARCH_LIMITS["sm_80"], r.block, r.registers,
                                        r.static_shared + r.dynamic_shared, r.barriers).blocks
    assert "the tile operations' scratch" in str(r)
    r2 = tile_mm.resources(a, a, a, 64, 64, 32, shared_bytes=1024, arch="sm_80")
    assert r2.dynamic_shared == r.scratch + 1024
    with pytest.raises(ValueError, match="runs blocks of"):
        tile_mm.resources(a, a, a, 64, 64, 32, block=r.block * 2, arch="sm_80")


# -- the driver's path, with the driver faked -------------------------------------------------

def test_driver_path_reads_the_driver(monkeypatch):
    """On a GPU the registers, memory and occupancy are the driver's; the spills ptxas's
    (the GPU itself runs this in tests/gpu/test_resources_gpu.py)."""
    dev = types.SimpleNamespace(arch="sm_80", index=0, max_shared_per_block_optin=163 * 1024)
    calls = []
    attrs = {"num_regs": 20, "shared_size_bytes": 400, "local_size_bytes": 4000,
             "const_size_bytes": 8, "max_threads_per_block": 1024,
             "max_dynamic_shared_size_bytes": 48 * 1024}

    class Compiled:
        def load(self):
            return "func"

        def attributes(self):
            return dict(attrs)

    def build(spec, arch, options):
        spec.build(Target(arch, tuple(options)))
        return Compiled(), 0

    monkeypatch.setattr(driver, "gpu_available", lambda: True)
    monkeypatch.setattr(driver, "current_device", lambda: dev)
    monkeypatch.setattr(driver, "set_max_dynamic_shared",
                        lambda func, n: calls.append(("opt in", n)))
    monkeypatch.setattr(driver, "blocks_per_sm",
                        lambda func, threads, shared: calls.append((threads, shared)) or 7)
    k = cuda.jit(k_local_shared)
    spec = k._spec_for((X, 10), {})
    r = kernel_resources.report(k, spec, build, block=128, shared_bytes=60 * 1024)
    assert (r.source, r.arch, r.registers, r.static_shared, r.const_bytes) == (
        "driver", "sm_80", 20, 400, 8)
    assert r.blocks_per_sm == 7 and r.warps_per_sm == 64 and r.spill_stores == 0
    assert calls == [("opt in", 60 * 1024), (128, 60 * 1024)]
