"""Every program threadtile.compute generates compiles to a cubin for sm_80, sm_90 and sm_90a
(what an H100 runs) with NVRTC and no GPU: each algorithm's GPU path runs against a stand-in
device (fakegpu.py) that records its programs and checks every launch's argument count
against the kernel's parameters; the recorded programs are then compiled."""

from __future__ import annotations

import numpy as np
import pytest

import threadtile.compute as tc
from threadtile.compute import device

from .fakegpu import FakeArray, fake_gpu

ARCHS = ("sm_80", "sm_90", "sm_90a")

REC = np.dtype([("v", np.float32), ("i", np.int32)], align=True)


def _absmax(a, b):
    return a if abs(a) >= abs(b) else b


def _affine(a, b, out):  # records: the operator writes its result into out
    out.v = a.v * b.v
    out.i = a.i * b.v + b.i


def _less_rec(a, b):
    return a.v < b.v


def _square(i):
    return i * i


def _times100(i):
    return i * 100


def _twice_plus_one(x):
    return x * 2.0 + 1.0


def _mod_less(a, b):
    return a % 10 < b % 10


def _over_half(x):
    return x > 0.5


def _mod_less_one(x):
    return x % 10 < 1


def _over_half_i(x):
    return x > 500


def _rec_big(r):
    return r.v > 0.5


def _rec_odd(r):
    return r.i % 2 == 1


def _cases(F):
    """(label, call) of every algorithm over a spread of types, operators and inputs."""
    n = 1000
    f32, i64, u32 = (F(n, np.float32), F(n, np.int64), F(n, np.uint32))
    yield "reduce_plus_f32", lambda: tc.reduce_into(f32, F(1, np.float32), tc.OpKind.PLUS, n,
                                                    np.float32(0))
    yield "reduce_big", lambda: tc.reduce_into(F(1 << 20, np.float32), F(1, np.float32),
                                               tc.OpKind.PLUS, 1 << 20, np.float32(0))
    yield "reduce_fn_f64", lambda: tc.reduce_into(F(n, np.float64), F(1, np.float64), _absmax,
                                                  n, np.float64(0))
    yield "reduce_count", lambda: tc.reduce_into(tc.CountingIterator(np.int64(1)),
                                                 F(1, np.int64), tc.OpKind.MAXIMUM, n,
                                                 np.int64(0))
    yield "reduce_count_big", lambda: tc.reduce_into(  # the partials' own kernel
        tc.CountingIterator(np.int32(1)), F(1, np.int64), tc.OpKind.PLUS, 1 << 20, np.int64(0))
    yield "iscan_plus_i64", lambda: tc.inclusive_scan(i64, F(n, np.int64), tc.OpKind.PLUS)
    yield "iscan_init", lambda: tc.inclusive_scan(f32, F(n, np.float32), tc.OpKind.MAXIMUM,
                                                  np.float32(-1))
    yield "escan_rec", lambda: tc.exclusive_scan(F(n, REC), F(n, REC), _affine,
                                                 np.zeros(1, REC)[0])
    from .test_algorithms import BEST, _swap, keep_max
    yield "iscan_docs_example", lambda: tc.inclusive_scan(F(n, BEST), F(n, BEST), keep_max)
    yield "unary_records", lambda: tc.unary_transform(F(n, BEST), F(n, BEST), _swap)
    yield "escan_transform", lambda: tc.exclusive_scan(
        tc.TransformIterator(tc.CountingIterator(np.int32(0)), _square, np.int64),
        F(n, np.int64), tc.OpKind.PLUS, np.int64(0), n)
    for kdt in (np.uint32, np.float32, np.int64, np.float64, np.int8):
        yield f"radix_keys_{np.dtype(kdt)}", lambda kdt=kdt: tc.radix_sort(
            F(n, kdt), F(n, kdt), None, None, tc.SortOrder.ASCENDING)
    yield "radix_pairs_desc", lambda: tc.radix_sort(u32, F(n, np.uint32), F(n, np.float64),
                                                    F(n, np.float64), tc.SortOrder.DESCENDING,
                                                    begin_bit=4, end_bit=28)
    yield "radix_pairs_rec", lambda: tc.radix_sort(f32, F(n, np.float32), F(n, REC), F(n, REC),
                                                   tc.SortOrder.ASCENDING)
    yield "histogram_f32", lambda: tc.histogram_even(f32, F(256, np.int32), 257, 0.0, 1.0)
    yield "histogram_u8_i64", lambda: tc.histogram_even(F(n, np.uint8), F(16, np.int64), 17,
                                                        0, 256)
    yield "histogram_many_bins", lambda: tc.histogram_even(F(n, np.float64), F(20000, np.uint32),
                                                           20001, -1.0, 1.0)
    yield "segreduce", lambda: tc.segmented_reduce(f32, F(10, np.float32), F(10, np.int64),
                                                   F(10, np.int64), tc.OpKind.PLUS,
                                                   np.float32(0))
    yield "segreduce_iter", lambda: tc.segmented_reduce(
        f32, F(10, np.float32), tc.TransformIterator(tc.CountingIterator(np.int64(0)),
                                                     _times100),
        tc.TransformIterator(tc.CountingIterator(np.int64(1)), _times100),
        _absmax, np.float32(0), 10)
    yield "unary", lambda: tc.unary_transform(f32, F(n, np.float64), _twice_plus_one)
    yield "unary_negate", lambda: tc.unary_transform(i64, F(n, np.int64), tc.OpKind.NEGATE)
    yield "binary", lambda: tc.binary_transform(f32, tc.ConstantIterator(np.float32(3)),
                                                F(n, np.float32), tc.OpKind.MULTIPLIES)
    yield "merge_sort_less", lambda: tc.merge_sort(f32, None, F(n, np.float32), None,
                                                   tc.OpKind.LESS)
    yield "merge_sort_fn_pairs", lambda: tc.merge_sort(i64, u32, F(n, np.int64),
                                                       F(n, np.uint32),
                                                       _mod_less)
    yield "merge_sort_big", lambda: tc.merge_sort(F(100000, np.float32), None,
                                                  F(100000, np.float32), None, tc.OpKind.LESS)
    yield "merge_sort_rec", lambda: tc.merge_sort(F(n, REC), None, F(n, REC), None, _less_rec)
    yield "select", lambda: tc.select(f32, F(n, np.float32), F(1, np.int32), _over_half)
    yield "three_way_partition", lambda: tc.three_way_partition(
        F(n, np.int64), F(n, np.int64), F(n, np.int64), F(n, np.int64), F(2, np.int64),
        _mod_less_one, _over_half_i)
    yield "three_way_partition_rec", lambda: tc.three_way_partition(
        F(n, REC), F(n, REC), F(n, REC), F(n, REC), F(2, np.int32), _rec_big, _rec_odd)
    yield "unique_by_key", lambda: tc.unique_by_key(i64, u32, F(n, np.int64), F(n, np.uint32),
                                                    F(1, np.int64), tc.OpKind.EQUAL_TO)


