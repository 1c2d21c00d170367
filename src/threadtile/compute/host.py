"""The host side of ``threadtile.compute``: every algorithm in NumPy, with the user's operator
applied as Python. It runs under ``threadtile.simulate()`` and whenever the arrays are NumPy
arrays, and it is the definition the GPU kernels are tested against.

Grouping: a reduction combines ``op(init, op(...op(x0, x1)..., xn-1))`` up to reassociation
(the GPU regroups, so ``op`` must be associative, and for ``reduce_into`` and
``segmented_reduce`` commutative too, as CUB requires); a scan keeps the items' order, so a
non-commutative associative ``op`` scans the same on both sides.
"""

from __future__ import annotations

import functools

import numpy as np

from .operators import Operator, OpKind

__all__ = ["HostArray", "host_array", "reduce", "scan", "radix_order", "histogram_even",
           "is_host_array"]


class HostArray:
    """A NumPy view of an argument and how to copy results back to where it lives."""

    __slots__ = ("view", "back")

    def __init__(self, view: np.ndarray, back=None):
        self.view = view
        self.back = back

    def done(self) -> None:
        if self.back is not None:
            self.back()


def is_host_array(a) -> bool:
    return isinstance(a, np.ndarray)


def host_array(a, what: str) -> HostArray:
    """``a`` (NumPy, a CPU or CUDA torch tensor, CuPy, a threadtile device array, anything with
    ``__array__``) as a flat NumPy view; results written to it are copied back by ``done()``."""
    if isinstance(a, np.ndarray):
        if not a.flags.c_contiguous:
            raise ValueError(f"{what} must be C-contiguous")
        return HostArray(a.reshape(-1))
    mod = type(a).__module__ or ""
    if mod.startswith("torch"):
        t = a.detach()
        if t.device.type == "cpu":
            return HostArray(t.contiguous().numpy().reshape(-1))
        host = t.cpu().numpy().reshape(-1)

        def back(host=host, t=t):
            import torch  # noqa: PLC0415

            t.copy_(torch.from_numpy(host.reshape(t.shape)))
        return HostArray(host, back)
    if mod.startswith("cupy") and hasattr(a, "get"):
        host = a.get().reshape(-1)
        return HostArray(host, lambda: a.set(host.reshape(a.shape)))
    if hasattr(a, "copy_to_host"):  # threadtile's (or numba's) device arrays
        host = a.copy_to_host().reshape(-1)
        return HostArray(host, lambda: a.copy_to_device(host.reshape(a.shape)))
    if hasattr(a, "__array__") or hasattr(a, "__array_interface__"):
        return HostArray(np.asarray(a).reshape(-1))
    raise TypeError(f"{what}: expected an array, got {type(a).__name__}")


# -- applying operators ------------------------------------------------------------------------

def _records(dtype: np.dtype) -> bool:
    return dtype.names is not None


def apply2(op: Operator, a, b, dtype: np.dtype):
    """``op(a, b)`` on two items, as ``dtype``."""
    if _records(dtype):
        return op.host_records(dtype, a, b)
    return dtype.type(op.host(a, b))


def items(x: np.ndarray) -> list:
    """Items to pass a Python operator: NumPy scalars (their arithmetic is the dtype's), or
    ``np.record`` views for records (``a.v``)."""
    if _records(x.dtype):
        return list(x.view(np.recarray))
    return list(x)


def store(values: list, dtype: np.dtype) -> np.ndarray:
    """Items (NumPy scalars or records) as an array of ``dtype``."""
    out = np.empty(len(values), dtype)
    for i, v in enumerate(values):
        out[i] = v
    return out


def reduce(x: np.ndarray, op: Operator, init, dtype: np.dtype):
    """``op(init, x0 op x1 op ... )``; ``init`` for an empty ``x``. Built-in operators reduce
    pairwise over whole arrays (what the GPU's tree does), functions left to right."""
    x = x.astype(dtype, copy=False)
    if len(x) == 0:
        return np.asarray(init, dtype)[()]
    if op.is_builtin:
        v = x
        while len(v) > 1:
            odd = v[-1:] if len(v) % 2 else v[:0]
            v = np.concatenate([np.asarray(op.host(v[0:len(v) - 1:2], v[1::2])).astype(dtype),
                                odd])
        return dtype.type(op.host(dtype.type(init), v[0]))
    seq = items(x)
    acc = functools.reduce(lambda a, b: apply2(op, a, b, dtype), seq)
    return apply2(op, np.asarray([init], dtype).view(np.recarray)[0]
                  if _records(dtype) else dtype.type(init), acc, dtype)


_ACCUMULATE = {OpKind.PLUS: np.add, OpKind.MULTIPLIES: np.multiply,
               OpKind.BIT_AND: np.bitwise_and, OpKind.BIT_OR: np.bitwise_or,
               OpKind.BIT_XOR: np.bitwise_xor}


