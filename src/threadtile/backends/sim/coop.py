"""threadtile.coop's primitives in the simulator: their semantics in NumPy (each group's
values as one row: a block's, or a logical warp's, items in order), run by the lockstep mode
(``run``, what the generated code calls) and by python mode (``python_call``).

A primitive is a collective: every thread of the block (every lane of the logical warp)
calls it together, or ``BarrierDivergenceError`` names the ones that did not. The block
primitives whose C++ holds a ``__syncthreads()`` (all but the direct and striped loads and
stores) also order memory as a barrier does, so the race check sees what the GPU guarantees.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import errors
from ...ir import coop as ircoop
from ...lang.collectives import KEYWORDS, SIGNATURES
from . import memory

_I64 = np.int64


# ---------------------------------------------------------------------------------------------
# The semantics, over rows
# ---------------------------------------------------------------------------------------------

def binary(op, fn, dtype):
    """The operator on two arrays of one shape: CUB's sum (in the dtype: integers wrap), its
    min/max (``b < a ? b : a``), or the user's function ``fn(a, b)`` over flat arrays."""
    if op == "sum":
        return lambda a, b: (a + b).astype(dtype)
    if op == "min":
        return lambda a, b: np.where(b < a, b, a)
    if op == "max":
        return lambda a, b: np.where(a < b, b, a)

    def call(a, b):
        with np.errstate(all="ignore"):
            r = fn(a.ravel(), b.ravel())
        return np.broadcast_to(np.asarray(r), (a.size,)).astype(dtype).reshape(a.shape)
    return call


def reduce_rows(x: np.ndarray, opf) -> np.ndarray:
    """Each row folded by the associative ``opf``, neighbours first (a tree that keeps the
    operands' order, as CUB's reductions do)."""
    while x.shape[1] > 1:
        n = x.shape[1]
        h = n // 2
        y = opf(x[:, 0:2 * h:2], x[:, 1:2 * h:2])
        x = np.concatenate([y, x[:, -1:]], axis=1) if n % 2 else y
    return x[:, 0]


def scan_rows(x: np.ndarray, opf, inclusive: bool, init=None) -> np.ndarray:
    """Each row's inclusive prefixes under the associative ``opf`` (by doubling strides, so
    a user's operator runs once per step over every row); exclusive ones start at ``init``."""
    with np.errstate(over="ignore"):
        n = x.shape[1]
        d = 1
        while d < n:
            y = x.copy()
            y[:, d:] = opf(x[:, :-d], x[:, d:])
            x = y
            d *= 2
    if inclusive:
        return x
    out = np.empty_like(x)
    out[:, :1] = init
    if n > 1:
        out[:, 1:] = opf(np.broadcast_to(np.asarray(init, x.dtype), x[:, :-1].shape).copy(),
                         x[:, :-1])
    return out


def sum_scan_rows(x: np.ndarray, inclusive: bool) -> np.ndarray:
    with np.errstate(over="ignore"):
        inc = np.cumsum(x, axis=1, dtype=x.dtype)
    if inclusive:
        return inc
    out = np.zeros_like(x)
    out[:, 1:] = inc[:, :-1]
    return out


def radix_keys(keys: np.ndarray, begin: int, end: int, descending: bool) -> np.ndarray:
    """The unsigned digits CUB's radix sort orders ``keys`` by: signed integers with their
    sign bit flipped, floats as IEEE order (-0.0 as 0.0; NaNs by their bits), bits
    ``[begin, end)`` of that, inverted for a descending sort."""
    dt = keys.dtype
    nbits = dt.itemsize * 8
    u = np.dtype(f"u{dt.itemsize}")
    bits = np.ascontiguousarray(keys).view(u).copy()
    high = u.type(1) << u.type(nbits - 1)
    if dt.kind == "i":
        bits ^= high
    elif dt.kind == "f":
        bits = np.where(bits == high, u.type(0), bits)  # -0.0 sorts as 0.0
        bits = np.where(bits & high, ~bits, bits | high)
    width = end - begin
    mask = np.iinfo(u).max if width == nbits else u.type((1 << width) - 1)
    bits = (bits >> u.type(begin)) & mask
    return (mask - bits) if descending else bits


