"""threadtile kernels as PyTorch operators: ``threadtile.torch`` (docs/torch.md).

A *host function* that takes torch tensors, allocates its outputs and launches threadtile
kernels (thread-level ``@threadtile.jit`` or tile-level ``@ct.kernel``) becomes a
``torch.library`` custom operator with :func:`custom_op`::

    import threadtile
    from torch import Tensor

    @threadtile.torch.custom_op("mylib::add", mutates_args=(), shapes=lambda x, y: x)
    def add(x: Tensor, y: Tensor) -> Tensor:
        out = torch.empty_like(x)
        add_kernel[threadtile.cdiv(x.numel(), 256), 256](x, y, out)   # 1-d x and y
        return out

The result is torch's own ``CustomOpDef`` (an :class:`EagerOp`): ``register_fake``,
``register_autograd``, ``register_kernel``, ``torch.library.opcheck`` work on it as on any
custom op. What this module adds around the host function:

- **the tensors' device is current** while it runs (``torch.cuda.device``): the outputs it
  allocates on ``"cuda"`` land there, and torch's current stream on that device is the one
  its launches use (a launch without a stream takes the current stream of its first torch
  argument's device: runtime/launcher.py), which is what CUDA-graph capture needs;
- ``shapes=``: a fake (meta) implementation made from a shape function (:func:`fake_impl`),
  so that ``torch.compile`` traces a model calling the operator without running it;
- a plain eager call (no autograd, tracing, mode or profiler involved) goes straight to the
  host function instead of through two Python kernels of torch's dispatcher (:class:`EagerOp`).

Under ``threadtile.simulate()`` the same operator runs its kernels in the simulator, in place
on CPU tensors (a CUDA tensor is copied to the host and back): that is how a machine without
a GPU tests an operator, compiled (``torch.compile(backend="aot_eager")``) or not.

Importing this module imports torch; ``import threadtile`` does not (``threadtile.torch`` is
loaded on first use).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Sequence

import torch

__all__ = ["EagerOp", "custom_op", "fake_impl", "device_of"]


def device_of(args: Iterable, kwargs: dict | None = None) -> int | None:
    """The index of the first CUDA device among the tensors in ``args`` and ``kwargs``'s
    values (lists and tuples of tensors looked into), or None when no tensor is on a GPU."""
    for a in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(a, torch.Tensor):
            if a.is_cuda:
                return a.get_device()
        elif isinstance(a, (list, tuple)):
            d = device_of(a)
            if d is not None:
                return d
    return None


def _on_tensor_device(fn: Callable) -> Callable:
    """``fn`` run with the device of its first CUDA tensor argument current in torch."""

    @functools.wraps(fn)
    def host(*args, **kwargs):
        dev = device_of(args, kwargs)
        if dev is None or dev == _current_device():
            return fn(*args, **kwargs)
        with torch.cuda.device(dev):
            return fn(*args, **kwargs)

    return host


class EagerOp(torch.library.CustomOpDef):
    """torch's ``CustomOpDef`` whose plain eager calls skip the dispatcher.

    A call through torch's dispatcher passes two Python kernels of ``CustomOpDef`` (autograd,
    then the backend's) before the host function: several microseconds a call (8 us against a
    C++ op's 1.7 on a desktop core). Where none of it can matter, the call goes straight to
    the host function, with the tensors' device current and the version counters of mutated
    arguments bumped as torch's ``ADInplaceOrView`` kernel does: every tensor argument a plain
    ``torch.Tensor`` (no fake, functional or other subclass, no functorch wrapper), none
    requiring grad while grad mode is on, no dispatch or torch-function mode active, torch's
    profiler off and nothing compiling. Any other call (autograd, ``torch.compile``,
    ``vmap``, ``opcheck``'s checks, a profiler run) takes the dispatcher, unchanged.
    """

    _tt_fn: Callable | None = None  # the host function (the dispatcher's kernel wraps it)
    _tt_mutated: tuple = ()
    _tt_fast: Callable | None = None  # the same checks and call in C (runtime/_eagerop.c)

    def __call__(self, *args, **kwargs):
        if _is_compiling():  # first: dynamo reads it as a constant
            return self._opoverload(*args, **kwargs)
        fast = self._tt_fast
        if fast is not None:
            out = fast(args, kwargs)
            if out is not _DECLINED:
                return out
        fn = self._tt_fn
        dev = _NOT_PLAIN if fn is None else _plain_eager_device(args, kwargs)
        if dev != _NOT_PLAIN:
            if dev < 0 or dev == _current_device():
                out = fn(*args, **kwargs)
            else:
                with torch.cuda.device(dev):
                    out = fn(*args, **kwargs)
            if self._tt_mutated:
                _bump_versions(self._tt_mutated, args, kwargs)
            return out
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        self._tt_fn = self._tt_fast = None  # a kernel of the user's own: take the dispatcher
        self._opoverload._tt_direct = self._opoverload  # (in inductor's graphs too)
        return super().register_kernel(device_types, fn)

    def register_fake(self, fn, /):
        super().register_fake(_tracing_hook(fn))
        return fn


def _bump_versions(mutated: tuple, args: tuple, kwargs: dict) -> None:
    """The version counters of the mutated tensor arguments bumped, in one call, as torch's
    ``ADInplaceOrView`` kernel does for an operator that writes its arguments."""
    ts = [t for i, key in mutated
          if isinstance(t := (args[i] if i < len(args) else kwargs.get(key)), _Tensor)]
    if ts:
        _increment_version(ts)


_NOT_PLAIN = -2
_Tensor = torch.Tensor
_current_device = torch._C._cuda_getDevice if hasattr(torch._C, "_cuda_getDevice") \
    else torch.cuda.current_device
# the checks of a plain eager call, bound once (each module attribute lookup costs a call)
_is_compiling = torch.compiler.is_compiling  # dynamo knows the function, by any name
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_functorch_stack = torch._C._functorch.peek_interpreter_stack
_grad_enabled = torch._C.is_grad_enabled


def _versions_in_one_call():
    """torch's C function that bumps a list of tensors' version counters (what
    torch.autograd.graph.increment_version calls), where this torch has one; else that."""
    f = getattr(torch._C, "_increment_version", None)
    try:
        f([])
        return f
    except Exception:  # noqa: BLE001  (an older torch: one tensor a call)
        return lambda ts: [torch.autograd.graph.increment_version(t) for t in ts]


_increment_version = _versions_in_one_call()
_profiler = torch.autograd.profiler  # its _is_profiler_enabled changes: read at each call
_DECLINED = object()  # what the C call returns for a call that is not plain


def _fast_call(fn: Callable, mutated: tuple) -> Callable | None:
    """EagerOp's plain eager call of ``fn`` in C (runtime/_eagerop.c: the checks of
    ``_plain_eager_device``, the call, ``_bump_versions``), or None where the optional C module
    is not built (then the Python path)."""
    mod = _eagerop()
    return None if mod is None else mod.EagerCall(fn, mutated, _DECLINED)


@functools.cache
def _eagerop():
    """runtime/_eagerop, given torch's functions once, or None where it is not built."""
    try:
        from .runtime import _eagerop as mod  # noqa: PLC0415
    except ImportError:
        return None
    cuda = getattr(torch._C, "_cuda_getDevice", None) if torch.cuda.is_available() else None
    mod.setup(_Tensor, _dispatch_modes, _function_modes, _profiler, _functorch_stack,
              _grad_enabled, cuda, _increment_version)
    return mod


