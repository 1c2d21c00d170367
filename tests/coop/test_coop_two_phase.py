"""cuda.coop's two-phase form: a primitive made on the host with its dtype, block and
operator (``coop.block.reduce(np.int32, 128, max_op)``), called in the kernel with the values
alone; in the simulator (both modes) and on the GPU."""

import numpy as np
import pytest

import threadtile as cuda
from threadtile import coop

TPB = 128


def max_op(a, b):
    return a if a > b else b


block_reduce = coop.block.reduce(np.int32, TPB, max_op)
block_exsum = coop.block.exclusive_sum(np.int32, TPB)
block_sum = coop.block.sum(np.float64, TPB, items_per_thread=4)
block_load = coop.block.load(np.uint32, TPB, 4, "transpose")
block_sort = coop.block.radix_sort_keys(np.uint32, TPB, 4)
block_store = coop.block.store(np.uint32, TPB, 4)
warp_sum = coop.warp.sum(np.int32)


@cuda.jit(link=block_reduce.files)
def kernel(inp, out, keys, sorted_keys, items, total):
    t = cuda.threadIdx.x
    v = block_reduce(inp[t])
    if t == 0:
        out[0, 0] = v
    out[1, t] = warp_sum(inp[t])
    out[2, t] = block_exsum(inp[t])
    k = cuda.local.array(4, np.uint32)
    block_load(keys, k)
    block_sort(k)
    block_store(sorted_keys, k)
    it = cuda.local.array(4, np.float64)
    for j in range(4):
        it[j] = items[t * 4 + j]
    s = block_sum(it)
    if t == 0:
        total[0] = s


@pytest.mark.parametrize("mode", ["lockstep", "python", "gpu"])
def test_two_phase(target, rng, mode):
    if (mode == "gpu") != (target.name == "gpu"):
        pytest.skip("one mode per target")
    h = rng.integers(-100, 100, TPB).astype(np.int32)
    keys = rng.integers(0, 1 << 32, TPB * 4, dtype=np.uint64).astype(np.uint32)
    items = rng.random(TPB * 4)
    out, sk, tot = np.zeros((3, TPB), np.int32), np.zeros_like(keys), np.zeros(1)
    args = [target.to_device(a) for a in (h, out, keys, sk, items, tot)]
    if mode == "python":
        with cuda.simulate(mode="python"):
            kernel[1, TPB](*args)
    else:
        target.launch(kernel, 1, TPB, *args)
    out, sk, tot = target.to_host(args[1]), target.to_host(args[3]), target.to_host(args[5])
    assert out[0, 0] == h.max()
    np.testing.assert_array_equal(out[1].reshape(4, 32), np.broadcast_to(
        h.reshape(4, 32).sum(1, keepdims=True), (4, 32)))
    np.testing.assert_array_equal(out[2], np.cumsum(h) - h)
    np.testing.assert_array_equal(sk, np.sort(keys))
    np.testing.assert_allclose(tot[0], items.sum(), rtol=1e-12)


def test_factory_errors():
    with pytest.raises(TypeError, match="not supported"):
        coop.block.sum(np.int32, 128, prefix_op=max_op)
    wrong = coop.block.sum(np.float32, 64)

    @cuda.jit
    def k(x):
        x[0] = wrong(x[0])

    with pytest.raises(cuda.KernelCompileError, match="was made for float32"):
        k.cuda_source(np.zeros(4, np.int32))
