"""Records (lang/records.py, frontend/records.py): numba's spelling of a record type read back
into NumPy's layout, and the errors that name the field a kernel cannot use."""

import numpy as np
import pytest

import threadtile as cuda
from threadtile.backends.sim import simulate
from threadtile.errors import KernelCompileError
from threadtile.lang.records import record_of
from threadtile.lang.signatures import parse, parse_type
from threadtile.lang.types import ArrayType

ALIGNED = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
PACKED = np.dtype([("a", np.int32), ("b", np.float64)])
WITH_COMPLEX = np.dtype([("x", np.float32), ("c", np.complex64), ("s", "U2")], align=True)


def test_numba_spelling_round_trips():
    r = record_of(ALIGNED)
    assert r.name == "Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)"
    t = parse_type(f"array({r.name}, 1d, A)")
    assert t == ArrayType(r, 1, "A")
    assert t.dtype.numpy.fields["b"][1] == 8 and t.dtype.itemsize == 16
    sub = record_of(np.dtype([("g", np.int32), ("h", np.float32, (3, 2))]))
    assert "h[type=nestedarray(float32, (3, 2));offset=4]" in sub.name
    assert parse_type(sub.name) == ArrayType(sub, 0, "C")  # a record by itself: 0-d
    assert record_of(np.recarray(2, dtype=ALIGNED).dtype) == r  # (numpy.record, ...) too


def test_numba_prints_packed_record_arrays_unaligned():
    sig = parse("void(unaligned array(Record(a[type=int32;offset=0],b[type=float64;offset=4];"
                "12;False), 1d, A))")
    assert sig.args[0].dtype == record_of(PACKED)


@cuda.jit
def read_b(r, out):
    i = cuda.grid(1)
    out[i] = r[i].b


@cuda.jit
def read_c(r, out):
    out[0] = r[0].c


@cuda.jit
def read_s(r, out):
    out[0] = r[0]["s"]


@cuda.jit
def read_missing(r, out):
    out[0] = r[0].nope


def test_a_misaligned_field_is_refused_naming_it():
    with pytest.raises(KernelCompileError, match="field 'b' of type float64 is not aligned: "
                                                 "it sits at byte 4, not a multiple of 8"):
        read_b.cuda_source(np.zeros(2, PACKED), np.zeros(2))
    read_b.cuda_source(np.zeros(2, ALIGNED), np.zeros(2))


@pytest.mark.parametrize(("kernel", "field", "what"), [(read_c, "c", "complex numbers"),
                                                       (read_s, "s", "unicode strings")])
def test_fields_kernels_cannot_compute_with_are_refused_by_name(kernel, field, what):
    with pytest.raises(KernelCompileError, match=f"field '{field}' has dtype .*: {what} are not "
                                                 "supported in kernels"):
        kernel.cuda_source(np.zeros(2, WITH_COMPLEX), np.zeros(1))


def test_an_unknown_field_lists_the_fields():
    with pytest.raises(KernelCompileError, match="(?s)no field 'nope'.*x, c, s"):
        read_missing.cuda_source(np.zeros(2, WITH_COMPLEX), np.zeros(1))


@cuda.jit
def first_field(r, out):
    out[0] = r[0] + r["x"]
    r.x = 2.5


def test_python_mode_agrees_with_lockstep():
    for mode in ("lockstep", "python"):
        a = np.zeros(3, WITH_COMPLEX)
        a["x"] = [1, 2, 3]
        a["c"] = [1j, 2j, 3j]
        out = np.zeros(1)
        with simulate(mode=mode):
            first_field[1, 1](a[1], out)
            read_b[1, 2](np.array([(1, 1.5), (2, 2.5)], ALIGNED), got := np.zeros(2))
        assert out[0] == 4.0, mode
        np.testing.assert_array_equal(a["x"], [1, 2.5, 3])
        np.testing.assert_array_equal(a["c"], [1j, 2j, 3j])
        np.testing.assert_array_equal(got, [1.5, 2.5])


@cuda.jit
def name_records(a):
    a[0]["x"] = 1
    a[0]["y"] = "ABC"
    a[1].y = "XY"


@cuda.jit
def read_text(a, out):
    out[0] = a[0]["y"][0]


@pytest.mark.parametrize("text_dtype", ["<U6", "S8"])
def test_constant_strings_are_assigned_to_text_fields(text_dtype):
    dt = np.dtype([("x", np.int32), ("y", text_dtype)])
    a = np.zeros(2, dt)
    a["y"] = "qqqqqq" if text_dtype[0] == "<" else b"qqqqqqqq"
    with simulate():
        name_records[1, 1](a)
    np.testing.assert_array_equal(a, np.array([(1, "ABC"), (0, "XY")], dt))  # zero-padded
    assert "= 65u;" in name_records.cuda_source(a) or "= uint8_t(65);" in \
        name_records.cuda_source(a)
    with pytest.raises(KernelCompileError, match="field 'y' has dtype .*only a constant string"):
        read_text.cuda_source(a, np.zeros(1))


@cuda.jit
def nothing(a):
    pass


def test_an_aligned_record_and_its_packed_twin_are_different_types():
    packed = np.dtype([("x", np.float16), ("y", np.float16)])
    aligned = np.dtype([("x", np.float16), ("y", np.float16)], align=True)
    assert packed == aligned  # NumPy's view: equal offsets
    assert record_of(packed) != record_of(aligned)
    with simulate():
        nothing[1, 1](cuda.to_device(np.zeros(1, packed)))
        nothing[1, 1](cuda.to_device(np.zeros(1, aligned)))
    assert len({str(s) for s in nothing.signatures}) == 2


def test_device_arrays_of_records_round_trip():
    a = np.zeros(4, ALIGNED)
    a["b"] = [1.5, 2.5, 3.5, 4.5]
    out = np.zeros(4)
    with simulate():
        d = cuda.to_device(a)
        read_b[1, 4](d, out)
        back = d.copy_to_host()
    np.testing.assert_array_equal(out, a["b"])
    np.testing.assert_array_equal(back, a)


def test_a_big_endian_field_is_refused_naming_it():
    dt = np.dtype([("a", ">i4"), ("b", ">f8")], align=True)
    with pytest.raises(KernelCompileError, match="field 'b' has dtype >f8: a non-native byte"):
        read_b.cuda_source(np.zeros(2, dt), np.zeros(2))


GRID = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])


@cuda.jit
def fill_field(r, x):
    r[0]["j"] = x[0, 1] * 2 + r[0].i  # a number: broadcast, computed once
    r[1].j = x  # an array: element by element


@cuda.jit
def assign_number_to_record(r):
    r[0] = 5


def test_array_fields_take_a_number_or_an_array():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    for mode in ("lockstep", "python"):
        r = np.zeros(2, GRID)
        r["i"] = [3, 4]
        with simulate(mode=mode):
            fill_field[1, 1](r, x)
        np.testing.assert_array_equal(r["j"][0], np.full((3, 2), 5.0))
        np.testing.assert_array_equal(r["j"][1], x)
        np.testing.assert_array_equal(r["i"], [3, 4])
    with pytest.raises(KernelCompileError, match="takes a whole record, not int64"):
        assign_number_to_record.cuda_source(np.zeros(2, GRID))