@pytest.fixture(scope="module")
def programs():
    mp = pytest.MonkeyPatch()
    try:
        with fake_gpu(mp) as rec:
            for _label, call in _cases(FakeArray):
                call()
    finally:
        mp.undo()
    return rec


def test_every_launch_matches_its_kernel(programs):
    assert len(programs.sources) >= 20
    names = {name for name, *_ in programs.launches}
    for k in ("tt_reduce", "tt_reduce_partials", "tt_scan",
              "tt_scan_init", "tt_radix_histogram", "tt_radix_exclusive_sum",
              "tt_radix_onesweep", "tt_histogram", "tt_segmented_reduce", "tt_transform",
              "tt_block_sort", "tt_merge_partition", "tt_merge", "tt_scatter", "tt_zero",
              "tt_partition"):
        assert k in names, k


def test_unit_head_spares_nvrtc_work():
    """The macros that cut NVRTC's parsing come before the first include (compute/cxx.py):
    libcu++'s type-list unroll limit; no fp8/fp6/fp4 support unless the unit names them."""
    from threadtile.compute import cxx

    text = cxx.Unit().text()
    first = text.index("#include")
    assert -1 < text.find("#define _CCCL_META_UNROLL_LIMIT 10") < first
    assert -1 < text.find("#define CCCL_DISABLE_NVFP8_SUPPORT") < first
    assert "#include <cuda/std/__functional/operations.h>" in text
    u = cxx.Unit()
    u.kernels.append("__device__ __nv_fp8_e4m3 tt_x;")
    assert "CCCL_DISABLE_NVFP" not in u.text()


@pytest.mark.parametrize("arch", ARCHS)
def test_programs_compile(programs, arch):
    for key, src in programs.sources.items():
        cubin = device.Program(src, "test").cubin(arch)
        assert cubin[:4] == b"\x7fELF", key


def test_temp_storage_convention_on_the_gpu_path(monkeypatch):
    """``make_*(...)(None, ...)`` is the scratch a call needs; a caller's buffer of that size
    runs it, a smaller one is refused before anything is launched."""
    F = FakeArray
    n = 100_000
    with fake_gpu(monkeypatch) as rec:
        k, ko = F(n, np.uint32), F(n, np.uint32)
        s = tc.make_radix_sort(k, ko, None, None, tc.SortOrder.ASCENDING)
        need = s(None, k, ko, None, None, n)
        assert need >= n * 4  # the ping-pong copy of the keys, at least
        s(F(need, np.uint8), k, ko, None, None, n)
        assert any(name == "tt_radix_onesweep" for name, *_ in rec.launches)
        before = len(rec.launches)
        with pytest.raises(ValueError, match="temp_storage"):
            s(F(need - 1, np.uint8), k, ko, None, None, n)
        assert len(rec.launches) == before
        x, y = F(n, np.float32), F(n, np.float32)
        scan = tc.make_exclusive_scan(x, y, tc.OpKind.PLUS, np.float32(0))
        need = scan(None, x, y, n, np.float32(0))
        assert need > 0
        scan(F(need, np.uint8), x, y, n, np.float32(0))
        r = tc.make_reduce_into(x, F(1, np.float32), tc.OpKind.PLUS, np.float32(0))
        assert r(None, x, F(1, np.float32), n, np.float32(0)) >= 4
