"""threadtile kernels registered as torch custom operators (``threadtile.torch.custom_op``),
shared by tests/sim/test_torch_ops.py (CPU tensors in the simulator) and
tests/gpu/test_torch_ops_gpu.py (CUDA tensors). Imports torch: import it after
``pytest.importorskip("torch")``. Not in ``MODULES``: the codegen tests need no torch.

The host functions are written once for both targets: they allocate outputs like their inputs
and launch without a stream (torch's current stream on the tensors' device).
"""

from __future__ import annotations

import torch
from torch import Tensor

import threadtile
import threadtile.tile as ct

BLOCK = 64
TILE = 32


# ---- kernels ---------------------------------------------------------------------------------

@threadtile.jit
def add_kernel(x, y, out):
    i = threadtile.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@threadtile.jit
def mul_kernel(x, y, out):
    i = threadtile.grid(1)
    if i < out.size:
        out[i] = x[i] * y[i]


@threadtile.jit
def mul_backward_kernel(g, x, y, gx, gy):
    i = threadtile.grid(1)
    if i < g.size:
        gx[i] = g[i] * y[i]
        gy[i] = g[i] * x[i]


@threadtile.jit
def add_into_kernel(x, out):
    i = threadtile.grid(1)
    if i < out.size:
        out[i] += x[i]


@threadtile.jit
def row_sums_kernel(x, out):
    r = threadtile.grid(1)
    if r < x.shape[0]:
        acc = x[r, 0] * 0
        for j in range(x.shape[1]):
            acc += x[r, j]
        out[r] = acc


