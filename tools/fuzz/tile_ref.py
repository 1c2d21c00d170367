"""The float64 reference of the tile fuzzer: every value with a bound on how far a correct
target may be from it.

A reference value (``R``) is a NumPy array of exact values (float64 for floats; integers in
their own dtype, so that they wrap as the kernel's do; bools), a running error bound ``err``
and a mask ``ok``. ``err`` bounds, to first order, the distance between the exact value and
what any correct execution in the kernel's dtypes computes: each operation adds its rounding
(``U[dtype] * |result|`` plus ``TINY[dtype]`` for gradual underflow) to the errors of its
operands carried through the operation's derivative (running error analysis). Where the
result is not determined by the semantics, ``ok`` is false and the element is not compared:

- it depends on an undetermined value (a load's ``UNDETERMINED`` padding);
- a discontinuous operation (``floor``, ``//`` and ``%`` of floats, a float-to-int cast, a
  comparison, ``argmax``) sits within its operand's error of the jump;
- a float may overflow its dtype (above half its largest value), or an integer cast from a
  float may be out of range;
- it is arithmetic on an infinity or a NaN (padding modes ``NAN``, ``POS_INF``, ``NEG_INF``):
  those are followed exactly only through loads, stores, casts, ``maximum``/``minimum``, the
  ``max``/``min`` reductions, comparisons, ``isnan`` and ``where``.

Matrix products and sums accumulate in float32 (16-bit inputs, as the tile language
specifies); their bound is ``(K + 2) * U32 * sum |a||b|`` (Higham's ``gamma_K``, for any
order of summation), plus the operands' errors carried through. Math functions add
``MATH_ULPS`` float32 ulps (CUDA's single-precision functions are within 2 ulp, NumPy's within
1; an ulp is at most ``2 U32 |x|``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
U = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}
TINY = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149,
        "float64": 2.0 ** -1074}
BIG = {"float16": 32000.0, "bfloat16": 1e37, "float32": 1e37, "float64": 1e300}  # ~half the max
U32 = 2.0 ** -24
MATH_ULPS = 4
INT_LIMIT = {"int8": 127.0, "int32": 2.0 ** 31 - 256, "int64": 2.0 ** 62}


def acc_u(dtype: str) -> float:
    """The unit roundoff of the arithmetic a dtype's sums and math run in (float32 for the
    16-bit floats)."""
    return U["float64"] if dtype == "float64" else U32


@dataclass
class R:
    """A reference tile (or array): exact values, error bounds, and which elements count."""

    dtype: str
    val: np.ndarray
    err: np.ndarray
    ok: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.val.shape

    def apply(self, fn) -> R:
        """The same elements moved by ``fn`` (a reshape, a transpose, an index)."""
        return R(self.dtype, fn(self.val), fn(self.err), fn(self.ok))

    def copy(self) -> R:
        return R(self.dtype, self.val.copy(), self.err.copy(), self.ok.copy())


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a kernel dtype name (bfloat16 through ml_dtypes)."""
    if dtype == "bfloat16":
        import ml_dtypes  # noqa: PLC0415

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def exact(dtype: str, val) -> R:
    """Values the kernel holds exactly (inputs, constants, indices)."""
    if is_float(dtype):
        v = np.asarray(val).astype(np.float64)
    elif dtype == "bool":
        v = np.asarray(val, bool)
    else:
        v = np.asarray(val).astype(dtype)
    return R(dtype, v, np.zeros(v.shape), np.ones(v.shape, bool))


def const(dtype: str, value, shape=()) -> R:
    return exact(dtype, np.full(shape, value))


def _bc(*rs: R):
    shape = np.broadcast_shapes(*(r.shape for r in rs))
    return [r.apply(lambda a, s=shape: np.broadcast_to(a, s)) for r in rs]


def _finite(*rs: R) -> np.ndarray:
    out = np.ones(np.broadcast_shapes(*(r.shape for r in rs)), bool)
    for r in rs:
        if is_float(r.dtype):
            out = out & np.isfinite(r.val)
    return out


