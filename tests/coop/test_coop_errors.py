"""A primitive that not every thread of its block (or lane of its logical warp) calls raises
BarrierDivergenceError at the call's line, in lockstep and python mode; a launch with another
block than the primitives were compiled for is refused; bad calls are compile errors at the
user's line; CUB's storage counts toward the shared-memory limit."""

import inspect

import numpy as np
import pytest
from conftest import HAVE_GPU
from kernels import coop as kc

import threadtile as cuda
from threadtile import Constant, coop


def _line(kernel, text: str) -> int:
    src, first = inspect.getsourcelines(kernel.py_func)
    return first + next(k for k, s in enumerate(src) if text in s)


@pytest.mark.parametrize("mode", ["lockstep", "python"])
@pytest.mark.parametrize(("kernel", "text", "block"), [
    (kc.diverged_block, "coop.block.sum", 64),
    (kc.returned_early, "coop.block.reduce", 64),
    (kc.diverged_warp, "coop.warp.sum", 64),
    (kc.diverged_sort, "coop.block.radix_sort_keys", 64),
])
def test_divergent_call(mode, kernel, text, block):
    x = np.arange(block, dtype=np.float32)
    if kernel is kc.diverged_sort:
        x = np.arange(block, dtype=np.uint32)
    out = np.zeros_like(x)
    consts = {} if kernel is kc.diverged_warp else {"tpb": block}
    with pytest.raises(cuda.BarrierDivergenceError) as e, cuda.simulate(mode=mode):
        kernel[1, block](x, out, **consts)
    assert f"line {_line(kernel, text)}" in str(e.value)
    if mode == "lockstep":
        assert text.split(".")[-1] in str(e.value)


@pytest.mark.parametrize("mode", ["lockstep", "python"])
def test_another_block_is_refused(mode):
    x = np.zeros(128, np.float32)
    out = np.zeros((6, 128), np.float32)
    with pytest.raises(cuda.LaunchError, match="threads_per_block=64"), \
            cuda.simulate(mode=mode):
        kc.block_values[1, 128](x, out, tpb=64)


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
def test_another_block_is_refused_on_the_gpu():
    x = cuda.to_device(np.zeros(128, np.float32))
    out = cuda.device_array((6, 128), np.float32)
    with pytest.raises(cuda.LaunchError, match="threads_per_block=64"):
        kc.block_values[1, 128](x, out, tpb=64)


def test_partial_logical_warp_is_refused():
    x = np.zeros(48, np.int64)
    out = np.zeros((4, 48), np.int64)
    with pytest.raises(cuda.LaunchError, match="multiple of 32"), cuda.simulate():
        kc.warp_values[1, 48](x, out, w=32)


def no_block(x, out):
    out[0] = coop.block.sum(x[0])


def items_not_local(x, out):
    coop.block.radix_sort_keys(x, threads_per_block=64)


def bad_op(x, out):
    out[0] = coop.block.reduce(x[0], abs, threads_per_block=64)


def bad_algorithm(x, out):
    a = cuda.local.array(2, np.float32)
    coop.block.load(x, a, threads_per_block=64, algorithm="sideways")


def too_big(x, out, n: Constant[int]):
    a = cuda.local.array(n, np.float64)
    coop.block.radix_sort_keys(a, threads_per_block=1024)


def two_blocks(x, out):
    out[0] = coop.block.sum(x[0], threads_per_block=64)
    out[1] = coop.block.sum(x[1], threads_per_block=128)


@pytest.mark.parametrize(("fn", "message"), [
    (no_block, "needs threads_per_block="),
    (items_not_local, "must be a 1-d cuda.local.array"),
    (bad_op, "must be an operator"),
    (bad_algorithm, "algorithm must be one of"),
    (two_blocks, "a kernel runs with one block shape"),
])
def test_compile_errors(fn, message):
    k = cuda.jit(fn)
    x = np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelCompileError, match=message) as e:
        k.cuda_source(x, x.copy())
    assert e.value.loc.line > inspect.getsourcelines(fn)[1]


def test_storage_counts_toward_shared_memory():
    """1024 threads x 8 float64 keys: CUB's exchange storage alone is 64 KiB, past the 48 KiB
    a block declares statically: refused at the sort's line; 2 keys fit (37 KiB)."""
    k = cuda.jit(too_big)
    x = np.zeros(8, np.float64)
    with pytest.raises(cuda.KernelCompileError,
                       match=r"coop.block.radix_sort_keys\(\)'s storage") as e:
        k.cuda_source(x, x.copy(), n=8)
    assert e.value.loc.line == _line(k, "radix_sort_keys")
    src = k.cuda_source(x, x.copy(), n=2)
    assert "block_radix_sort<double, 1024, 1, 1," in src
    r = k.resources(x, x.copy(), n=2, block=1024, arch="sm_90")
    # the bound of CUB's storage (37056 bytes measured: ir/coop.py), and what ptxas counts
    assert 37056 <= r.static_shared <= 37056 * 1.05


def test_one_storage_per_class():
    """Four scans and a reduction of one dtype share CUB's scan storage and count it once:
    at 1000 threads each is 12 KiB, and four would pass 48 KiB; NVRTC compiles the kernel,
    the bound asserted once per class."""
    from threadtile.ir import coop as ircoop  # noqa: PLC0415
    from threadtile.runtime import nvrtc  # noqa: PLC0415

    x = np.zeros(3000, np.uint64)
    spec = kc.affine_scans.specialization(
        [kc.U64, kc._2d(kc.U64)], {"tpb": 1000, "n": 3})
    storages = ircoop.module_scratch(spec.module)
    assert sorted(c.name for c, _ in storages) == ["coop.block.reduce", "coop.block.scan"]
    assert kc.affine_scans.cuda_source(x, np.zeros((5, 3000), np.uint64), tpb=1000, n=3)
    nvrtc.compile_cubin(spec.cuda.text, "sm_90")