def merge_order(keys: np.ndarray, less) -> np.ndarray:
    """The stable order of each row under the strict weak order ``less`` (vectorized over
    pairs): an item's place is the number of items before it in the order (less than it, or
    equivalent and earlier)."""
    g, n = keys.shape
    rank = np.zeros((g, n), _I64)
    j = np.arange(n)
    for i in range(n):  # one item against its whole row at a time: n calls of ``less``
        xi = np.repeat(keys[:, i:i + 1], n, axis=1)
        lt = less(keys, xi)  # keys[j] < keys[i]
        gt = less(xi, keys)
        eq_before = ~lt & ~gt & (j < i)
        rank[:, i] = (lt | eq_before).sum(axis=1)
    order = np.empty_like(rank)
    np.put_along_axis(order, rank, np.broadcast_to(j, (g, n)).copy(), axis=1)
    return order


def _less(fn):
    def less(a, b):
        with np.errstate(all="ignore"):
            r = fn(a.ravel(), b.ravel())
        return np.broadcast_to(np.asarray(r).astype(bool), (a.size,)).reshape(a.shape)
    return less


# ---------------------------------------------------------------------------------------------
# Lockstep mode
# ---------------------------------------------------------------------------------------------

_SYNCS = ("coop.block.reduce", "coop.block.scan", "coop.block.radix_sort",
          "coop.block.merge_sort", "coop.block.exchange")


def _what(call) -> str:
    return ircoop.called(call)


def run(B, m, k: int, fn, *args):
    """The primitive ``k`` of the program (``Program.coop_ops``) by the lanes of ``m``."""
    call, site = B.state.prog.coop_ops[k]
    name = call.name
    if name.startswith("coop.block."):
        want = call.attrs["block"]
        if tuple(B.launch.block) != tuple(want):  # (the launch refused it already)
            raise errors.LaunchError(ircoop.block_mismatch("the kernel", want,
                                                           B.launch.block))
        sync = name in _SYNCS or call.attrs.get("algorithm") == "transpose"
        B.barrier(m, site, what=_what(call), sync=sync)
    else:
        _warp_check(B, m, site, call)
    return _LOCKSTEP[name.split(".", 2)[2] if name.startswith("coop.block.") else
                     "warp_" + name.split(".", 2)[2]](B, m, call, site, fn, args)