def finish(dtype: str, val, err, ok, rounding: bool = True) -> R:
    """A float result: its rounding added, elements that may overflow (or whose bound is not
    finite) dropped."""
    val = np.asarray(val, np.float64)
    with np.errstate(all="ignore"):
        err = np.asarray(err, np.float64) + (U[dtype] * np.abs(val) + TINY[dtype]
                                             if rounding else 0.0)
        finite = np.isfinite(val)
        ok = ok & (~finite | (np.isfinite(err) & (np.abs(val) + err < BIG[dtype])))
    err = np.where(finite & ok, err, 0.0)
    return R(dtype, val, np.broadcast_to(err, val.shape).copy(),
             np.broadcast_to(ok, val.shape).copy())


def _ints(dtype: str, val, *rs: R) -> R:
    ok = np.ones(np.shape(val), bool)
    for r in rs:
        ok = ok & r.ok
    val = np.asarray(val).astype(dtype)
    return R(dtype, val, np.zeros(val.shape), np.broadcast_to(ok, val.shape).copy())


# ---- elementwise --------------------------------------------------------------------------------

def binary(op: str, a: R, b: R) -> R:
    """``a op b`` of one dtype (broadcast): ``+ - * / // % & | ^ << >> max min``."""
    a, b = _bc(a, b)
    with np.errstate(all="ignore"):
        if not is_float(a.dtype):
            if op == "/":  # integer tiles divide to float32
                val = a.val.astype(np.float64) / b.val.astype(np.float64)
                # both operands round to float32 first when large, then the quotient
                return finish("float32", val, 2 * U32 * np.abs(val), a.ok & b.ok & (b.val != 0))
            fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide,
                  "%": np.mod, "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
                  "<<": np.left_shift, ">>": np.right_shift, "max": np.maximum,
                  "min": np.minimum}[op]
            return _ints(a.dtype, fn(a.val, b.val), a, b)
        x, y, ex, ey = a.val, b.val, a.err, b.err
        ok = a.ok & b.ok
        if op in ("max", "min"):
            # Python's rule: max(x, y) is y only where y > x (a NaN x stays, a NaN y goes)
            pick_b = y > x if op == "max" else y < x
            return R(a.dtype, np.where(pick_b, y, x), np.maximum(ex, ey), ok)
        ok = ok & _finite(a, b)
        if op == "+":
            return finish(a.dtype, x + y, ex + ey, ok)
        if op == "-":
            return finish(a.dtype, x - y, ex + ey, ok)
        if op == "*":
            return finish(a.dtype, x * y, np.abs(x) * ey + np.abs(y) * ex + ex * ey, ok)
        ok = ok & (np.abs(y) > 2 * ey) & (y != 0)
        q = x / y
        eq = (ex + np.abs(q) * ey) / np.maximum(np.abs(y) - ey, 1e-300)
        if op == "/":
            return finish(a.dtype, q, eq, ok)
        # // and %: the floor of the quotient must be known
        margin = 2 * eq + 4 * U32 * np.abs(q) + 1e-12
        fl = np.floor(q)
        ok = ok & (np.floor(q - margin) == np.floor(q + margin))
        if op == "//":
            return finish(a.dtype, fl, np.zeros_like(q), ok, rounding=False)
        r = np.mod(x, y)
        return finish(a.dtype, r, ex + np.abs(fl) * ey + U[a.dtype] * np.abs(y), ok)


def unary(op: str, a: R) -> R:
    """``-x``, ``abs(x)``, ``~x`` (integers)."""
    with np.errstate(all="ignore"):
        if not is_float(a.dtype):
            fn = {"neg": np.negative, "abs": np.abs, "invert": np.invert}[op]
            return _ints(a.dtype, fn(a.val), a)
        val = -a.val if op == "neg" else np.abs(a.val)
        return R(a.dtype, val, a.err.copy(), a.ok.copy())