def _builtin_scan(x: np.ndarray, op: Operator, dtype: np.dtype) -> np.ndarray:
    kind = op.op
    if kind in _ACCUMULATE:
        with np.errstate(over="ignore"):
            return _ACCUMULATE[kind].accumulate(x, dtype=dtype)
    if kind in (OpKind.MINIMUM, OpKind.MAXIMUM):
        # op(acc, x) = x < acc ? x : acc (minimum): a NaN item never wins, a NaN first item
        # stays the running value: fmin/fmax, all NaN after a leading NaN
        f = np.fmin if kind is OpKind.MINIMUM else np.fmax
        out = f.accumulate(x).astype(dtype)
        if dtype.kind == "f" and len(x) and np.isnan(x[0]):
            out[:] = np.nan
        return out
    acc, out = x[0], [x[0]]
    for v in x[1:]:
        acc = dtype.type(op.host(acc, v))
        out.append(acc)
    return np.asarray(out, dtype)


def scan(x: np.ndarray, op: Operator, init, dtype: np.dtype, mode: str) -> np.ndarray:
    """Inclusive (``mode='inclusive'``, ``init`` None or folded in first) or exclusive scan."""
    x = x.astype(dtype, copy=False)
    n = len(x)
    if n == 0:
        return np.empty(0, dtype)
    if op.is_builtin and not _records(dtype):
        if mode == "exclusive":
            seq = np.concatenate([np.asarray([init], dtype), x[:-1]])
            return _builtin_scan(seq, op, dtype)
        if init is not None:
            return _builtin_scan(np.concatenate([np.asarray([init], dtype), x]), op, dtype)[1:]
        return _builtin_scan(x, op, dtype)
    seq = items(x)
    out = []
    if init is None:
        acc = seq[0]
        out.append(acc)
        rest = seq[1:]
    else:
        acc = np.asarray([init], dtype).view(np.recarray)[0] if _records(dtype) else \
            dtype.type(init)
        rest = seq
        if mode == "exclusive":
            out.append(acc)
            rest = seq[:-1]
    for v in rest:
        acc = apply2(op, acc, v, dtype)
        out.append(acc)
    return store(out, dtype)


# -- sorting -----------------------------------------------------------------------------------

def radix_order(keys: np.ndarray, descending: bool, begin_bit: int, end_bit: int) -> np.ndarray:
    """The stable order CUB's radix sort puts ``keys`` in: each key as its bits made
    order-preserving (signed integers: the sign bit flipped; floats: positive ones the sign bit
    flipped, negative ones every bit, and -0.0 as +0.0), inverted for a descending sort, then
    bits ``[begin_bit, end_bit)`` compared as an unsigned number. So NaNs sort by their bits:
    a positive NaN after +inf, a negative one before -inf."""
    dt = keys.dtype
    ut = np.dtype(f"u{dt.itemsize}")
    bits = keys.view(ut).copy()
    top = ut.type(1) << ut.type(8 * dt.itemsize - 1)
    if dt.kind == "i":
        bits ^= top
    elif dt.kind == "f":
        neg = (bits & top) != 0
        bits = np.where(neg, ~bits, bits ^ top).astype(ut)
        minus_zero = ~top  # -0.0 (0x80..0) twiddled: all bits but the top one
        bits[bits == minus_zero] = top  # as +0.0 twiddled
    elif dt.kind == "b":
        bits = bits.astype(ut)
    if descending:
        bits = ~bits
    width = end_bit - begin_bit
    if width < 8 * dt.itemsize:
        mask = (1 << width) - 1
        bits = (bits.astype(np.uint64) >> np.uint64(begin_bit)) & np.uint64(mask)
    return np.argsort(bits, kind="stable")


# -- histogram ---------------------------------------------------------------------------------

def histogram_even(x: np.ndarray, bins: int, lower, upper, counter: np.dtype) -> np.ndarray:
    """Counts of ``x`` in ``bins`` equal bins of ``[lower, upper)``: integers by
    ``(s - lower) * bins // (upper - lower)`` exactly; floats by
    ``min(int((s - lower) * scale), bins - 1)`` in the samples' float type with
    ``scale = bins / (upper - lower)`` in that type (the kernel's arithmetic)."""
    if x.dtype.kind in "iub":
        lo, hi = int(lower), int(upper)
        xs = x.astype(np.int64)
        keep = (xs >= lo) & (xs < hi)
        b = ((xs[keep] - lo).astype(object) * bins // (hi - lo)).astype(np.int64)
    else:
        ft = x.dtype
        lo, hi = ft.type(lower), ft.type(upper)
        scale = ft.type(ft.type(bins) / ft.type(hi - lo))
        keep = (x >= lo) & (x < hi)
        with np.errstate(invalid="ignore", over="ignore"):
            b = np.minimum(((x[keep] - lo) * scale).astype(np.int64), bins - 1)
    return np.bincount(b, minlength=bins)[:bins].astype(counter)


def merge_order(keys: np.ndarray, op: Operator) -> np.ndarray:
    """The stable order of ``keys`` by the comparator ``op`` (``op(a, b)``: ``a`` goes first),
    by Python's sort, which is stable."""
    items = list(keys.view(np.recarray)) if keys.dtype.names else list(keys)

    def cmp(i, j):
        if op.host(items[i], items[j]):
            return -1
        if op.host(items[j], items[i]):
            return 1
        return 0
    return np.array(sorted(range(len(items)), key=functools.cmp_to_key(cmp)), dtype=np.int64)
