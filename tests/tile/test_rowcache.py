"""Tiles a loop loads kept in shared memory for later loops over the same range
(ir/rowcache.py, tile/rowcache.h): which loads the pass marks and which it leaves, the launch's
bytes, cubins, and cuTile's LayerNorm sample kernel (its three passes over each row, as
examples/tile_kernels.py writes it) in the simulator and on the GPU against NumPy in float64
with poisoned outputs: rows of several slots, rows longer than the cache, ragged rows."""

import numpy as np
import pytest
from conftest import compile_cubin, poison
from kernels.tiles import layer_norm_fwd

import threadtile.tile as ct
from threadtile.ir import nodes as ir
from threadtile.ir import rowcache

C = ct.Constant[int]
PAD = ct.PaddingMode.ZERO


@ct.kernel
def centre(X, Y, T: C):
    """Two passes over row bid(0): its sum, then the row less its mean."""
    r = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(1, T))
    acc = ct.zeros((1, T), dtype=ct.float32)
    for j in range(n):
        acc += ct.load(X, index=(r, j), shape=(1, T), padding_mode=PAD)
    mean = ct.sum(acc, axis=1) / X.shape[1]
    for j in range(n):
        x = ct.load(X, index=(r, j), shape=(1, T), padding_mode=PAD)
        ct.store(Y, index=(r, j), tile=x - mean)


@ct.kernel
def other_range(X, Y, T: C):
    """The second loop starts at 1: not the first one's range."""
    r = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(1, T))
    acc = ct.zeros((1, T), dtype=ct.float32)
    for j in range(n):
        acc += ct.load(X, index=(r, j), shape=(1, T), padding_mode=PAD)
    for j in range(1, n):
        ct.store(Y, index=(r, j), tile=ct.load(X, index=(r, j), shape=(1, T)) + acc)


@ct.kernel
def writes_between(X, Y, T: C):
    """X written between the loops: its tiles must be read again."""
    r = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(1, T))
    acc = ct.zeros((1, T), dtype=ct.float32)
    for j in range(n):
        acc += ct.load(X, index=(r, j), shape=(1, T), padding_mode=PAD)
    ct.store(X, index=(r, 0), tile=acc)
    for j in range(n):
        ct.store(Y, index=(r, j), tile=ct.load(X, index=(r, j), shape=(1, T)))


@ct.kernel
def stops_early(X, Y, T: C):
    """The first loop may stop before it has filled every slot."""
    r = ct.bid(0)
    n = ct.num_tiles(X, axis=1, shape=(1, T))
    acc = ct.zeros((1, T), dtype=ct.float32)
    for j in range(n):
        t = ct.load(X, index=(r, j), shape=(1, T), padding_mode=PAD)
        if ct.sum(t) < 0:
            break
        acc += t
    for j in range(n):
        ct.store(Y, index=(r, j), tile=ct.load(X, index=(r, j), shape=(1, T)) + acc)


def _loads(kernel, args, consts):
    f = kernel._spec_for(list(args), consts).module.kernel
    return [x for x in ir.walk_function_exprs(f) if isinstance(x, ir.TileOp) and
            x.op == "load" and x.args[0].name == "X"]


def _roles(kernel, args, consts):
    return [x.attrs.get("rowcache", {}).get("role") for x in _loads(kernel, args, consts)]


def _ln_args(m, n, dtype=np.float32):
    x = np.zeros((m, n), dtype)
    w = np.zeros(n, dtype)
    return [x, w, w, x, np.zeros(m, np.float32), np.zeros(m, np.float32), 1e-5]


def test_the_layer_norm_samples_three_passes_read_x_once():
    assert _roles(layer_norm_fwd, _ln_args(8, 4096), dict(TILE_N=1024)) == \
        ["put", "get", "get"]


def test_two_passes():
    x = np.zeros((8, 512), np.float32)
    assert _roles(centre, [x, x], dict(T=256)) == ["put", "get"]


@pytest.mark.parametrize("kernel", [other_range, writes_between, stops_early])
def test_loads_that_could_differ_are_read_again(kernel):
    x = np.zeros((8, 512), np.float32)
    assert _roles(kernel, [x, x], dict(T=256)) == [None, None]


def test_threadtile_rowcache_bytes_0_turns_it_off(monkeypatch):
    monkeypatch.setenv("THREADTILE_ROWCACHE_BYTES", "0")
    fresh = ct.kernel(centre.py_func)  # (a specialization of its own)
    x = np.zeros((8, 512), np.float32)
    assert _roles(fresh, [x, x], dict(T=256)) == [None, None]


def test_the_launch_sizes_the_cache_by_the_row(monkeypatch):
    spec = layer_norm_fwd._spec_for(_ln_args(8, 4096), dict(TILE_N=1024))
    p = rowcache.plan(spec.module)
    assert p == ("X", 1, 1024, 1024 * 4)  # float32 tiles of 1x1024: 4 KiB a slot
    assert rowcache.launch_bytes(p, 4096) == 4 * 4096 + 16
    assert rowcache.launch_bytes(p, 3000) == 3 * 4096 + 16
    monkeypatch.setenv("THREADTILE_ROWCACHE_BYTES", str(8 * 1024))
    assert rowcache.launch_bytes(p, 32768) == 2 * 4096 + 16  # (the rest read again)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    assert compile_cubin(layer_norm_fwd, *_ln_args(8, 4096), TILE_N=1024, arch=arch)


def _bf16_exact(a: np.ndarray) -> np.ndarray:
    """float32 values that bfloat16 holds exactly (the low 16 bits cleared)."""
    return (np.ascontiguousarray(a, np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)


@pytest.mark.parametrize(("n", "dtype", "cache"), [
    (4096, "float32", None),      # four slots, all cached
    (3000, "float32", None),      # a ragged last tile
    (5000, "float32", 8192),      # rows longer than the cache: two slots, three read again
    (2500, "bfloat16", None),
])
def test_layer_norm_numerics(target, rng, monkeypatch, n, dtype, cache):
    if cache is not None:
        monkeypatch.setenv("THREADTILE_ROWCACHE_BYTES", str(cache))
    m = 12
    x = _bf16_exact(rng.standard_normal((m, n)) * 3 + 1)
    w = _bf16_exact(rng.standard_normal(n))
    b = _bf16_exact(rng.standard_normal(n))
    y = target.array(poison((m, n), np.float32), dtype)
    mean = target.to_device(poison((m,), np.float32))
    rstd = target.to_device(poison((m,), np.float32))
    kernel = ct.kernel(layer_norm_fwd.py_func)  # (its own launches: the cache's bytes)
    target.launch_tile(kernel, (m,), target.array(x, dtype), target.array(w, dtype),
                       target.array(b, dtype), y, mean, rstd, 1e-5, 1024)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    inv = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    ref = (x64 - mu) * inv * w.astype(np.float64) + b.astype(np.float64)
    tol = 1e-4 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(np.asarray(target.to_host(y), np.float64), ref, rtol=tol, atol=tol * 4)
    np.testing.assert_allclose(np.asarray(target.to_host(mean), np.float64), mu[:, 0],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(target.to_host(rstd), np.float64), inv[:, 0],
                               rtol=1e-4)
