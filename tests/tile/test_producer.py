"""Kernels whose k loops run on the Hopper main loop with a producer warpgroup (on an sm_90a
GPU: tile/kloop_sm90.h, jit.build): several loops a kernel, loops that start past 0 or take
no step, and blocks that leave early, each of which the producer must follow; in the simulator
the same kernels, checked against NumPy."""

import numpy as np

import threadtile.tile as ct

C = ct.Constant[int]
PAD = ct.PaddingMode.ZERO


@ct.kernel(num_warps=8)
def _loops(A, B, X, Y, Z, tm: C, tn: C, tk: C):
    bi, bj = ct.bid(0), ct.bid(1)
    if bi == 1 and bj == 0:  # this block leaves before any loop: its tiles stay as they were
        return
    nk = ct.num_tiles(A, axis=1, shape=(tm, tk))
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(nk):
        acc = ct.mma(ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=PAD),
                     ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=PAD), acc)
    ct.store(X, index=(bi, bj), tile=acc.astype(X.dtype))
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(nk // 2, nk):  # a second loop, from the middle
        acc = ct.mma(ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=PAD),
                     ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=PAD), acc)
    ct.store(Y, index=(bi, bj), tile=acc.astype(Y.dtype))
    if bi == 2:
        return  # a block that leaves between loops
    acc = ct.full((tm, tn), 1, dtype=ct.float32)
    for k in range(nk, bj * nk):  # no step: bj * nk <= nk (a loop the producer never hears of)
        acc = ct.mma(ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=PAD),
                     ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=PAD), acc)
    ct.store(Z, index=(bi, bj), tile=acc.astype(Z.dtype))


def test_loops_and_exits_with_a_producer(target, rng):
    m, k, n, tm, tn, tk = 384, 512, 256, 128, 128, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    outs = [target.to_device(np.full((m, n), np.nan, np.float16)) for _ in range(3)]
    target.launch_tile(_loops, (3, 2), target.to_device(a), target.to_device(b), *outs,
                       tm, tn, tk)
    x, y, z = (target.to_host(o).astype(np.float64) for o in outs)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = {"x": a64 @ b64, "y": a64[:, k // 2:] @ b64[k // 2:], "z": np.ones((m, n))}
    for name, got in (("x", x), ("y", y), ("z", z)):
        ref = want[name]
        for bi in range(3):
            for bj in range(2):
                tile = (slice(tm * bi, tm * (bi + 1)), slice(tn * bj, tn * (bj + 1)))
                left = (bi, bj) == (1, 0) or (name == "z" and bi == 2)
                if left:
                    assert np.isnan(got[tile]).all(), (name, bi, bj)
                else:
                    np.testing.assert_allclose(got[tile], ref[tile], rtol=2e-3,
                                               atol=2e-2 * np.abs(ref).max(), err_msg=name)
