"""16-bit k loops of small tiles with 128-deep K on 4 warps (ir/tiling.py sm90_step): their
Hopper main loop runs 64-deep steps, whose stages let two blocks share a multiprocessor, and
sm_90a's build without the portable loop asks only for what it uses (tiles.scratch_sizes);
the build with the portable loop, which a launch takes for an array TMA cannot read, gets
the portable loop's larger scratch. Numerics in the simulator and on the GPU against NumPy in
float64 with poisoned outputs, through TMA and through the portable loop."""

import numpy as np
import pytest
from conftest import cdiv, poison
from kernels.tiles import matmul

from threadtile import builds
from threadtile.ir import tiling
from threadtile.lang.types import TileType, float16, float32


@pytest.mark.parametrize(("m", "n"), [(64, 64), (64, 128), (128, 64)])
def test_k128_small_tiles_step_64_deep(m, n):
    a, b = TileType(float16, (m, 128)), TileType(float16, (128, n))
    assert tiling.sm90_step(a, b, 128) == 64
    assert 2 * tiling.sm90_bytes(a, b, 128) <= tiling.SM90_SHARED_PER_SM


def test_what_keeps_its_steps():
    """Blocks of 8 warps, float32 (tfloat32) operands and steps that would leave 128-byte
    rows keep theirs."""
    t = TileType
    assert tiling.sm90_step(t(float16, (64, 128)), t(float16, (128, 128)), 256) == 128
    assert tiling.sm90_step(t(float32, (64, 64)), t(float32, (64, 128)), 128) == 64
    assert tiling.sm90_step(t(float16, (64, 64)), t(float16, (64, 256)), 128) == 64


def test_the_tma_build_asks_for_its_stages_alone():
    z = np.zeros((512, 512), np.float16)
    spec = matmul._spec_for([z, z, z], dict(tm=64, tn=128, tk=128))
    tma = builds.target_for(spec, "sm_90a")
    assert builds.TMA_ONLY in tma.options and builds.PRODUCER not in tma.options
    hopper = tiling.sm90_bytes(TileType(float16, (64, 128)), TileType(float16, (128, 128)), 128)
    assert spec.cuda.scratch_for("sm_90a", tma.options) < 2 * hopper
    assert 2 * spec.cuda.scratch_for("sm_90a", tma.options) <= tiling.SM90_SHARED_PER_SM
    # the portable loop's buffers are larger: the build with it, and sm_80's, ask for them
    assert spec.cuda.scratch_for("sm_90a", ()) == spec.cuda.scratch > \
        spec.cuda.scratch_for("sm_90a", tma.options)
    assert spec.cuda.scratch_for("sm_80", ()) == spec.cuda.scratch


@pytest.mark.parametrize("tma", [True, False])
def test_numerics(target, rng, tma):
    """300x200 by 200x260 in 64x128x128 tiles; ``tma=False``: A a view of rows 202 elements
    apart (404 bytes: no TMA map), which takes the build with the portable loop."""
    m, k, n = 300, 200, 260
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    if tma:
        dev_a = target.to_device(a)
    else:
        big = np.zeros((m, k + 2), np.float16)
        big[:, :k] = a
        dev_a = target._view(target.to_device(big), big[:, :k], big)
    out = target.to_device(poison((m, n), np.float16))
    target.launch_tile(matmul, (cdiv(m, 64), cdiv(n, 128)), dev_a, target.to_device(b), out,
                       64, 128, 128)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(np.asarray(target.to_host(out), np.float64), ref, rtol=2e-2,
                               atol=2e-2 * np.sqrt(k))