def _math_val_err(fn: str, x, e):
    """``fn(x)`` and the error carried from an argument within ``e`` of ``x``; ``None`` for the
    error where the argument must be exact (floor, ceil: checked by the caller)."""
    if fn == "exp":
        return np.exp(x), np.exp(x + e) * e
    if fn == "exp2":
        return np.exp2(x), np.log(2) * np.exp2(x + e) * e
    if fn in ("log", "log2"):
        k = 1.0 if fn == "log" else 1 / np.log(2)
        return (np.log(x) if fn == "log" else np.log2(x)), k * e / np.maximum(x - e, 1e-300)
    if fn == "sqrt":
        lo = np.maximum(x - e, 0.0)
        return np.sqrt(x), np.where(lo > 0, e / (2 * np.sqrt(lo)), np.sqrt(e))
    if fn == "rsqrt":
        lo = np.maximum(x - e, 1e-300)
        return 1 / np.sqrt(x), 0.5 * e / lo ** 1.5
    if fn in ("tanh", "sin", "cos"):
        return getattr(np, fn)(x), e
    if fn in ("sinh", "cosh"):
        return getattr(np, fn)(x), np.cosh(np.abs(x) + e) * e
    if fn in ("floor", "ceil"):
        return getattr(np, fn)(x), None
    raise ValueError(fn)


def math(fn: str, a: R) -> R:
    """A math function of a float tile (the generator guards each argument's domain)."""
    with np.errstate(all="ignore"):
        x, e = a.val, a.err
        ok = a.ok & _finite(a)
        val, carried = _math_val_err(fn, x, e)
        if fn in ("log", "log2", "rsqrt"):
            ok = ok & (x - e > 0.5 * x) & (x > 0)
        if carried is None:
            f = getattr(np, fn)
            ok = ok & (f(x - e) == f(x + e))
            return finish(a.dtype, val, np.zeros_like(x), ok, rounding=False)
        return finish(a.dtype, val, carried + 2 * MATH_ULPS * acc_u(a.dtype) * np.abs(val), ok)


def compare(op: str, a: R, b: R) -> R:
    """A comparison: known where the operands are further apart than their errors (or both
    exact, or one is NaN)."""
    a, b = _bc(a, b)
    fn = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
          "==": np.equal, "!=": np.not_equal}[op]
    with np.errstate(all="ignore"):
        val = fn(a.val, b.val)
        ok = a.ok & b.ok
        if is_float(a.dtype):
            e = a.err + b.err
            nan = np.isnan(a.val) | np.isnan(b.val)
            ok = ok & ((np.abs(a.val - b.val) > 2 * e) | (e == 0) | nan)
    return R("bool", val, np.zeros(val.shape), ok)


def where(c: R, a: R, b: R) -> R:
    c, a, b = _bc(c, a, b)
    return R(a.dtype, np.where(c.val, a.val, b.val), np.where(c.val, a.err, b.err),
             c.ok & np.where(c.val, a.ok, b.ok))


def isnan(a: R) -> R:
    return R("bool", np.isnan(a.val), np.zeros(a.shape), a.ok.copy())


def cast(a: R, dtype: str) -> R:
    """``a.astype(dtype)``: floats round to nearest; a float to an integer truncates, known
    where the truncation and the range are."""
    with np.errstate(all="ignore"):
        if is_float(a.dtype) and is_float(dtype):
            wider = U[dtype] <= U[a.dtype]
            return finish(dtype, a.val, a.err, a.ok, rounding=not wider)
        if is_float(dtype):  # from an integer
            v = a.val.astype(np.float64)
            return finish(dtype, v, np.zeros_like(v), a.ok.copy())
        if is_float(a.dtype):  # to an integer
            x, e = a.val, a.err
            ok = (a.ok & np.isfinite(x) & (np.abs(x) + e < INT_LIMIT[dtype])
                  & (np.trunc(x - e) == np.trunc(x + e)))
            v = np.where(ok, np.trunc(np.where(np.isfinite(x), x, 0)), 0)
            return R(dtype, v.astype(dtype), np.zeros(x.shape), ok)
        return _ints(dtype, a.val, a)


