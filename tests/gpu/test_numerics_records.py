"""Numerics of kernels over records (NumPy structured dtypes; tests/kernels/records.py) on every
target: the kernels take NumPy record arrays (copied to the GPU and back by the runtime), and
each result is compared field by field with the same computation in NumPy, in float64. The
layouts are NumPy's own (aligned and packed), so a wrong offset in either backend shows as a
wrong field, and the fields a kernel does not touch (a complex one included) must come back
byte for byte."""

import numpy as np
from conftest import assert_close, cdiv
from kernels import records as R


def _particles(rng, n):
    p = np.zeros(n, R.PARTICLE)
    p["a"] = rng.standard_normal(n)
    p["b"] = rng.integers(-50, 50, n)
    p["c"] = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    p["d"] = rng.integers(0, 100, (n, 5))
    return p


def test_fields_of_an_array_of_records(target, rng):
    n = 300
    p = _particles(rng, n)
    ref = p.copy()
    target.launch(R.particle_update, cdiv(n, 128), 128, p, n)
    a = ref["a"] * 2.0 + ref["b"]
    b = ref["b"] - 1 + ref["d"][:, 4].astype(np.int64)
    assert_close(p["a"], a, "float64")
    np.testing.assert_array_equal(p["b"], b.astype(np.int32))
    np.testing.assert_array_equal(p["d"][:, 0], (ref["d"][:, 1] + ref["d"][:, 2]).astype(np.uint8))
    np.testing.assert_array_equal(p["d"][:, 1:], ref["d"][:, 1:])
    np.testing.assert_array_equal(p["c"], ref["c"])  # not touched: its bytes come back as they were


def test_a_strided_array_of_records(target, rng):
    base = _particles(rng, 40)
    ref = base.copy()
    view = base[::3]
    n = view.shape[0]
    target.launch(R.particle_update, 1, 64, view, n)
    assert_close(base["a"][::3], ref["a"][::3] * 2.0 + ref["b"][::3], "float64")
    mask = np.ones(40, bool)
    mask[::3] = False
    np.testing.assert_array_equal(base[mask], ref[mask])  # the records between are untouched


def test_whole_records_are_copied(target, rng):
    n = 77
    src = _particles(rng, n)
    dst = np.zeros(n, R.PARTICLE)
    target.launch(R.reverse_records, 1, 128, src, dst, n)
    np.testing.assert_array_equal(dst, src[::-1])


def test_a_record_passed_by_itself_is_written_in_place(target, rng):
    arr = _particles(rng, 3)
    ref = arr.copy()
    out = np.zeros(1)
    target.launch(R.record_in_place, 1, 1, arr[1], out)
    assert_close(out, [ref["a"][1] + ref["b"][1]], "float64")
    assert_close(arr["a"][1], out[0] * 3.0, "float64")
    assert arr["b"][1] == 7 and arr["d"][1, 2] == 9
    np.testing.assert_array_equal(arr[[0, 2]], ref[[0, 2]])
    np.testing.assert_array_equal(arr["c"], ref["c"])


def test_a_2d_array_field_of_a_packed_record(target, rng):
    n = 50
    r = np.zeros(n, R.GRID2)
    a = rng.standard_normal((n, 3, 2)).astype(np.float32)
    target.launch(R.grid2_fill, 1, 64, r, a)
    np.testing.assert_array_equal(r["i"], np.arange(n))
    assert_close(r["j"], a.astype(np.float64) + np.arange(n)[:, None, None], "float32")
    dst = np.zeros(n, R.GRID2)
    target.launch(R.grid2_copy_field, 1, 64, r, dst)
    np.testing.assert_array_equal(dst, r)


def test_nested_records_float16_and_bool_fields(target, rng):
    n = 40
    o = np.zeros(n, R.OUTER)
    o["flag"] = rng.integers(0, 2, n).astype(bool)
    o["h"] = rng.standard_normal(n).astype(np.float16)
    o["inner"]["u"] = rng.integers(-100, 100, n)
    o["inner"]["v"] = rng.standard_normal(n)
    o["w"] = rng.standard_normal((n, 2))
    ref = o.copy()
    out = np.zeros(n)
    target.launch(R.nested_records, 1, 64, o, out)
    want = (ref["inner"]["u"] + ref["inner"]["v"].astype(np.float64) * ref["w"][:, 1]
            + ref["h"].astype(np.float64))
    assert_close(out, want, "float32", ulps=4)
    np.testing.assert_array_equal(o["w"][:, 0], out)
    u = np.where(ref["flag"], 100 + np.arange(n), ref["inner"]["u"])
    np.testing.assert_array_equal(o["inner"]["u"], u)


def test_records_in_constant_memory(target, rng):
    n = 200
    idx = rng.integers(0, 8, n).astype(np.int32)
    out = np.zeros(n)
    target.launch(R.table_lookup, cdiv(n, 64), 64, idx, out)
    t = R.TABLE[idx]
    assert_close(out, t["x"] * t["y"] + t["k"], "float64")


def test_records_in_local_and_shared_memory(target, rng):
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64)
    target.launch(R.local_and_shared_records, 1, 64, x, out)
    j = (np.arange(64) + 1) % 64
    assert_close(out, j + (x[j] * np.float32(0.5)).astype(np.float64), "float32")


def test_constant_strings_into_text_fields(target):
    r = np.zeros(9, R.LABELLED)
    r["name"] = "zzzzz"
    target.launch(R.label_records, 1, 32, r)
    want = np.zeros(9, R.LABELLED)
    want["n"] = np.arange(9)
    want["name"] = ["even" if k % 2 == 0 else "odd!!" for k in range(9)]
    want["tag"] = [b"E" if k % 2 == 0 else b"ODD" for k in range(9)]
    np.testing.assert_array_equal(r, want)
