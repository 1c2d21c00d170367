"""Reductions, scans, transforms and histograms over whole arrays (cuda.compute's names and
arguments). Each runs on the GPU through CUB (``compute/cxx.py``), or on the host in NumPy
(``compute/host.py``) under ``threadtile.simulate()`` and when the arrays are NumPy arrays.
"""

from __future__ import annotations

import numpy as np

from . import cxx, device, host
from ._common import QUERY, Builder, Call, scalar_value
from .iterators import ArrayInput, value_words
from .operators import as_operator, ctype, type_of

__all__ = ["reduce_into", "inclusive_scan", "exclusive_scan", "segmented_reduce",
           "histogram_even", "unary_transform", "binary_transform", "make_reduce_into",
           "make_inclusive_scan", "make_exclusive_scan", "make_segmented_reduce",
           "make_histogram_even"]


def _finish_host(call: Call, result):
    call.finish()
    return None if call.temp_storage is not QUERY else result


# -- reduce ------------------------------------------------------------------------------------

def reduce_into(d_in, d_out, op, num_items=None, h_init=None, stream=None, *,
                temp_storage=None) -> int | None:
    """``d_out[0] = op(h_init, op(d_in[0], op(d_in[1], ...)))``: a device-wide reduction.

    ``d_in`` is a device array or an iterator; ``d_out`` a device array whose dtype is the
    accumulator's (the items convert to it); ``op`` an :class:`OpKind` or a Python function of
    two items, associative and commutative (the GPU groups and orders items as CUB does);
    ``h_init`` the initial value (a NumPy array of one item, or a scalar), the result of an
    empty input. ``num_items`` defaults to ``len(d_in)``. Runs on ``stream`` (default: the
    current stream of the arrays' framework).
    """
    call = Call("reduce_into", [d_in, d_out], stream, temp_storage)
    out, dtype, osize = call.output(d_out, "d_out")
    if osize < 1:
        raise ValueError("reduce_into: d_out must hold at least one item")
    inp = call.input(d_in, "d_in")
    n = call.count(num_items, ("d_in", inp))
    if h_init is None:
        raise TypeError("reduce_into needs h_init, the initial value (np.array([0], dtype))")
    init = scalar_value(h_init, dtype, "h_init")
    op = as_operator(op)
    if call.host:
        if call.temp_storage is QUERY:
            return 1
        out.view[0] = host.reduce(inp.host(n), op, init, dtype)
        return _finish_host(call, None)
    call.start()
    t = type_of(dtype)
    fn, src = op.cxx((t, t), t)
    key = ("reduce", dtype.str, op.key(), inp.key())
    # the partials are an array of dtype: an input that is one too takes the same kernel
    last = ("tt_reduce" if isinstance(inp, ArrayInput) and inp.dtype == dtype
            else "tt_reduce_partials")

    def build():
        u = cxx.Unit()
        u.add_function(src)
        u.add_input(inp)
        cxx.reduce_kernels(u, ctype(t), dtype.itemsize, fn, inp, last == "tt_reduce_partials")
        return u.text()

    prog = device.program(key, build, "reduce")
    threads, tile = cxx.tile_items("reduce", dtype.itemsize)
    tiles = -(-n // tile)
    grid = min(tiles, device.sm_count() * 32) if tiles > 1 else 1
    nbytes = grid * dtype.itemsize if grid > 1 else 0
    if call.temp_storage is QUERY:
        return max(nbytes, 1)
    words = value_words(init)
    if grid <= 1:
        prog.kernel("tt_reduce")[1, threads, call.stream](*inp.args(), out, n, *words, 1)
        return None
    partials = call.temp(nbytes)
    prog.kernel("tt_reduce")[grid, threads, call.stream](*inp.args(), partials, n, *words, 0)
    args = (partials, out, grid, *words) + ((1,) if last == "tt_reduce" else ())
    prog.kernel(last)[1, threads, call.stream](*args)
    return None


# -- scans -------------------------------------------------------------------------------------

def _scan(name: str, d_in, d_out, op, init_value, num_items, stream, temp_storage, mode: str):
    call = Call(name, [d_in, d_out], stream, temp_storage)
    out, dtype, osize = call.output(d_out, "d_out")
    inp = call.input(d_in, "d_in")
    n = call.count(num_items, ("d_in", inp), ("d_out", osize))
    init = None if init_value is None else scalar_value(init_value, dtype, "init_value")
    op = as_operator(op)
    if mode == "inclusive" and init is not None:
        mode = "inclusive_init"
    if call.host:
        if call.temp_storage is QUERY:
            return 1
        out.view[:n] = host.scan(inp.host(n), op, init, dtype,
                                 "exclusive" if mode == "exclusive" else "inclusive")
        return _finish_host(call, None)
    call.start()
    t = type_of(dtype)
    fn, src = op.cxx((t, t), t)
    tuned = op.is_builtin and dtype.names is None
    key = ("scan", mode, dtype.str, op.key(), inp.key())

    def build():
        u = cxx.Unit()
        u.add_function(src)
        u.add_input(inp)
        cxx.scan_kernels(u, ctype(t), dtype.itemsize, fn, inp, mode, tuned)
        return u.text()

    prog = device.program(key, build, "scan")
    threads, tile = cxx.tile_items("scan", dtype.itemsize, tuned)
    tiles = -(-n // tile)
    nbytes = cxx.scan_temp_bytes(tiles, dtype.itemsize)
    if call.temp_storage is QUERY:
        return nbytes
    if n == 0:
        return None
    temp = call.temp(nbytes)
    words = value_words(init if init is not None else np.zeros(1, dtype)[0])
    init_grid = -(-(tiles + 32) // 128)
    prog.kernel("tt_scan_init")[init_grid, 128, call.stream](temp, nbytes, tiles)
    prog.kernel("tt_scan")[tiles, threads, call.stream](*inp.args(), out, temp, nbytes, n,
                                                        *words)
    return None


def inclusive_scan(d_in, d_out, op, init_value=None, num_items=None, stream=None, *,
                   temp_storage=None) -> int | None:
    """``d_out[i] = d_in[0] op d_in[1] op ... op d_in[i]`` (with ``init_value`` folded in
    first where given). ``op`` need only be associative: the items keep their order, so a
    non-commutative operator scans as a left fold would. ``d_in`` an array or an iterator,
    ``d_out`` an array (its dtype is the accumulator's); CUB's single-pass decoupled look-back
    scan on the GPU."""
    return _scan("inclusive_scan", d_in, d_out, op, init_value, num_items, stream, temp_storage,
                 "inclusive")


def exclusive_scan(d_in, d_out, op, init_value, num_items=None, stream=None, *,
                   temp_storage=None) -> int | None:
    """``d_out[0] = init_value``, ``d_out[i] = init_value op d_in[0] op ... op d_in[i-1]``
    (see :func:`inclusive_scan`)."""
    if init_value is None:
        raise TypeError("exclusive_scan needs init_value (np.array([0], dtype))")
    return _scan("exclusive_scan", d_in, d_out, op, init_value, num_items, stream, temp_storage,
                 "exclusive")


# -- segmented reduce --------------------------------------------------------------------------

def segmented_reduce(d_in, d_out, start_offsets_in, end_offsets_in, op, h_init,
                     num_segments=None, stream=None, *, temp_storage=None) -> int | None:
    """``d_out[s] = op(h_init, reduction of d_in[start_offsets_in[s]:end_offsets_in[s]])``
    (``h_init`` for an empty segment). Offsets are integer arrays or iterators
    (``TransformIterator(CountingIterator(np.int64(0)), lambda i: i * width)`` for segments
    of one width); ``op`` as for :func:`reduce_into`."""
    call = Call("segmented_reduce", [d_in, d_out, start_offsets_in, end_offsets_in], stream,
                temp_storage)
    out, dtype, osize = call.output(d_out, "d_out")
    inp = call.input(d_in, "d_in")
    begins = call.input(start_offsets_in, "start_offsets_in")
    ends = call.input(end_offsets_in, "end_offsets_in")
    for what, o in (("start_offsets_in", begins), ("end_offsets_in", ends)):
        if o.dtype.kind not in "iu":
            raise TypeError(f"segmented_reduce: {what} must hold integers, not {o.dtype}")
    m = call.count(num_segments, ("start_offsets_in", begins), ("end_offsets_in", ends),
                   ("d_out", osize))
    init = scalar_value(h_init, dtype, "h_init")
    op = as_operator(op)
    if call.temp_storage is QUERY:
        return 1
    if call.host:
        b, e = begins.host(m).astype(np.int64), ends.host(m).astype(np.int64)
        need = int(max(e.max(initial=0), 0))
        items = inp.host(need) if need else np.empty(0, dtype)
        for s in range(m):
            out.view[s] = host.reduce(items[b[s]:max(e[s], b[s])], op, init, dtype)
        return _finish_host(call, None)
    call.start()
    t = type_of(dtype)
    fn, src = op.cxx((t, t), t)
    key = ("segreduce", dtype.str, op.key(), inp.key(), begins.key(), ends.key())

    def build():
        u = cxx.Unit()
        u.add_function(src)
        for i in (inp, begins, ends):
            u.add_input(i)
        cxx.segmented_reduce_kernels(u, ctype(t), dtype.itemsize, fn, inp, begins, ends)
        return u.text()

    if m == 0:
        return None
    prog = device.program(key, build, "segmented_reduce")
    grid = min(m, 65535 * 16)
    prog.kernel("tt_segmented_reduce")[grid, cxx.SEGMENT_THREADS, call.stream](
        *inp.args(), *begins.args(), *ends.args(), out, m, *value_words(init))
    return None


# -- histogram ---------------------------------------------------------------------------------

def histogram_even(d_samples, d_histogram, num_output_levels, lower_level, upper_level,
                   num_samples=None, stream=None, *, temp_storage=None) -> int | None:
    """Counts of the samples in ``num_output_levels - 1`` equal bins of
    ``[lower_level, upper_level)`` into ``d_histogram`` (32- or 64-bit integer counters,
    overwritten). A sample outside the range is not counted.
    Integer samples fall in bin ``(s - lower) * bins // (upper - lower)`` exactly; float
    samples in ``min(int((s - lower) * scale), bins - 1)`` computed in the samples' type, with
    ``scale = bins / (upper - lower)``."""
    call = Call("histogram_even", [d_samples, d_histogram], stream, temp_storage)
    hist, counter, hsize = call.output(d_histogram, "d_histogram")
    inp = call.input(d_samples, "d_samples")
    n = call.count(num_samples, ("d_samples", inp))
    num_output_levels, lower_level, upper_level = (
        np.asarray(v).reshape(-1)[0] if isinstance(v, np.ndarray) else v
        for v in (num_output_levels, lower_level, upper_level))  # h_ arrays of one value
    bins = int(num_output_levels) - 1
    if bins < 1:
        raise ValueError(f"histogram_even: num_output_levels must be >= 2, got "
                         f"{num_output_levels}")
    if hsize < bins:
        raise ValueError(f"histogram_even: d_histogram holds {hsize} counters, fewer than the "
                         f"{bins} bins")
    if counter.kind not in "iu" or counter.itemsize not in (4, 8):
        raise TypeError(f"histogram_even: d_histogram must hold 32- or 64-bit integers, not "
                        f"{counter}")
    sdt = inp.dtype
    if sdt.kind not in "iuf":
        raise TypeError(f"histogram_even: samples must be numbers, not {sdt}")
    if not lower_level < upper_level:
        raise ValueError("histogram_even: lower_level must be below upper_level")
    if call.temp_storage is QUERY:
        return 1
    if call.host:
        hist.view[:bins] = host.histogram_even(inp.host(n), bins, lower_level, upper_level,
                                               counter)
        return _finish_host(call, None)
    call.start()
    integer = sdt.kind in "iu"
    level = "double" if sdt == np.float64 else "float"
    key = ("histogram", sdt.str, counter.str, inp.key())

    def build():
        u = cxx.Unit()
        u.add_input(inp)
        cxx.histogram_kernels(u, inp, ctype(type_of(sdt)), ctype(type_of(counter)), level,
                              integer)
        return u.text()

    prog = device.program(key, build, "histogram")
    device.zeros(prog, hist, bins * counter.itemsize, call.stream)
    if n == 0:
        return None
    lt = np.float64 if level == "double" else np.float32
    if integer:
        lo, hi, scale = int(lower_level), int(upper_level), 0.0
    else:
        lo, hi = float(lt(lower_level)), float(lt(upper_level))
        scale = float(lt(lt(bins) / lt(lt(hi) - lt(lo))))
    shared = bins <= cxx.HISTOGRAM_SHARED_BINS
    threads = cxx.HISTOGRAM_THREADS
    grid = min(-(-n // (threads * 16)), device.sm_count() * 8)
    prog.kernel("tt_histogram")[grid, threads, call.stream, bins * 4 if shared else 0](
        *inp.args(), hist, bins, lo, hi, scale, n, int(shared))
    return None


# -- transforms --------------------------------------------------------------------------------

def _transform(name: str, ins: list, d_out, op, num_items, stream):
    call = Call(name, ins + [d_out], stream)
    out, dtype, osize = call.output(d_out, "d_out")
    inputs = [call.input(x, f"d_in{k + 1}" if len(ins) > 1 else "d_in")
              for k, x in enumerate(ins)]
    n = call.count(num_items, *[(f"d_in{k + 1}", i) for k, i in enumerate(inputs)],
                   ("d_out", osize))
    op = as_operator(op)
    if call.host:
        cols = [i.host(n) for i in inputs]
        if op.is_builtin:
            out.view[:n] = np.asarray(op.host(*cols)).astype(dtype)
        elif dtype.names is not None:  # a record operator writes into its last argument
            rows = zip(*[host.items(c) for c in cols])
            out.view[:n] = host.store([op.host_records(dtype, *vals) for vals in rows], dtype)
        else:
            rows = zip(*[host.items(c) for c in cols])
            out.view[:n] = np.array([op.host(*vals) for vals in rows], dtype=dtype).reshape(n)
        return _finish_host(call, None)
    call.start()
    t = type_of(dtype)
    fn, src = op.cxx(tuple(type_of(i.dtype) for i in inputs), t)
    key = ("transform", dtype.str, op.key(), tuple(i.key() for i in inputs))

    def build():
        u = cxx.Unit()
        u.add_function(src)
        for i in inputs:
            u.add_input(i)
        cxx.transform_kernels(u, ctype(t), fn, inputs)
        return u.text()

    if n == 0:
        return None
    prog = device.program(key, build, name)
    threads = cxx.TRANSFORM_THREADS
    grid = min(-(-n // threads), device.sm_count() * 16)
    args = [a for i in inputs for a in i.args()]
    prog.kernel("tt_transform")[grid, threads, call.stream](*args, out, n)
    return None


def unary_transform(d_in, d_out, op, num_items=None, stream=None) -> None:
    """``d_out[i] = op(d_in[i])``: ``op`` an OpKind (``IDENTITY``, ``NEGATE``) or a Python
    function of one item; its result converts to ``d_out``'s dtype."""
    return _transform("unary_transform", [d_in], d_out, op, num_items, stream)


def binary_transform(d_in1, d_in2, d_out, op, num_items=None, stream=None) -> None:
    """``d_out[i] = op(d_in1[i], d_in2[i])``."""
    return _transform("binary_transform", [d_in1, d_in2], d_out, op, num_items, stream)


# -- cuda.compute's two-step form: make_*(...) then obj(temp_storage, ...) --------------------

def make_reduce_into(d_in, d_out, op, h_init) -> Builder:
    """``r = make_reduce_into(d_in, d_out, op, h_init)``; ``r(None, d_in, d_out, num_items,
    h_init)`` is the temporary storage's size in bytes, ``r(temp, d_in, d_out, num_items,
    h_init, stream=None)`` reduces using ``temp`` (a device array of at least that many
    bytes)."""
    def run(d_in, d_out, num_items, h_init, stream=None, *, temp_storage):
        return reduce_into(d_in, d_out, op, num_items, h_init, stream, temp_storage=temp_storage)
    return Builder(run, "reduce_into")


def make_inclusive_scan(d_in, d_out, op, init_value=None) -> Builder:
    """``s(temp_storage, d_in, d_out, num_items, init_value=None, stream=None)`` (see
    :func:`make_reduce_into`)."""
    def run(d_in, d_out, num_items, init_value=init_value, stream=None, *, temp_storage):
        return inclusive_scan(d_in, d_out, op, init_value, num_items, stream,
                              temp_storage=temp_storage)
    return Builder(run, "inclusive_scan")


def make_exclusive_scan(d_in, d_out, op, init_value) -> Builder:
    """``s(temp_storage, d_in, d_out, num_items, init_value, stream=None)``."""
    def run(d_in, d_out, num_items, init_value=init_value, stream=None, *, temp_storage):
        return exclusive_scan(d_in, d_out, op, init_value, num_items, stream,
                              temp_storage=temp_storage)
    return Builder(run, "exclusive_scan")


def make_segmented_reduce(d_in, d_out, start_offsets_in, end_offsets_in, op, h_init) -> Builder:
    """``r(temp_storage, d_in, d_out, start_offsets_in, end_offsets_in, num_segments, h_init,
    stream=None)``."""
    def run(d_in, d_out, start_offsets_in, end_offsets_in, num_segments, h_init, stream=None,
            *, temp_storage):
        return segmented_reduce(d_in, d_out, start_offsets_in, end_offsets_in, op, h_init,
                                num_segments, stream, temp_storage=temp_storage)
    return Builder(run, "segmented_reduce")


def make_histogram_even(d_samples, d_histogram, num_output_levels, lower_level, upper_level,
                        num_samples=None) -> Builder:
    """``h(temp_storage, d_samples, d_histogram, num_output_levels, lower_level, upper_level,
    num_samples, stream=None)``."""
    def run(d_samples, d_histogram, num_output_levels, lower_level, upper_level,
            num_samples=None, stream=None, *, temp_storage):
        return histogram_even(d_samples, d_histogram, num_output_levels, lower_level,
                              upper_level, num_samples, stream, temp_storage=temp_storage)
    return Builder(run, "histogram_even")