# ---- reductions and products --------------------------------------------------------------------

def reduce(op: str, a: R, axis, keepdims: bool) -> R:
    """``sum``/``max``/``min``/``argmax``/``argmin`` along ``axis`` (an int or None)."""
    if axis is None:
        flat = a.apply(lambda v: v.reshape(-1))
        out = reduce(op, flat, 0, False)
        if keepdims:
            out = out.apply(lambda v: v.reshape((1,) * a.val.ndim))
        return out
    red = dict(axis=axis, keepdims=keepdims)
    okall = np.all(a.ok, **red)
    with np.errstate(all="ignore"):
        if op in ("argmax", "argmin"):
            return _argext(op, a, axis, keepdims)
        if not is_float(a.dtype):
            fn = {"sum": np.sum, "max": np.max, "min": np.min}[op]
            kw = dict(dtype=a.dtype) if op == "sum" else {}
            return _ints(a.dtype, fn(a.val, **red, **kw), R(a.dtype, a.val, a.err, okall))
        if op in ("max", "min"):
            fn = np.fmax if op == "max" else np.fmin  # NaNs ignored, as fmaxf
            return R(a.dtype, fn.reduce(a.val, **red), np.max(a.err, **red), okall)
        n = a.val.shape[axis]
        ok = okall & np.all(np.isfinite(a.val), **red)
        val = np.sum(a.val, **red)
        err = np.sum(a.err, **red) + (n + 2) * acc_u(a.dtype) * np.sum(np.abs(a.val), **red)
        return finish(a.dtype, val, err, ok)


def _argext(op: str, a: R, axis: int, keepdims: bool) -> R:
    """The first index of the extreme: known where no other element may be within the errors
    of it (ties of exact values are fine: the first wins everywhere)."""
    x = a.val if op == "argmax" else -a.val if is_float(a.dtype) else a.val
    if not is_float(a.dtype):
        idx = np.argmax(x, axis=axis) if op == "argmax" else np.argmin(x, axis=axis)
        ok = np.all(a.ok, axis=axis)
    else:
        idx = np.argmax(x, axis=axis)
        best = np.take_along_axis(x, np.expand_dims(idx, axis), axis)
        ebest = np.take_along_axis(a.err, np.expand_dims(idx, axis), axis)
        rival = (x + a.err >= best - ebest) & ((a.err > 0) | (ebest > 0))
        rival &= np.arange(x.shape[axis]).reshape(
            [-1 if d == axis else 1 for d in range(x.ndim)]) != np.expand_dims(idx, axis)
        ok = (np.all(a.ok, axis=axis) & ~np.any(rival, axis=axis)
              & ~np.any(np.isnan(x), axis=axis))
    if keepdims:
        idx, ok = np.expand_dims(idx, axis), np.expand_dims(ok, axis)
    return R("int32", idx.astype(np.int32), np.zeros(idx.shape), ok)


def cumsum(a: R, axis: int) -> R:
    """The inclusive prefix sum along ``axis`` (bounded as if each step rounded to the tile's
    dtype)."""
    with np.errstate(all="ignore"):
        ok = np.logical_and.accumulate(a.ok, axis=axis)
        if not is_float(a.dtype):
            return _ints(a.dtype, np.cumsum(a.val, axis=axis, dtype=a.dtype),
                         R(a.dtype, a.val, a.err, ok))
        ok = ok & np.logical_and.accumulate(np.isfinite(a.val), axis=axis)
        n = np.arange(1, a.val.shape[axis] + 1).reshape(
            [-1 if d == axis else 1 for d in range(a.val.ndim)])
        val = np.cumsum(a.val, axis=axis)
        err = np.cumsum(a.err, axis=axis) + (n + 1) * U[a.dtype] * np.cumsum(np.abs(a.val),
                                                                            axis=axis)
        return finish(a.dtype, val, err, ok)


