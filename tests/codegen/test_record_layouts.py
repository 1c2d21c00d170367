"""Record structs in C++ match NumPy's layouts: for a sweep of structured dtypes (aligned and
packed, subarrays, nested records, float16, bool, complex and bytes fields, a float64 at an odd
offset) a kernel copying whole records compiles with NVRTC for sm_80 and sm_90, and the
generated ``static_assert``s on the struct's size, alignment and every member's offset hold."""

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.backends.cuda.records import members
from threadtile.lang.records import record_of

INNER = np.dtype([("u", np.int16), ("v", np.float32)], align=True)
DTYPES = {
    "aligned": np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=True),
    "packed": np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)]),
    "odd_float64": np.dtype({"names": ["a", "b"], "formats": [np.uint8, np.float64],
                             "offsets": [0, 1], "itemsize": 9}),
    "complex_and_bytes": np.dtype([("c", np.complex64), ("s", "S3"), ("d", np.uint8, 5)],
                                  align=True),
    "subarrays": np.dtype([("i", np.int32), ("j", np.float32, (3, 2))]),
    "nested": np.dtype([("flag", np.bool_), ("h", np.float16), ("inner", INNER),
                        ("w", np.float64, 2)], align=True),
    "padded": np.dtype({"names": ["x", "y"], "formats": [np.int32, np.float32],
                        "offsets": [4, 12], "itemsize": 24}),
}


@cuda.jit
def copy_records(src, dst):
    i = cuda.grid(1)
    if i < src.shape[0]:
        dst[i] = src[i]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_record_layouts_compile_with_their_static_asserts(name, arch):
    a = np.zeros(4, DTYPES[name])
    src = copy_records.cuda_source(a, a)
    rec = record_of(a.dtype)
    assert f"static_assert(sizeof({rec.cname}) == {a.dtype.itemsize}" in src
    # every member sits at NumPy's offset: the padding members before it make up the gap
    # (the GPU numerics in tests/gpu/test_numerics_records.py read every field back)
    for m, _, _, off, _, f in members(rec):
        assert f is None or off == a.dtype.fields[f.name][1]
        assert f"_f_{m}" in src if f is not None else True
    assert compile_cubin(copy_records, a, a, arch=arch)[:4] == b"\x7fELF"


def test_a_field_that_cannot_sit_at_its_offset_is_bytes():
    a = np.zeros(2, DTYPES["odd_float64"])
    src = copy_records.cuda_source(a, a)
    assert "unsigned char _f_b[8];  // float64" in src


def test_the_simulator_copies_records_byte_for_byte(rng):
    from threadtile.backends.sim import simulate

    for dt in DTYPES.values():
        raw = rng.integers(0, 256, 5 * dt.itemsize).astype(np.uint8)
        a = raw.view(dt)
        b = np.zeros(5, dt)
        with simulate():
            copy_records[1, 32](a, b)
        for f in dt.names:  # every field's bits (NaNs included); padding is unspecified
            assert np.ascontiguousarray(b[f]).tobytes() == np.ascontiguousarray(a[f]).tobytes()