def _plain_eager_device(args: tuple, kwargs: dict) -> int:
    """Whether a call may skip torch's dispatcher (EagerOp), in one pass over its arguments:
    ``_NOT_PLAIN``, else the device of the first CUDA tensor (-1 for none)."""
    if _dispatch_modes() or _function_modes() or _profiler._is_profiler_enabled:
        return _NOT_PLAIN
    # a functorch transform (vmap, grad) running: its wrapped tensors are plain Tensors by
    # type, so such calls take the dispatcher
    if _functorch_stack() is not None:
        return _NOT_PLAIN
    grad = _grad_enabled()
    dev = _scan(args, grad, -1)
    if kwargs and dev != _NOT_PLAIN:
        dev = _scan(kwargs.values(), grad, dev)
    return dev


def _scan(values, grad: bool, dev: int) -> int:
    """``dev``, or the device of the first CUDA tensor among ``values`` where ``dev`` is -1,
    or ``_NOT_PLAIN`` when a tensor is not a plain ``torch.Tensor`` that autograd does not
    follow (lists and tuples looked into)."""
    for a in values:
        if type(a) is _Tensor:
            if grad and a.requires_grad:
                return _NOT_PLAIN
            if dev < 0 and a.is_cuda:
                dev = a.get_device()
        elif isinstance(a, _Tensor):  # a subclass: fake, functional, a user's
            return _NOT_PLAIN
        elif isinstance(a, (list, tuple)):
            dev = _scan(a, grad, dev)
            if dev == _NOT_PLAIN:
                return dev
    return dev


