"""threadtile.random (numba.cuda.random) on every target: the same states and uniform draws as
numba's own generators, bit for bit (numba's simulator in a subprocess is the reference), and
normal draws against NumPy's Box-Muller of the same uniforms in float64."""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import threadtile as cuda
from threadtile.random import (
    create_xoroshiro128p_states,
    init_xoroshiro128p_states,
    xoroshiro128p_dtype,
    xoroshiro128p_jump,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

N, COUNT = 40, 5


@cuda.jit
def draw_all(states, u32, u64, words):
    t = cuda.grid(1)
    if t < states.shape[0]:
        for i in range(COUNT):
            u32[t, i] = xoroshiro128p_uniform_float32(states, t)
            u64[t, i] = xoroshiro128p_uniform_float64(states, t)
            words[t, i] = xoroshiro128p_next(states, t)


@cuda.jit
def draw_normal(states, n32, n64):
    t = cuda.grid(1)
    if t < states.shape[0]:
        for i in range(COUNT):
            n32[t, i] = xoroshiro128p_normal_float32(states, t)
            n64[t, i] = xoroshiro128p_normal_float64(states, t)


@cuda.jit
def jump_each(states):
    t = cuda.grid(1)
    if t < states.shape[0]:
        xoroshiro128p_jump(states, t)


_NUMBA = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba import cuda
    from numba.cuda import random as r
    N, COUNT = {N}, {COUNT}

    @cuda.jit
    def draw(states, u32, u64, words):
        t = cuda.grid(1)
        if t < states.shape[0]:
            for i in range(COUNT):
                u32[t, i] = r.xoroshiro128p_uniform_float32(states, t)
                u64[t, i] = r.xoroshiro128p_uniform_float64(states, t)
                words[t, i] = r.xoroshiro128p_next(states, t)

    out = {{}}
    s = r.create_xoroshiro128p_states(N, seed=1234, subsequence_start=3)
    h = s.copy_to_host()
    out["init"] = [[int(x["s0"]), int(x["s1"])] for x in h]
    u32 = np.zeros((N, COUNT), np.float32)
    u64 = np.zeros((N, COUNT), np.float64)
    words = np.zeros((N, COUNT), np.uint64)
    draw[1, 64](s, u32, u64, words)
    out["u32"] = u32.view(np.uint32).tolist()
    out["u64"] = u64.view(np.uint64).tolist()
    out["words"] = words.tolist()
    h = s.copy_to_host()
    out["after"] = [[int(x["s0"]), int(x["s1"])] for x in h]
    h2 = h.copy()
    r.init_xoroshiro128p_states_cpu(h2, 99, 0)
    out["seed99"] = [[int(x["s0"]), int(x["s1"])] for x in h2[:4]]
    json.dump(out, sys.stdout)
""").format(N=N, COUNT=COUNT)


@pytest.fixture(scope="module")
def numba_reference():
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, "-c", _NUMBA], env=env, capture_output=True,
                         text=True, timeout=600, check=True)
    return json.loads(res.stdout)


def _words(records: np.ndarray) -> list:
    return [[int(x["s0"]), int(x["s1"])] for x in records]


def test_states_and_uniform_draws_are_numbas(target, numba_reference):
    u32 = target.to_device(np.zeros((N, COUNT), np.float32))
    u64 = target.to_device(np.zeros((N, COUNT), np.float64))
    words = target.to_device(np.zeros((N, COUNT), np.uint64))
    with target.running():
        states = create_xoroshiro128p_states(N, seed=1234, subsequence_start=3)
        init = states.copy_to_host()
        draw_all[1, 64](states, u32, u64, words)
    target.synchronize()
    assert init.dtype == xoroshiro128p_dtype and init.shape == (N,)
    assert _words(init) == numba_reference["init"]
    assert target.to_host(u32).view(np.uint32).tolist() == numba_reference["u32"]
    assert target.to_host(u64).view(np.uint64).tolist() == numba_reference["u64"]
    assert target.to_host(words).tolist() == numba_reference["words"]
    assert _words(states.copy_to_host()) == numba_reference["after"]


def test_seeding_matches_numba_and_subsequences_shift(numba_reference):
    with cuda.simulate():
        s = cuda.device_array(4, dtype=xoroshiro128p_dtype)
        init_xoroshiro128p_states(s, 99)
        assert _words(s.copy_to_host()) == numba_reference["seed99"]
        a = create_xoroshiro128p_states(10, seed=7).copy_to_host()
        b = create_xoroshiro128p_states(10, seed=7, subsequence_start=4).copy_to_host()
    np.testing.assert_array_equal(a[4:], b[:-4])
    assert len(np.unique(a)) == 10


def test_jump_on_the_device_is_the_next_subsequence(target):
    with target.running():
        states = create_xoroshiro128p_states(6, seed=5)
        jump_each[1, 32](states)
        got = states.copy_to_host()
        want = create_xoroshiro128p_states(7, seed=5).copy_to_host()[1:]
    np.testing.assert_array_equal(got, want)


def test_normal_draws_are_box_muller_of_the_uniforms(target):
    n32 = target.to_device(np.zeros((N, COUNT), np.float32))
    n64 = target.to_device(np.zeros((N, COUNT), np.float64))
    u = target.to_device(np.zeros((N, 4 * COUNT), np.float32))
    with target.running():
        states = create_xoroshiro128p_states(N, seed=42)
        draw_normal[1, 64](states, n32, n64)
        states = create_xoroshiro128p_states(N, seed=42)
        draw_uniform32[1, 64](states, u)
    target.synchronize()
    uu = target.to_host(u).astype(np.float64).reshape(N, COUNT, 4)
    z = [np.sqrt(-2 * np.log(uu[..., k])) * np.cos(2 * math.pi * uu[..., k + 1])
         for k in (0, 2)]
    np.testing.assert_allclose(target.to_host(n32), z[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(target.to_host(n64), z[1], rtol=1e-6, atol=1e-6)


@cuda.jit
def draw_uniform32(states, out):
    t = cuda.grid(1)
    if t < states.shape[0]:
        for i in range(out.shape[1]):
            out[t, i] = xoroshiro128p_uniform_float32(states, t)


def test_numbas_own_functions_in_a_threadtile_kernel(target):
    r = pytest.importorskip("numba.cuda.random")

    @cuda.jit
    def k(states, out):
        t = cuda.grid(1)
        if t < out.size:
            out[t] = r.xoroshiro128p_uniform_float64(states, t)

    out = target.to_device(np.zeros(N, np.float64))
    want = target.to_device(np.zeros((N, 1), np.float32))
    with target.running():
        k[1, 64](create_xoroshiro128p_states(N, seed=3), out)
        draw_uniform32[1, 64](create_xoroshiro128p_states(N, seed=3), want)
    target.synchronize()
    np.testing.assert_allclose(target.to_host(out), target.to_host(want)[:, 0], rtol=1e-7)


def test_python_mode_draws_the_same_numbers():
    outs = []
    for mode in ("lockstep", "python"):
        u = np.zeros((8, 3), np.float32)
        with cuda.simulate(mode=mode):
            draw_uniform32[1, 8](create_xoroshiro128p_states(8, seed=11), u)
        outs.append(u)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_generators_compile(arch):
    t = (cuda.uint64[:, ::1], cuda.float32[:, ::1], cuda.float64[:, ::1])
    draw_normal.compile(*t, arch=arch)
    jump_each.compile(t[0], arch=arch)
    draw_all.compile(t[0], t[1], t[2], cuda.uint64[:, ::1], arch=arch)
