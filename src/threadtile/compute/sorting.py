"""Sorting and compaction over whole arrays (cuda.compute's names): ``radix_sort`` (CUB's
onesweep radix sort), ``unique_by_key`` and ``select`` (flags, their inclusive sum by CUB's
scan, a scatter). ``merge_sort`` is in mergesort.py.
"""

from __future__ import annotations

import enum

import numpy as np

from ..lang.types import bool_ as BOOL
from . import cxx, device, host
from ._common import QUERY, Builder, Call
from .iterators import ArrayInput, IteratorBase
from .operators import Operator, as_operator, ctype, type_of

__all__ = ["SortOrder", "radix_sort", "make_radix_sort", "unique_by_key", "select"]


class SortOrder(enum.Enum):
    """The order of :func:`radix_sort`."""

    ASCENDING = 0
    DESCENDING = 1


def _align(n: int) -> int:
    return -(-n // 256) * 256


def _layout(sizes: list[int]) -> tuple[list[int], int]:
    """Offsets of allocations of ``sizes`` bytes in one buffer, each 256-byte aligned."""
    offs, at = [], 0
    for s in sizes:
        offs.append(at)
        at += _align(s)
    return offs, max(at, 1)


# -- radix sort --------------------------------------------------------------------------------

def radix_sort(d_in_keys, d_out_keys, d_in_values, d_out_values, order, num_items=None,
               begin_bit=None, end_bit=None, stream=None, *, temp_storage=None) -> int | None:
    """Sort ``d_in_keys`` (with ``d_in_values`` along, or None for keys only) into
    ``d_out_keys`` (and ``d_out_values``), by bits ``[begin_bit, end_bit)`` of each key
    (default: all), ascending or descending (:class:`SortOrder`). Stable. Integer and float
    keys of 1, 2, 4 or 8 bytes; values of any dtype.

    Floats sort by their bits made order-preserving, as CUB does: -0.0 and +0.0 are equal
    (their input order kept), a NaN with the sign bit clear sorts after +inf and one with it
    set before -inf (torch.sort puts every NaN last). The input arrays are not modified.
    """
    call = Call("radix_sort", [d_in_keys, d_out_keys, d_in_values, d_out_values], stream,
                temp_storage)
    if (d_in_values is None) != (d_out_values is None):
        raise TypeError("radix_sort: give both d_in_values and d_out_values, or neither")
    if isinstance(order, bool) or not isinstance(order, (SortOrder, int)):
        raise TypeError(f"radix_sort: order is a SortOrder, not {order!r}")
    descending = SortOrder(order) is SortOrder.DESCENDING
    kout, kdt, ksize = call.output(d_out_keys, "d_out_keys")
    kin = call.input(d_in_keys, "d_in_keys")
    if not isinstance(kin, ArrayInput):
        raise TypeError("radix_sort: d_in_keys must be an array")
    if kin.dtype != kdt:
        raise TypeError(f"radix_sort: d_in_keys ({kin.dtype}) and d_out_keys ({kdt}) differ")
    if kdt.kind not in "iuf" or kdt.itemsize not in (1, 2, 4, 8) or kdt == np.float16:
        raise TypeError(f"radix_sort sorts integer and float32/float64 keys, not {kdt}")
    vin = vout = None
    vdt = None
    sized = [("d_in_keys", kin), ("d_out_keys", ksize)]
    if d_in_values is not None:
        vout, vdt, vsize = call.output(d_out_values, "d_out_values")
        vin = call.input(d_in_values, "d_in_values")
        if not isinstance(vin, ArrayInput) or vin.dtype != vdt:
            raise TypeError("radix_sort: d_in_values must be an array of d_out_values' dtype")
        sized += [("d_in_values", vin), ("d_out_values", vsize)]
    n = call.count(num_items, *sized)
    bits = 8 * kdt.itemsize
    b = 0 if begin_bit is None else int(begin_bit)
    e = bits if end_bit is None else int(end_bit)
    if not 0 <= b <= e <= bits:
        raise ValueError(f"radix_sort: need 0 <= begin_bit <= end_bit <= {bits}, got "
                         f"[{b}, {e})")
    if call.host:
        if call.temp_storage is QUERY:
            return 1
        keys = kin.host(n)
        perm = host.radix_order(keys, descending, b, e)
        kout.view[:n] = keys[perm]
        if vin is not None:
            vout.view[:n] = vin.host(n)[perm]
        call.finish()
        return None
    call.start()
    return _radix_device(call, kin, kout, kdt, vin, vout, vdt, n, descending, b, e)


def _radix_device(call, kin, kout, kdt, vin, vout, vdt, n, descending, b, e):
    ks = kdt.itemsize
    vs = vdt.itemsize if vdt is not None else 0
    offset64 = n >= (1 << 31)  # the kernels take counts as (unsigned) ints below that
    floats = kdt.kind == "f"
    passes = -(-(e - b) // cxx.RADIX_BITS)
    threads, tile = cxx.onesweep_tile(ks, vs, offset64, floats)
    portion = ((1 << 28) - 1) // tile * tile
    portions = max(1, -(-n // portion))
    max_blocks = max(1, -(-min(n, portion) // tile))
    off = 8 if offset64 else 4
    digits = cxx.RADIX_DIGITS
    offs, nbytes = _layout([portions * passes * digits * off, max_blocks * digits * 4,
                            n * ks if passes > 1 else 0, n * vs if passes > 1 else 0,
                            portions * passes * 4])
    if call.temp_storage is QUERY:
        return nbytes
    if n == 0:
        return None
    if passes == 0:
        device.copy(kout, kin.ptr, n * ks, call.stream)
        if vin is not None:
            device.copy(vout, vin.ptr, n * vs, call.stream)
        return None
    key = ("radix", kdt.str, None if vdt is None else vdt.str, descending, offset64)

    def build():
        u = cxx.Unit()
        vt = None
        if vdt is not None:
            t = type_of(vdt)
            vt = ctype(t)
            if vdt.names is not None:
                u.structs[t.cname] = cxx.struct_definition(t)
        cxx.radix_kernels(u, ctype(type_of(kdt)), ks, vt, vs, descending, offset64, floats)
        return u.text()

    prog = device.program(key, build, "radix_sort")
    base = call.temp(nbytes)
    bins, lookback, ktmp, vtmp, ctrs = (base + o for o in offs)
    s = call.stream
    device.zeros(prog, bins, portions * passes * digits * off, s)
    device.zeros(prog, ctrs, portions * passes * 4, s)
    ht, hi = cxx.HISTOGRAM_POLICY
    hgrid = max(1, min(-(-n // (ht * hi)), device.sm_count() * 8))
    prog.kernel("tt_radix_histogram")[hgrid, ht, s](bins, kin.ptr, n, b, e)
    prog.kernel("tt_radix_exclusive_sum")[passes, digits, s](bins)
    src_k, src_v = kin.ptr, (vin.ptr if vin is not None else 0)
    for p in range(passes):
        bit = b + p * cxx.RADIX_BITS
        nbits = min(e - bit, cxx.RADIX_BITS)
        last = (passes - 1 - p) % 2 == 0
        dst_k = kout if last else ktmp
        dst_v = (vout if last else vtmp) if vin is not None else 0
        for q in range(portions):
            pn = min(n - q * portion, portion)
            blocks = -(-pn // tile)
            device.zeros(prog, lookback, blocks * digits * 4, s)
            bins_in = bins + (q * passes + p) * digits * off
            bins_out = bins + ((q + 1) * passes + p) * digits * off if q < portions - 1 else 0
            prog.kernel("tt_radix_onesweep")[blocks, threads, s](
                lookback, ctrs + (q * passes + p) * 4, bins_out, bins_in, dst_k,
                src_k + q * portion * ks, dst_v, src_v + q * portion * vs if src_v else 0,
                pn, bit, nbits)
        src_k, src_v = dst_k, dst_v
    return None


def make_radix_sort(d_in_keys, d_out_keys, d_in_values, d_out_values, order) -> Builder:
    """``s(temp_storage, d_in_keys, d_out_keys, d_in_values, d_out_values, num_items,
    begin_bit=None, end_bit=None, stream=None)``: ``None`` for ``temp_storage`` gives the
    bytes it needs."""
    def run(d_in_keys, d_out_keys, d_in_values, d_out_values, num_items, begin_bit=None,
            end_bit=None, stream=None, *, temp_storage):
        return radix_sort(d_in_keys, d_out_keys, d_in_values, d_out_values, order, num_items,
                          begin_bit, end_bit, stream, temp_storage=temp_storage)
    return Builder(run, "radix_sort")


# -- select / unique_by_key --------------------------------------------------------------------

class _Flags(IteratorBase):
    """``keep(0), keep(1)...`` (0 or 1) of an input, for the scan of a compaction."""

    def __init__(self, inner: IteratorBase, functor: str, key: tuple):
        self.inner = inner
        self.functor = functor
        self._key = key
        self.dtype = np.dtype(np.int64)

    def cxx(self, name):
        params, gather, it, make = self.inner.cxx(name)
        flags = f"{self.functor}<{it}>{{{make}}}"
        count = "::cuda::counting_iterator<long long>(0LL)"
        mk = f"::cuda::make_transform_iterator({count}, {flags})"
        t = (f"decltype(::cuda::make_transform_iterator({count}, "
             f"{self.functor}<{it}>{{::cuda::std::declval<{it}>()}}))")
        return params, gather, t, mk

    def args(self):
        return self.inner.args()

    def key(self):
        return self._key


def compact(name: str, call: Call, inp: IteratorBase, out, dtype, values, count_out, count_dt,
            pred: Operator, kind: str, n: int) -> None:
    """Items ``keep(i)`` of ``inp`` (and ``values``) to the front of ``out`` in order; their
    number to ``count_out[0]``."""
    t = type_of(inp.dtype)
    if kind == "select":
        fn, src = pred.cxx((t,), BOOL)
    else:
        fn, src = pred.cxx((t, t), BOOL)
    vt = None
    if values is not None:
        vin, vout, vdt = values
        vt = ctype(type_of(vdt))
    key = (name, inp.key(), pred.key(), None if values is None else values[0].key(),
           count_dt.str, dtype.str)
    flags = _Flags(inp, "tt_keep", ("flags",) + key)

    def build():
        u = cxx.Unit()
        u.add_function(src)
        u.add_input(inp)
        if values is not None:
            u.add_input(values[0])
            if values[2].names is not None:
                u.structs[type_of(values[2]).cname] = cxx.struct_definition(type_of(values[2]))
        u.cub_headers.append("<cuda/iterator>")
        cxx.flag_functor(u, "tt_keep", ctype(type_of(dtype)), fn, kind)
        cxx.scan_kernels(u, "long long", 8, "::cuda::std::plus<>", flags, "inclusive", True)
        cxx.scatter_kernels(u, ctype(type_of(dtype)), inp, "tt_keep",
                            None if values is None else (vt, values[0]),
                            ctype(type_of(count_dt)))
        return u.text()

    prog = device.program(key, build, name)
    vargs = values[0].args() + [values[1]] if values is not None else []
    scan_and_scatter(prog, call, inp, n, "tt_scatter", [*vargs, out], count_out)


def scan_and_scatter(prog, call: Call, inp: IteratorBase, n: int, scatter: str, outs: list,
                     count) -> None:
    """A compaction's launches: the flag words' inclusive sum (CUB's scan of the program's
    ``tt_scan``) into ``pos``, then ``scatter(*inp, *outs, pos, count, n)``; with no items the
    scatter alone, which writes the count(s)."""
    threads, tile = cxx.tile_items("scan", 8, True)
    tiles = max(1, -(-n // tile))
    scan_bytes = cxx.scan_temp_bytes(tiles, 8)
    offs, nbytes = _layout([n * 8, scan_bytes])
    s = call.stream
    if n == 0:
        prog.kernel(scatter)[1, 32, s](*inp.args(), *outs, 0, count, 0)
        return
    base = call.temp(nbytes)
    pos, temp = base + offs[0], base + offs[1]
    prog.kernel("tt_scan_init")[-(-(tiles + 32) // 128), 128, s](temp, scan_bytes, tiles)
    prog.kernel("tt_scan")[tiles, threads, s](*inp.args(), pos, temp, scan_bytes, n, 0)
    grid = min(-(-n // cxx.TRANSFORM_THREADS), device.sm_count() * 16)
    prog.kernel(scatter)[grid, cxx.TRANSFORM_THREADS, s](*inp.args(), *outs, pos, count, n)


def select(d_in, d_out, d_num_selected_out, cond, num_items=None, stream=None) -> None:
    """The items of ``d_in`` for which ``cond(item)`` is true, in order, to the front of
    ``d_out``; their number to ``d_num_selected_out[0]``."""
    call = Call("select", [d_in, d_out, d_num_selected_out], stream)
    out, dtype, osize = call.output(d_out, "d_out")
    cnt, cdt, _ = call.output(d_num_selected_out, "d_num_selected_out")
    inp = call.input(d_in, "d_in")
    n = call.count(num_items, ("d_in", inp), ("d_out", osize))
    cond = as_operator(cond)
    if inp.dtype != dtype:
        raise TypeError(f"select: d_in ({inp.dtype}) and d_out ({dtype}) differ")
    if call.host:
        items = inp.host(n)
        seq = list(items.view(np.recarray)) if dtype.names else list(items)
        keep = np.array([bool(cond.host(x)) for x in seq], dtype=bool) if not \
            cond.is_builtin else np.asarray(cond.host(items), dtype=bool)
        k = int(keep.sum())
        out.view[:k] = items[keep]
        cnt.view[0] = k
        call.finish()
        return None
    call.start()
    compact("select", call, inp, out, dtype, None, cnt, cdt, cond, "select", n)
    return None


def unique_by_key(d_in_keys, d_in_values, d_out_keys, d_out_values, d_out_num_selected, op,
                  num_items=None, stream=None) -> None:
    """The first key (and its value) of each run of consecutive keys that ``op`` calls equal
    (``OpKind.EQUAL_TO`` or a Python function of two keys), in order, to the front of
    ``d_out_keys`` / ``d_out_values``; their number to ``d_out_num_selected[0]``."""
    call = Call("unique_by_key", [d_in_keys, d_in_values, d_out_keys, d_out_values,
                                  d_out_num_selected], stream)
    kout, kdt, ksize = call.output(d_out_keys, "d_out_keys")
    cnt, cdt, _ = call.output(d_out_num_selected, "d_out_num_selected")
    kin = call.input(d_in_keys, "d_in_keys")
    values = None
    if d_in_values is not None:
        vout, vdt, vsize = call.output(d_out_values, "d_out_values")
        vin = call.input(d_in_values, "d_in_values")
        values = (vin, vout, vdt)
    n = call.count(num_items, ("d_in_keys", kin), ("d_out_keys", ksize))
    op = as_operator(op)
    if kin.dtype != kdt:
        raise TypeError(f"unique_by_key: d_in_keys ({kin.dtype}) and d_out_keys ({kdt}) differ")
    if call.host:
        keys = kin.host(n)
        seq = list(keys.view(np.recarray)) if kdt.names else list(keys)
        keep = np.array([i == 0 or not bool(op.host(seq[i - 1], seq[i])) for i in range(n)],
                        dtype=bool)
        k = int(keep.sum())
        kout.view[:k] = keys[keep]
        if values is not None:
            vout.view[:k] = vin.host(n)[keep]
        cnt.view[0] = k
        call.finish()
        return None
    call.start()
    compact("unique_by_key", call, kin, kout, kdt, values, cnt, cdt, op, "unique", n)
    return None