def custom_op(name: str, fn: Callable | None = None, /, *,
              mutates_args: str | Iterable[str], device_types: str | Sequence[str] | None = None,
              schema: str | None = None, tags=None, shapes: Callable | None = None
              ) -> torch.library.CustomOpDef | Callable[[Callable], torch.library.CustomOpDef]:
    """Make the host function ``fn`` the custom operator ``name`` (``"namespace::name"``).

    Used as ``@custom_op("mylib::op", mutates_args=(...))`` or ``custom_op(name, fn, ...)``.
    ``fn`` takes torch tensors (and numbers, lists...: torch's schema types, from its type
    annotations), launches threadtile kernels on them and returns its outputs (new tensors: a
    custom op's outputs may not alias its inputs; write into an argument named in
    ``mutates_args`` instead). ``mutates_args``, ``device_types``, ``schema`` and ``tags`` are
    ``torch.library.custom_op``'s. While ``fn`` runs, the device of its first CUDA tensor
    argument is torch's current device.

    ``shapes``: a shape function registered as the operator's fake implementation
    (:func:`fake_impl`); without it, register one with ``op.register_fake`` before tracing
    (``torch.compile``, ``torch.export``) an operator that returns tensors.

    Returns torch's ``CustomOpDef``: call it like ``fn``; ``register_autograd(backward,
    setup_context=...)`` gives it a gradient (the backward should call another custom op
    whose host function launches the backward kernel, so that it traces too).
    """
    def make(f: Callable) -> torch.library.CustomOpDef:
        # torch infers the schema from f itself (its annotations read in f's module); the
        # kernel it dispatches to is f with the tensors' device made current
        op = torch.library.custom_op(name, f, mutates_args=mutates_args,
                                     device_types=device_types, schema=schema, tags=tags)
        host = _on_tensor_device(f)
        op.register_kernel(device_types)(host)
        if shapes is not None:
            op.register_fake(_tracing_hook(fake_impl(shapes)))  # (EagerOp's does this)
        op.__class__ = EagerOp
        op._tt_fn = f
        op._tt_mutated = tuple((i, a.name) for i, a in enumerate(op._opoverload._schema.arguments)
                               if a.alias_info is not None and a.alias_info.is_write)
        op._tt_fast = _fast_call(f, op._tt_mutated)
        _autograd_kernels(op, host)
        mod = _eagerop()
        _direct_in_inductor(op._opoverload, host if mod is None else mod.DeviceCall(f, host))
        return op

    if fn is None:
        return make
    return make(fn)


