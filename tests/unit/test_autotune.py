"""``@threadtile.autotune`` without a GPU: the simulator's choice (the first configuration that
runs), skipped configurations, keys, the on-disk store (written here, read back in a fresh
process, missed when the kernel's source changes) with an injected ``do_bench``, the
arguments tuning must not corrupt, and the errors for bad configurations."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import threadtile as tt
import threadtile.tile as ct
from threadtile.errors import KernelCompileError
from threadtile.tuning import Config, TuningWarning, engine, store

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache folder of the test's own (the stored choices start empty)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(d))
    monkeypatch.delenv("THREADTILE_AUTOTUNE", raising=False)
    return d


def _copy_kernel(configs, **kw):
    @tt.autotune(configs=configs, key=["x"], **kw)
    @ct.kernel
    def copy(x, out, T: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(T,))
        ct.store(out, index=(ct.bid(0),), tile=t)
    return copy


def _grid(meta):
    return (ct.cdiv(meta["x"].shape[0], meta["T"]),)


# ---- the simulator: the first configuration that runs ----------------------------------------

def test_simulator_takes_the_first_config_that_runs():
    copy = _copy_kernel([Config(T=100, num_warps=4),    # not a power of two: a compile error
                         Config(T=128, num_warps=3),    # not a block size: the hint fails
                         Config(T=256, num_warps=8),
                         Config(T=512)])                # not tried
    x = np.arange(1024, dtype=np.float32)
    out = np.full_like(x, np.nan)
    with tt.simulate(), pytest.warns(TuningWarning) as rec:
        copy[_grid](x, out)
    np.testing.assert_array_equal(out, x)
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 2
    assert "Config(T=100, num_warps=4) skipped: KernelCompileError" in msgs[0]
    assert "power of two" in msgs[0] and "num_warps must be" in msgs[1]
    assert all(w.filename == __file__ for w in rec)  # at the launch, not in threadtile
    assert copy.best_config == Config(T=256, num_warps=8)
    choice = copy.last_choice
    assert choice.origin == "first" and choice.index == 2
    assert [m.config for m in choice.result.successes] == [Config(T=256, num_warps=8)]
    assert [c.kwargs["T"] for c, _, _ in choice.result.failures] == [100, 128]
    assert choice.result.failures[0][1] is KernelCompileError
    with tt.simulate():  # the choice is kept: no search, no warning
        assert copy.choices and list(copy.cache.values()) == [Config(T=256, num_warps=8)]
        out[:] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ct.launch(None, _grid, copy, (x, out))  # cuTile's launch of an autotuned kernel
        assert copy.last_choice is choice
    np.testing.assert_array_equal(out, x)
    assert copy.choices == {}  # outside the simulator: another mode, nothing chosen yet


@tt.jit
def _saxpy(a, x, y, out, REPEAT: tt.Constant[int]):
    i = tt.grid(1)
    if i < out.shape[0]:
        acc = y[i]
        for _ in range(REPEAT):
            acc += a * x[i]
        out[i] = acc


def test_thread_level_kernel_block_and_constants(rng):
    k = tt.autotune(configs=[Config(REPEAT=1, block=2048),  # over 1024 threads: refused
                             dict(REPEAT=2, block=(64,)), Config(REPEAT=3, block=128)],
                    key=["x"])(_saxpy)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    out = np.full_like(x, np.nan)
    with tt.simulate(), pytest.warns(TuningWarning, match=r"block=2048\) skipped"):
        k[lambda m: (ct.cdiv(m["x"].shape[0], m["block"][0]),), None](np.float32(0.5), x, y,
                                                                     out)
    assert k.best_config == Config(REPEAT=2, block=(64,))
    np.testing.assert_allclose(out, y + 2 * np.float32(0.5) * x, rtol=1e-6, atol=1e-6)
    with tt.simulate():  # a block given at the launch, where the configs give none
        plain = tt.autotune(configs=[Config(REPEAT=1)], key=[])(_saxpy)
        plain[8, 128](np.float32(1), x, y, out)
        np.testing.assert_allclose(out, y + x, rtol=1e-6, atol=1e-6)
        with pytest.raises(tt.LaunchError, match="gives no block"):
            plain[8](np.float32(1), x, y, out)


def test_key_changes_make_new_entries():
    copy = _copy_kernel([Config(T=64), Config(T=128)])
    with tt.simulate():
        for n, dtype in ((256, np.float32), (512, np.float32), (256, np.float32),
                         (256, np.float64)):
            x = np.arange(n).astype(dtype)
            out = np.zeros_like(x)
            copy[_grid](x, out)
            np.testing.assert_array_equal(out, x)
        keys = list(copy.choices)
    assert keys == [(((256,), "float32"), ("float32", "float32")),
                    (((512,), "float32"), ("float32", "float32")),
                    (((256,), "float64"), ("float64", "float64"))]


def test_every_config_failing():
    copy = _copy_kernel([Config(T=100), Config(T=300)])
    x = np.zeros(600, np.float32)
    with tt.simulate(), pytest.warns(TuningWarning):
        with pytest.raises(ValueError, match=r"none of the 2 configurations ran:\n"
                                             r"  Config\(T=100\): KernelCompileError"):
            copy[_grid](x, np.zeros_like(x))
    # an error of the launch itself (every configuration fails alike) is raised as it is
    ok = _copy_kernel([Config(T=64), Config(T=128)])
    with tt.simulate(), pytest.warns(TuningWarning), pytest.raises(TypeError):
        ok[_grid](x, "not an array")


# ---- timed tuning (an injected do_bench) and the store ----------------------------------------

def _bench(times):
    """A do_bench that launches once and reports the next of ``times`` (configurations are
    timed in order); ``calls`` counts it."""
    it = iter(times)

    def do_bench(launch):
        launch()
        do_bench.calls += 1
        return next(it)
    do_bench.calls = 0
    return do_bench


def test_do_bench_times_and_stores(cache_dir):
    bench = _bench([5.0, 2.0, 3.0])
    copy = _copy_kernel([Config(T=64), Config(T=128), Config(T=256)], do_bench=bench)
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(x)
    with tt.simulate():
        copy[_grid](x, out)
    np.testing.assert_array_equal(out, x)
    c = copy.last_choice
    assert (c.origin, c.config, bench.calls) == ("tuned", Config(T=128), 3)
    assert [m.mean_us for m in c.result.successes] == [5.0, 2.0, 3.0]
    (rec,) = copy.cached()
    assert rec.kernel.endswith("_copy_kernel.<locals>.copy") and rec.complete
    assert rec.config == Config(T=128).to_json() and rec.device == "threadtile simulator (sm_90)"
    assert rec.key == (((1024,), "float32"), ("float32", "float32"))
    assert [t for _, t, _ in rec.timings] == [5.0, 2.0, 3.0]
    assert store.list_cached(copy) == [rec] and store.list_cached("no.such") == []
    # a new autotuner of the same kernel reads the choice: nothing is timed
    again = _copy_kernel([Config(T=64), Config(T=128), Config(T=256)], do_bench=_bench([]))
    with tt.simulate():
        again[_grid](x, out)
    assert (again.last_choice.origin, again.best_config) == ("cache", Config(T=128))
    # other configurations: another entry
    other = _copy_kernel([Config(T=256), Config(T=128)], do_bench=_bench([1.0, 2.0]))
    with tt.simulate():
        other[_grid](x, out)
    assert (other.last_choice.origin, other.best_config) == ("tuned", Config(T=256))
    assert len(store.list_cached(copy)) == 2
    assert store.clear(copy) == 2 and store.list_cached() == []


def test_force_and_verbose(cache_dir, monkeypatch, capsys):
    configs = [Config(T=64), Config(T=128)]
    x = np.arange(256, dtype=np.float32)
    with tt.simulate():
        _copy_kernel(configs, do_bench=_bench([2.0, 1.0]))[_grid](x, np.zeros_like(x))
        monkeypatch.setenv("THREADTILE_AUTOTUNE", "force, verbose")
        k = _copy_kernel(configs, do_bench=_bench([1.0, 2.0]))
        k[_grid](x, np.zeros_like(x))
        assert (k.last_choice.origin, k.best_config) == ("tuned", Config(T=64))
        printed = capsys.readouterr().out
        assert "2 configurations (timing)" in printed and "Config(T=128): 2.0" in printed
        assert "chose Config(T=64)" in printed
        monkeypatch.setenv("THREADTILE_AUTOTUNE", "verbose")
        k2 = _copy_kernel(configs, do_bench=_bench([]))
        k2[_grid](x, np.zeros_like(x))
        assert k2.best_config == Config(T=64)  # force replaced the entry
        assert "Config(T=64) (from the cache)" in capsys.readouterr().out
        monkeypatch.setenv("THREADTILE_AUTOTUNE", "forse")
        with pytest.warns(TuningWarning, match="unknown word"):
            _copy_kernel(configs, do_bench=_bench([1.0, 1.0]))[_grid](x, np.zeros_like(x))


KMOD = '''
import numpy as np
import threadtile as tt
import threadtile.tile as ct

CALLS = []


def do_bench(launch):
    launch()
    CALLS.append(1)
    return {times}[len(CALLS) - 1]


@tt.autotune(configs=[tt.Config(T=64), tt.Config(T=128), tt.Config(T=256)], key=["n"],
             do_bench=do_bench)
@ct.kernel
def scale(x, out, n, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(out, index=(ct.bid(0),), tile=t * {factor})


def run(n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    with tt.simulate():
        scale[lambda m: (ct.cdiv(n, m["T"]),)](x, out, n)
    assert (out == x * {factor}).all()
    c = scale.last_choice
    return [c.origin, c.config.kwargs["T"], len(CALLS)]
'''

CHILD = "import json, sys; sys.path.insert(0, sys.argv[1]); import kmod; " \
        "print(json.dumps(kmod.run(int(sys.argv[2]))))"


def _module(folder: Path, times, factor: float):
    (folder / "kmod.py").write_text(KMOD.format(times=list(times), factor=factor))


def _child(folder: Path, n: int) -> list:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get(
        "PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(n)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_choice(cache_dir, tmp_path):
    folder = tmp_path / "mod"
    folder.mkdir()
    _module(folder, [3.0, 1.0, 2.0], 2.0)
    spec = importlib.util.spec_from_file_location("kmod", folder / "kmod.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kmod"] = mod
    try:
        spec.loader.exec_module(mod)
        assert mod.run(1024) == ["tuned", 128, 3]  # tuned in this process
    finally:
        sys.modules.pop("kmod", None)
    (rec,) = store.list_cached("kmod.scale")
    assert rec.key == (1024, ("float32", "float32")) and rec.config["kwargs"] == {"T": 128}
    assert _child(folder, 1024) == ["cache", 128, 0]  # a fresh process: nothing timed
    assert _child(folder, 2048) == ["tuned", 128, 3]  # another key
    # the kernel's source changes: its entries are stale, the kernel is tuned again
    _module(folder, [1.0, 2.0, 3.0], 3.0)
    assert _child(folder, 1024) == ["tuned", 64, 3]
    assert len(store.list_cached("kmod.scale")) == 3
    assert {r.config["kwargs"]["T"] for r in store.list_cached("kmod.scale")} == {64, 128}


def test_store_is_defensive(cache_dir):
    ident = ("m.k", "0" * 64, "opts", "", "[]")
    e = store.entry_key(ident, "GPU", (9, 0), (1, ("float32",)))
    assert e != store.entry_key(ident, "GPU", (8, 0), (1, ("float32",)))
    assert e != store.entry_key(ident, "GPU", (9, 0), ((1,), ("float32",)))
    assert e != store.entry_key(("m.k", "1" * 64) + ident[2:], "GPU", (9, 0),
                                (1, ("float32",)))
    assert store.load(e) is None
    rec = store.TuningRecord(kernel="m.k", source_sha="0" * 64, device="GPU",
                             compute_capability=(9, 0), key=(1, ("float32",)),
                             config=Config(T=64).to_json(), timings=(), failures=(),
                             complete=True, tuned_at="2025-01-01T00:00:00+00:00",
                             tuning_s=0.5, entry=e)
    assert store.save(rec) and store.load(e) == rec
    (path,) = Path(cache_dir).rglob(f"{e}.bin")
    assert "autotune" in path.parts
    path.write_bytes(path.read_bytes()[:-3])  # truncated: a miss, and removed
    assert store.load(e) is None and not path.exists()
    from threadtile.runtime import cache
    cache.put(e, b'{"format": 0}', store.NAMESPACE)  # another layout: a miss
    assert store.load(e) is None
    cache.put(e, b"not json", store.NAMESPACE)
    assert store.load(e) is None and store.list_cached() == []


# ---- arguments tuning must leave as they were ------------------------------------------------

@tt.jit
def _accumulate(x, out, UNROLL: tt.Constant[int]):
    i = tt.grid(1)
    if i < x.shape[0]:
        out[i] += x[i] * UNROLL / UNROLL


@tt.jit
def _total(x, acc, UNROLL: tt.Constant[int]):
    i = tt.grid(1)
    if i < x.shape[0]:
        tt.atomic.add(acc, 0, x[i])


def test_restore_value_and_reset_to_zero(cache_dir):
    configs = [Config(UNROLL=1, block=32), Config(UNROLL=2, block=64)]
    x = np.arange(100, dtype=np.float32)
    out = np.ones(100, np.float32)
    k = tt.autotune(configs=configs, key=["x"], restore_value=["out"],
                    do_bench=_bench([2.0, 1.0]), warmup=1)(_accumulate)
    with tt.simulate():
        k[lambda m: (ct.cdiv(100, m["block"]),)](x, out)
    np.testing.assert_array_equal(out, 1 + x)  # once, though tuning launched it five times
    acc = np.zeros(1, np.float32)
    t = tt.autotune(configs=configs, key=["x"], reset_to_zero=["acc"],
                    do_bench=_bench([1.0, 2.0]))(_total)
    with tt.simulate():
        t[lambda m: (ct.cdiv(100, m["block"]),)](x, acc)
    assert acc[0] == x.sum()
    with tt.simulate(), pytest.raises(TypeError, match="name arrays; 'x' is a float"):
        tt.autotune(configs=configs, key=[], restore_value=["x"], do_bench=_bench([1.0]))(
            _accumulate)[1](1.0, out)


def test_torch_tensors_in_the_simulator(cache_dir):
    """torch's tensors key by shape and dtype as NumPy's do, and restore_value saves and
    restores them (torch's clone and copy_); skipped where torch is not installed."""
    torch = pytest.importorskip("torch")
    x = torch.arange(100, dtype=torch.float32)
    out = torch.ones(100)
    k = tt.autotune(configs=[Config(UNROLL=1, block=32), Config(UNROLL=2, block=64)],
                    key=["x"], restore_value=["out"], do_bench=_bench([2.0, 1.0]))(_accumulate)
    with tt.simulate():
        k[lambda m: (ct.cdiv(100, m["block"]),)](x, out)
    assert torch.equal(out, 1 + x) and k.best_config == Config(UNROLL=2, block=64)
    assert k.last_choice.key == (((100,), "float32"), ("float32", "float32"))


def test_time_budget_skips_the_rest():
    def slow(launch):
        launch()
        time.sleep(0.2)
        return 1.0
    copy = _copy_kernel([Config(T=64), Config(T=128), Config(T=256)], do_bench=slow,
                        time_budget_s=0.1, cache_results=False)
    x = np.arange(256, dtype=np.float32)
    with tt.simulate(), pytest.warns(TuningWarning, match="time budget .* 2 of 3"):
        copy[_grid](x, np.zeros_like(x))
    r = copy.last_choice.result
    assert len(r.successes) == 1 and len(r.skipped) == 2 and "not tried" in str(r)


def test_engine_directly():
    class Trial:
        def __init__(self, cfg):
            if cfg == "bad":
                raise ValueError("no such config")
            self.cfg, self.runs = cfg, 0

        def prepare(self):
            pass

        def launch(self):
            self.runs += 1

    with tt.simulate():
        r = engine.search(["bad", "a", "b"], Trial, None, timed=False)
        assert r.best.config == "a" and r.best.num_samples == 0 and len(r.failures) == 1
        times = iter([4.0, 3.0])
        r = engine.search(["a", "bad", "b"], Trial, None, timed=True, warmup=2,
                          do_bench=lambda launch: (launch(), next(times))[1])
        assert r.best.config == "b" and [m.mean_us for m in r.successes] == [4.0, 3.0]
        with pytest.raises(ValueError, match="microseconds"):
            engine.search(["a"], Trial, None, timed=True, do_bench=lambda launch: -1.0)
        with pytest.raises(ValueError, match="Search space is empty"):
            engine.search([], Trial, None, timed=False)


# ---- errors ---------------------------------------------------------------------------------

@ct.kernel
def _tile_k(x, out, n, T: ct.Constant[int]):
    ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)))