@ct.kernel
def scale_kernel(x, out, alpha: float, tile: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(tile,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(ct.bid(0),), tile=t * alpha)


# ---- operators -------------------------------------------------------------------------------

def _flat(t: Tensor) -> Tensor:
    return t.contiguous().view(-1)


@threadtile.torch.custom_op("threadtile_test::add", mutates_args=(), shapes=lambda x, y: x)
def add(x: Tensor, y: Tensor) -> Tensor:
    """x + y, same shapes (a thread-level kernel)."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    n = out.numel()
    add_kernel[threadtile.cdiv(n, BLOCK), BLOCK](_flat(x), _flat(y), out.view(-1))
    return out


@threadtile.torch.custom_op("threadtile_test::scale", mutates_args=(), shapes=lambda x, alpha: x)
def scale(x: Tensor, alpha: float) -> Tensor:
    """alpha * x (a tile kernel, launched with cuTile's ct.launch on the current stream)."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    n = out.numel()
    ct.launch(None, (ct.cdiv(n, TILE),), scale_kernel, (_flat(x), out.view(-1), alpha, TILE))
    return out


def _add_backward(ctx, grad):
    return grad, grad


add.register_autograd(_add_backward)


def _scale_setup(ctx, inputs, output) -> None:
    ctx.alpha = inputs[1]


def _scale_backward(ctx, grad):
    return scale(grad, ctx.alpha), None


scale.register_autograd(_scale_backward, setup_context=_scale_setup)


@threadtile.torch.custom_op("threadtile_test::mul", mutates_args=(), shapes=lambda x, y: x)
def mul(x: Tensor, y: Tensor) -> Tensor:
    """x * y, with a gradient computed by a backward kernel (``mul_backward``)."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    n = out.numel()
    mul_kernel[threadtile.cdiv(n, BLOCK), BLOCK](_flat(x), _flat(y), out.view(-1))
    return out


@threadtile.torch.custom_op("threadtile_test::mul_backward", mutates_args=(),
                            shapes=lambda g, x, y: (x, y))
def mul_backward(g: Tensor, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """(g * y, g * x): the gradients of ``mul`` (one kernel writes both)."""
    gx = torch.empty_like(x, memory_format=torch.contiguous_format)
    gy = torch.empty_like(y, memory_format=torch.contiguous_format)
    n = gx.numel()
    mul_backward_kernel[threadtile.cdiv(n, BLOCK), BLOCK](
        _flat(g), _flat(x), _flat(y), gx.view(-1), gy.view(-1))
    return gx, gy


def _mul_setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(*inputs)


def _mul_backward(ctx, grad):
    x, y = ctx.saved_tensors
    gx, gy = mul_backward(grad, x, y)
    return gx, gy


mul.register_autograd(_mul_backward, setup_context=_mul_setup)


@threadtile.torch.custom_op("threadtile_test::add_into", mutates_args=("out",))
def add_into(x: Tensor, out: Tensor) -> None:
    """out += x in place (a contiguous ``out``): an operator that mutates an argument."""
    n = out.numel()
    add_into_kernel[threadtile.cdiv(n, BLOCK), BLOCK](_flat(x), out.view(-1))


@threadtile.torch.custom_op("threadtile_test::row_sums", mutates_args=(),
                            shapes=lambda x: ((x.shape[0],), x.dtype))
def row_sums(x: Tensor) -> Tensor:
    """The sum of each row of a 2-d tensor; its fake made from a (shape, dtype) pair."""
    out = x.new_empty((x.shape[0],))
    row_sums_kernel[threadtile.cdiv(x.shape[0], BLOCK), BLOCK](x.contiguous(), out)
    return out


def _row_sums_setup(ctx, inputs, output) -> None:
    ctx.shape = inputs[0].shape


def _row_sums_backward(ctx, grad):
    return grad[:, None].expand(ctx.shape)


row_sums.register_autograd(_row_sums_backward, setup_context=_row_sums_setup)


class Model(torch.nn.Module):
    """A small module calling every operator between torch ops."""

    def __init__(self, n: int, dtype=torch.float32):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(-1, 1, n, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        h = mul(torch.tanh(x), self.w)
        h = add(h, scale(x, 0.5))
        return row_sums(h.reshape(-1, 4)).sum() + h.mean()


def check_dispatcher_calls(monkeypatch, x: Tensor, y: Tensor) -> list:
    """torch.ops calls (what compiled graphs make) that autograd does not follow run the host
    function from the operator's own autograd kernel (threadtile/torch_ops.py
    ``_autograd_kernels``), not through CustomOpDef's backend kernel; one that autograd follows
    goes the whole way; a mutated argument's version is bumped once. Returns the list that
    counts the calls reaching the backend kernel of ``add`` (one so far), for more checks."""
    calls = []
    backend = add._backend_fns[None]

    def counted(*args, **kwargs):
        calls.append(1)
        return backend(*args, **kwargs)

    monkeypatch.setitem(add._backend_fns, None, counted)
    torch.testing.assert_close(torch.ops.threadtile_test.add(x, y), x + y)
    assert calls == []
    out = torch.ops.threadtile_test.add(x.clone().requires_grad_(True), y)
    assert len(calls) == 1 and out.grad_fn is not None
    out = y.clone()
    v = out._version
    torch.ops.threadtile_test.add_into(x, out)
    assert out._version == v + 1
    torch.testing.assert_close(out, x + y)
    return calls


def inductor_calls_host_functions(device: str) -> None:
    """In the Python code inductor writes for a graph, every threadtile operator is called
    by its host function (``torch.ops.ns.op.default._tt_direct``), not through torch's
    dispatcher (threadtile/torch_ops.py ``_direct_in_inductor``), an operator that mutates
    its argument included; the results match eager's. Inductor's caches are off, so that the
    code is written here."""
    from torch._inductor import config  # noqa: PLC0415
    from torch._inductor.utils import run_and_get_code  # noqa: PLC0415

    def f(x: Tensor, y: Tensor) -> Tensor:
        h = add(mul(x, y), scale(x, 0.5))
        acc = torch.zeros_like(h)
        add_into(h, acc)
        return row_sums(acc.reshape(-1, 4))

    g = torch.Generator().manual_seed(7)
    x, y = (torch.randn(64, generator=g).to(device) for _ in range(2))
    torch._dynamo.reset()
    with config.patch(fx_graph_cache=False):
        got, (code, *_) = run_and_get_code(torch.compile(f, fullgraph=True), x, y)
    torch.testing.assert_close(got, f(x, y))
    lines = [line.strip() for line in code.splitlines() if not line.strip().startswith("#")]
    direct = {line.split(" = ", 1)[-1].split("._tt_direct(")[0].strip()
              for line in lines if "._tt_direct(" in line}
    assert direct == {f"tt_threadtile_test_{op}_default"
                      for op in ("add", "mul", "scale", "add_into", "row_sums")}, lines
    for alias in direct:  # bound once, in the wrapper's header
        op = alias.removeprefix("tt_threadtile_test_").removesuffix("_default")
        assert lines.count(f"{alias} = torch.ops.threadtile_test.{op}.default") == 1
    assert not [line for line in lines if "torch.ops.threadtile_test." in line
                and ".default(" in line], "a call through the dispatcher"
