"""The compiler's occupancy rule (blockfit.py): a tile kernel whose registers hold a
multiprocessor to 8 warps or fewer is compiled again for one more block where that costs
little, and ``kernel.resources()`` reports the build a launch runs."""

import sys
from pathlib import Path

import numpy as np
import pytest

from threadtile import blockfit
from threadtile.runtime import cache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tile"))
from test_tile_gather_operand import _args, gathered_product  # noqa: E402

K = 1024


def rep(regs, static=0, barriers=1):
    return {"num_regs": regs, "shared_size_bytes": static, "barriers": barriers}


@pytest.mark.parametrize(("arch", "threads", "dynamic", "report", "want"), [
    # 4 warps at 211 registers: 2 blocks, 8 warps; 3 blocks leave 168 (80% of 211)
    ("sm_90a", 128, 56 * K, rep(211), 3),
    ("sm_80", 128, 40 * K, rep(220), 3),
    ("sm_80", 128, 56 * K, rep(220), None),  # (164 KiB hold 2 blocks of 57)
    # 8 warps at 255: 1 block; 2 would leave 128 registers, half of ptxas's choice
    ("sm_90a", 256, 40 * K, rep(255), None),
    # 4 blocks of 4 warps (16 warps): enough warps already for 96 registers of 110
    ("sm_90a", 128, 0, rep(110), None),
    # ... but a fifth block for 96 registers of 100 is near free
    ("sm_90a", 128, 0, rep(100), 5),
    # shared memory holds it to 2 blocks as well: no room for a third
    ("sm_90a", 128, 100 * K, rep(211), None),
    # static shared memory counts with the dynamic scratch
    ("sm_90a", 128, 60 * K, rep(211, static=40 * K), None),
    # registers are not the limit (the shared memory is)
    ("sm_90a", 128, 120 * K, rep(64), None),
    # an architecture the limits table does not know
    ("sm_42", 128, 0, rep(211), None),
    # 3 blocks of 4 warps (12) at 132 registers: a fourth costs 4 registers (the near-free
    # step, for any warps)
    ("sm_90a", 128, 50 * K, rep(132), 4),
    # ... but not 12 (3 blocks at 168 registers: 4 need 128)
    ("sm_90a", 128, 50 * K, rep(168), None),
])
def test_more_blocks(arch, threads, dynamic, report, want):
    assert blockfit.more_blocks(arch, threads, dynamic, report) == want


@pytest.mark.parametrize(("report", "want"), [(rep(211), None), (rep(132), 4)])
def test_a_hinted_kernel_takes_the_near_free_step_alone(report, want):
    """An occupancy hint counts as the fewest blocks wanted: a kernel with one gets another
    block only where it costs almost no registers (NEAR_SHARE)."""
    assert blockfit.more_blocks("sm_90a", 128, 40 * K, report, hinted=True) == want


def test_maxrregcount_is_the_users_choice():
    assert blockfit.more_blocks("sm_90a", 128, 0, rep(211), ("--maxrregcount=200",)) is None


def test_bounded_adds_the_block_count_to_the_kernels_bounds():
    text = 'extern "C" __global__ void __launch_bounds__(128) k(int x) {}\n'
    assert blockfit.bounded(text, "k", 128, 3) == \
        'extern "C" __global__ void __launch_bounds__(128, 3) k(int x) {}\n'
    assert blockfit.bounded(text, "k", 256, 3) is None  # not this block
    # bounds that name a block count already get the new one
    assert blockfit.bounded(text.replace("(128)", "(128, 2)"), "k", 128, 3) == \
        'extern "C" __global__ void __launch_bounds__(128, 3) k(int x) {}\n'


def test_ptxas_report_reads_the_entrys_numbers():
    log = ("ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
           "ptxas info    : Used 40 registers\n"
           "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
           "ptxas info    : Function properties for k\n"
           "    80 bytes stack frame, 80 bytes spill stores, 76 bytes spill loads\n"
           "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem\n")
    assert blockfit.ptxas_report(log, "k") == {
        "num_regs": 168, "shared_size_bytes": 1024, "local_size_bytes": 80,
        "spill_stores": 80, "spill_loads": 76, "barriers": 1}
    assert blockfit.ptxas_report(log, "missing") is None


