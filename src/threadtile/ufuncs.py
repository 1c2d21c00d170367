"""numba's CUDA ufuncs: ``vectorize`` and ``guvectorize``, built on threadtile's own kernels.

::

    @cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def axpy(x, y):
        return 2 * x + y

    axpy(a, b)                  # NumPy arrays in, a NumPy array out (copied to the GPU and back)
    axpy(d_a, 1.0)              # a device array in (threadtile's, torch, CuPy...): a device array
    axpy(a, b, out=d_out, stream=s)

    @cuda.guvectorize(["void(float32[:, :], float32[:, :], float32[:, :])"],
                      "(m,n),(n,p)->(m,p)", target="cuda")
    def matmul(a, b, c): ...
    c = matmul(a, b)            # over the leading (loop) axes of a and b, broadcast

The function is a device function (anything a kernel may call) of a kernel threadtile
generates for the call's shapes: one thread per output element (``vectorize``) or per item of
the loop axes (``guvectorize``, whose function gets views of the core axes and writes its
outputs). Arguments broadcast as NumPy broadcasts them. A call takes the first signature its
inputs convert to safely (NumPy's casting rules; a Python number converts within its kind)
and converts them; its result has the signature's return type. Under ``simulate()`` the
kernels run in the simulator.
"""

from __future__ import annotations

import functools
import linecache
import re
import warnings

import numpy as np

from .jit import jit
from .lang.signatures import signatures as _read_signatures
from .lang.thread import grid
from .lang.types import ArrayType, Scalar, void
from .reduction import Reduce
from .runtime.devicearray import DeviceArray, as_cuda_array
from .runtime.hostarrays import device_array, to_device

__all__ = ["GUFunc", "UFunc", "guvectorize", "vectorize"]

_THREADS = 128


# -- arguments ---------------------------------------------------------------------------------

def _is_device(a) -> bool:
    return isinstance(a, DeviceArray) or hasattr(a, "__cuda_array_interface__")


def _returned(out, view: DeviceArray):
    """What a ufunc returns for a device output ``out``: the array itself where it is one a
    user handles (threadtile's, torch's, CuPy's: anything with ``__dlpack__``), else (an
    object with only ``__cuda_array_interface__``) ``view``, threadtile's array on its
    memory, as numba returns its own device array."""
    return out if isinstance(out, DeviceArray) or hasattr(out, "__dlpack__") else view


class _Arg:
    """One input: a Python number (``value``, weak: it converts within its kind), or an array
    on the host or the device."""

    def __init__(self, a):
        self.device = _is_device(a)
        self.weak = isinstance(a, (bool, int, float)) and not isinstance(a, np.generic)
        if self.device:
            self.value = as_cuda_array(a)
        elif self.weak:
            self.value = a
        else:
            self.value = np.asarray(a)
        self.dtype = None if self.weak else np.dtype(self.value.dtype)
        self.shape = () if self.weak else tuple(self.value.shape)

    def fits(self, dt: np.dtype) -> bool:
        if not self.weak:
            return bool(np.can_cast(self.dtype, dt, "safe"))
        if isinstance(self.value, bool):
            return True
        if isinstance(self.value, int):
            return dt.kind in "iufc"
        return dt.kind in "fc"

    def on_device(self, dt: np.dtype, stream):
        """The input as the kernel takes it: a number of dtype ``dt``, or a device array."""
        if not self.shape and not self.device:
            return dt.type(self.value)
        if self.device:
            if self.dtype == dt:
                return self.value
            host = self.value.copy_to_host(stream=stream).astype(dt)
            return to_device(host, stream=stream)
        return to_device(np.ascontiguousarray(self.value, dtype=dt), stream=stream)


def _select(sigs: list, args: list, name: str) -> int:
    if all(a.weak for a in args):  # numbers alone have NumPy's default types (NEP 50)
        for a in args:
            a.weak, a.dtype = False, np.asarray(a.value).dtype
    for i, sig in enumerate(sigs):
        if all(a.fits(_np(t)) for a, t in zip(args, sig)):
            return i
    kinds = ", ".join(str(a.dtype) if a.dtype is not None else type(a.value).__name__
                      for a in args)
    raise TypeError(f"ufunc '{name}' not supported for the input types ({kinds}): it is "
                    f"compiled for {', '.join(_spell(s) for s in sigs)}")