@pytest.mark.parametrize("configs, kw, exc, msg", [
    ([], {}, ValueError, "configs is empty"),
    (Config(T=1), {}, TypeError, "configs is a list"),
    ([Config(S=1)], {}, ValueError, "has no parameter 'S'; its parameters are x, out, n, T"),
    ([Config(n=4)], {}, ValueError, "'n' is not a Constant parameter"),
    ([Config(T=64), Config(T=64, n=1)], {}, ValueError, "'n' is not a Constant"),
    ([Config(T=64), Config()], {}, ValueError, "every configuration sets the same"),
    ([Config(T=64, num_stages=3)], {}, ValueError, "num_stages is not a hint"),
    ([Config(T=64, block=128)], {}, ValueError, "block is not an option of a tile kernel"),
    ([Config(T="64")], {}, TypeError, "a Constant's value is an int"),
    ([7], {}, TypeError, "a threadtile.Config or a dict"),
    ([Config(T=64)], {"key": ["m"]}, ValueError, "key names 'm', which is not a parameter"),
    ([Config(T=64)], {"key": ["T"]}, ValueError, "key names 'T', which the configurations"),
    ([Config(T=64)], {"restore_value": ["q"]}, ValueError, "restore_value names 'q'"),
    ([Config(T=64)], {"time_budget_s": 0}, ValueError, "time_budget_s must be > 0"),
])
def test_bad_configs(configs, kw, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        tt.autotune(configs=configs, **kw)(_tile_k)


def test_bad_uses():
    with pytest.raises(ValueError, match="num_warps is not an option of a thread-level"):
        tt.autotune(configs=[Config(REPEAT=1, num_warps=4)])(_saxpy)
    with pytest.raises(TypeError, match="block=0; a block is an int"):
        tt.autotune(configs=[Config(REPEAT=1, block=0)])(_saxpy)
    with pytest.raises(TypeError, match="put @autotune above it"):
        tt.autotune(configs=[Config(T=1)])(lambda x: x)
    k = tt.autotune(configs=[Config(T=64)], key=["n"])(_tile_k)
    with pytest.raises(TypeError, match="already autotuned"):
        tt.autotune(configs=[Config(T=64)])(k)
    x = np.zeros(64, np.float32)
    with tt.simulate():
        with pytest.raises(TypeError, match="'T' is chosen by the autotuner"):
            k[1](x, x, 64, T=64)
        with pytest.raises(TypeError, match=r"missing n \(it takes x, out, n; T come from"):
            k[1](x, x)
        with pytest.raises(TypeError, match="autotune key 'n' is a dict"):
            k[1](x, x, {})
    with pytest.raises(ValueError, match=r"launch it with _tile_k\[grid\]"):
        k(x, x, 64)
    with pytest.raises(TypeError, match="launches a @ct.kernel"):
        ct.launch(None, 1, tt.autotune(configs=[Config(REPEAT=1)])(_saxpy), ())
    assert "autotuned kernel _tile_k" in repr(k) and k.param_names == ["x", "out", "n", "T"]
    assert "__global__" in k.cuda_source(x, x, 64, T=64)  # the kernel's own methods


def test_config():
    c = Config({"tm": 64}, tn=np.int64(32), num_warps=8)
    assert c.kwargs == {"tm": 64, "tn": 32} and type(c.kwargs["tn"]) is int
    assert c.options == {"num_warps": 8} and c.all_kwargs() == {"tm": 64, "tn": 32,
                                                                 "num_warps": 8}
    assert repr(c) == "Config(tm=64, tn=32, num_warps=8)"
    assert Config.from_json(json.loads(json.dumps(c.to_json()))) == c
    b = Config(TW=16, block=[16, 16])
    assert b.block == (16, 16) and Config.from_json(json.loads(json.dumps(b.to_json()))) == b
    assert Config.of({"tm": 64, "num_warps": 8}) == Config(tm=64, num_warps=8)
    assert len({c, Config(tn=32, tm=64, num_warps=8)}) == 1 and c != Config(tm=64, tn=32)
    with pytest.raises(TypeError, match="tm given twice"):
        Config({"tm": 1}, tm=2)
