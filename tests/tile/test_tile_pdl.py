"""Programmatic dependent launch, cuTile's names: ``ct.grid_dependency_control_wait()`` and
``ct.grid_dependency_control_launch_dependents()`` in kernels, ``ct.launch(...,
programmatic_dependent_launch=True)`` on the host. A consumer launched that way while its
producer still runs reads the producer's result only after the wait: right in the simulator
(launches in order) and on the GPU (Hopper's griddepcontrol, cuLaunchKernelEx); the generated
code compiles for sm_80 (no-ops) and sm_90."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct
from threadtile.errors import KernelCompileError

ConstInt = ct.Constant[int]


@ct.kernel
def producer(a, out, steps: ConstInt):
    bid = ct.bid(0)
    ct.grid_dependency_control_launch_dependents()  # the consumer may start now
    t = ct.load(a, index=(bid,), shape=(32,))
    for _ in range(steps):
        t += 1
    ct.store(out, index=(bid,), tile=t)


@ct.kernel
def consumer(b, produced, out, steps: ConstInt):
    bid = ct.bid(0)
    t = ct.load(b, index=(bid,), shape=(32,))
    for _ in range(steps):  # may overlap the producer
        t += 1
    ct.grid_dependency_control_wait()  # the producer has ended: its stores are visible
    p = ct.load(produced, index=(bid,), shape=(32,))
    ct.store(out, index=(bid,), tile=p + t)


@pytest.mark.parametrize("pdl", [True, False])
def test_consumer_reads_after_the_wait(target, rng, pdl, monkeypatch):
    n, steps = 32 * 4, 20000 if target.name == "gpu" else 3
    a = rng.integers(0, 100, n).astype(np.float32)
    b = rng.integers(0, 100, n).astype(np.float32)
    da, db = target.to_device(a), target.to_device(b)
    produced, out = target.to_device(poison(n, np.float32)), target.to_device(poison(n, np.float32))
    ex = []
    if target.name == "gpu":  # the consumer's launch goes through cuLaunchKernelEx
        from threadtile.runtime.launcher import CompiledKernel

        real = CompiledKernel._launch_ex

        def spy(self, *args):
            ex.append(self.entry)
            return real(self, *args)

        monkeypatch.setattr(CompiledKernel, "_launch_ex", spy)
    with target.running():
        for _ in range(2):  # (the second time: both compiled, the producer still running)
            ct.launch(None, (n // 32,), producer, (da, produced, steps))
            ct.launch(None, (n // 32,), consumer, (db, produced, out, steps),
                      programmatic_dependent_launch=pdl)
    np.testing.assert_array_equal(target.to_host(out), a + b + 2 * steps)
    if target.name == "gpu":
        assert len(ex) == (2 if pdl else 0) and all(e.startswith("consumer") for e in ex)


def test_generated_code_and_cubins():
    a = np.zeros(32, np.float32)
    src = consumer.cuda_source(a, a, a, 4)
    assert "tt::griddep_wait();" in src
    assert "tt::griddep_launch_dependents();" in producer.cuda_source(a, a, 4)
    for arch in ("sm_80", "sm_90"):
        assert compile_cubin(producer, a, a, 4, arch=arch)
        assert compile_cubin(consumer, a, a, a, 4, arch=arch)


def test_they_take_no_arguments():
    @ct.kernel
    def bad(a):
        ct.grid_dependency_control_wait(1)

    with pytest.raises(KernelCompileError, match="grid_dependency_control_wait"):
        bad.cuda_source(np.zeros(4, np.float32))