def _warp_check(B, m, site, call) -> None:
    w = call.attrs["warp"]
    if B.T % w:
        raise errors.LaunchError(f"{_what(call)} with threads_in_warp={w} needs blocks of a "
                                 f"multiple of {w} threads; launched with {B.T}")
    if m is None or not B.launch.barrier:
        return
    groups = m.reshape(-1, w)
    cnt = groups.sum(axis=1)
    partial = (cnt > 0) & (cnt < w)
    if partial.any():
        from . import checks  # noqa: PLC0415  (the simulator's error reports)
        g = int(np.argmax(partial))
        lanes = np.arange(g * w, (g + 1) * w)
        missing = lanes[~m[lanes]]
        checks.raise_divergence(
            B.launch, site, int(B.gtid[lanes[0]] // B.T), [int(B.gtid[x]) for x in missing],
            int(cnt[g]), _what(call), f"are on another path. Every lane of a logical warp "
            f"of {w} must call {_what(call)} together")


def _lanes(B, v, dtype) -> np.ndarray:
    return np.broadcast_to(np.asarray(v), (B.L,)).astype(dtype)


def _read_items(B, arr, n: int, m, site) -> np.ndarray:
    """A local array's ``n`` items in every lane: (lanes, n)."""
    dt = arr.mem.flat.dtype
    cols = [_lanes(B, memory.load(B, arr, (_I64(k),), m, site), dt) for k in range(n)]
    return np.stack(cols, axis=1)


def _write_items(B, arr, vals: np.ndarray, m, site) -> None:
    for k in range(vals.shape[1]):
        memory.store(B, arr, (_I64(k),), vals[:, k], m, site)


def _dtype(call):
    return ircoop.dtype_of(call).numpy


def _block_rows(B, call, m, site, arg) -> np.ndarray:
    """The block's values as rows (block, thread * items)."""
    n = call.attrs["items"]
    if n:
        return _read_items(B, arg, n, m, site).reshape(B.nb, B.T * n)
    return _lanes(B, arg, _dtype(call)).reshape(B.nb, B.T)


def _op(B, call, fn):
    user = None if fn is None else (lambda a, b: fn(B, None, a, b))
    return binary(call.attrs["op"], user, _dtype(call))


def _reduce(B, m, call, site, fn, args):
    rows = _block_rows(B, call, m, site, args[0])
    if call.attrs["op"] == "sum":
        with np.errstate(over="ignore"):
            r = rows.sum(axis=1, dtype=rows.dtype)
    else:
        r = reduce_rows(rows, _op(B, call, fn))
    return r[B.blk] if B.nb > 1 else r[0]


def _scan_rows(B, call, fn, rows, init):
    if call.attrs["op"] == "sum":
        return sum_scan_rows(rows, call.attrs["inclusive"])
    return scan_rows(rows, _op(B, call, fn), call.attrs["inclusive"], init)


def _scan(B, m, call, site, fn, args):
    n = call.attrs["items"]
    init = args[-1] if len(args) > (2 if n else 1) else None
    if init is not None:
        init = np.asarray(init, _dtype(call))
    rows = _block_rows(B, call, m, site, args[0])
    out = _scan_rows(B, call, fn, rows, init)
    if not n:
        return out.reshape(-1)
    _write_items(B, args[1], out.reshape(B.L, n), m, site)
    return None


def _sort_apply(B, m, site, arrays, order, n) -> None:
    for arr, rows in arrays:
        _write_items(B, arr, np.take_along_axis(rows, order, axis=1).reshape(B.L, n), m, site)


def _radix_sort(B, m, call, site, fn, args):
    n = call.attrs["items"]
    pairs = call.attrs["values"]
    keys = _block_rows(B, call, m, site, args[0])
    begin, end = int(args[-2]), int(args[-1])
    order = np.argsort(radix_keys(keys, begin, end, call.attrs["descending"]), axis=1,
                       kind="stable")
    arrays = [(args[0], keys)]
    if pairs:
        arrays.append((args[1], _read_items(B, args[1], n, m, site).reshape(B.nb, B.T * n)))
    _sort_apply(B, m, site, arrays, order, n)


def _merge_sort(B, m, call, site, fn, args):
    n = call.attrs["items"]
    keys = _block_rows(B, call, m, site, args[0])
    order = merge_order(keys, _less(lambda a, b: fn(B, None, a, b)))
    arrays = [(args[0], keys)]
    if len(args) > 1:
        arrays.append((args[1], _read_items(B, args[1], n, m, site).reshape(B.nb, B.T * n)))
    _sort_apply(B, m, site, arrays, order, n)


def _tid(B):
    return np.broadcast_to(B.tid, (B.L,))


def _places(B, call, striped: bool) -> list[np.ndarray]:
    """The element of the block's tile item ``k`` of each lane is (blocked or striped)."""
    n = call.attrs["items"]
    t = _tid(B).astype(_I64)
    return [(k * B.T + t) if striped else (t * n + k) for k in range(n)]


def _and(m, c):
    return c if m is None else (m & c)


def _load(B, m, call, site, fn, args):
    g, items, *rest = args
    n = call.attrs["items"]
    alg = call.attrs["algorithm"]
    valid = _lanes(B, rest[0], _I64) if call.attrs["valid"] else None
    # a transposed load reads striped (each element by the thread CUB has read it), then
    # exchanges to blocked
    striped = alg in ("striped", "transpose")
    vals = np.empty((B.L, n), _dtype(call))
    have = np.empty((B.L, n), bool)
    for k, idx in enumerate(_places(B, call, striped)):
        ok = np.ones(B.L, bool) if valid is None else idx < valid
        vals[:, k] = _lanes(B, memory.load(B, g, (idx,), _and(m, ok), site), vals.dtype)
        have[:, k] = ok
    if call.attrs["oob"]:
        vals[~have] = np.asarray(rest[1], vals.dtype)
        have[:] = True
    if alg == "transpose":  # striped -> blocked: element e of the tile to lane e // n, item e % n
        vals = _striped_to_blocked(B, vals, n)
        have = _striped_to_blocked(B, have, n)
    for k in range(n):
        memory.store(B, items, (_I64(k),), vals[:, k], _and(m, have[:, k]), site)


def _striped_to_blocked(B, vals: np.ndarray, n: int) -> np.ndarray:
    # striped: lane t item k holds element k*T + t; blocked: lane t item k holds t*n + k
    tile = vals.reshape(B.nb, B.T, n).transpose(0, 2, 1).reshape(B.nb, B.T * n)
    return tile.reshape(B.nb * B.T, n)


def _blocked_to_striped(B, vals: np.ndarray, n: int) -> np.ndarray:
    tile = vals.reshape(B.nb, B.T * n)
    return tile.reshape(B.nb, n, B.T).transpose(0, 2, 1).reshape(B.nb * B.T, n)


def _store(B, m, call, site, fn, args):
    g, items, *rest = args
    n = call.attrs["items"]
    alg = call.attrs["algorithm"]
    valid = _lanes(B, rest[0], _I64) if call.attrs["valid"] else None
    vals = _read_items(B, items, n, m, site)
    striped = alg in ("striped", "transpose")
    if alg == "transpose":
        vals = _blocked_to_striped(B, vals, n)
    for k, idx in enumerate(_places(B, call, striped)):
        ok = np.ones(B.L, bool) if valid is None else idx < valid
        memory.store(B, g, (idx,), vals[:, k], _and(m, ok), site)


def _exchange(B, m, call, site, fn, args):
    n = call.attrs["items"]
    vals = _read_items(B, args[0], n, m, site)
    if call.attrs["kind"] == "striped_to_blocked":
        vals = _striped_to_blocked(B, vals, n)
    else:
        vals = _blocked_to_striped(B, vals, n)
    _write_items(B, args[1], vals, m, site)


def _warp_rows(B, call, arg) -> np.ndarray:
    return _lanes(B, arg, _dtype(call)).reshape(-1, call.attrs["warp"])


def _warp_reduce(B, m, call, site, fn, args):
    rows = _warp_rows(B, call, args[0])
    if call.attrs["op"] == "sum":
        with np.errstate(over="ignore"):
            r = rows.sum(axis=1, dtype=rows.dtype)
    else:
        r = reduce_rows(rows, _op(B, call, fn))
    return np.repeat(r, call.attrs["warp"])


def _warp_scan(B, m, call, site, fn, args):
    rows = _warp_rows(B, call, args[0])
    init = np.asarray(args[1], _dtype(call)) if len(args) > 1 else None
    return _scan_rows(B, call, fn, rows, init).reshape(-1)


def _warp_merge_sort(B, m, call, site, fn, args):
    n, w = call.attrs["items"], call.attrs["warp"]
    keys = _read_items(B, args[0], n, m, site).reshape(-1, w * n)
    order = merge_order(keys, _less(lambda a, b: fn(B, None, a, b)))
    _write_items(B, args[0], np.take_along_axis(keys, order, axis=1).reshape(B.L, n), m,
                 site)


_LOCKSTEP = {
    "reduce": _reduce, "scan": _scan, "radix_sort": _radix_sort, "merge_sort": _merge_sort,
    "load": _load, "store": _store, "exchange": _exchange, "warp_reduce": _warp_reduce,
    "warp_scan": _warp_scan, "warp_merge_sort": _warp_merge_sort,
}


# ---------------------------------------------------------------------------------------------
# Python mode: every thread's call waits for its group's; the last to arrive computes
# ---------------------------------------------------------------------------------------------

def bind(name: str, args: tuple, kwargs: dict) -> dict:
    """A python-mode call's arguments by parameter name, as the frontend binds them."""
    params, required = SIGNATURES[name]
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} positional arguments")
    out = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params and k not in KEYWORDS:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
        out[k] = v
    if name.startswith("coop.block.") and name.endswith("_scan") and "out" in out and \
            not isinstance(out.get("value"), np.ndarray):
        # a number's scan: (value, op[, initial]) fill the array form's (value, out, op...)
        vals = [out.pop(k) for k in ("out", "op", "initial") if k in out]
        out.update(zip(("op", "initial"), vals))
    if any(p not in out for p in params[:required] if p != "out"):
        raise TypeError(f"{name}() is missing arguments: needs {', '.join(params[:required])}")
    return out