def _np(t) -> np.dtype:
    """The NumPy dtype of a signature's type (an array's: its items')."""
    return t.dtype.numpy if isinstance(t, ArrayType) else t.numpy


def _spell(dtypes) -> str:
    return "(" + ", ".join(str(t) for t in dtypes) + ")"


# -- generated kernels -------------------------------------------------------------------------

_generated = 0


def _ident(name: str) -> str:
    """``name`` as part of an identifier (a lambda's is ``<lambda>``)."""
    return re.sub(r"\W", "", name) or "fn"


def _make_kernel(name: str, lines: list[str], fn):
    """A ``@jit`` kernel from generated source, kept in ``linecache`` so that the compiler
    reads it as it reads any function (its errors point into it)."""
    global _generated
    _generated += 1
    filename = f"<threadtile-ufunc-{_generated}-{name}>"
    text = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"fn": fn, "grid": grid, "__name__": "threadtile.ufuncs.generated"}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102  (our own generated source)
    return jit(ns[name])


def _unravel(rank: int, dims: str) -> list[str]:
    """Lines setting ``j0``...``j{rank-1}`` from the flat index ``i`` over ``dims[d]``."""
    lines = ["        r = i"]
    for d in reversed(range(1, rank)):
        lines += [f"        j{d} = r % {dims}[{d}]", f"        r = r // {dims}[{d}]"]
    lines.append("        j0 = r")
    return lines


def _loop_index(pattern: tuple) -> list[str]:
    """The loop indices of an argument: ``j<d>`` of the output's axis, ``0`` where the
    argument's axis of length 1 broadcasts."""
    return ["0" if d < 0 else f"j{d}" for d in pattern]


def _pattern(shape: tuple, full: tuple) -> tuple:
    """For each axis of ``shape`` (aligned right with ``full``), the axis of ``full`` it
    follows, or -1 where it has length 1 (broadcast)."""
    off = len(full) - len(shape)
    return tuple(-1 if n == 1 else off + d for d, n in enumerate(shape))


# -- vectorize ---------------------------------------------------------------------------------

def _check_options(options: dict, what: str) -> None:
    for opt in options:
        if opt == "nopython":
            warnings.warn(f"nopython kwarg for cuda target is redundant ({what})",
                          RuntimeWarning, stacklevel=3)
        else:
            raise KeyError(f"Unrecognized options. cuda {what} target does not support "
                           f"option: '{opt}'")


def _target(target: str) -> None:
    if target not in ("cuda", "gpu"):
        raise ValueError(f"target={target!r}: threadtile's vectorize compiles for the GPU "
                         "(target='cuda'); NumPy's np.vectorize runs on the CPU")


