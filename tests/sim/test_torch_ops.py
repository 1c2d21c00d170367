"""threadtile kernels as torch custom operators, on CPU tensors in the simulator
(``threadtile.torch``, docs/torch.md): eager results, ``torch.compile(fullgraph=True)`` without
graph breaks, autograd through a backward kernel (gradcheck in float64), opcheck, fakes from
shape functions. Skipped where torch is not installed; the same operators run on CUDA tensors
in tests/gpu/test_torch_ops_gpu.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kernels import torch_ops as ops  # noqa: E402

import threadtile  # noqa: E402


@pytest.fixture(autouse=True)
def simulated():
    with threadtile.simulate():
        yield


@pytest.fixture(params=["C", "Python"])
def eager_path(request, monkeypatch):
    """The eager tests run twice: the plain call in C (runtime/_eagerop.c) where the optional
    module is built, and the same checks in Python (torch_ops.py), as without a C compiler."""
    eager = [op for op in vars(ops).values() if isinstance(op, threadtile.torch.EagerOp)]
    if request.param == "C":
        if eager[0]._tt_fast is None:
            pytest.skip("runtime/_eagerop.c is not built")
    else:
        for op in eager:
            monkeypatch.setattr(op, "_tt_fast", None)
    return request.param


def _xy(n=100, dtype=torch.float32):
    g = torch.Generator().manual_seed(n)
    return (torch.randn(n, generator=g, dtype=dtype), torch.randn(n, generator=g, dtype=dtype))


# ---- the module --------------------------------------------------------------------------------

def test_device_of():
    x = torch.zeros(3)
    assert threadtile.torch.device_of((x, 1.0, [x])) is None
    assert threadtile.torch.device_of(()) is None


# ---- eager -------------------------------------------------------------------------------------

@pytest.mark.usefixtures("eager_path")
def test_eager_thread_kernel():
    x, y = _xy(1000)
    torch.testing.assert_close(ops.add(x, y), x + y)
    a, b = x.reshape(10, 100), y.reshape(10, 100)
    torch.testing.assert_close(ops.add(a, b), a + b)  # host function flattens


@pytest.mark.usefixtures("eager_path")
def test_eager_tile_kernel():
    x, _ = _xy(77)  # not a multiple of the tile: the last tile is padded and masked
    torch.testing.assert_close(ops.scale(x, 2.5), 2.5 * x)


@pytest.mark.usefixtures("eager_path")
def test_eager_mutating_op():
    x, y = _xy(50)
    out = y.clone()
    assert ops.add_into(x, out) is None
    torch.testing.assert_close(out, x + y)


class _Spy:
    """Stands in for an operator's OpOverload: counts the calls that take torch's dispatcher."""

    def __init__(self, op):
        self.op, self.calls = op, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.op(*args, **kwargs)

    def __getattr__(self, name):  # torch's kernels read the OpOverload's _schema
        return getattr(self.op, name)


@pytest.fixture
def spied(monkeypatch):
    spy = _Spy(ops.add._opoverload)
    monkeypatch.setattr(ops.add, "_opoverload", spy)
    return spy


@pytest.mark.usefixtures("eager_path")
def test_plain_eager_calls_skip_the_dispatcher(spied):
    x, y = _xy(64)
    torch.testing.assert_close(ops.add(x, y), x + y)
    assert spied.calls == 0
    with torch.no_grad():  # grad mode off: requires_grad does not matter
        ops.add(x.clone().requires_grad_(True), y)
    assert spied.calls == 0


@pytest.mark.usefixtures("eager_path")
def test_autograd_modes_and_profiler_take_the_dispatcher(spied):
    x, y = _xy(64)
    out = ops.add(x.clone().requires_grad_(True), y)
    assert spied.calls == 1 and out.grad_fn is not None
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        ops.add(mode.from_tensor(x), mode.from_tensor(y))
    assert spied.calls == 2
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        ops.add(x, y)
    assert spied.calls == 3
    assert any("threadtile_test::add" in e.name for e in prof.events())
    ops.add(torch.nn.Parameter(x, requires_grad=False), y)  # a subclass
    assert spied.calls == 4


@pytest.mark.usefixtures("eager_path")
def test_the_fast_path_bumps_mutated_arguments_versions():
    x, y = _xy(50)
    out = y.clone()
    v = out._version
    ops.add_into(x, out)
    assert out._version == v + 1
    torch.testing.assert_close(out, x + y)


def test_the_c_call_decides_as_the_python_checks():
    """runtime/_eagerop.c's EagerCall runs the host function exactly where torch_ops.py's
    Python checks would, bumps the mutated arguments' versions (by position or keyword) and
    lets the host function's errors through."""
    from threadtile import torch_ops as T

    fast = ops.add_into._tt_fast
    if fast is None:
        pytest.skip("runtime/_eagerop.c is not built")
    x, y = _xy(8)
    w = x.clone().requires_grad_(True)

    class Sub(torch.Tensor):
        pass

    sub = x.as_subclass(Sub)

    def decided(args, kwargs=None):
        out = y.clone()
        args = tuple(out if a is None else a for a in args)
        kwargs = {k: out if v is None else v for k, v in (kwargs or {}).items()}
        v = out._version
        r = fast(args, kwargs)
        python = T._plain_eager_device(args, kwargs) != T._NOT_PLAIN
        assert (r is not T._DECLINED) == python, (args, kwargs)
        assert out._version == v + (r is not T._DECLINED)
        return r is not T._DECLINED

    assert decided((x, None))
    assert decided((x,), {"out": None})
    assert not decided((w, None))
    with torch.no_grad():
        assert decided((w, None))
    assert not decided((sub, None))
    assert not decided(([x, (sub,)], None))  # (the host function would fail: not reached)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert not decided((x, None))
    out = y.clone()
    with torch._subclasses.fake_tensor.FakeTensorMode():  # (a dispatch mode)
        assert fast((x, out), None) is T._DECLINED

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert not decided((x, None))
    def boom(*args):
        raise ValueError("the host function's own error")

    with pytest.raises(ValueError, match="own error"):
        type(fast)(boom, ((0, "x"),), T._DECLINED)((x,), None)
    with pytest.raises(TypeError, match="a tuple, a dict or None"):
        fast([x, y], None)