def _block_shape(name: str, a: dict) -> tuple:
    if "threads_per_block" not in a:
        raise TypeError(f"{name}() needs threads_per_block=")
    tpb = a["threads_per_block"]
    shape = (int(tpb),) if np.ndim(tpb) == 0 else tuple(int(x) for x in tpb)
    return shape + (1,) * (3 - len(shape))


def _py_op(op, dtype):
    """A python-mode operator: min/max/sum or the kernel's own Python function per pair."""
    import builtins  # noqa: PLC0415
    import operator  # noqa: PLC0415
    if op is builtins.min or op is builtins.max or op is operator.add or op == "sum":
        kind = "sum" if op in (operator.add, "sum") else op.__name__
        return binary(kind, None, dtype)
    user = getattr(op, "py_func", op)

    def each(a, b):  # on NumPy scalars of the dtype, as the kernel's own values are
        with np.errstate(all="ignore"):
            return np.array([user(x, y) for x, y in zip(a.ravel(), b.ravel())])
    return binary("user", each, dtype)


def python_call(th, name: str, args: tuple, kwargs: dict):
    """``name`` called by python-mode thread ``th``: its part goes to the group's wait
    (pythonic.py's ``_Block.coop_wait``), which hands each thread its result."""
    a = bind(name, args, kwargs)
    verb = name.split(".", 2)[2]
    block = name.startswith("coop.block.")
    if block or verb.startswith("merge_sort"):
        shape = _block_shape(name, a)
        if tuple(shape) != tuple(th.blk.block):
            raise errors.LaunchError(ircoop.block_mismatch("the kernel", shape, th.blk.block))
    w = 0 if block else int(a.get("threads_in_warp", 32))
    if w and th.blk.T % w:
        raise errors.LaunchError(f"coop.{name[5:]}() with threads_in_warp={w} needs blocks of a"
                                 f" multiple of {w} threads; launched with {th.blk.T}")
    arrays = [k for k in ("value", "out", "keys", "values", "items", "src", "dst")
              if isinstance(a.get(k), np.ndarray)]
    mine = {k: np.array(a[k], copy=True) for k in arrays}
    if "value" in a and "value" not in mine:
        mine["value"] = a["value"]
    if verb in ("load", "store") or verb == "exchange":
        mine.pop("src", None)
        mine.pop("dst", None)
    compute = functools.partial(_py_compute, name, verb, a, w)
    site = th._site(f"coop.{name[5:]}()")[:4] + (None,)
    res = th.blk.coop_wait(th.t, site, w, mine, compute)
    return _py_finish(th, verb, a, res)


