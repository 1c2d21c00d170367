"""One variable per loop (ir/webs.py): a causal attention written as two loops over the key
tiles, the unmasked ones and then the masked ones, with the same names in both, takes the
same fast path as one loop does: K, V and the scores' operands in shared memory (the loops'
buffers shared), Q in one buffer read by both products, each loop's K copied an iteration
ahead. Numerics in the simulator and on the GPU (``target``) against NumPy in float64 with
fresh inputs and poisoned outputs; the cubin for sm_80, sm_90 and sm_90a."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct
from threadtile.ir import nodes as ir

ConstInt = ct.Constant[int]


@ct.kernel
def causal_two_loops(Q, K, V, Out, TM: ConstInt, TN: ConstInt, D: ConstInt):
    """Causal softmax attention of one head: Q, K, V (S, D) float16, Out (S, D) float32; the
    key tiles below the diagonal in one loop, those it crosses in another."""
    i = ct.bid(0)
    q = ct.load(Q, index=(i, 0), shape=(TM, D))
    rows = i * TM + ct.arange(TM, dtype=ct.int32)[:, None]
    m = ct.full((TM, 1), -np.inf, dtype=ct.float32)
    den = ct.zeros((TM, 1), dtype=ct.float32)
    acc = ct.zeros((TM, D), dtype=ct.float32)
    diag = (i * TM) // TN
    for j in range(0, diag):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0))
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32)) * 0.125
        m_new = max(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp(s - m_new)
        alpha = ct.exp(m - m_new)
        den = den * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(j, 0), shape=(TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m = m_new
    for j in range(diag, ct.cdiv((i + 1) * TM, TN)):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0))
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32)) * 0.125
        cols = j * TN + ct.arange(TN, dtype=ct.int32)[None, :]
        s = s + ct.where(rows >= cols, 0.0, -np.inf)
        m_new = max(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp(s - m_new)
        alpha = ct.exp(m - m_new)
        den = den * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(j, 0), shape=(TN, D))
        acc = ct.mma(p.astype(V.dtype), v, acc * alpha)
        m = m_new
    ct.store(Out, index=(i, 0), tile=acc / den)


@ct.kernel
def halves(Q, K, V, Out, TM: ConstInt, TN: ConstInt, D: ConstInt, SCALE_B: ConstInt):
    """Out = sum over all key tiles of exp(Q K_j^T / 8 - 1) V_j, the tiles in two loops of
    the same body, the second's K scaled by SCALE_B (1: read as loaded; 2: K * 2, computed,
    which keeps that product's B, and so Q, out of shared memory)."""
    i = ct.bid(0)
    q = ct.load(Q, index=(0, i, 0), shape=(1, TM, D)).reshape((TM, D))  # Q (1, S, D)
    acc = ct.zeros((TM, D), dtype=ct.float32)
    half = ct.num_tiles(K, axis=0, shape=(TN, D)) // 2
    for j in range(0, half):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0))
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
        v = ct.load(V, index=(j, 0), shape=(TN, D))
        acc = ct.mma(ct.exp(s * 0.125 - 1.0).astype(V.dtype), v, acc)
    for j in range(half, 2 * half):
        k = ct.load(K, index=(0, j), shape=(D, TN), order=(1, 0))
        if SCALE_B != 1:
            k = k * SCALE_B
        s = ct.mma(q, k, ct.zeros((TM, TN), dtype=ct.float32))
        v = ct.load(V, index=(j, 0), shape=(TN, D))
        acc = ct.mma(ct.exp(s * 0.125 - 1.0).astype(V.dtype), v, acc)
    ct.store(Out, index=(i, 0), tile=acc)


@ct.kernel
def read_after(X, Out, n: int, T: ConstInt):
    """``t`` is assigned in both loops but the second loop's last value is read after it:
    not private to the loops, kept one variable."""
    acc = ct.zeros((T, T), dtype=ct.float32)
    t = ct.zeros((T, T), dtype=ct.float32)
    for j in range(n):
        t = ct.load(X, index=(j, 0), shape=(T, T))
        acc = acc + t
    for j in range(n):
        t = ct.load(X, index=(j, 0), shape=(T, T)) * 2.0
        acc = acc + t
    ct.store(Out, index=(0, 0), tile=acc + t)


def _args(s=256, d=64):
    z = np.zeros
    return z((s, d), np.float16), z((s, d), np.float16), z((s, d), np.float16), \
        z((s, d), np.float32)


def _reference(q, k, v):
    qf, kf, vf = (x.astype(np.float64) for x in (q, k, v))
    s = qf @ kf.T * 0.125
    s[np.triu_indices(len(s), 1)] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p @ vf / p.sum(axis=1, keepdims=True)