def test_the_c_device_call_runs_the_host_function_or_switches():
    """runtime/_eagerop.c's DeviceCall (what inductor's code calls, torch_ops.py
    ``_direct_in_inductor``) runs the host function itself where no tensor is on another
    device than the current one, and the device-switching host otherwise (here: a tensor of a
    subclass, which it leaves to the Python path); arguments and errors pass through."""
    from threadtile import torch_ops as T

    mod = T._eagerop()
    if mod is None:
        pytest.skip("runtime/_eagerop.c is not built")
    seen = []

    def fn(*args, **kwargs):
        seen.append(("fn", len(args), sorted(kwargs)))
        return 1

    def switch(*args, **kwargs):
        seen.append(("switch", len(args), sorted(kwargs)))
        return 2

    dc = mod.DeviceCall(fn, switch)
    x, y = _xy(4)

    class Sub(torch.Tensor):
        pass

    assert dc(x, y, 3.0, alpha=[y]) == 1
    assert dc(x, [y.as_subclass(Sub)]) == 2
    assert dc(x, out=y.as_subclass(Sub)) == 2
    assert seen == [("fn", 3, ["alpha"]), ("switch", 2, []), ("switch", 1, ["out"])]
    assert ops.add._opoverload._tt_direct.fn is ops.add._tt_fn

    def boom(*args):
        raise ValueError("the host function's own error")

    with pytest.raises(ValueError, match="own error"):
        mod.DeviceCall(boom, switch)(x)