class UFunc:
    """A function of numbers applied element by element over broadcast arrays (numba's CUDA
    ``vectorize``)."""

    def __init__(self, func, sigs: list) -> None:
        self.py_func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self._sigs = []
        self._returns = []
        for s in sigs:
            if s.return_type is None or s.return_type == void:
                raise TypeError(f"vectorize needs a return type in each signature: {s}")
            if not all(isinstance(t, Scalar) for t in (*s.args, s.return_type)):
                raise TypeError(f"vectorize signatures take numbers, not arrays: {s} (for "
                                "functions of arrays, use guvectorize)")
            self._sigs.append(tuple(s.args))
            self._returns.append(s.return_type.numpy)
        if len({len(s) for s in self._sigs}) != 1:
            raise TypeError("the signatures of a vectorized function take different numbers "
                            "of arguments")
        self.nin = len(self._sigs[0])
        self.nout = 1
        self._kernels: dict = {}
        self._reducer = None

    @property
    def types(self) -> list[str]:
        """NumPy's spelling of the signatures (``'ff->f'``)."""
        return ["".join(t.numpy.char for t in s) + "->" + r.char
                for s, r in zip(self._sigs, self._returns)]

    def __repr__(self) -> str:
        return f"<threadtile vectorized function {self.__name__!r}>"

    def _kernel(self, patterns: tuple, rank: int):
        key = (patterns, rank)
        k = self._kernels.get(key)
        if k is None:
            names = [f"a{i}" for i in range(self.nin)]
            kname = f"vectorize_{_ident(self.__name__)}"
            lines = [f"def {kname}({', '.join(names)}, out):",
                     "    i = grid(1)",
                     "    if i < out.size:", *_unravel(rank, "out.shape")]
            vals = [n if p is None else (f"{n}[{', '.join(_loop_index(p))}]" if p else
                                         f"{n}[0]")
                    for n, p in zip(names, patterns)]
            lines.append(f"        out[{', '.join(f'j{d}' for d in range(rank))}] = "
                         f"fn({', '.join(vals)})")
            k = self._kernels[key] = _make_kernel(kname, lines, self.py_func)
        return k

    def __call__(self, *args, out=None, stream=0):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments, got {len(args)}")
        ins = [_Arg(a) for a in args]
        which = _select(self._sigs, ins, self.__name__)
        sig, ret = self._sigs[which], self._returns[which]
        shape = np.broadcast_shapes(*(a.shape for a in ins))
        device = any(a.device for a in ins)
        scalar = not shape
        full = shape or (1,)
        host_out = None
        if out is not None and _is_device(out) and not isinstance(out, DeviceArray):
            out = _returned(out, as_cuda_array(out))
        if out is not None:
            if tuple(out.shape) != full and not (scalar and tuple(out.shape) == ()):
                raise ValueError(f"out has shape {tuple(out.shape)}; the result's is {shape}")
            if _is_device(out):
                dout = as_cuda_array(out)
                if dout.dtype != ret:
                    raise TypeError(f"out has dtype {dout.dtype}; the signature returns {ret}")
            else:
                host_out = out
                dout = device_array(full, ret, stream=stream)
        else:
            dout = device_array(full, ret, stream=stream)
        kargs = []
        patterns = []
        for a, t in zip(ins, sig):
            v = a.on_device(t.numpy, stream)
            kargs.append(v)
            patterns.append(None if not a.shape and not a.device else
                            _pattern(a.shape, full))
        n = int(np.prod(full))
        if n:
            k = self._kernel(tuple(patterns), len(full))
            k[-(-n // _THREADS), _THREADS, stream](*kargs, dout)
        if host_out is not None:
            dout.copy_to_host(host_out, stream=stream)
            return host_out
        if out is not None:
            return out
        if scalar:
            return dout.copy_to_host(stream=stream)[0]
        return dout if device else dout.copy_to_host(stream=stream)


    def reduce(self, arg, stream=0):
        """The function of two arguments folded over the 1-d array ``arg`` (host or device),
        as a NumPy scalar of ``arg``'s dtype. The items are combined pairwise in a tree, so
        the function should be associative."""
        if self.nin != 2:
            raise TypeError(f"{self.__name__}.reduce needs a function of two arguments")
        if arg.ndim != 1:
            raise TypeError("must use 1d array")
        if arg.shape[0] == 0:
            raise TypeError("Reduction on an empty array.")
        if self._reducer is None:
            self._reducer = Reduce(self.py_func)
        d = as_cuda_array(arg) if _is_device(arg) else to_device(np.asarray(arg), stream=stream)
        return self._reducer.on_device(d, 0, False, stream).copy_to_host(stream=stream)[0]


def vectorize(sigs=None, target: str = "cuda", identity=None, cache: bool = False,
              **options):
    """numba's ``vectorize`` for the GPU: ``vectorize(signatures, target='cuda')(func)``
    makes a :class:`UFunc` of ``func`` (a function of numbers); the signatures are required
    (``'float32(float32, float32)'``, ``float32(float32, float32)`` or a list of them)."""
    if callable(sigs) and not isinstance(sigs, (str, list, tuple)) and \
            not hasattr(sigs, "args"):
        raise TypeError("vectorize needs signatures on the GPU: "
                        "@vectorize(['float32(float32, float32)'], target='cuda')")
    _target(target)
    if cache:
        raise TypeError("caching is not supported")
    _check_options(options, "vectorize")
    if sigs is None:
        raise TypeError("vectorize needs signatures on the GPU: "
                        "@vectorize(['float32(float32, float32)'], target='cuda')")
    parsed = _read_signatures(sigs if isinstance(sigs, list) else [sigs])

    def wrap(func) -> UFunc:
        return functools.update_wrapper(UFunc(func, parsed), func, updated=())

    return wrap


# -- guvectorize -------------------------------------------------------------------------------

_DIMS = re.compile(r"\(([^()]*)\)")


def _layout(text: str) -> tuple[list, list]:
    """``'(m,n),(n,p)->(m,p)'`` as ([('m', 'n'), ('n', 'p')], [('m', 'p')])."""
    if "->" not in text:
        raise ValueError(f"bad gufunc layout {text!r}: write it as '(m,n),(n)->(m)'")
    lhs, rhs = text.replace(" ", "").split("->")

    def side(s):
        groups = _DIMS.findall(s)
        if "".join(f"({g})" for g in groups).replace(",", "") != s.replace(",", ""):
            raise ValueError(f"bad gufunc layout {text!r}")
        return [tuple(x for x in g.split(",") if x) for g in groups]

    return side(lhs), side(rhs)


class GUFunc:
    """A function over the core axes of its arguments, applied over their leading (loop) axes
    with broadcasting (numba's CUDA ``guvectorize``)."""

    def __init__(self, func, sigs: list, layout: str) -> None:
        self.py_func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.layout = layout
        self._ins, self._outs = _layout(layout)
        self.nin, self.nout = len(self._ins), len(self._outs)
        self._sigs = []
        for s in sigs:
            if s.return_type not in (None, void):
                raise TypeError("guvectorized functions cannot return values: signature "
                                f"{s} specifies {s.return_type} return type")
            if len(s.args) != self.nin + self.nout:
                raise TypeError(f"signature {s} has {len(s.args)} arguments; the layout "
                                f"{layout!r} has {self.nin + self.nout}")
            self._sigs.append(tuple(s.args))
        self._kernels: dict = {}

    def __repr__(self) -> str:
        return f"<threadtile guvectorized function {self.__name__!r}>"

    def _kernel(self, patterns: tuple, loop_rank: int):
        key = (patterns, loop_rank)
        k = self._kernels.get(key)
        if k is None:
            names = [f"a{i}" for i in range(len(patterns))]
            kname = f"guvectorize_{_ident(self.__name__)}"
            lines = [f"def {kname}({', '.join(names)}, loop, n):",
                     "    i = grid(1)",
                     "    if i < n:", *_unravel(max(loop_rank, 1), "loop")]
            vals = []
            for name, (pat, as_slice) in zip(names, patterns):
                idx = _loop_index(pat)
                if as_slice:  # a core of no axes, taken as an array of one item
                    last = idx.pop() if idx else "0"
                    idx.append(f"{last}:{last} + 1")
                vals.append(f"{name}[{', '.join(idx)}]" if idx else name)
            lines.append(f"        fn({', '.join(vals)})")
            k = self._kernels[key] = _make_kernel(kname, lines, self.py_func)
        return k

    def __call__(self, *args, out=None, stream=0):
        nin, nout = self.nin, self.nout
        if out is None and len(args) not in (nin, nin + nout):
            def count(n):
                return f"{n} positional argument{'s' * (n != 1)}"
            raise TypeError(f"This gufunc accepts {count(nin)} (when providing input only) "
                            f"or {count(nin + nout)} (when providing input and output). "
                            f"Got {count(len(args))}.")
        if out is not None and len(args) > nin:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        outs = list(args[nin:]) if len(args) > nin else (
            list(out) if isinstance(out, (tuple, list)) else [out] * (out is not None))
        outs += [None] * (nout - len(outs))
        ins = [_Arg(a) for a in args[:nin]]
        which = _select([s[:nin] for s in self._sigs], ins, self.__name__)
        sig = self._sigs[which]
        # the core axes' sizes, and the loop axes each input has before them
        sizes: dict = {}
        loops = []
        for a, core in zip(ins, self._ins):
            if len(a.shape) < len(core):
                raise ValueError(f"{self.__name__}: an input of shape {a.shape} has fewer "
                                 f"axes than its core dimensions {core}")
            cshape = a.shape[len(a.shape) - len(core):]
            for sym, n in zip(core, cshape):
                if sizes.setdefault(sym, n) != n:
                    raise ValueError(f"{self.__name__}: core dimension {sym!r} is {n} in one "
                                     f"input and {sizes[sym]} in another")
            loops.append(a.shape[:len(a.shape) - len(core)])
        loop = np.broadcast_shapes(*loops)
        device = any(a.device for a in ins)
        douts, backs = [], []
        for o, core, t in zip(outs, self._outs, sig[nin:]):
            missing = [s for s in core if s not in sizes]
            if missing and o is None:
                raise ValueError(f"{self.__name__}: the size of output dimension "
                                 f"{missing[0]!r} is not given by any input")
            want = loop + tuple(sizes.get(s, 0) for s in core)
            if o is None:
                douts.append(device_array(want or (1,), _np(t), stream=stream))
                backs.append(None)
            elif _is_device(o):
                douts.append(as_cuda_array(o))
                backs.append(None)
            else:
                host = np.asarray(o)
                douts.append(to_device(np.ascontiguousarray(host), stream=stream))
                backs.append(host)
            loops.append(tuple(douts[-1].shape[:len(douts[-1].shape) - len(core)]))
        kargs, patterns = [], []
        for a, core, t, shp in zip(ins, self._ins, sig, loops):
            v = a.on_device(_np(t), stream)
            if not a.shape and not a.device:
                v = to_device(np.full(1, v), stream=stream)
                shp = (1,)
            kargs.append(v)
            patterns.append((_pattern(shp, loop), not core and isinstance(t, ArrayType)))
        for d, core, t, shp in zip(douts, self._outs, sig[nin:], loops[nin:]):
            kargs.append(d)
            patterns.append((_pattern(shp, loop), not core and isinstance(t, ArrayType)))
        n = int(np.prod(loop)) if loop else 1
        if n:
            k = self._kernel(tuple(patterns), len(loop))
            k[-(-n // _THREADS), _THREADS, stream](*kargs, tuple(int(x) for x in loop or (1,)),
                                                   n)
        results = []
        for d, host, o in zip(douts, backs, outs):
            if host is not None:
                d.copy_to_host(host, stream=stream)
                results.append(o)
            elif o is not None:
                results.append(_returned(o, d))
            else:
                results.append(d if device else d.copy_to_host(stream=stream))
        return results[0] if nout == 1 else tuple(results)


def guvectorize(sigs, layout: str, target: str = "cuda", identity=None, cache: bool = False,
                writable_args=(), **options):
    """numba's ``guvectorize`` for the GPU: ``guvectorize(signatures, '(n),(n)->()',
    target='cuda')(func)`` makes a :class:`GUFunc` of ``func``, which writes its outputs
    (the last arguments) and returns nothing."""
    _target(target)
    if cache:
        raise TypeError("caching is not supported")
    if writable_args:
        raise TypeError("writable_args are not supported")
    if not options.pop("nopython", True):
        raise TypeError("nopython flag must be True")
    if options:
        raise TypeError("The following target options are not supported: "
                        + ", ".join(repr(k) for k in options))
    parsed = _read_signatures(sigs if isinstance(sigs, list) else [sigs])

    def wrap(func) -> GUFunc:
        return functools.update_wrapper(GUFunc(func, parsed, layout), func, updated=())

    return wrap