def test_each_loop_gets_its_own_names_and_shares_the_buffers():
    spec = causal_two_loops._spec_for(list(_args()), dict(TM=64, TN=64, D=64))
    f = spec.module.kernel
    assert {"k_w1", "v_w1", "s_w1", "p_w1"} <= set(f.twins)
    assert f.twins["v_w1"] == "v"
    ops = [x for x in ir.walk_function_exprs(f)
           if isinstance(x, ir.TileOp) and x.op == "load_operand"]
    # Q once; K before each loop and an iteration ahead in it; V in each loop
    assert len(ops) == 7 and len({x.attrs["offset"] for x in ops}) == 3
    src = spec.cuda.text
    assert "tt::tile::operand_drain(k);" in src and "tt::tile::operand_drain(k_w1);" in src
    # no 16-bit tile in registers but P's fragments: Q, K and V in their wgmma buffers
    assert "tt::tile::Tile<__half" not in src
    assert "SmemTile<__half, 128, 64, 64, true, 64, true>" in src  # K^T, wgmma's layout


def test_a_name_read_after_its_loops_is_not_split():
    z = np.zeros
    spec = read_after._spec_for([z((128, 32), np.float32), z((32, 32), np.float32), 2],
                                dict(T=32))
    assert not spec.module.kernel.twins


@pytest.mark.parametrize(("s", "tm", "tn"), [(256, 64, 64), (192, 64, 32), (128, 128, 64)])
def test_numerics(target, rng, s, tm, tn):
    d = 64
    q, k, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    out = target.to_device(poison((s, d), np.float32))
    target.launch_tile(causal_two_loops, (s // tm,), target.to_device(q), target.to_device(k),
                       target.to_device(v), out, tm, tn, d)
    np.testing.assert_allclose(target.to_host(out), _reference(q, k, v), rtol=2e-2,
                               atol=2e-2)


def test_read_after_numerics(target, rng):
    x = rng.standard_normal((96, 32)).astype(np.float32)
    out = target.to_device(poison((32, 32), np.float32))
    target.launch_tile(read_after, (1,), target.to_device(x), out, 3, 32)
    t = x.reshape(3, 32, 32).astype(np.float64)
    np.testing.assert_allclose(target.to_host(out), 3 * t.sum(0) + 2 * t[2], rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_compiles(arch):
    assert compile_cubin(causal_two_loops, *_args(), 64, 64, 64, arch=arch)[:4] == b"\x7fELF"


def _halves_args():
    q, k, v, out = _args()
    return q[None], k, v, out


def _halves_reference(q, k, v, scale_b):
    s2 = len(k) // 2
    kf = k.astype(np.float64)
    kf[s2:] *= scale_b
    p = np.exp(q.astype(np.float64) @ kf.T * 0.125 - 1.0).astype(np.float16)
    return p.astype(np.float64) @ v.astype(np.float64)


def test_both_loops_of_one_body_take_shared_memory():
    """Q's buffer is made in front of both loops while the first is rewritten: the second
    loop is still visited (its K and V copies), and its product reads Q's buffer."""
    src = halves.cuda_source(*_halves_args(), 64, 64, 64, 1)
    assert "tt::tile::load<" not in src and "smemw q = " in src
    assert src.count("tt::tile::operand_drain(") == 2


def test_a_second_product_with_b_in_registers_keeps_q_there():
    src = halves.cuda_source(*_halves_args(), 64, 64, 64, 2)
    assert "smemw q = " not in src and "smem q = " not in src
    # ... and every product compiles (an A in shared memory has no product with a B in
    # registers), the TMA-only sm_90a build included
    from threadtile.builds import target_for  # noqa: PLC0415
    from threadtile.runtime import nvrtc  # noqa: PLC0415

    spec = halves._spec_for(list(_halves_args()), dict(TM=64, TN=64, D=64, SCALE_B=2))
    for arch in ("sm_80", "sm_90a"):
        t = target_for(spec, arch, halves.options)
        assert nvrtc.compile_cubin(spec.cuda.text, arch, name="h.cu", options=t.options)


@pytest.mark.parametrize("scale_b", [1, 2])
def test_halves_numerics(target, rng, scale_b):
    s, d = 256, 64
    q, k = ((rng.standard_normal((s, d)) / 4).astype(np.float16) for _ in range(2))
    v = rng.standard_normal((s, d)).astype(np.float16)
    out = target.to_device(poison((s, d), np.float32))
    target.launch_tile(halves, (s // 64,), target.to_device(q[None]), target.to_device(k),
                       target.to_device(v), out, 64, 64, d, scale_b)
    np.testing.assert_allclose(target.to_host(out), _halves_reference(q, k, v, scale_b),
                               rtol=2e-3, atol=2e-2)
