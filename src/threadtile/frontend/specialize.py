"""One specialization of a kernel: argument types and constants in, an :class:`ir.Module` out."""

from __future__ import annotations

import inspect
import sys

import numpy as np

from ..errors import KernelCompileError
from ..ir import nodes as ir
from ..lang import signatures as sigs
from ..lang.records import record_of
from ..lang.types import ArrayType, Scalar, scalar_of, void
from . import funcs
from . import typing as ty
from .deps import dotted, fingerprint
from .lower import Lowerer, _fix_returns, lower_function
from .tile_print import TILE_KERNELS


class ConstantAnnotation:
    """The object behind ``Constant[int]``: marks a parameter as a compile-time constant."""

    _threadtile_constant = True  # how lang/annotations.py knows it

    def __init__(self, inner=None):
        self.inner = inner

    def __repr__(self) -> str:
        return f"Constant[{getattr(self.inner, '__name__', self.inner)}]"


class Constant:
    """``def k(a, b, TW: Constant[int])``: ``TW`` is a compile-time constant; each value used at
    launch compiles its own variant (what a C++ template parameter does)."""

    _threadtile_constant = True

    def __class_getitem__(cls, inner):
        return ConstantAnnotation(inner)


def constant_params(fn) -> set[str]:
    """Names of ``fn``'s parameters annotated ``Constant[...]`` (or bare ``Constant``)."""
    try:
        ann = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # an annotation that does not evaluate: fall back to the raw strings
        ann = getattr(fn, "__annotations__", {})
    out = set()
    for name, a in ann.items():
        if isinstance(a, ConstantAnnotation) or a is Constant or getattr(
                a, "_threadtile_constant", False):
            out.add(name)
        elif isinstance(a, str) and a.replace(" ", "").split("[")[0].endswith("Constant"):
            out.add(name)
    return out


