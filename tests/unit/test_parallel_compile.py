"""runtime/parallel_compile.py: the cubins a search is about to need compiled at once in
worker processes (the autotuner's configurations), written into the cubin cache where the
launches find them. NVRTC compiles for an explicit architecture without a GPU, so all of it
runs here: the workers' cubins are the ones the compiler's own path then reads from the cache
(its NVRTC is not called again)."""

import numpy as np
import pytest

import threadtile as tt
import threadtile.tile as ct
from threadtile import blockfit, compiler
from threadtile.builds import precompile, target_for
from threadtile.runtime import cache, nvrtc
from threadtile.runtime import parallel_compile as pc

WORKER = blockfit.__name__  # the worker precompile runs


@ct.kernel
def _scaled(X, Y, T: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(Y, index=(i,), tile=ct.load(X, index=(i,), shape=(T,)) * 2)


@tt.jit
def _thread_add(x, y):
    i = tt.grid(1)
    if i < x.size:
        y[i] = x[i] + 1


def _launches():
    x = np.zeros(256, np.float32)
    return [(_scaled, [x, x, t]) for t in (32, 64, 128)] + [(_thread_add, [x, x])]


def _jobs(arch="sm_90"):
    out = []
    for k, args in _launches():
        spec = k._spec_for(args, {})
        t = target_for(spec, arch, k.options)
        out.append((spec, t, pc.Job(compiler.cubin_key(spec, t), spec.cuda.text, t.arch,
                                    spec.cuda.entry, t.options, spec.cuda.fit_threads,
                                    spec.cuda.scratch_for(t.arch))))
    return out


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(pc.ENV, raising=False)


def test_workers_fill_the_cache_the_compiler_reads(fresh_cache, monkeypatch):
    jobs = _jobs()
    assert all(cache.get(j.key) is None for _, _, j in jobs)
    # what the tuners call: (kernel, arguments) pairs, for an explicit architecture here
    assert precompile(iter(_launches()), arch="sm_90") == len(jobs)
    # the compiler's path now hits the cache: its NVRTC must not run
    def no_nvrtc(*a, **k):
        raise AssertionError("compiled again")
    monkeypatch.setattr(nvrtc, "compile_cubin", no_nvrtc)
    for spec, t, job in jobs:
        b = compiler.compile(spec, t)
        assert b.cubin == cache.get(job.key) and len(b.cubin) > 1000
    # everything cached: nothing to do
    assert pc.compile_many([j for _, _, j in jobs], worker=WORKER, workers=2) == 0


def test_a_job_that_fails_is_left_to_the_launch(fresh_cache):
    (spec, t, good), = _jobs()[:1]
    bad = pc.Job("0" * 64, "this is not C++", "sm_90", "bad")
    assert pc.compile_many([good, bad], worker=WORKER, workers=2) == 1
    assert cache.get(good.key) is not None and cache.get(bad.key) is None


def test_precompile_leaves_failures_to_the_launches(fresh_cache):
    """An argument the kernel cannot take: nothing compiled, nothing raised (the launch will
    raise it)."""
    assert precompile([(_scaled, ["not an array"])], arch="sm_90") == 0


def test_off_by_environment_or_for_one_job(fresh_cache, monkeypatch):
    jobs = [j for _, _, j in _jobs()]
    # one job: compiled where it is needed
    assert pc.compile_many(jobs[:1], worker=WORKER, workers=2) == 0
    monkeypatch.setenv(pc.ENV, "0")
    assert pc.compile_many(jobs, worker=WORKER, workers=2) == 0
    assert all(cache.get(j.key) is None for j in jobs)


def test_the_workers_apply_the_occupancy_rule(fresh_cache, tmp_path, monkeypatch):
    """precompile's workers compile as compile() does, occupancy rule included (blockfit.py):
    a register-bound product the rule refits is cached as the refitted cubin."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tile"))
    from test_tile_gather_operand import _args, gathered_product

    launches = [(gathered_product.replace_hints(), [*_args()] + [128, 128, 128]), _launches()[0]]
    assert precompile(launches, arch="sm_90a") == 2
    spec = launches[0][0]._spec_for(list(launches[0][1]), {})
    t = target_for(spec, "sm_90a", launches[0][0].options)
    cuda = spec.cuda
    fit = blockfit.compile_fitted(cuda.text, cuda.entry, "sm_90a", t.options, cuda.fit_threads,
                                  cuda.scratch_for("sm_90a"))
    assert fit.blocks == 3
    key = compiler.cubin_key(spec, t)
    assert cache.get(key) == bytes(fit.cubin)
