"""threadtile kernels as torch custom operators on CUDA tensors (``threadtile.torch``): eager
results, ``torch.compile(fullgraph=True)``, gradcheck, opcheck, CUDA-graph capture and replay,
launches on a non-default stream, tensors on a second device. The same operators run on CPU
tensors in the simulator in tests/sim/test_torch_ops.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from threadtile.runtime import driver  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not driver.gpu_available(), reason="needs an NVIDIA GPU"),
              pytest.mark.skipif(not torch.cuda.is_available(), reason="torch without CUDA")]

from kernels import torch_ops as ops  # noqa: E402

CUDA = "cuda"


def _xy(n=1000, dtype=torch.float32, device=CUDA):
    g = torch.Generator(device="cpu").manual_seed(n)
    x = torch.randn(n, generator=g, dtype=dtype)
    y = torch.randn(n, generator=g, dtype=dtype)
    return x.to(device), y.to(device)


def test_eager():
    x, y = _xy(1000)
    torch.testing.assert_close(ops.add(x, y), x + y)
    torch.testing.assert_close(ops.scale(x, 2.5), 2.5 * x)
    torch.testing.assert_close(ops.mul(x, y), x * y)
    gx, gy = ops.mul_backward(x, x, y)
    torch.testing.assert_close((gx, gy), (x * y, x * x))
    out = y.clone()
    ops.add_into(x, out)
    torch.testing.assert_close(out, x + y)
    m = x.reshape(250, 4).double()
    torch.testing.assert_close(ops.row_sums(m), m.sum(1))
    assert ops.add(x, y).device == x.device


def test_the_dispatcher_runs_the_host_function_at_once(monkeypatch):
    """On CUDA tensors, through the operator's AutogradCUDA kernel (kernels/torch_ops.py)."""
    ops.check_dispatcher_calls(monkeypatch, *_xy(1000))


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compile_fullgraph(backend):
    if backend == "inductor":
        pytest.importorskip("triton")
    torch._dynamo.reset()
    m = ops.Model(256).to(CUDA)
    x = torch.randn(256, device=CUDA)
    want = m(x)
    compiled = torch.compile(m, fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(x), want)
    x2 = torch.randn(256, device=CUDA)
    torch.testing.assert_close(compiled(x2), m(x2))


def test_inductor_calls_the_host_functions():
    pytest.importorskip("triton")
    ops.inductor_calls_host_functions(CUDA)


def test_compile_no_graph_break_and_backward():
    torch._dynamo.reset()
    m = ops.Model(128).to(CUDA)
    x = torch.randn(128, device=CUDA, requires_grad=True)
    explain = torch._dynamo.explain(m)(x)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    m(x).backward()
    want = (x.grad.clone(), m.w.grad.clone())
    x.grad = m.w.grad = None
    torch._dynamo.reset()
    torch.compile(m, fullgraph=True, backend="aot_eager")(x).backward()
    torch.testing.assert_close((x.grad, m.w.grad), want)


def test_gradcheck_float64():
    x, y = _xy(16, torch.float64)
    assert torch.autograd.gradcheck(ops.mul, (x.requires_grad_(True), y.requires_grad_(True)))


@pytest.mark.parametrize("case", ["add", "scale", "mul_grad", "add_into", "row_sums"])
def test_opcheck(case):
    x, y = _xy(64, torch.float64)
    args = {"add": (ops.add, (x, y)), "scale": (ops.scale, (x, 3.0)),
            "mul_grad": (ops.mul, (x.clone().requires_grad_(True),
                                   y.clone().requires_grad_(True))),
            "add_into": (ops.add_into, (x, y.clone())),
            "row_sums": (ops.row_sums, (x.reshape(16, 4),))}[case]
    torch.library.opcheck(*args)


def test_cuda_graph_capture_and_replay():
    """Launches go on torch's current stream, so a graph captures them; replayed after the
    inputs change in place, the outputs follow."""
    x, w = _xy(4096)
    static_in = x.clone()
    # warm up on a side stream, as torch asks: compiles, loads and makes the steady-state
    # launchers before the capture, where none of that may happen
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            ops.scale(ops.add(static_in, w), 0.5)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = ops.scale(ops.add(static_in, w), 0.5)
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(static_out, 0.5 * (x + w))
    for k in range(3):
        new = torch.randn(4096, device=CUDA) * (k + 1)
        static_in.copy_(new)
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(static_out, 0.5 * (new + w))


def test_launch_on_a_non_default_stream():
    """The operator's launch waits for the work queued before it on the current stream: x is
    filled behind a long sleep on stream s; a launch on another stream would read the zeros."""
    n = 1 << 16
    x = torch.zeros(n, device=CUDA)
    w = torch.ones(n, device=CUDA)
    ops.add(x, w)  # compiled and loaded before: compiling takes longer than the sleep
    ops.scale(x, 3.0)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # some 100 ms of one thread spinning
        x.fill_(2.0)
        y = ops.add(x, w)
        z = ops.scale(x, 3.0)
    assert not s.query(), "the sleep should still be running"
    s.synchronize()
    assert bool((y == 3.0).all()) and bool((z == 6.0).all())


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_tensors_on_a_second_device():
    """Tensors on cuda:1 while cuda:0 is current: the operator allocates and launches there."""
    torch.cuda.set_device(0)
    x, y = _xy(1000, device="cuda:1")
    out = ops.add(x, y)
    assert out.device == x.device
    torch.testing.assert_close(out, x + y)
    torch.testing.assert_close(ops.scale(x, 2.0), 2.0 * x)
    assert torch.cuda.current_device() == 0
    g = x.double().requires_grad_(True)
    ops.mul(g, g).sum().backward()
    torch.testing.assert_close(g.grad, 2 * g.detach())