def _resources(arch):
    return gathered_product.resources(*_args(), TM=128, TN=128, TK=128, arch=arch)


@pytest.mark.parametrize("arch", ["sm_90a"])
def test_a_register_bound_tile_kernel_gets_another_block(arch, tmp_path, monkeypatch):
    """A 128x128x128 product with a gathered A: ptxas alone gives it 194 registers on sm_90a
    (2 blocks a multiprocessor); the rule's build holds 3 within the spill limit (168, 80
    bytes), and resources() reports that build. THREADTILE_BLOCKFIT=0 keeps ptxas's choice.
    (Its 128x128x64 twin, this test's kernel until the tile headers' slot coordinates, now
    gets 168 registers from ptxas alone; on sm_80 this one's refit spills past the limit.)"""
    monkeypatch.setenv(cache.ENV, str(tmp_path / "on"))
    fit = _resources(arch)
    monkeypatch.setenv(blockfit.ENV, "0")
    monkeypatch.setenv(cache.ENV, str(tmp_path / "off"))
    plain = _resources(arch)
    assert plain.blocks_per_sm == 2 and plain.limited_by == ("registers",), plain
    assert plain.registers > 168
    assert fit.blocks_per_sm == 3, fit
    assert fit.registers <= 168 and fit.spill_stores <= blockfit.SPILL_LIMIT


def test_the_cubin_cache_tells_the_rule_on_from_off(monkeypatch):
    from threadtile.compiler import Target, cubin_key

    spec = gathered_product._spec_for(list(_args()), dict(TM=128, TN=128, TK=64))
    assert spec.cuda.fit_threads == 128
    on = cubin_key(spec, Target("sm_90a"))
    monkeypatch.setenv(blockfit.ENV, "0")
    assert cubin_key(spec, Target("sm_90a")) != on


def test_kernels_the_rule_is_not_for_keep_their_bounds():
    """A thread-level kernel is not refitted; a tile kernel with an occupancy hint is, by
    the near-free step alone (the hint is passed on as asked)."""
    import threadtile as cuda
    import threadtile.tile as ct

    @cuda.jit
    def add(x):
        x[cuda.grid(1)] += 1

    assert add._spec_for([np.zeros(4, np.float32)], {}).cuda.fit_threads == 0
    hinted = ct.kernel(occupancy=2, num_warps=4)(gathered_product.py_func)
    cuda_src = hinted._spec_for(list(_args()), dict(TM=128, TN=128, TK=64)).cuda
    assert (cuda_src.fit_threads, cuda_src.fit_blocks) == (128, 2)
    assert "__launch_bounds__(128, 2) " in cuda_src.text


def test_resources_reuse_the_builds_compiles(tmp_path, monkeypatch):
    """resources() after a build takes the rule's choice and ptxas's report from the build's
    own compiles (blockfit.compile_fitted remembers them) instead of compiling again: the
    plain build and the refit, once each."""
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    calls = []
    real = blockfit.compile_reported

    def counted(text, arch, options, entry):
        calls.append(text)
        return real(text, arch, options, entry)

    monkeypatch.setattr(blockfit, "compile_reported", counted)
    monkeypatch.setattr(blockfit, "_REPORTS", {})  # (what earlier tests left in this process)
    import threadtile.tile as ct

    fresh = ct.kernel(gathered_product.py_func)  # (no build in memory either)
    res = fresh.resources(*_args(), TM=128, TN=128, TK=128, arch="sm_90a")
    assert res.blocks_per_sm == 3  # the refit build
    assert len(calls) == 2 and len(set(calls)) == 2  # the plain source, then the bounded one


def _hinted_copy():
    import threadtile.tile as ct

    @ct.kernel(occupancy=2)
    def copy128(x, y):
        t = ct.load(x, index=(ct.bid(0), 0), shape=(128, 128))
        ct.store(y, index=(ct.bid(0), 0), tile=t)

    return copy128


