"""A matmul's result stored from its fragments (tile/mma.h store_fragments; through the
scratch, store_fragments_staged, where the scratch holds the tile) at the array's edges: every
element of the product written, nothing past it; an odd last axis (no 32-bit pairs), a
strided output (the tested path of every pair), an output whose rows are not 16-byte
aligned, float32 and float16 results. Outputs are poisoned first and checked whole (the
strided one with the elements between its own); on the simulator and, with a GPU, on the
GPU."""

import numpy as np
import pytest
from conftest import cdiv, poison
from kernels import tiles


def _run(target, rng, m, n, k, dtype, tiles_mnk):
    tm, tn, tk = tiles_mnk
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = target.to_device(poison((m, n), dtype))
    target.launch_tile(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), target.to_device(a),
                       target.to_device(b), c, tm, tn, tk)
    got = np.asarray(target.to_host(c), np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-2 if dtype == np.float16 else 1e-3
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.sqrt(k))
    return got


@pytest.mark.parametrize(("m", "n"), [(200, 130), (130, 77), (64, 63), (257, 129)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_edges(target, rng, m, n, dtype):
    """Tiles that cross the last row and the last column (an odd column count: the pair
    ending at it is stored one element at a time)."""
    _run(target, rng, m, n, 96, dtype, (64, 64, 32))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_strided_output(target, rng, dtype):
    """Every other column of a larger array (the last axis not contiguous): the result lands
    on its own elements and the columns between keep the poison."""
    m, n = 150, 70
    tm, tn, tk = 64, 64, 32
    a = rng.standard_normal((m, 64)).astype(np.float16)
    b = rng.standard_normal((64, n)).astype(np.float16)
    big = poison((m + 3, 2 * n + 5), dtype)
    view = big[1:m + 1, 0:2 * n:2]
    dev = target.to_device(big)
    target.launch_tile(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), target.to_device(a),
                       target.to_device(b), target._view(dev, view, big), tm, tn, tk)
    out = np.asarray(target.to_host(dev), np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-2 if dtype == np.float16 else 1e-3
    np.testing.assert_allclose(out[1:m + 1, 0:2 * n:2], ref, rtol=tol, atol=tol * 8)
    written = np.zeros(big.shape, bool)
    written[1:m + 1, 0:2 * n:2] = True
    np.testing.assert_array_equal(out[~written], np.asarray(big, np.float64)[~written])


def test_large_tiles_on_8_warps(target, rng):
    """128x128 tiles of 8 warps (two warpgroups) over a ragged output."""
    _run(target, rng, 300, 200, 128, np.float16, (128, 128, 64))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_unaligned_rows(target, rng, dtype):
    """A view one column into a larger array: the last axis contiguous but no row 16-byte
    aligned (the staged store's element-by-element path); the column before and after keep
    the poison."""
    m, n = 256, 128
    tm, tn, tk = 128, 128, 64
    a = rng.standard_normal((m, 64)).astype(np.float16)
    b = rng.standard_normal((64, n)).astype(np.float16)
    big = poison((m, n + 2), dtype)
    dev = target.to_device(big)
    target.launch_tile(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), target.to_device(a),
                       target.to_device(b), target._view(dev, big[:, 1:n + 1], big), tm, tn,
                       tk)
    out = np.asarray(target.to_host(dev), np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-2 if dtype == np.float16 else 1e-3
    np.testing.assert_allclose(out[:, 1:n + 1], ref, rtol=tol, atol=tol * 8)
    np.testing.assert_array_equal(out[:, [0, n + 1]], np.asarray(big, np.float64)[:, [0, n + 1]])


def test_hopper_build_stores_whole_pieces():
    """The sm_90a build of a Hopper k loop has room in its scratch after the loop: the
    accumulator goes out in 16-byte pieces (st.global.v4) through the scratch, not as 32-bit
    pairs."""
    from threadtile.builds import target_for  # noqa: PLC0415
    from threadtile.runtime import nvrtc  # noqa: PLC0415

    z = np.zeros((256, 256), np.float16)
    spec = tiles.matmul._spec_for([z, z, z, 128, 128, 64], {})  # noqa: SLF001
    opts = target_for(spec, "sm_90a", tiles.matmul.options).options
    ptx = nvrtc.compile_ptx(spec.cuda.text, "sm_90a", options=opts)
    assert "st.global.v4.u32" in ptx
    # the pairs into the scratch, not to the array (the edge path stores single elements)
    assert "st.shared.u32" in ptx and "st.global.u32" not in ptx