def _autograd_kernels(op: EagerOp, host: Callable) -> None:
    """Kernels of the operator at torch's ``AutogradCUDA`` and ``AutogradCPU`` keys, ahead of
    the Python kernels ``CustomOpDef`` registers (autograd for every device, then the
    backend's): a call that autograd does not follow and that nothing below autograd would
    see (functionalization, fake tensors, a dispatch mode: then the key set holds more than
    the backend's key and, for an operator that writes its arguments, ``ADInplaceOrView``)
    runs the host function at once, bumping the mutated arguments' versions; any other call
    takes ``CustomOpDef``'s own autograd kernel. What ``torch.compile``'s graphs call goes
    this way: 3 us a call instead of 9 on a desktop core. Nothing is registered where this
    torch lacks what it needs. The registrations live in ``_AUTOGRAD_LIBS``."""
    try:
        from torch._library.autograd import make_autograd_impl  # noqa: PLC0415

        C = torch._C
        # the key sets as their bits (one call a dispatch, not a key set made and compared)
        after = C._after_autograd_keyset.raw_repr()
        any_requires_grad = C._any_requires_grad
        plain = {}
        for backend in ("CUDA", "CPU"):
            only = C.DispatchKeySet(getattr(C.DispatchKey, backend))
            plain[backend] = frozenset(
                k.raw_repr() for k in (only, only.add(C.DispatchKey.ADInplaceOrView)))
    except (ImportError, AttributeError):
        return
    full = make_autograd_impl(op._opoverload, op)  # reads the op's backward at each call

    def kernel(keys: frozenset) -> Callable:
        def autograd(keyset, *args, **kwargs):
            if keyset.raw_repr() & after in keys and op._tt_fn is not None:
                fast = op._tt_fast  # (C: declines where a device switch is needed)
                if fast is not None and (out := fast(args, kwargs)) is not _DECLINED:
                    return out
                if not (_grad_enabled() and any_requires_grad(*args, **kwargs)):
                    out = host(*args, **kwargs)
                    if op._tt_mutated:
                        _bump_versions(op._tt_mutated, args, kwargs)
                    return out
            return full(keyset, *args, **kwargs)

        return autograd

    old = _AUTOGRAD_LIBS.pop(op._qualname, None)  # the operator defined again: its last one's
    if old is not None:
        old._destroy()
    lib = _AUTOGRAD_LIBS[op._qualname] = torch.library.Library(op._namespace, "FRAGMENT")
    for backend, keys in plain.items():
        lib.impl(op._name, kernel(keys), f"Autograd{backend}", with_keyset=True)


_AUTOGRAD_LIBS: dict = {}  # each operator's Autograd{CUDA,CPU} registrations, by its name


def _direct_in_inductor(overload, host: Callable) -> None:
    """Make the Python code inductor writes for a compiled graph call ``host`` for the operator.

    Inductor calls an operator it does not lower (a custom op) through torch's dispatcher:
    ``buf0 = torch.ops.ns.name.default(arg0_1, arg1_1)``, which reaches the host function
    through the operator's Autograd kernel, boxing and unboxing every argument (3 to 5 us a
    call). The operator gets a code generator in inductor's registry of custom extern-kernel
    code (``CUSTOM_EXTERN_KERNEL_CODEGEN``, keyed by the name inductor calls the operator by)
    that writes ``buf0 = torch.ops.ns.name.default._tt_direct(arg0_1, arg1_1)`` instead:
    ``host``, the host function with the tensors' device made current (checked in C by
    runtime/_eagerop.c's ``DeviceCall`` where that module is built), bound once in the
    wrapper's header (:func:`_direct_call_codegen`). Only inductor's Python wrapper code
    changes; its C++ and FX wrappers, and other backends (``aot_eager``), keep the
    dispatcher. ``_tt_direct`` lives on torch's ``OpOverload`` from the operator's definition
    on, so code inductor cached on disk in another process finds it too; an operator given a
    kernel of the user's own (``register_kernel``) points it back at the dispatcher.

    The registry belongs to inductor, which takes a second to import: the registration
    waits until inductor is loaded, and happens at the latest when the operator is traced
    (its fake implementation runs before inductor writes code): :func:`_inductor_hook`."""
    overload._tt_direct = host
    name = f"{overload.__module__.replace('._ops.', '.ops.')}.{overload.__name__}"
    _INDUCTOR_PENDING.add(name)
    _inductor_hook()


_INDUCTOR_PENDING: set = set()  # operators' names waiting for inductor's registry


def _inductor_hook() -> None:
    """The operators waiting in ``_INDUCTOR_PENDING`` registered with inductor's code
    generation, where inductor is loaded and has the registry; nothing otherwise."""
    if not _INDUCTOR_PENDING or "torch._inductor" not in sys.modules:
        return
    try:
        from torch._inductor.codegen.custom_extern_kernel_codegen import (  # noqa: PLC0415
            CUSTOM_EXTERN_KERNEL_CODEGEN,
            CustomCodegen,
        )
    except ImportError:  # a torch without the registry: the dispatcher, as before
        _INDUCTOR_PENDING.clear()
        return
    for name in _INDUCTOR_PENDING:
        CUSTOM_EXTERN_KERNEL_CODEGEN[name] = CustomCodegen(python=_direct_call_codegen)
    _INDUCTOR_PENDING.clear()