def matmul(a: R, b: R, acc: R | None, dtype: str) -> R:
    """``a @ b (+ acc)`` accumulated in float32; the result in ``dtype``."""
    with np.errstate(all="ignore"):
        k = a.val.shape[-1]
        ok = (np.all(a.ok & np.isfinite(a.val), axis=1)[:, None]
              & np.all(b.ok & np.isfinite(b.val), axis=0)[None, :])
        aa, ab = np.abs(a.val), np.abs(b.val)
        val = a.val @ b.val
        err = aa @ b.err + a.err @ ab + a.err @ b.err
        mag = aa @ ab
        if acc is not None:
            ok = ok & acc.ok & np.isfinite(acc.val)
            val = val + acc.val
            err = err + acc.err
            mag = mag + np.abs(acc.val)
        err = err + (k + 2) * acc_u(dtype) * mag
        return finish(dtype, val, err, ok)


# ---- memory -------------------------------------------------------------------------------------

PADDING = {"ZERO": 0.0, "NEG_ZERO": -0.0, "NAN": np.nan, "POS_INF": np.inf, "NEG_INF": -np.inf}


def load(arr: R, index: tuple[int, ...], shape: tuple[int, ...], order: tuple[int, ...],
         padding: str) -> R:
    """``ct.load``: element ``r`` is ``arr[index[d] * shape[d] + r[d]]`` with tile axis ``d``
    on array axis ``order[d]``; elements outside get the padding (``UNDETERMINED``: not
    compared). ``shape == ()`` is the one element at ``index``."""
    if shape == ():
        return arr.apply(lambda v: v[tuple(index)].copy())
    view = arr.apply(lambda v: v.transpose(order))
    gi = [index[d] * shape[d] + np.arange(shape[d]) for d in range(len(shape))]
    inb = np.ones(shape, bool)
    for d, g in enumerate(gi):
        g = g.reshape([-1 if e == d else 1 for e in range(len(shape))])
        inb = inb & (g < view.val.shape[d])
    clipped = np.ix_(*[np.minimum(g, view.val.shape[d] - 1) for d, g in enumerate(gi)])
    out = view.apply(lambda v: v[clipped].copy())
    if padding == "UNDETERMINED":
        out.ok &= inb
    else:
        pad = PADDING[padding] if is_float(arr.dtype) else 0
        out.val[~inb] = pad
        out.err[~inb] = 0.0
        out.ok[~inb] = True
    return out


def store(arr: R, index: tuple[int, ...], tile: R, order: tuple[int, ...] | None = None
          ) -> None:
    """``ct.store`` of ``tile`` (of the array's dtype) at ``index`` (``load``'s inverse, with
    its ``order``); elements outside are skipped."""
    if order is not None:
        arr = arr.apply(lambda v: v.transpose(order))  # views: the writes land in ``arr``
    shape = tile.shape
    sl = []
    for d in range(len(shape)):
        lo = index[d] * shape[d]
        sl.append(slice(lo, min(lo + shape[d], arr.val.shape[d])))
    sl = tuple(sl)
    if any(s.stop <= s.start for s in sl):
        return  # wholly outside (the generator never stores so; cuTile leaves it undefined)
    part = tuple(slice(0, s.stop - s.start) for s in sl)
    for name in ("val", "err", "ok"):
        getattr(arr, name)[sl] = getattr(tile, name)[part]


