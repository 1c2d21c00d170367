"""Numerics of atomics (tests/kernels/atomics.py) and warp-level operations
(tests/kernels/warp.py) against NumPy references, on every target.

Each test runs on every target (the ``target`` fixture, tests/conftest.py): in the simulator and
on the GPU, from one body. Inputs are fresh random arrays (the seed is printed), outputs are
poisoned (NaN or a sentinel) before the launch so that an element a kernel fails to write
shows, and results are compared in float64 with tolerances that follow from the dtype.
"""

import numpy as np
import pytest
from conftest import assert_chain, assert_close, assert_dot_close, cdiv, poison
from kernels import atomics, warp

# ---- atomics ---------------------------------------------------------------------------------

_ARITH = ["int32", "uint32", "int64", "uint64", "float32", "float64"]


@pytest.mark.parametrize("dtype", _ARITH)
def test_atomic_arith(target, rng, dtype):
    n = 200
    vh = rng.integers(1, 1000, n).astype(dtype)  # integers: float sums are exact too
    init = np.array([10, 10 ** 6, 0, 10 ** 6, 7, 0], dtype)
    res = target.to_device(init.copy())
    olds = target.to_device(poison((6, n), dtype))
    target.launch(atomics.atomic_arith, cdiv(n, 64), 64, target.to_device(vh), res, olds)
    got, o = target.to_host(res), target.to_host(olds)
    v = vh.tolist()
    ref = [10 + sum(v), 10 ** 6 - sum(v), max(v), min(v)]
    assert_close(got[:4], ref, dtype)
    assert got[4] in vh and got[5] in vh
    ops = [lambda a, b: a + b, lambda a, b: a - b, max, min, lambda a, b: b,
           lambda a, b: b if a == 0 else a]
    for k, op in enumerate(ops):
        assert_chain(o[k], vh, init[k].item(), got[k].item(), op)
    assert (o[5] == 0).sum() == 1  # exactly one thread won the compare-and-swap


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
def test_atomic_bits(target, rng, dtype):
    n = 150
    info = np.iinfo(dtype)
    vh = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    vh |= np.array(1, dtype)  # so that the and-chain does not reach zero at once
    init = np.array([-1 if info.min else info.max, 0, 0x0F0F], dtype)
    res = target.to_device(init.copy())
    olds = target.to_device(poison((3, n), dtype))
    target.launch(atomics.atomic_bits, cdiv(n, 64), 64, target.to_device(vh), res, olds)
    got, o = target.to_host(res), target.to_host(olds)
    ref = [np.bitwise_and.reduce(vh) & init[0], np.bitwise_or.reduce(vh),
           np.bitwise_xor.reduce(vh) ^ init[2]]
    assert got.tolist() == np.array(ref, dtype).tolist()
    for k, op in enumerate([lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b]):
        assert_chain(o[k], vh, init[k].item(), got[k].item(), op)


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
def test_atomic_inc_dec(target, dtype):
    n, lim = 100, 7
    init = np.array([3, 2], dtype)
    res = target.to_device(init.copy())
    olds = target.to_device(poison((2, n), dtype))
    target.launch(atomics.atomic_wrap, cdiv(n, 64), 64, res,
                  target.to_device(np.array([lim], dtype)), olds)
    got, o = target.to_host(res), target.to_host(olds)
    assert got.tolist() == [(3 + n) % (lim + 1), (2 - n) % (lim + 1)]
    assert_chain(o[0], [lim] * n, 3, got[0].item(), lambda a, b: 0 if a >= b else a + 1)
    assert_chain(o[1], [lim] * n, 2, got[1].item(), lambda a, b: b if a == 0 or a > b else a - 1)


def test_shared_histogram(target, rng):
    n = 3000
    dh = rng.integers(0, 1000, n).astype(np.int32)
    hist = target.to_device(np.zeros((4, 4), np.int32))
    target.launch(atomics.shared_histogram, cdiv(n, 128), 128, target.to_device(dh), hist)
    ref = np.bincount(dh % 16, minlength=16).reshape(4, 4)
    assert_close(target.to_host(hist), ref, "int32")


def test_atomic_counter_slots(target):
    n = 500
    out = target.to_device(poison(n, np.int64))
    counter = target.to_device(np.zeros(1, np.uint32))
    target.launch(atomics.atomic_counter_slots, cdiv(n, 128), 128, out, counter)
    assert sorted(target.to_host(out).tolist()) == list(range(n))
    assert target.to_host(counter).tolist() == [n]


# ---- warps -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float32", "float64"])
def test_shuffles(target, rng, dtype):
    ah = (rng.standard_normal(64) * 1000).astype(dtype)
    out = target.to_device(poison((4, 64), dtype))
    target.launch(warp.shuffles, 1, 64, target.to_device(ah), out)
    i = np.arange(64)
    lane, base = i % 32, i - i % 32
    ref = np.stack([ah[base + (lane + 3) % 32], ah[np.where(lane >= 2, i - 2, i)],
                    ah[np.where(lane + 5 < 32, i + 5, i)], ah[base + (lane ^ 7)]])
    assert_close(target.to_host(out), ref.astype(np.float64), dtype, ulps=0)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_warp_sum(target, rng, dtype):
    ah = (rng.standard_normal(64) * 100).astype(dtype)
    out = target.to_device(poison(2, dtype))
    target.launch(warp.warp_sum, 1, 64, target.to_device(ah), out)
    chunks = ah.astype(np.float64).reshape(2, 32)
    if dtype == "int32":
        assert_close(target.to_host(out), chunks.sum(1), dtype)
    else:
        assert_dot_close(target.to_host(out)[:, None], chunks, np.ones((32, 1)))


def test_votes(target, rng):
    ah = rng.integers(-5, 6, 64).astype(np.int32)
    ah[:32] = rng.integers(1, 6, 32)  # warp 0: every lane positive
    ah[32:] = np.where(ah[32:] > 0, -ah[32:], ah[32:])
    ah[40] = 3  # warp 1: exactly one lane positive
    out = target.to_device(poison((2, 5), np.uint32))
    target.launch(warp.votes, 1, 64, target.to_device(ah), out)
    p = (ah > 0).reshape(2, 32)
    ballot = (p * (1 << np.arange(32, dtype=np.uint64))).sum(1)
    ref = np.stack([p.all(1), p.any(1), ballot, [0x55555555] * 2, [0xFFFFFFFF] * 2], -1)
    assert_close(target.to_host(out), ref.astype(np.float64), "uint32")


_BIT_DTYPES = ["uint32", "int32", "uint64", "int64", "int8", "uint8", "int16", "uint16"]


def _bits_ref(v: int, bits: int) -> list[int]:
    u = v & ((1 << bits) - 1)
    rev = int(f"{u:0{bits}b}"[::-1], 2)
    return [bin(u).count("1"), bits - u.bit_length(), (u & -u).bit_length(), rev]


@pytest.mark.parametrize("dtype", _BIT_DTYPES)
def test_bit_ops(target, rng, dtype):
    info = np.iinfo(dtype)
    xh = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    xh[:3] = [0, 1, info.max]
    out = target.to_device(poison((40, 4), dtype))
    target.launch(warp.bit_ops, 1, 64, target.to_device(xh), out)
    bits = info.bits
    ref = np.array([_bits_ref(int(v), bits) for v in xh], dtype=np.uint64)
    got = target.to_host(out).view(f"u{xh.itemsize}")  # brev sets the sign bit of signed types
    assert got.astype(np.uint64).tolist() == ref.tolist()


