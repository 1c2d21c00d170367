"""Memory of a simulated launch: arrays, views, and checked loads, stores and atomics.

An array in a kernel is an :class:`ArrayRef`: a :class:`Memory` (one flat NumPy buffer) plus an
origin, a shape and strides in elements, exactly the ``{data, shape, strides}`` view the CUDA
backend passes. Each of origin, shape and stride is a NumPy scalar when all lanes agree, or a
per-lane vector when they do not (a row ``a[i]`` with ``i`` per thread, or shared memory, whose
origin is the block's own copy: shared arrays of a batch of blocks live side by side in one
buffer). NumPy broadcasting then computes every lane's element offset in one expression, so a
load is a gather and a store a scatter, and the checks run on whole vectors.
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ...lang import minifloat
from ...lang.records import text_unit
from ...lang.types import NARROW_FLOATS, SCALARS, Scalar, bfloat16
from . import checks, ops

ndarray = np.ndarray
_I64 = np.int64


class Memory:
    """One buffer: a global array's elements, one batch's copy of a shared array, a batch's
    local arrays, or a constant array. ``per_block`` is the number of elements each block owns
    (shared memory) and 0 otherwise."""

    __slots__ = ("flat", "name", "space", "elem", "shape", "per_block", "shadow", "written",
                 "bits16", "narrow", "fields")

    def __init__(self, flat: np.ndarray, name: str, space: str, elem: Scalar, shape: tuple,
                 per_block: int = 0, track_writes: bool = False):
        self.flat = flat
        self.name = name
        self.space = space
        self.elem = elem
        self.shape = shape
        self.per_block = per_block
        self.shadow = None  # checks.Shadow, made at the first race-checked access
        self.written = np.zeros(flat.size, bool) if track_writes else None
        # bfloat16 without ml_dtypes is stored as its uint16 bit patterns
        self.bits16 = elem == bfloat16 and flat.dtype == np.uint16
        # the 8-bit floats are stored as their bit patterns (lang/minifloat.py converts)
        self.narrow = elem.name if elem.name in NARROW_FLOATS else None
        if self.narrow and flat.dtype != np.uint8:  # ml_dtypes' float8 arrays: their bytes
            self.flat = flat.view(np.uint8)
        self.fields = None  # a record array's field views, by name (field())

    def describe(self, off: int) -> str:
        """The element at flat offset ``off`` as ``name[i, j]`` in the array's own shape."""
        if self.per_block:
            off %= self.per_block
        if self.shape and all(n > 0 for n in self.shape):
            try:
                idx = np.unravel_index(off, self.shape)
                return f"{self.name}[{', '.join(str(int(i)) for i in idx)}]"
            except ValueError:
                pass
        return f"{self.name} (element {off})"

    def get_shadow(self, dt) -> checks.Shadow:
        if self.shadow is None:
            self.shadow = checks.Shadow(self.flat.size, self.space == "shared", dt)
        return self.shadow

    def to_value(self, raw):
        if self.narrow:
            v = minifloat.decode(raw, self.narrow)
            return v if isinstance(raw, ndarray) else np.float32(v)
        if self.bits16:
            return ops.bf16_from_bits(raw) if isinstance(raw, ndarray) else np.float32(
                ops.bf16_from_bits(raw))
        if self.elem == bfloat16:
            return raw.astype(np.float32)
        return raw

    def to_raw(self, v):
        if self.narrow:
            r = minifloat.from_value(v, self.narrow)
            return r if isinstance(v, ndarray) else np.uint8(r)
        if self.bits16:
            return ops.bf16_to_bits(v)
        return v


class ArrayRef:
    """A view of a :class:`Memory`: what an array-typed kernel variable holds."""

    __slots__ = ("mem", "origin", "shape", "strides")

    def __init__(self, mem: Memory, origin, shape: tuple, strides: tuple):
        self.mem = mem
        self.origin = origin
        self.shape = shape
        self.strides = strides

    def __repr__(self) -> str:
        return f"<array view of {self.mem.name}>"