def gather(arr: R, idx: list[R], mask: R | None, pad: float) -> R:
    """``ct.gather``: ``arr[idx...]`` where the mask holds and every index is inside, else
    ``pad``."""
    full = _bc(*idx, *([mask] if mask else []))
    idx, mask = full[:len(idx)], (full[-1] if mask else None)
    inb = np.ones(idx[0].shape, bool)
    ok = np.ones(idx[0].shape, bool)
    for d, i in enumerate(idx):
        inb &= (i.val >= 0) & (i.val < arr.val.shape[d])
        ok &= i.ok
    take = inb & (mask.val if mask else True)
    if mask:
        ok &= mask.ok
    where_ = tuple(np.where(take, i.val, 0) for i in idx)
    out = arr.apply(lambda v: v[where_])
    out.val = np.where(take, out.val, pad)
    out.err = np.where(take, out.err, 0.0)
    out.ok = ok & np.where(take, out.ok, True)
    return out


def scatter(arr: R, idx: list[R], value: R, mask: R | None) -> None:
    """``ct.scatter`` of ``value`` (converted to the array's dtype) with unique indices. An
    unknown index or mask leaves the elements it may hit unknown."""
    full = _bc(*idx, value, *([mask] if mask else []))
    idx, value = full[:len(idx)], full[len(idx)]
    mask = full[-1] if mask else None
    inb = np.ones(value.shape, bool)
    known = np.ones(value.shape, bool)
    for d, i in enumerate(idx):
        inb &= (i.val >= 0) & (i.val < arr.val.shape[d])
        known &= i.ok
    if not known.all():
        arr.ok[...] = False
        return
    take = inb & (mask.val if mask else True)
    sel = tuple(i.val[take] for i in idx)
    arr.val[sel] = value.val[take]
    arr.err[sel] = value.err[take]
    arr.ok[sel] = value.ok[take]
    if mask:
        unsure = inb & ~mask.ok
        arr.ok[tuple(i.val[unsure] for i in idx)] = False


ATOMIC = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}


def atomic(arr: R, op: str, idx: R, update: R, mags: np.ndarray) -> None:
    """``ct.atomic_<op>(arr, (idx,), update)`` on a 1-d array, in-bounds indices only. Float
    additions (any order) are bounded at the end from ``mags`` (the sum of the magnitudes
    and the count of additions per element: ``finish_atomics``)."""
    idx, update = _bc(idx, update)
    if not idx.ok.all():
        arr.ok[...] = False
        return
    inb = (idx.val >= 0) & (idx.val < arr.val.shape[0])
    i, u = idx.val[inb], update.apply(lambda v: v[inb])
    with np.errstate(all="ignore"):
        if is_float(arr.dtype):
            np.add.at(arr.val, i, u.val)
            np.add.at(arr.err, i, u.err)
            np.add.at(mags, (0, i), np.abs(u.val))
            np.add.at(mags, (1, i), 1)
            np.logical_and.at(arr.ok, i, u.ok & np.isfinite(u.val))
        else:
            ATOMIC[op].at(arr.val, i, u.val)
            np.logical_and.at(arr.ok, i, u.ok)


def finish_atomics(arr: R, mags: np.ndarray) -> None:
    """Each float atomic addition rounds a partial sum no larger than all the magnitudes."""
    arr.err += mags[1] * U[arr.dtype] * (mags[0] + np.abs(arr.val))


def extract(a: R, index: tuple[int, ...], shape: tuple[int, ...]) -> R:
    """``ct.extract``: the subtile at cell ``index`` of the grid ``shape`` cuts ``a`` into."""
    sl = tuple(slice(i * s, (i + 1) * s) for i, s in zip(index, shape))
    return a.apply(lambda v: v[sl].copy())


def insert(a: R, index: tuple[int, ...], value: R) -> R:
    """``ct.insert``: ``a`` with the subtile at cell ``index`` replaced by ``value``."""
    out = a.copy()
    sl = tuple(slice(i * s, (i + 1) * s) for i, s in zip(index, value.shape))
    out.val[sl], out.err[sl], out.ok[sl] = value.val, value.err, value.ok
    return out


def cat(a: R, b: R, axis: int) -> R:
    return R(a.dtype, np.concatenate([a.val, b.val], axis), np.concatenate([a.err, b.err], axis),
             np.concatenate([a.ok, b.ok], axis))
