"""Operand copies one iteration ahead (ir/prefetch.py): where a loop's first ``mma``
multiplies by an operand copied at the top of its body, the next iteration's copy is issued
right after that product, the first copy before the loop where the loop runs, the last one
waited for after it. The same statements run in the simulator and on the GPU (``target``),
against NumPy in float64 with fresh inputs and poisoned outputs: loops of one, several and no
iterations, a K whose last tile is partial."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO


@ct.kernel
def scores_weighted(Q, K, V, Out, n: int, TM: ConstInt, TN: ConstInt, D: ConstInt):
    """Out = sum over key tiles j < n of exp(Q K_j^T / 8 - 1) V_j (no normalization; n the
    loop's run-time trip count, 0 allowed); Q (M, D), K and V (S, D)."""
    i = ct.bid(0)
    q = ct.load(Q, index=(i, 0), shape=(TM, D), padding_mode=ZERO)
    acc = ct.zeros((TM, D), dtype=ct.float32)
    for j in range(n):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0), padding_mode=ZERO)
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
        p = ct.exp(s * 0.125 - 1.0)
        v = ct.load(V, index=(j, 0), shape=(TN, D), padding_mode=ZERO)
        acc = ct.mma(p.astype(V.dtype), v, acc)
    ct.store(Out, index=(i, 0), tile=acc)


@ct.kernel
def scores_stored(Q, K, Out, S, n: int, TM: ConstInt, TN: ConstInt, D: ConstInt):
    """As above without V, each tile's scores stored in the loop: memory written in the loop,
    so the copy of K stays where it is."""
    i = ct.bid(0)
    q = ct.load(Q, index=(i, 0), shape=(TM, D), padding_mode=ZERO)
    acc = ct.zeros((TM, TN), dtype=ct.float32)
    for j in range(n):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0), padding_mode=ZERO)
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
        ct.store(S, index=(i, j), tile=s)
        acc = acc + s
    ct.store(Out, index=(i, 0), tile=acc)


def _args(m=64, s=192, d=64, dt=np.float16):
    z = np.zeros
    return z((m, d), dt), z((s, d), dt), z((s, d), dt), z((m, d), np.float32)


def test_the_first_product_s_copy_moves_ahead():
    src = scores_weighted.cuda_source(*_args(), 3, 64, 64, 64)
    head, rest = src.split("for (", 1)
    body, tail = rest.split("\n  }\n", 1)
    # K: copied before the loop where it runs, then right after the scores' product, its
    # index the next iteration's (the last iteration's own again); V stays at the top
    assert "if (0LL < n) {" in head and "k = tt::tile::load_operand" in head
    assert body.index("mma<true, 1>(q, k") < body.index("k = tt::tile::load_operand")
    assert "tt::wadd(j, 1LL) < n ? tt::wadd(j, 1LL) : j, 0LL)" in body
    assert body.index("v = tt::tile::load_operand") < body.index("mma<true, 1>(q, k")
    # each product leaves the one later copy pending: V's for the scores, the next K's for P V
    assert body.count("mma<true, 1>(") == 2
    assert "tt::tile::operand_drain(k);" in tail


def test_memory_written_in_the_loop_keeps_the_copy_in_place():
    z = np.zeros
    src = scores_stored.cuda_source(z((64, 64), np.float16), z((192, 64), np.float16),
                                    z((64, 64), np.float32), z((64, 192), np.float32), 3,
                                    64, 64, 64)
    head, rest = src.split("for (", 1)
    assert "load_operand" not in head.split("q = ")[-1].split("\n", 1)[1]
    assert "operand_drain" not in src


@pytest.mark.parametrize(("m", "s", "n"), [(64, 192, 3), (128, 100, 2), (64, 64, 1),
                                           (64, 128, 0)])
def test_numerics(target, rng, m, s, n):
    d, tm, tn = 64, 64, 64
    q = (rng.standard_normal((m, d)) / 4).astype(np.float16)
    k = (rng.standard_normal((s, d)) / 4).astype(np.float16)
    v = rng.standard_normal((s, d)).astype(np.float16)
    out = target.to_device(poison((m, d), np.float32))
    target.launch_tile(scores_weighted, (m // tm,), target.to_device(q), target.to_device(k),
                       target.to_device(v), out, n, tm, tn, d)
    rows = min(n * tn, s)
    qf, kf, vf = (x.astype(np.float64) for x in (q, k[:rows], v[:rows]))
    p = np.exp(qf @ kf.T * 0.125 - 1.0).astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(target.to_host(out), p @ vf, rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_compiles(arch):
    assert compile_cubin(scores_weighted, *_args(), 3, 64, 64, 64, arch=arch)[:4] == b"\x7fELF"


def test_a_product_that_waits_for_another_copy_is_left_alone():
    """A mixture of experts' product reads rows gathered in the body (``gather_operand``)
    beside its weights: it waits for the gathered copy every iteration, so copying the
    weights early gains nothing (and cost its kernel a block a multiprocessor: registers)."""
    from test_tile_gather_operand import _args, gathered_product  # noqa: PLC0415

    src = gathered_product.cuda_source(*_args(), TM=128, TN=128, TK=64)
    assert "operand_drain" not in src and "gather_operand<" in src