def from_numpy(a: np.ndarray, name: str, elem: Scalar) -> ArrayRef:
    """A kernel argument: a flat 1-d view over the memory ``a`` spans, and ``a``'s layout."""
    item = a.itemsize
    if any(s % item for s in a.strides):
        raise TypeError(f"argument {name!r}: strides {a.strides} are not a multiple of the "
                        f"element size {item}")
    strides = [s // item for s in a.strides]
    if a.size == 0:
        flat = a.reshape(-1)[:0] if a.flags.c_contiguous else np.zeros(0, a.dtype)
        origin = 0
    elif a.ndim == 0:
        flat, origin = a.reshape(1), 0
    elif a.flags.c_contiguous:
        flat, origin = a.reshape(-1), 0  # a view: no copy
    else:
        # the lowest-addressed element starts the flat view; a[0, ..., 0] sits at ``origin``
        low = tuple(n - 1 if s < 0 else 0 for n, s in zip(a.shape, strides))
        span = 1 + sum(abs(s) * (n - 1) for n, s in zip(a.shape, strides))
        first = a[tuple(slice(i, i + 1) for i in low)]
        flat = np.lib.stride_tricks.as_strided(first, shape=(span,), strides=(item,))
        origin = -sum(i * s for i, s in zip(low, strides))
    mem = Memory(flat, name, "global", elem, a.shape)
    return ArrayRef(mem, _I64(origin), tuple(_I64(n) for n in a.shape),
                    tuple(_I64(s) for s in strides))


def field(A: ArrayRef, name: str, sub: tuple, ratio: int) -> ArrayRef:
    """Field ``name`` of record array ``A`` (ir.Field): the same bytes as an array of the
    field's elements, ``ratio`` of them per record, the field's subarray axes appended. Its
    memory is one flat view per field, made once, with its own race bookkeeping (accesses
    through different fields, or through a field and the whole record, are not checked
    against each other) and none for uninitialised reads."""
    mem = A.mem
    if mem.fields is None:
        mem.fields = {}
        # writes through a field do not mark the record written: reading the whole record
        # afterwards (a copy) must not be reported as uninitialised, so that check ends here
        mem.written = None
    fm = mem.fields.get(name)
    if fm is None:
        f = mem.elem.field(name)
        elem = f.dtype if f.dtype is not None else text_unit(f.numpy)
        unit = f.numpy if f.dtype is not None else elem.numpy
        raw = mem.flat.view(np.uint8)  # every memory's flat buffer is contiguous
        n = max((raw.size - f.offset) // unit.itemsize, 0)
        flat = raw[f.offset:f.offset + n * unit.itemsize].view(unit)
        fm = Memory(flat, f"{mem.name}.{name}", mem.space, elem, mem.shape + sub,
                    mem.per_block * ratio)
        mem.fields[name] = fm
    r = _I64(ratio)
    shape = A.shape + tuple(_I64(n) for n in sub)
    strides = tuple(s * r for s in A.strides) + c_strides(sub)
    return ArrayRef(fm, A.origin * r, shape, strides)


def view_as(A: ArrayRef, dtype: str) -> ArrayRef:
    """``A.view(dtype)`` (ir.ViewAs; ``A`` is C-contiguous): its bytes as ``dtype``'s
    elements, the last axis scaled. The view's memory is made once per dtype, with race
    bookkeeping of its own (as a record's fields have) and no uninitialised-read check."""
    mem = A.mem
    elem = SCALARS[dtype]
    a, b = mem.flat.dtype.itemsize, elem.numpy.itemsize
    if mem.fields is None:
        mem.fields = {}
        mem.written = None
    key = f"view {dtype}"
    vm = mem.fields.get(key)
    if vm is None:
        raw = mem.flat.view(np.uint8)
        flat = raw[:raw.size // b * b].view(elem.numpy)
        shape = mem.shape[:-1] + (mem.shape[-1] * a // b,) if mem.shape else mem.shape
        vm = mem.fields[key] = Memory(flat, f"{mem.name}.view({dtype})", mem.space, elem,
                                      shape, mem.per_block * a // b)
    origin, last = A.origin * a, A.shape[-1] * a
    if np.any(origin % b) or np.any(last % b):
        raise ValueError(f"view({dtype}) of {mem.name}: its start or its last axis is not "
                         f"a whole number of {b}-byte elements")
    dims = A.shape[:-1] + (last // b,)
    return ArrayRef(vm, origin // b, dims, c_strides(dims))


def reshape(A: ArrayRef, dims: tuple) -> ArrayRef:
    """``A.reshape(dims)`` (ir.Reshape; ``A`` is C-contiguous): the same elements in C order,
    a -1 in ``dims`` the length the others leave. Another size raises numba's ValueError."""
    size = _I64(1)
    for n in A.shape:
        size = size * n
    dims = tuple(_I64(d) if not isinstance(d, np.ndarray) else d.astype(np.int64)
                 for d in dims)
    known = _I64(1)
    for d in dims:
        known = known * np.where(d == -1, 1, d)
    dims = tuple(np.where(d == -1, size // np.maximum(known, 1), d) for d in dims)
    dims = tuple(_I64(d) if np.ndim(d) == 0 else d for d in dims)
    total = _I64(1)
    for d in dims:
        total = total * d
    if np.any(total != size) or any(np.any(d < 0) for d in dims):
        raise ValueError("reshape(): the total size of the new array must be unchanged "
                         f"({int(np.max(size))} elements into shape "
                         f"{tuple(int(np.max(d)) for d in dims)})")
    return ArrayRef(A.mem, A.origin, dims, c_strides(dims))


def raw_memory(A: ArrayRef) -> ArrayRef:
    """``A.get_raw_memory()`` (ir.RawMemory): the buffer from ``A``'s first element to its
    end, 1-d and unit-stride, indexed by element offsets (an offset past the buffer is out of
    bounds)."""
    n = A.mem.flat.size - A.origin
    return ArrayRef(A.mem, A.origin, (n if np.ndim(n) else _I64(n),), (_I64(1),))


def c_strides(shape: tuple) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(_I64(s) for s in reversed(out))


# ---------------------------------------------------------------------------------------------
# Lanes
# ---------------------------------------------------------------------------------------------

def _active(B, m, off):
    """(offsets, lanes) of the active lanes; ``lanes`` None means every lane of the batch."""
    if m is None:
        if off.__class__ is ndarray and off.ndim:
            return off, None
        return np.full(B.L, off, _I64), None
    lanes = np.flatnonzero(m)
    if off.__class__ is ndarray and off.ndim:
        return off[lanes], lanes
    return np.full(len(lanes), off, _I64), lanes


def _lane_value(v, lane: int):
    if v.__class__ is ndarray and v.ndim:
        return int(v[lane])
    return int(v)


def _offset(A: ArrayRef, idx: tuple):
    off = A.origin
    st = A.strides
    for k in range(len(idx)):
        off = off + idx[k] * st[k]
    return off


def _check(B, A: ArrayRef, idx: tuple, m, site: int, offs, lanes) -> None:
    """Bounds, per axis; with the bounds check off, only the memory's own extent (an access
    outside it would fault or corrupt memory on a GPU, and would crash NumPy here)."""
    L = B.launch
    if L.bounds:
        bad = None
        for k in range(len(idx)):
            i = idx[k]
            b = (i < 0) | (i >= A.shape[k])
            bad = b if bad is None else bad | b
        if bad is None:
            return
        if m is not None:
            bad = bad & m
        if bad.__class__ is ndarray and bad.ndim:
            if not bad.any():
                return
            lane = int(np.argmax(bad))
        else:
            if not bad:
                return
            lane = 0 if lanes is None else int(lanes[0])
        checks.raise_oob(L, site, B.gtid[lane], [_lane_value(i, lane) for i in idx],
                         [_lane_value(n, lane) for n in A.shape])
    n = A.mem.flat.size
    if len(offs) and (offs.min() < 0 or offs.max() >= n):
        k = int(np.argmax((offs < 0) | (offs >= n)))
        lane = k if lanes is None else int(lanes[k])
        checks.raise_oob(L, site, B.gtid[lane], [_lane_value(i, lane) for i in idx],
                         [_lane_value(s, lane) for s in A.shape],
                         what=f"outside the memory of {A.mem.name}")


def _index_at(idx, lanes):
    def at(k: int):
        lane = k if lanes is None else int(lanes[k])
        return [_lane_value(i, lane) for i in idx]
    return at


def _threads(B, lanes):
    if lanes is None:
        return B.gtid, B.stamp
    return B.gtid[lanes], B.stamp[lanes]


def _check_uninit(B, mem: Memory, offs, lanes, idx, site: int) -> None:
    w = mem.written[offs]
    if not w.all():
        k = int(np.argmin(w))
        lane = k if lanes is None else int(lanes[k])
        checks.raise_uninit(B.launch, site, B.gtid[lane], _index_at(idx, lanes)(k),
                            mem.describe(int(offs[k])))


# ---------------------------------------------------------------------------------------------
# Loads, stores, atomics
# ---------------------------------------------------------------------------------------------

def load(B, A: ArrayRef, idx: tuple, m, site: int):
    """``A[idx]`` for the lanes in mask ``m``; other lanes get a harmless value."""
    off = _offset(A, idx)
    mem = A.mem
    L = B.launch
    offs, lanes = _active(B, m, off)
    if not len(offs):
        return mem.to_value(mem.flat.dtype.type(0))
    _check(B, A, idx, m, site, offs, lanes)
    if L.uninit and mem.written is not None:
        _check_uninit(B, mem, offs, lanes, idx, site)
    if L.race and mem.space in ("global", "shared"):
        tid, stamp = _threads(B, lanes)
        sh = mem.get_shadow(L.shadow_dtype)
        sh.read(L, mem, offs, tid, stamp, site, _index_at(idx, lanes))
    if m is None or not (off.__class__ is ndarray and off.ndim):
        return mem.to_value(mem.flat[off])
    return mem.to_value(mem.flat[np.where(m, off, offs[0])])


def store(B, A: ArrayRef, idx: tuple, v, m, site: int) -> None:
    """``A[idx] = v`` for the lanes in mask ``m``."""
    off = _offset(A, idx)
    mem = A.mem
    L = B.launch
    offs, lanes = _active(B, m, off)
    if not len(offs):
        return
    if mem.space == "const":
        raise errors.KernelRuntimeError("constant arrays are read-only")
    _check(B, A, idx, m, site, offs, lanes)
    if v.__class__ is ndarray and v.ndim and lanes is not None:
        v = v[lanes]
    raw = mem.to_raw(v)
    if L.race and mem.space in ("global", "shared"):
        tid, stamp = _threads(B, lanes)
        sh = mem.get_shadow(L.shadow_dtype)
        new = np.broadcast_to(np.asarray(raw).astype(mem.flat.dtype, copy=False), offs.shape)
        sh.write(L, mem, offs, tid, stamp, site, False, _index_at(idx, lanes), new)
    if mem.written is not None:
        mem.written[offs] = True
    mem.flat[offs] = raw


def apply_rmw(op: str, old, v, extra):
    """The new value of an atomic: the C++ header's definition of each operation."""
    if op == "add":
        return old + v
    if op == "sub":
        return old - v
    if op == "max":
        return ops.sel(v > old, v, old)
    if op == "min":
        return ops.sel(v < old, v, old)
    if op == "exch":
        return v
    if op == "and_":
        return old & v
    if op == "or_":
        return old | v
    if op == "xor":
        return old ^ v
    if op == "inc":
        return ops.sel(old >= v, old.dtype.type(0), old + old.dtype.type(1))
    if op == "dec":
        return ops.sel((old == 0) | (old > v), v, old - old.dtype.type(1))
    if op == "nanmax":  # a NaN is a missing value: the other one is kept
        return ops.sel((v > old) | (old != old), v, old)
    if op == "nanmin":
        return ops.sel((v < old) | (old != old), v, old)
    if op == "cas":  # v is the compare value, extra the new one
        return ops.sel(old == v, extra, old)
    raise NotImplementedError(op)


_ACCUMULATE = {"add": np.add, "and_": np.bitwise_and, "or_": np.bitwise_or,
               "xor": np.bitwise_xor}
_AT = {"add": np.add, "sub": np.subtract, "and_": np.bitwise_and, "or_": np.bitwise_or,
       "xor": np.bitwise_xor}


def atomic(B, op: str, A: ArrayRef, idx: tuple, vals: tuple, m, site: int, used: bool):
    """An atomic read-modify-write by every lane in ``m``, serialized in lane order: each lane
    sees the value the lanes before it left. Returns every lane's old value."""
    off = _offset(A, idx)
    mem = A.mem
    L = B.launch
    offs, lanes = _active(B, m, off)
    if not len(offs):
        return mem.to_value(mem.flat.dtype.type(0))
    _check(B, A, idx, m, site, offs, lanes)
    if L.uninit and mem.written is not None:
        _check_uninit(B, mem, offs, lanes, idx, site)
    if L.race:
        tid, stamp = _threads(B, lanes)
        sh = mem.get_shadow(L.shadow_dtype)
        sh.write(L, mem, offs, tid, stamp, site, True, _index_at(idx, lanes))
    if mem.written is not None:
        mem.written[offs] = True
    n = len(offs)
    vs = [np.broadcast_to(x, (B.L,))[lanes] if lanes is not None else
          np.broadcast_to(x, (n,)) for x in vals]
    flat = mem.flat
    v = vs[0]
    extra = vs[1] if len(vs) > 1 else None
    native = flat.dtype == ops.value_dtype(mem.elem)
    if not used and op in _AT and native:
        # the old values are not needed: NumPy's unbuffered in-place ufunc applies the
        # updates one after another in lane order, which is the serialization we promise
        _AT[op].at(flat, offs, v)
        return None
    old = np.empty(n, ops.value_dtype(mem.elem))
    order = np.argsort(offs, kind="stable")
    so = offs[order]
    first = np.ones(n, bool)
    first[1:] = so[1:] != so[:-1]
    starts = np.flatnonzero(first)
    if len(starts) == n:  # every lane on its own element: one vectorized step
        cur = mem.to_value(flat[offs])
        old[:] = cur
        flat[offs] = mem.to_raw(apply_rmw(op, cur, v, extra))
    elif op in _ACCUMULATE and native and len(starts) < 64:
        # few hot elements (a histogram): per element, a running reduction in lane order
        ends = np.append(starts[1:], n)
        for s, e in zip(starts, ends):
            sel = order[s:e]
            o = int(so[s])
            seq = np.empty(e - s + 1, flat.dtype)
            seq[0] = flat[o]
            seq[1:] = v[sel]
            run = _ACCUMULATE[op].accumulate(seq, dtype=flat.dtype)
            old[sel] = run[:-1]
            flat[o] = run[-1]
    else:
        # rounds: the r-th lane on each element updates in round r (elements distinct)
        rank = np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))
        for r in range(int(rank.max()) + 1):
            sel = order[rank == r]
            o = offs[sel]
            cur = mem.to_value(flat[o])
            old[sel] = cur
            flat[o] = mem.to_raw(apply_rmw(op, cur, v[sel], None if extra is None else
                                        extra[sel]))
    if lanes is None:
        return old
    out = np.zeros(B.L, old.dtype)
    out[lanes] = old
    return out


def view(B, A: ArrayRef, parts: tuple, m, site: int) -> ArrayRef:
    """A slice of ``A``: per axis an index (the axis is dropped) or a (start, stop, step)
    triple, clamped by Python's rules as tt::slice_start/slice_len do."""
    origin = A.origin
    shape, strides = [], []
    for k, p in enumerate(parts):
        n, s = A.shape[k], A.strides[k]
        if p.__class__ is tuple:
            start, stop, step = p
            a = np.clip(ops.sel(start < 0, start + n, start), 0, n)
            e = np.clip(ops.sel(stop < 0, stop + n, stop), 0, n)
            ln = ops.sel(e > a, (e - a + step - 1) // step, _I64(0))
            origin = origin + a * s
            shape.append(ln)
            strides.append(step * s)
        else:
            if B.launch.bounds:
                bad = (p < 0) | (p >= n)
                if m is not None:
                    bad = bad & m
                if np.any(bad):
                    lane = int(np.argmax(np.broadcast_to(bad, (B.L,))))
                    checks.raise_oob(B.launch, site, B.gtid[lane], [_lane_value(p, lane)],
                                     [_lane_value(n, lane)])
            origin = origin + p * s
    return ArrayRef(A.mem, origin, tuple(shape), tuple(strides))


def assign_array(m, new: ArrayRef, old: ArrayRef | None, live=None) -> ArrayRef:
    """A masked assignment of an array variable: lanes outside ``m`` keep their old view
    (``live``: the lanes that have not returned; the others never read it again)."""
    if m is None or old is None or new is old:
        return new
    if live is not None and m.__class__ is np.ndarray and not (live & ~m).any():
        return new
    if new.mem is not old.mem:
        raise errors.KernelRuntimeError(
            "the simulator cannot bind one array variable to different arrays in different "
            f"threads of a block ({old.mem.name} and {new.mem.name}): bind it to the same array "
            "in every thread of a block (a list of arrays indexed by a block-uniform value), "
            "or use a variable for each array")
    return ArrayRef(new.mem, np.where(m, new.origin, old.origin),
                    tuple(np.where(m, a, b) for a, b in zip(new.shape, old.shape)),
                    tuple(np.where(m, a, b) for a, b in zip(new.strides, old.strides)))
