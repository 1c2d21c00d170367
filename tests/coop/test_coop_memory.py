"""coop.block.load/store (direct, striped, vectorize, transpose; partial tiles) and
coop.block.exchange against NumPy, in the simulator and on the GPU."""

import numpy as np
from kernels import coop as kc

import threadtile as cuda


def _load_store_reference(src, valid, tpb, n, nb):
    """What load_store writes: rows 0-3 the tile round-tripped by each algorithm (-1 past
    the valid elements: the out-of-bounds default the loads put there), row 4 the valid part
    only (the rest untouched: the poison), rows 5-7 the directly loaded tile (blocked)
    stored by another algorithm (a striped store of blocked items permutes the tile)."""
    size = nb * tpb * n
    poison = -7
    want = np.full((8, size), poison, np.int32)
    tile = np.where(np.arange(size) < valid, src[:size], -1)
    want[:4] = tile
    want[4, :valid] = src[:valid]
    want[6] = tile
    want[7] = tile
    for b in range(nb):
        blk = tile[b * tpb * n:(b + 1) * tpb * n]
        # thread t holds blocked items blk[t*n + k]; a striped store writes item k of thread
        # t to element k*tpb + t
        items = blk.reshape(tpb, n)
        want[5, b * tpb * n:(b + 1) * tpb * n] = items.T.reshape(-1)
    return want


def test_load_store(target, rng):
    for tpb, n in ((64, 4), (96, 3), (32, 8)):
        nb = 3
        size = nb * tpb * n
        src = rng.integers(-1000, 1000, size).astype(np.int32)
        valid = int(rng.integers(size - tpb * n, size))  # the last block's tile is partial
        dst = target.to_device(np.full((8, size), -7, np.int32))
        target.launch(kc.load_store, nb, tpb, target.to_device(src), dst, np.int64(valid),
                      tpb=tpb, n=n)
        got = target.to_host(dst)
        want = _load_store_reference(src, valid, tpb, n, nb)
        # the striped store past the valid part writes -1 defaults too: compare all rows
        np.testing.assert_array_equal(got, want)


def test_exchange(target, rng):
    tpb, n = 96, 3
    src = rng.integers(-1000, 1000, 2 * tpb * n).astype(np.int32)
    dst = target.to_device(np.zeros((2, src.size), np.int32))
    target.launch(kc.exchange, 2, tpb, target.to_device(src), dst, tpb=tpb, n=n)
    got = target.to_host(dst)
    for b in range(2):
        blk = src[b * tpb * n:(b + 1) * tpb * n]
        # striped: item k of thread t is element k*tpb + t of the tile
        striped = blk.reshape(n, tpb).T.reshape(-1)
        np.testing.assert_array_equal(got[0, b * tpb * n:(b + 1) * tpb * n], striped)
        np.testing.assert_array_equal(got[1, b * tpb * n:(b + 1) * tpb * n], blk)


def test_python_mode(rng):
    tpb, n = 32, 4
    src = rng.integers(-1000, 1000, 2 * tpb * n).astype(np.int32)
    res = []
    for mode in ("lockstep", "python"):
        dst = np.full((8, src.size), -7, np.int32)
        ex = np.zeros((2, src.size), np.int32)
        with cuda.simulate(mode=mode):
            kc.load_store[2, tpb](src, dst, np.int64(src.size - 5), tpb=tpb, n=n)
            kc.exchange[2, tpb](src, ex, tpb=tpb, n=n)
        res.append((dst, ex))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
