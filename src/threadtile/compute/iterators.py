"""Inputs of the algorithms: device arrays, and cuda.compute's iterators, lazily computed
sequences that cost no memory: ``CountingIterator(np.int32(5))`` is 5, 6, 7...,
``ConstantIterator(np.float32(1))`` is 1, 1, 1..., ``TransformIterator(it, op)`` is
``op(it[0]), op(it[1])...``.

On the GPU each becomes a libcu++ iterator (``cuda::counting_iterator``,
``cuda::constant_iterator``, ``cuda::transform_iterator``) built inside the kernel from its
parameters, so CUB's agents read it like an array. On the host (the simulator, NumPy inputs)
it is materialised as a NumPy array of the items an algorithm reads.
"""

from __future__ import annotations

import numpy as np

from .operators import as_operator, ctype, type_of

__all__ = ["CountingIterator", "ConstantIterator", "TransformIterator", "IteratorBase"]


def _scalar(value, what: str) -> np.generic:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(())[()]
    if isinstance(value, (bool, int, float)):
        raise TypeError(f"{what} takes a NumPy scalar (np.int32(0), np.float32(1)...) whose "
                        f"dtype is the iterator's value type, not a Python {type(value).__name__}")
    if not isinstance(value, np.generic):
        raise TypeError(f"{what} takes a NumPy scalar, not {type(value).__name__}")
    type_of(value.dtype)
    return value


def value_words(value) -> list[int]:
    """A value's bytes as signed 64-bit words (the kernels' ``tt_unpack`` reads them back)."""
    raw = np.asarray(value).tobytes()
    raw += b"\0" * (-len(raw) % 8 or 0)
    if not raw:
        raw = b"\0" * 8
    return [int(w) for w in np.frombuffer(raw, np.int64)]


class IteratorBase:
    """An input sequence: its value ``dtype``, its C++ (``cxx``), its kernel arguments
    (``args``), what makes its C++ differ (``key``) and its items on the host (``host``)."""

    dtype: np.dtype
    headers = ("<cuda/iterator>",)

    def cxx(self, name: str) -> tuple[list[str], str, str, str]:
        """(parameters, statements gathering them, iterator type, expression making it)."""
        raise NotImplementedError

    def args(self) -> list:
        raise NotImplementedError

    def key(self) -> tuple:
        raise NotImplementedError

    def functions(self) -> list:
        """The compiled Python operators the C++ needs."""
        return []

    def host(self, n: int) -> np.ndarray:
        raise NotImplementedError


class CountingIterator(IteratorBase):
    """``start, start + 1, start + 2...`` in ``start``'s dtype (an integer NumPy scalar)."""

    def __init__(self, start):
        self.start = _scalar(start, "CountingIterator")
        if self.start.dtype.kind not in "iu":
            raise TypeError("CountingIterator counts integers: give it an integer NumPy scalar "
                            f"(np.int64(0)), not {self.start.dtype}")
        self.dtype = self.start.dtype

    def cxx(self, name):
        t = ctype(type_of(self.dtype))
        params = [f"long long {name}_w0"]
        gather = f"const long long {name}_w[1] = {{{name}_w0}};"
        it = f"::cuda::counting_iterator<{t}>"
        return params, gather, it, f"{it}(tt_unpack<{t}>({name}_w))"

    def args(self):
        return value_words(self.start)

    def key(self):
        return ("count", self.dtype.str)

    def host(self, n):
        return (self.start + np.arange(n, dtype=np.int64).astype(self.dtype)).astype(self.dtype)

    def __repr__(self):
        return f"CountingIterator({self.start!r})"