def test_an_occupancy_hint_counts_blocks_of_the_block_the_compiler_picks(tmp_path, monkeypatch):
    """cuTile's ``occupancy`` counts blocks of whatever size its compiler picks. A 128x128
    float32 tile takes 8 warps here (64 elements a thread at most), and the source spells the
    hint scaled to 4-warp blocks, ``__launch_bounds__(256, 1)``; the build asks ptxas for the
    2 blocks of 8 warps the hint names, kept because they fit without spilling."""
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    k = _hinted_copy()
    x = np.zeros((256, 128), np.float32)
    cuda = k._spec_for([x, x], {}).cuda
    assert "__launch_bounds__(256, 1) " in cuda.text
    assert (cuda.fit_threads, cuda.fit_blocks) == (256, 2)
    fit = blockfit.compile_fitted(cuda.text, cuda.entry, "sm_90", (), cuda.fit_threads,
                                  cuda.scratch_for("sm_90"), cuda.fit_blocks)
    assert fit.blocks == 2 and "__launch_bounds__(256, 2) " in fit.text
    res = k.resources(x, x, arch="sm_90")
    assert res.block == 256 and res.blocks_per_sm >= 2


_HEAVY = """extern "C" __global__ void __launch_bounds__(256, 1) heavy(float* x, int n) {
    float acc[96];
    #pragma unroll
    for (int j = 0; j < 96; ++j) acc[j] = x[j * 256 + threadIdx.x];
    for (int i = 0; i < n; ++i) {
        #pragma unroll
        for (int j = 0; j < 96; ++j) acc[j] = acc[j] * acc[(j + 1) % 96] + x[i + j];
    }
    #pragma unroll
    for (int j = 0; j < 96; ++j) x[j * 256 + threadIdx.x] = acc[j];
}
"""


def test_a_hint_that_would_spill_keeps_the_sources_bounds():
    """Where the hint's blocks leave too few registers (8 blocks of 256 threads: 32 registers
    a thread for 96 live floats), the source's own bounds are built."""
    fit = blockfit.compile_fitted(_HEAVY, "heavy", "sm_90", (), 256, 0, 8)
    assert fit.blocks is None and fit.text == _HEAVY
    assert fit.report["num_regs"] > 96 and fit.report["spill_stores"] == 0


# the line makes the kernel hold more live values (as refill_wait's mbarrier tokens do)
_OPTIONAL = """#define HOLD 48  // blockfit: optional
#ifndef HOLD
#define HOLD 0
#endif
extern "C" __global__ void __launch_bounds__(256, 1) held(float* x, int n) {
    float acc[40 + HOLD];
    #pragma unroll
    for (int j = 0; j < 40 + HOLD; ++j) acc[j] = x[j * 256 + threadIdx.x];
    for (int i = 0; i < n; ++i) {
        #pragma unroll
        for (int j = 0; j < 40 + HOLD; ++j) acc[j] = acc[j] * acc[(j + 1) % (40 + HOLD)] + x[i + j];
    }
    #pragma unroll
    for (int j = 0; j < 40 + HOLD; ++j) x[j * 256 + threadIdx.x] = acc[j];
}
"""


def test_a_hint_that_spills_with_an_optional_line_drops_it():
    """Where the hint's blocks do not fit with the source's lines marked ``OPTIONAL`` (4
    blocks of 256 threads: 64 registers a thread, 88 live floats), the source without them
    is built for those blocks (40 live floats) before fewer blocks are kept."""
    assert blockfit.without_optional(_OPTIONAL).count("HOLD 48") == 0
    fit = blockfit.compile_fitted(_OPTIONAL, "held", "sm_90", (), 256, 0, 4)
    assert fit.blocks == 4 and "HOLD 48" not in fit.text
    assert "__launch_bounds__(256, 4) " in fit.text and fit.report["spill_stores"] == 0
    # the build of the source's own bounds keeps it
    fit = blockfit.compile_fitted(_OPTIONAL, "held", "sm_90", (), 256, 0, 1)
    assert "HOLD 48" in fit.text and fit.report["num_regs"] > 88