def _py_compute(name: str, verb: str, a: dict, w: int, parts: dict) -> dict:
    """Every thread's result from every thread's part (``parts``: thread -> its values)."""
    ts = sorted(parts)
    first = parts[ts[0]]
    if verb in ("load", "store"):
        return {t: None for t in ts}  # each thread reads or writes its own elements
    group = w or len(ts)
    if "keys" in first:
        keys = np.stack([parts[t]["keys"] for t in ts]).reshape(-1, group * len(first["keys"]))
        n = len(first["keys"])
        if verb.startswith("radix"):
            bits = radix_keys(keys, int(a.get("begin_bit", 0)),
                              int(a.get("end_bit", keys.dtype.itemsize * 8)),
                              verb.endswith("descending"))
            order = np.argsort(bits, axis=1, kind="stable")
        else:
            cmp = getattr(a["compare"], "py_func", a["compare"])
            order = np.stack([np.array(sorted(range(row.size), key=functools.cmp_to_key(
                lambda i, j, r=row: -1 if cmp(r[i], r[j]) else (1 if cmp(r[j], r[i]) else 0))))
                for row in keys])
        out = {"keys": np.take_along_axis(keys, order, axis=1).reshape(len(ts), n)}
        if "values" in first:
            vals = np.stack([parts[t]["values"] for t in ts]).reshape(keys.shape)
            out["values"] = np.take_along_axis(vals, order, axis=1).reshape(len(ts), n)
        return {t: {k: v[i] for k, v in out.items()} for i, t in enumerate(ts)}
    if verb == "exchange":
        vals = np.stack([parts[t]["items"] for t in ts])  # (threads, items)
        T, n = vals.shape
        if a["kind"] == "striped_to_blocked":  # item k of thread t is element k*T + t
            res = vals.T.reshape(T, n)
        else:
            res = vals.reshape(n, T).T  # blocked: item k of thread t is element t*n + k
        return {t: {"out": res[i]} for i, t in enumerate(ts)}
    arr = isinstance(first.get("value"), np.ndarray)
    vals = np.stack([np.atleast_1d(np.asarray(parts[t]["value"])) for t in ts])
    dtype = vals.dtype
    rows = vals.reshape(-1, group * vals.shape[1])
    if verb in ("sum", "reduce"):
        opf = _py_op(a.get("op", "sum") if verb == "reduce" else "sum", dtype)
        r = reduce_rows(rows, opf)
        return {t: r[i // group] for i, t in enumerate(ts)}
    inclusive = verb.startswith("inclusive")
    if verb.endswith("_sum"):
        out = sum_scan_rows(rows, inclusive)
    else:
        init = np.asarray(a["initial"], dtype) if "initial" in a else None
        out = scan_rows(rows, _py_op(a["op"], dtype), inclusive, init)
    out = out.reshape(len(ts), -1)
    return {t: (out[i] if arr else out[i, 0]) for i, t in enumerate(ts)}


def _py_finish(th, verb: str, a: dict, res):
    n = None
    if verb in ("load", "store"):
        items = a["items"]
        n = items.shape[0]
        N = th.blk.T
        t = th.t
        alg = a.get("algorithm", "direct")
        valid = a.get("num_valid_items")
        # (python mode reads and writes each thread's own elements in the blocked order,
        # or the striped one: what the data ends up as, not which thread moved it)
        for k in range(n):
            i = k * N + t if alg == "striped" else t * n + k
            ok = valid is None or i < valid
            if verb == "load":
                if ok:
                    items[k] = a["src"][i]
                elif "oob_default" in a:
                    items[k] = a["oob_default"]
            elif ok:
                a["dst"][i] = items[k]
        return None
    if isinstance(res, dict):
        for k, v in res.items():
            target = a["out"] if k == "out" else a[k]
            target[:] = v
        return None
    if isinstance(res, np.ndarray) and "out" in a:  # a scan of arrays
        a["out"][:] = res
        return None
    return res