@pytest.mark.usefixtures("eager_path")
def test_the_dispatcher_runs_the_host_function_at_once(monkeypatch):
    """A call through torch's dispatcher that autograd does not follow and nothing below
    autograd would see runs the host function from the operator's AutogradCPU kernel
    (kernels/torch_ops.py check_dispatcher_calls); one that a dispatch mode sees goes the whole
    way."""
    x, y = _xy(64)
    calls = ops.check_dispatcher_calls(monkeypatch, x, y)
    seen = []

    class Log(torch.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        torch.testing.assert_close(torch.ops.threadtile_test.add(x, y), x + y)
    assert "threadtile_test.add.default" in seen and len(calls) == 2


def test_eager_fake_from_shape_and_dtype():
    x = torch.arange(24, dtype=torch.float64).reshape(6, 4)
    torch.testing.assert_close(ops.row_sums(x), x.sum(1))


def test_cpu_tensors_without_the_simulator_say_so(monkeypatch):
    x, y = _xy(8)
    monkeypatch.setattr(threadtile.runtime.mode.STATE, "active", False)
    monkeypatch.delenv("THREADTILE_SIMULATE", raising=False)
    with pytest.raises(TypeError, match="simulate"):
        ops.add(x, y)


# ---- fakes -------------------------------------------------------------------------------------

def test_fakes_from_shape_functions():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(6, 4, dtype=torch.float64)
        y = torch.empty(6, 4, dtype=torch.float64)
        assert ops.add(x, y).shape == (6, 4)
        s = ops.row_sums(x)
        assert s.shape == (6,) and s.dtype == torch.float64
        gx, gy = ops.mul_backward(x, x, y)
        assert gx.shape == gy.shape == (6, 4)


def test_fake_impl_refuses_what_is_not_a_shape():
    fake = threadtile.torch.fake_impl(lambda x: 3)
    with pytest.raises(TypeError, match="shape function"):
        fake(torch.zeros(2))
    assert threadtile.torch.fake_impl(lambda x: None)(torch.zeros(2)) is None
    pair = threadtile.torch.fake_impl(lambda x: [((2, 3), torch.int32), x])(torch.zeros(5))
    assert isinstance(pair, list) and pair[0].shape == (2, 3) and pair[0].dtype == torch.int32
    with pytest.raises(TypeError, match="device"):
        threadtile.torch.fake_impl(lambda n: ((n,), torch.float32))(3)


# ---- torch.compile -----------------------------------------------------------------------------

def _compiled_matches(backend: str):
    torch._dynamo.reset()
    m = ops.Model(64)
    x = torch.randn(64, generator=torch.Generator().manual_seed(1))
    eager = m(x)
    compiled = torch.compile(m, fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(x), eager)
    x2 = x.flip(0).contiguous()
    torch.testing.assert_close(compiled(x2), m(x2))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_matches_eager(backend):
    _compiled_matches(backend)


def test_compile_has_no_graph_break():
    torch._dynamo.reset()
    m = ops.Model(64)
    x = torch.randn(64)
    explain = torch._dynamo.explain(m)(x)
    assert explain.graph_break_count == 0, explain.break_reasons
    assert explain.graph_count == 1
    names = {str(n.target) for g in explain.graphs for n in g.graph.nodes
             if n.op == "call_function"}
    assert {"threadtile_test.add.default", "threadtile_test.mul.default",
            "threadtile_test.scale.default", "threadtile_test.row_sums.default"} <= names


def test_compile_backward_through_the_backward_kernel():
    torch._dynamo.reset()
    counts = {"graphs": 0}

    def counting(gm, inputs):
        counts["graphs"] += 1
        return gm.forward

    m = ops.Model(32)
    x = torch.randn(32, requires_grad=True)
    m(x).backward()
    want = (x.grad.clone(), m.w.grad.clone())
    x.grad = m.w.grad = None
    compiled = torch.compile(m, fullgraph=True, backend="aot_eager")
    compiled(x).backward()
    torch.testing.assert_close((x.grad, m.w.grad), want)
    torch._dynamo.reset()
    torch.compile(m, fullgraph=True, backend=counting)(x)
    assert counts["graphs"] == 1


# ---- autograd ----------------------------------------------------------------------------------

def test_gradcheck_float64():
    x, y = _xy(12, torch.float64)
    x.requires_grad_(True)
    y.requires_grad_(True)
    assert torch.autograd.gradcheck(ops.mul, (x, y))


def test_backward_matches_torch():
    x, y = _xy(40)
    a, b = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    (ops.mul(a, b) * torch.arange(40.0)).sum().backward()
    c, d = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    (c * d * torch.arange(40.0)).sum().backward()
    torch.testing.assert_close((a.grad, b.grad), (c.grad, d.grad))


# ---- opcheck -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["add", "scale", "mul", "mul_grad", "mul_backward", "add_into",
                                  "row_sums"])
def test_opcheck(case):
    x, y = _xy(20, torch.float64)
    args = {"add": (ops.add, (x, y)), "scale": (ops.scale, (x, 3.0)),
            "mul": (ops.mul, (x, y)),
            "mul_grad": (ops.mul, (x.clone().requires_grad_(True),
                                   y.clone().requires_grad_(True))),
            "mul_backward": (ops.mul_backward, (x, x, y)),
            "add_into": (ops.add_into, (x, y.clone())),
            "row_sums": (ops.row_sums, (x.reshape(5, 4),))}[case]
    torch.library.opcheck(*args)


def test_non_contiguous_inputs():
    """The fake's outputs are contiguous, as the host functions' are, whatever the inputs'
    strides: opcheck compares the two."""
    x = torch.randn(8, 6, dtype=torch.float64).t()
    y = torch.randn(6, 8, dtype=torch.float64)
    torch.testing.assert_close(ops.add(x, y), x + y)
    torch.library.opcheck(ops.add, (x, y))
    torch.library.opcheck(ops.mul, (x.clone().requires_grad_(True), y))


def test_inductor_calls_the_host_functions():
    ops.inductor_calls_host_functions("cpu")


def test_an_operator_with_its_own_kernel_takes_the_dispatcher_in_inductor():
    @threadtile.torch.custom_op("threadtile_test::own_kernel", mutates_args=(),
                                shapes=lambda x: x)
    def own(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    ov = torch.ops.threadtile_test.own_kernel.default
    assert ov._tt_direct is not ov
    own.register_kernel("cpu")(lambda x: x + 1)
    assert ov._tt_direct is ov
    torch.testing.assert_close(ov._tt_direct(torch.zeros(2)), torch.ones(2))