def _direct_call_codegen(node, writeline) -> None:
    """Inductor's line for the operator ``node`` calls (a ``FallbackKernel``): its own, with
    the kernel named ``<operator>._tt_direct`` where the wrapper is Python code. In a graph's
    own wrapper (not a subgraph's), the operator is bound to a name once, in the wrapper's
    header (``tt_ns_name_default = torch.ops.ns.name.default``), which saves the lookups of
    ``torch.ops.ns.name.default`` at each call."""
    from torch._inductor.codegen.wrapper import (  # noqa: PLC0415
        ExternKernelAllocLine,
        PythonWrapperCodegen,
    )
    from torch._inductor.virtualized import V  # noqa: PLC0415

    wrapper = writeline.__self__
    name = node.python_kernel_name
    if (not (getattr(V.graph, "cpp_wrapper", False) or getattr(V.graph, "fx_wrapper", False))
            and getattr(node.op_overload, "_tt_direct", None) is not None
            and not name.endswith("._tt_direct")):
        if type(wrapper) is PythonWrapperCodegen and name.startswith("torch.ops."):
            alias = "tt_" + name.removeprefix("torch.ops.").replace(".", "_")
            bound = wrapper.__dict__.setdefault("_tt_bound", set())
            if alias not in bound:
                bound.add(alias)
                wrapper.header.writeline(f"{alias} = {name}")
            name = alias
        node.python_kernel_name = f"{name}._tt_direct"
    writeline(ExternKernelAllocLine(wrapper, node))


def _tracing_hook(fake: Callable) -> Callable:
    """``fake`` (an operator's fake implementation), registering waiting operators with
    inductor first: tracing is the last moment before inductor writes code for them."""

    @functools.wraps(fake)
    def traced(*args, **kwargs):
        if _INDUCTOR_PENDING:
            _inductor_hook()
        return fake(*args, **kwargs)

    return traced


def fake_impl(shapes: Callable) -> Callable:
    """The fake (meta) implementation of an operator whose outputs ``shapes`` describes.

    ``shapes`` takes the operator's arguments (fake tensors while tracing: their shapes may be
    symbolic) and returns, for its one output, either a tensor the output is shaped like (its
    shape, dtype and device: ``lambda x, y: x``) or a ``(shape, dtype)`` pair (on the device of
    the first tensor argument); for several outputs a tuple or list of these; None for an
    operator that returns nothing. The fake implementation allocates empty contiguous tensors
    of those shapes, which is all tracing needs: the host function's outputs must be
    contiguous too (register a fake of your own with ``op.register_fake`` for others)."""

    def fake(*args, **kwargs):
        out = shapes(*args, **kwargs)
        if out is None:
            return None
        device = _first_device(args, kwargs)
        if _is_spec(out):
            return _empty(out, device)
        if isinstance(out, (list, tuple)):
            made = [_empty(o, device) for o in out]
            return made if isinstance(out, list) else tuple(made)
        raise TypeError(f"the shape function {getattr(shapes, '__name__', shapes)!r} returned "
                        f"{type(out).__name__}: return a tensor the output is shaped like, a "
                        "(shape, dtype) pair, or a tuple or list of these")

    fake.__name__ = f"fake_{getattr(shapes, '__name__', 'shapes')}"
    return fake


def _is_spec(o) -> bool:
    return isinstance(o, torch.Tensor) or (
        isinstance(o, tuple) and len(o) == 2 and isinstance(o[1], torch.dtype))


def _empty(spec, device):
    if isinstance(spec, torch.Tensor):
        return torch.empty_like(spec, memory_format=torch.contiguous_format)
    if not _is_spec(spec):
        raise TypeError(f"an output's shape must be a tensor it is shaped like or a (shape, "
                        f"dtype) pair, not {spec!r}")
    shape, dtype = spec
    if device is None:
        raise TypeError("a (shape, dtype) output needs a tensor argument to take its device "
                        "from; return a tensor the output is shaped like instead")
    return torch.empty(tuple(shape), dtype=dtype, device=device)


def _first_device(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            return a.device
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, torch.Tensor):
                    return x.device
    return None