class ConstantIterator(IteratorBase):
    """``value, value, value...`` (a NumPy scalar: its dtype is the value type)."""

    def __init__(self, value):
        self.value = _scalar(value, "ConstantIterator")
        self.dtype = self.value.dtype

    def cxx(self, name):
        t = ctype(type_of(self.dtype))
        n = len(value_words(self.value))
        params = [f"long long {name}_w{k}" for k in range(n)]
        words = ", ".join(f"{name}_w{k}" for k in range(n))
        gather = f"const long long {name}_w[{n}] = {{{words}}};"
        make = f"::cuda::constant_iterator<{t}>(tt_unpack<{t}>({name}_w))"
        return params, gather, f"::cuda::constant_iterator<{t}>", make

    def args(self):
        return value_words(self.value)

    def key(self):
        return ("const", self.dtype.str)

    def host(self, n):
        return np.full(n, self.value, dtype=self.dtype)

    def __repr__(self):
        return f"ConstantIterator({self.value!r})"


class TransformIterator(IteratorBase):
    """``op(it[0]), op(it[1])...``: ``it`` a device array or an iterator, ``op`` an OpKind or a
    Python function of one item. ``dtype`` is the items' type; by default the type ``op``
    returns (as threadtile infers it for the input's type)."""

    def __init__(self, it, op, dtype=None):
        self.base = as_input(it)
        self.op = as_operator(op)
        in_t = type_of(self.base.dtype)
        if dtype is None and self.op.is_builtin:
            dtype = self.base.dtype
        self._fn, self._src = self.op.cxx((in_t,), None if dtype is None else type_of(dtype))
        if dtype is None:  # the type the function returns for this input
            dtype = np.dtype(self._src.ret.name)
        self.dtype = np.dtype(dtype)

    def cxx(self, name):
        params, gather, base_t, base_make = self.base.cxx(name + "_b")
        fn = self._fn
        make = f"::cuda::make_transform_iterator({base_make}, {fn}{{}})"
        it = (f"decltype(::cuda::make_transform_iterator(::cuda::std::declval<{base_t}>(), "
              f"{fn}{{}}))")
        return params, gather, it, make

    def args(self):
        return self.base.args()

    def key(self):
        return ("transform", self.base.key(), self.op.key(), self.dtype.str)

    def functions(self):
        return self.base.functions() + ([self._src] if self._src is not None else [])

    def host(self, n):
        items = self.base.host(n)
        if self.op.is_builtin:
            return np.asarray(self.op.host(items)).astype(self.dtype)
        return np.array([self.op.host(x) for x in items], dtype=self.dtype).reshape(n)

    def __repr__(self):
        return f"TransformIterator({self.base!r}, {self.op!r})"


class ArrayInput(IteratorBase):
    """A 1-d array as an input: on the GPU its pointer (``describe``d), on the host a view."""

    headers = ()
    size: int | None = None  # items, once bound to an array

    def __init__(self, array, dtype: np.dtype, ptr: int = 0, host=None):
        self.array = array
        self.dtype = np.dtype(dtype)
        self.ptr = ptr
        self.host_view = host

    def cxx(self, name):
        t = ctype(type_of(self.dtype))
        return [f"const {t}* {name}"], "", f"const {t}*", name

    def args(self):
        return [self.ptr]

    def key(self):
        return ("array", self.dtype.str)

    def host(self, n):
        return self.host_view[:n]


def as_input(x) -> IteratorBase:
    """An array or an iterator as an input (arrays are described by the caller first, which
    replaces this placeholder; see algorithms.py)."""
    if isinstance(x, IteratorBase):
        return x
    dt = getattr(x, "dtype", None)
    if dt is None:
        raise TypeError(f"an input is a device array or an iterator, not {type(x).__name__}")
    return ArrayInput(x, _np_dtype(dt))


def _np_dtype(dt) -> np.dtype:
    """A NumPy dtype from an array's dtype (NumPy, CuPy, or torch's ``torch.float32``)."""
    if isinstance(dt, np.dtype):
        return dt
    s = str(dt)
    if s.startswith("torch."):
        import torch  # noqa: PLC0415  (a torch tensor was given, so torch is imported)

        return np.dtype(torch.empty(0, dtype=dt).numpy().dtype)
    return np.dtype(dt)
