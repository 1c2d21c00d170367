"""Stand-ins for the few cuTile internals that its tests call to decide what to expect.

cutile_suite.py runs cuTile's tests with cuTile's internal modules replaced by stand-ins that
raise when used (``CutileInternal``). A few internal helpers only compute what a test
expects; those get an implementation here, written from cuTile's documentation, not from
threadtile's own code, so that the tests check threadtile against cuTile's rules:

- ``to_dtype(x)``: a dtype of ``threadtile.tile`` for a torch or threadtile dtype;
- ``_is_implicit_cast_ok(src, dst)``: whether cuTile converts ``src`` to ``dst`` without an
  ``astype``, which is where the two dtypes promote to ``dst`` (cuTile's docs, "Arithmetic
  Promotion"): categories bool < integral < floating point, and a dtype of a lower category
  converts to any dtype of a higher one; within a category a narrower dtype converts to a
  wider one, except between signed and unsigned integers and between float16 and bfloat16,
  which need an explicit cast; tfloat32 and the float8/float4 dtypes convert only to
  themselves.

And torch's CUDA side on the CPU (:func:`install_torch_cpu`): ``device="cuda"`` goes to the
CPU, streams and events are stand-ins (:class:`FakeStream`, :class:`FakeEvent`: the host's
clock), CUDA's attention backends give way to the CPU's.
"""

from __future__ import annotations

import contextlib
import time

_FLOATS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


def _name(dtype) -> str:
    name = getattr(dtype, "name", None) or str(dtype).removeprefix("torch.")
    return "bool_" if name in ("bool", "bool_") else name


def to_dtype(x):
    """``threadtile.tile``'s dtype of the same name as ``x`` (a torch or threadtile dtype)."""
    import threadtile.tile as tt

    name = _name(x)
    if not hasattr(tt, name):
        raise TypeError(f"{x} is not a dtype")
    return getattr(tt, name)


def _category(name: str) -> int | None:
    if name == "bool_":
        return 0
    if name[:3] in ("int", "uin"):
        return 1
    return 2 if name in _FLOATS else None  # (restricted floats: no category here)


def _bits(name: str) -> int:
    return _FLOATS.get(name) or int(name.removeprefix("u").removeprefix("int"))


def is_implicit_cast_ok(src, dst) -> bool:
    """cuTile's implicit conversion rule (this module's docstring)."""
    s, d = _name(src), _name(dst)
    if s == d:
        return True
    cs, cd = _category(s), _category(d)
    if cs is None or cd is None or cs > cd:
        return False
    if cs < cd:
        return True
    if cs == 1:  # integers: the same signedness, no narrower
        return s.startswith("u") == d.startswith("u") and _bits(s) <= _bits(d)
    if {s, d} == {"float16", "bfloat16"}:
        return False
    return cs == 0 or _bits(s) < _bits(d)


class FakeEvent:
    """torch.cuda.Event on the CPU: the host's clock at ``record()`` (the simulator runs a
    launch before it returns, so the clock brackets the work)."""

    def __init__(self, *a, **k):
        self.t = None

    def record(self, *a, **k):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end) -> float:
        return max((end.t - self.t) * 1e3, 1e-3)


class FakeStream:
    cuda_stream = 0

    def synchronize(self):
        pass

    def wait_stream(self, other):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def install_torch_cpu():
    """torch's ``device="cuda"`` goes to the CPU, its streams are stand-ins, and layer norm of
    16-bit inputs computes in float32 as CUDA's does."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    LOW = (torch.bfloat16, torch.float16)

    def cpu(d):
        if isinstance(d, str) and d.startswith("cuda"):
            return "cpu"
        if isinstance(d, torch.device) and d.type == "cuda":
            return torch.device("cpu")
        if isinstance(d, int) and not isinstance(d, bool):
            return "cpu"
        return d

    class CpuMode(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = cpu(kwargs["device"])
            if func is torch.Tensor.cuda:
                return args[0]
            if func is torch.Tensor.to:
                args = tuple(cpu(a) for a in args)
            if func is F.layer_norm and args and args[0].dtype in LOW:
                # as CUDA's layer norm computes: in float32 (and so its backward, whose dW
                # and dB CPU torch sums in bfloat16, 0.4 off at 1024 rows: LayerNorm's check)
                x, rest = args[0], [a.float() if isinstance(a, torch.Tensor) else a
                                    for a in args[1:]]
                kw = {k: v.float() if isinstance(v, torch.Tensor) else v
                      for k, v in kwargs.items()}
                return func(x.float(), *rest, **kw).to(x.dtype)
            return func(*args, **kwargs)

    CpuMode().__enter__()
    # a sample's reference picks one of CUDA's attention backends (flash, cuDNN), which CPU
    # torch lacks: there it computes with the CPU's own
    import torch.nn.attention as attention
    attention.sdpa_kernel = lambda *a, **k: contextlib.nullcontext()
    torch.Tensor.is_cuda = property(lambda self: True)  # the samples check their inputs
    c = torch.cuda
    c.current_stream = c.default_stream = lambda *a, **k: FakeStream()
    c.Stream = lambda *a, **k: FakeStream()
    c.Event = FakeEvent
    c.synchronize = lambda *a, **k: None
    c.get_device_capability = lambda *a, **k: (9, 0)
    c.empty_cache = lambda *a, **k: None
    c.set_device = lambda *a, **k: None
    c.current_device = lambda *a, **k: 0