class Specializer:
    """Lowers a kernel and every device function it calls, for one set of argument types."""

    def __init__(self, threads: int | None = None):
        self.final = False
        self.threads = threads  # threads per block when fixed at compile time (tile ops)
        # "int" / "all": a division by zero of integers / of any numbers raises (debug=True)
        self.zero_division: str | None = None
        self._names: dict[str, int] = {}
        self._func_names: dict[str, int] = {}
        self._device: dict[tuple, ir.Function] = {}
        self._lowering: set[int] = set()
        self.const_arrays: dict[int, ir.ArrayDecl] = {}
        self.captured: dict[tuple, ir.ArrayDecl] = {}  # frontend/captured.py
        # (owner, dotted path) -> fingerprint of every global the lowering read, in the order
        # read; the owner of a device function's reads is the path that reached it
        self.deps: dict[tuple[str, str], list] = {}
        self.owner = ""
        self._const_keep: list = []
        # ct.static_eval results without runtime values, by place and inputs: the function is
        # lowered more than once, its side effects happen once (frontend/static.py)
        self.static_results: dict = {}

    def fresh(self, prefix: str) -> str:
        n = self._names.get(prefix, 0)
        self._names[prefix] = n + 1
        return f"_{prefix}{n}"

    def record(self, path: str, obj) -> None:
        """Note that the function being lowered read global ``path`` and found ``obj``."""
        key = (self.owner, path)
        if key not in self.deps:
            self.deps[key] = fingerprint(obj)

    def reset_names(self) -> None:
        self._names.clear()

    def func_name(self, base: str) -> str:
        if not base.isidentifier():  # a lambda's "<lambda>"
            base = "".join(c if c.isalnum() or c == "_" else "" for c in base) or "fn"
        n = self._func_names.get(base, 0)
        self._func_names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def kernel(self, fn, params: list[ir.Param]) -> ir.Module:
        self._lowering.add(id(fn))
        self.tile_kernel = fn in TILE_KERNELS  # its print() prints once per block
        k = lower_function(self, fn, params, True, self.func_name(fn.__name__))
        return ir.Module(k, list(self.const_arrays.values()),
                         captured=list(self.captured.values()))

    def recursive_tile_call(self, fn) -> bool:
        """Whether ``fn``, called from a tile kernel, is being lowered already: a helper
        calling itself. Its calls are then inlined, as cuTile inlines every helper, so that
        compile-time arguments (``if N > 0:`` of a Constant) end the recursion (inline.py
        limits its depth)."""
        return getattr(self, "tile_kernel", False) and id(fn) in self._lowering

    def device_function(self, lw: Lowerer, callee, fn, bound: list[tuple[str, object]], node
                        ) -> tuple[ir.Function, list[ir.Expr]]:
        """The specialization of Python function ``fn`` (what the kernel called: ``callee``, a
        ``@jit`` function or the function itself) for the arguments ``bound`` to its
        parameters (funcs.bind), and the arguments the call passes."""
        consts = constant_params(fn)
        declared = getattr(callee, "declared_signatures", None)
        if not declared:
            shapes = funcs.shape_params(fn)
            # *items of a tile kernel's helper: a tuple of constants stays constant (cuTile
            # inlines helpers, so static_iter over it sees the caller's values)
            star = {p.name for p in inspect.signature(fn).parameters.values()
                    if p.kind == p.VAR_POSITIONAL} if self.threads is not None else set()
            consts |= {n for n, a in bound if n in star and isinstance(a, funcs.Tup)
                       and funcs.tuples.py_value(a) is not None}
            consts |= {n for n, a in bound if n in shapes and (
                isinstance(a, ir.Const) and type(a.value) is int
                or isinstance(a, funcs.Tup) and funcs.tuples.py_value(a) is not None)}
        params: list[ir.Param] = []
        call_args: list[ir.Expr] = []
        for pname, a in bound:
            p, arg = funcs.param_for(lw, fn, pname, a, node, pname in consts)
            params.append(p)
            if arg is not None:
                call_args.append(arg)
        chosen = None
        if declared:  # jit(signatures, device=True): the arguments convert to one of them
            if len(call_args) != len(params):
                raise lw.error(node, f"{fn.__name__}() is compiled for its signatures, which "
                                     "take numbers and arrays, not compile-time objects")
            chosen = _device_signature(lw, fn, declared, call_args, node)
            # scalars take the signature's types (the call converts them); an array keeps
            # its own type, which the signature's accepts (a contiguous one for a strided
            # parameter compiles the contiguous variant)
            params = [ir.Param(p.name, a.type if isinstance(a.type, ArrayType) else t)
                      for p, a, t in zip(params, call_args, chosen.args)]
        call_args = [ty.convert(a, p.type) if isinstance(p.type, Scalar) else a
                     for a, p in zip(call_args, [p for p in params if not p.is_constant])]
        key = (fn, tuple((p.name, p.type, _hashable(p.constant), p.weak) for p in params))
        hit = self._device.get(key)
        if hit is not None:
            return hit, call_args
        if id(fn) in self._lowering:
            raise lw.error(node, f"{fn.__name__}() calls itself; recursion is not supported "
                                 "in kernels", "rewrite it as a loop")
        self._lowering.add(id(fn))
        saved = (self.final, dict(self._names), self.owner)
        self.owner = f"{self.owner}/{dotted(node.func) or '?'}"
        try:
            func = lower_function(self, fn, params, False, self.func_name(fn.__name__))
            if chosen is not None:
                declare_return(func, chosen.return_type)
        finally:
            self._lowering.discard(id(fn))
            self.final, self._names, self.owner = saved
        self._device[key] = func
        return func, call_args

    def const_array(self, lw: Lowerer, arr: np.ndarray, node) -> ir.Expr:
        """A global NumPy array read by a kernel: frozen into constant memory (numba's rule)."""
        decl = self.const_arrays.get(id(arr))
        st = scalar_of(arr.dtype) or record_of(arr.dtype)
        if st is None:
            raise lw.error(node, f"global array of dtype {arr.dtype} cannot be used in a kernel")
        if decl is None:
            if arr.nbytes > 64 * 1024:
                raise lw.error(node, f"global array of {arr.nbytes} bytes does not fit in the "
                                     "64 KiB of constant memory", "pass it as an argument")
            name = f"const_{len(self.const_arrays)}"
            at = ArrayType(st, arr.ndim, "C", "const", readonly=True)
            decl = ir.ArrayDecl(lw.loc(node), name, at, arr.shape, False,
                                np.ascontiguousarray(arr).copy())
            self.const_arrays[id(arr)] = decl
            self._const_keep.append(arr)
        return ir.Var(decl.type, lw.loc(node), decl.name)


def _device_signature(lw: Lowerer, fn, declared: list, args: list[ir.Expr], node):
    """The declared signature a call with ``args`` takes: the first of those its arguments
    convert to best (numba resolves a device function's ambiguity so), converting as casts
    do; an error naming the signatures where none fits."""
    types = [a.type for a in args]
    best = sigs.select(declared, types, casts=True)
    if not best:
        raise lw.error(node, f"{fn.__name__}() has no signature for argument types "
                             f"({sigs.spell_args(types)}); it is compiled for "
                             f"{' | '.join(str(s) for s in declared)}")
    return declared[best[0]]


def declare_return(func: ir.Function, ret) -> None:
    """Give device function ``func`` the return type its signature declares (None: the one
    inferred), converting what each ``return`` returns; a KernelCompileError where the
    function's returns do not agree with it."""
    if ret is None or ret == func.return_type and not func.return_weak:
        return
    got = func.return_type
    what = f"{func.pyname}() is declared to return {sigs.spell_type(ret)}"
    if isinstance(ret, Scalar) and ret.kind == "v":
        raise KernelCompileError(f"{func.pyname}() is declared void, but it returns a value of "
                                 f"type {sigs.spell_type(got)}", loc=func.loc,
                                 hint="drop the return value, or declare its type")
    if got == void:
        raise KernelCompileError(f"{what}, but it returns nothing", loc=func.loc,
                                 hint="return a value on every path")
    if not (isinstance(ret, Scalar) and isinstance(got, Scalar)):
        raise KernelCompileError(f"{what}, but it returns {sigs.spell_type(got)}", loc=func.loc)
    func.return_type, func.return_weak = ret, False
    _fix_returns(func)


def lower_device(fn, params: list[ir.Param], ret=None) -> ir.Function:
    """Lower device function ``fn`` on its own for ``params`` (a signature's types) and
    return type ``ret``, for its compile errors: ``jit(signature, device=True)`` raises them
    when it decorates, as numba does. The kernels that call it lower it again."""
    sp = Specializer()
    sp._lowering.add(id(fn))
    func = lower_function(sp, fn, params, False, fn.__name__)
    declare_return(func, ret)
    return func


def device_module(fn, params: list[ir.Param], ret=None) -> ir.Module:
    """Device function ``fn`` lowered on its own for ``params`` as the root of a module, with
    the device functions and constant arrays it reaches: what ``compile_ptx(device=True)``
    compiles (the CUDA backend emits the root as an external ``__device__`` function)."""
    sp = Specializer()
    sp._lowering.add(id(fn))
    func = lower_function(sp, fn, params, False, fn.__name__)
    declare_return(func, ret)
    return ir.Module(func, list(sp.const_arrays.values()))


def _hashable(v):
    """A compile-time argument as part of a dictionary key (by identity if unhashable)."""
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def specialize(fn, params: list[ir.Param], deps: list | None = None,
               threads: int | None = None, zero_division: str | None = None) -> ir.Module:
    """Lower kernel ``fn`` for ``params`` (each with its type or constant value) to the IR the
    passes take (compiler.lower runs them). When
    ``deps`` is a list, the globals the lowering read are appended to it as
    ``[owner, path, fingerprint]`` (see frontend/deps.py). ``threads`` is the block size when
    the kernel fixes it (tile kernels, ``jit(num_warps=...)``): tile operations need it."""
    limit = sys.getrecursionlimit()
    try:
        # a tile kernel's helper calling itself is inlined level by level (cuTile allows
        # TILE_RECURSION_LIMIT levels): each level is a few dozen Python frames
        sys.setrecursionlimit(max(limit, _RECURSION_FRAMES))
        sp = Specializer(threads)
        sp.zero_division = zero_division
        module = sp.kernel(fn, params)
        module.threads = threads
        if deps is not None:
            deps.extend([owner, path, fp] for (owner, path), fp in sp.deps.items())
        return module
    except KernelCompileError:
        raise
    except RecursionError:
        raise KernelCompileError(f"{fn.__name__}: expression nesting too deep") from None
    finally:
        sys.setrecursionlimit(limit)


_RECURSION_FRAMES = 100_000

