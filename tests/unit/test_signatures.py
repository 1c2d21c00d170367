"""jit's signatures and options, as numba has them: parsing every spelling (strings, threadtile's
types, numba's own type and signature objects), the errors for bad ones, lowering when
decorated, choosing a signature at launch (conversions, "No matching definition", ambiguity),
``specialize``/``overloads``/``signatures``, signatures of device functions, and each option.
Numerics of kernels declared with signatures are in tests/gpu/test_numerics_signatures.py."""

import numpy as np
import pytest

import threadtile as cuda
from threadtile import (
    Signature,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)
from threadtile.errors import KernelCompileError, LaunchError
from threadtile.lang import signatures as sigs
from threadtile.lang.types import ArrayType, TupleType

try:  # numba's own type objects, where numba-cuda is installed
    from numba.cuda import types as NB
except ImportError:
    NB = None

F32A, F32C = ArrayType(float32, 1, "A"), ArrayType(float32, 1, "C")

# ---- reading signatures ----------------------------------------------------------------------


@pytest.mark.parametrize("text, args, ret", [
    ("void(float32[:], float32[:])", (F32A, F32A), void),
    ("(float32[:], int32)", (F32A, int32), None),
    ("float32(float32, float32)", (float32, float32), float32),
    ("void(float64[:,:])", (ArrayType(float64, 2, "A"),), void),
    ("void(float32[:, ::1])", (ArrayType(float32, 2, "C"),), void),
    ("void(float32[::1, :])", (ArrayType(float32, 2, "A"),), void),  # Fortran: strided
    ("void(int32[::1])", (ArrayType(int32, 1, "C"),), void),
    ("void(uint32[:,:], uint32)", (ArrayType(uint32, 2, "A"), uint32), void),
    ("(double, f4, f8, f2, i1, i2, i4, i8)",
     (float64, float32, float64, float16, int8, int16, int32, int64), None),
    ("(u1, u2, u4, u8, b1, boolean, bool_, byte, intp, uintp)",
     (uint8, uint16, uint32, uint64, bool_, bool_, bool_, uint8, int64, uint64), None),
    ("none(i4)", (int32,), void),
    ("void()", (), void),
    ("  void ( int32 [ : ] , int32 , )  ", (ArrayType(int32, 1, "A"), int32), void),
    ("b1(f2, f2)", (float16, float16), bool_),
    ("i8(i8)", (int64,), int64),
    ("UniTuple(float32 x 2)(float32)", (float32,), TupleType((float32, float32))),
    ("Tuple(int32, float32)(int32)", (int32,), TupleType((int32, float32))),
])
def test_signature_strings(text, args, ret):
    s = sigs.parse(text)
    assert s.args == args and s.return_type == ret


@pytest.mark.parametrize("text, args, ret", [
    ("(array(float32, 1d, A), int32) -> none", (F32A, int32), void),
    ("(array(float64, 2d, C),) -> float64", (ArrayType(float64, 2, "C"),), float64),
    ("(readonly array(float32, 2d, C),)", (ArrayType(float32, 2, "C", readonly=True),), None),
    ("(array(int8, 3d, F), bool)", (ArrayType(int8, 3, "A"), bool_), None),
    ("(Array(float32, 1, 'A', False, aligned=True), int32) -> none", (F32A, int32), void),
    ("(UniTuple(int64 x 3),)", (TupleType((int64,) * 3),), None),
    ("(Tuple(array(int32, 1d, A), float32),)", (TupleType((ArrayType(int32, 1, "A"),
                                                           float32)),), None),
    ("(__nv_bfloat16,)", (cuda.bfloat16,), None),
])
def test_the_forms_numba_prints(text, args, ret):
    s = sigs.parse(text)
    assert s.args == args and s.return_type == ret


@pytest.mark.parametrize("text, why", [
    ("void(flaot32[:])", r"unknown type 'flaot32' \(did you mean 'float32'\?\)"),
    ("void(float32*)", "pointers are not kernel arguments"),
    ("void(CPointer(float32))", "pointers are not kernel arguments"),
    ("void(Record(a[type=int32;offset=0];4;False", "Record\\( is not closed"),
    ("void(Record(a[type=int33;offset=0];4;False))", "cannot read the record"),
    ("float32", "a signature is written"),
    ("void(float32[:]", r"expected '\)' at the end"),
    ("void(float32[1:])", r"expected ':' at '1' \(column 14\)"),
    ("void(float32[:, ::1, :])", "'::1' marks the contiguous axis"),
    ("void(void)", "void is only a return type"),
    ("void(int32) -> int32", "two return types"),
    ("void(int32) extra", "unexpected at 'extra'"),
    ("void(int32 $)", r"expected '\)' at '\$' \(column 12\)"),
])
def test_bad_signatures_are_named(text, why):
    with pytest.raises(TypeError, match=r"bad signature '.*': .*" + why):
        sigs.parse(text)
    with pytest.raises(TypeError, match=why):
        cuda.jit(text)


def test_threadtile_types_spell_arrays_and_signatures():
    assert float32[:] == F32A and float32[::1] == F32C
    assert float32[:, ::1] == ArrayType(float32, 2, "C")
    assert float64[:, :, :] == ArrayType(float64, 3, "A")
    assert int32[::1, :] == ArrayType(int32, 2, "A")
    s = void(float32[:], int32)
    assert isinstance(s, Signature) and s.args == (F32A, int32) and s.return_type is void
    assert str(s) == "void(float32[:], int32)" and repr(s) == f"threadtile.Signature({s})"
    assert float32(float32, float32).return_type is float32
    assert void().args == ()
    assert str(sigs.signature((float32[:, ::1], int64))) == "(float32[:, ::1], int64)"
    for bad in (lambda: float32[1:], lambda: float32[:, ::2], lambda: float32[::1, ::1],
                lambda: void[:], lambda: float32[()], lambda: void(float32, 3)):
        with pytest.raises(TypeError):
            bad()


def test_a_dtype_called_on_a_value_is_still_a_cast():
    x = float32(2.5)
    assert type(x) is np.float32 and x == 2.5
    assert type(int8(300 - 256)) is np.int8 and int8(44) == 44
    assert type(float64(np.float32(0.1))) is np.float64


def test_numba_aliases_are_exported():
    assert cuda.f4 is float32 and cuda.i8 is int64 and cuda.b1 is bool_ and cuda.double is float64
    assert cuda.u1 is uint8 and cuda.intp is int64 and cuda.none is void and cuda.boolean is bool_


def test_numbas_own_type_objects():
    nb = pytest.importorskip("numba.cuda")
    t = nb.types
    assert sigs.as_type(t.float32[:]) == F32A
    assert sigs.as_type(t.int32[::1]) == ArrayType(int32, 1, "C")
    assert sigs.as_type(t.float32[:, ::1]) == ArrayType(float32, 2, "C")
    assert sigs.as_type(t.float64[::1, :]) == ArrayType(float64, 2, "A")
    assert sigs.as_type(t.boolean) is bool_ and sigs.as_type(t.intp) is int64
    assert sigs.as_type(nb.float32) is float32 and sigs.as_type(t.f2) is float16
    assert sigs.as_type(t.UniTuple(t.int32, 2)) == TupleType((int32, int32))
    s = sigs.signature(t.void(t.float32[:], t.int32))
    assert s.args == (F32A, int32) and s.return_type is void
    s = sigs.signature(t.float32(t.float32, t.float64))
    assert s.args == (float32, float64) and s.return_type is float32
    assert sigs.signature((t.int64[::1], t.int64)).args == (ArrayType(int64, 1, "C"), int64)
    # threadtile's dtypes take numba's types as arguments too
    assert void(t.float32[:], int32).args == (t.float32[:], int32)
    assert sigs.signature(void(t.float32[:], int32)).args == (F32A, int32)
    assert sigs.signature((t.complex64[:],)).args == (ArrayType(complex64, 1, "A"),)
    with pytest.raises(TypeError, match="pointers"):
        sigs.signature(t.void(t.CPointer(t.int32)))


def test_complex_types_in_every_spelling():
    assert sigs.parse("void(complex64[:], c16)").args == (ArrayType(complex64, 1, "A"),
                                                          complex128)
    assert sigs.parse("(c8,) -> complex128").return_type is complex128
    assert sigs.signature(complex128(complex128)).args == (complex128,)
    assert sigs.conversion(float32, complex64) == sigs.SAFE
    assert sigs.conversion(complex64, complex128) == sigs.PROMOTE
    assert sigs.conversion(complex128, float64) is None  # a complex never becomes a real


def numba_dtypes(out, x):
    a = cuda.local.array(2, dtype=NB.float32)
    a[0] = NB.float32(x) + NB.int32(x)
    out[0] = a[0]


def test_numbas_types_as_dtypes_and_casts_in_a_kernel():
    if NB is None:
        pytest.skip("numba-cuda is not installed")
    out = np.zeros(1)
    _launch(cuda.jit(numba_dtypes), out, 2.7)
    assert out[0] == np.float32(np.float32(2.7) + np.float32(2))


# ---- jit with signatures ---------------------------------------------------------------------

def add_kernel(r, x, y):
    r[0] = x + y


def axpy(out, a, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + out[i]


def _launch(k, *args, config=(1, 1)):
    with cuda.simulate():
        k[config](*args)


@pytest.mark.parametrize("sig", [
    "void(float32[:], float32, float32[:], int32)",
    "(float32[:], float32, float32[:], int32)",
    (float32[:], float32, float32[:], int32),
    void(float32[:], float32, float32[:], int32),
    [void(float32[:], float32, float32[:], int32)],
    ["(float64[:], float64, float64[:], int32)", (float32[:], float32, float32[:], int32)],
])
def test_every_spelling_compiles_and_runs(sig, rng):
    k = cuda.jit(sig)(axpy)
    assert k.specialized and any(s[0] == F32A for s in k.signatures)
    x = rng.standard_normal(50).astype(np.float32)
    out = rng.standard_normal(50).astype(np.float32)
    ref = 1.5 * x.astype(np.float64) + out
    _launch(k, out, 1.5, x, 50, config=(2, 32))
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_a_signature_fixes_the_parameter_types():
    k = cuda.jit("void(float32[:], float32, float32[:], int32)")(axpy)
    assert list(k.overloads) == [(F32A, float32, F32A, int32)]
    src = k.cuda_source(np.zeros(4, np.float32), 1.0, np.zeros(4, np.float32), 4)
    assert "tt::Array<float, 1> out, float a, tt::Array<float, 1> x, int32_t n" in src
    assert src == k.cuda_source("void(float32[:], float32, float32[:], int32)")
    assert k.compile((float32[:], float32, float32[:], int32), arch="sm_80").cubin[:4] == \
        b"\x7fELF"


def test_a_signature_lowers_when_decorated():
    def broken(a):
        a[0] = not_defined_anywhere  # noqa: F821

    with pytest.raises(KernelCompileError, match="not_defined_anywhere"):
        cuda.jit("void(float32[:])")(broken)
    lazy = cuda.jit(broken)  # without a signature: at the first launch
    with pytest.raises(KernelCompileError):
        _launch(lazy, np.zeros(1, np.float32))


def test_signature_and_function_must_agree():
    with pytest.raises(TypeError, match="has 2 argument types, the function takes 3"):
        cuda.jit("void(float32[:], int32)")(add_kernel)
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.jit("int32(int32[:], int32, int32)")(add_kernel)

    def with_constant(a, n: cuda.Constant[int]):
        a[0] = n

    with pytest.raises(TypeError, match="Constant parameters take no signature|Constant"):
        cuda.jit("void(int32[:], int64)")(with_constant)


def test_the_best_fitting_signature_is_taken():
    k = cuda.jit(["(float64[::1], float32, float32)", "(float64[::1], float64, float64)"])(
        add_kernel)
    r = np.zeros(1)
    _launch(k, r, np.float32(1), np.float32(2 ** -25))
    assert r[0] == 1.0  # float32 arithmetic: 2**-25 is lost
    _launch(k, r, 1, 2 ** -25)  # int64 and float64: the float64 signature fits, exactly
    assert r[0] == 1 + 2 ** -25
    k = cuda.jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])(add_kernel)
    r = np.zeros(1, np.int64)
    _launch(k, r, 1, 2)
    assert r[0] == 3
    r = np.zeros(1)
    _launch(k, r, 1.5, 2.5)
    assert r[0] == 4.0
    assert len(k.overloads) == 2


def test_no_matching_definition_is_raised_before_anything_runs():
    k = cuda.jit("(int32[::1], int32, int32)")(add_kernel)
    r = np.full(1, 7, np.int32)
    for args in [(r, 1.5, 2), (r.astype(np.float64), 1, 2), (np.zeros((1, 1), np.int32), 1, 2),
                 (r, np.zeros(1, np.int32), 2)]:
        with pytest.raises(TypeError, match=r"add_kernel: No matching definition for argument "
                                            r"type\(s\) .*; it was compiled for "
                                            r"\(int32\[::1\], int32, int32\)"):
            _launch(k, *args)
    with pytest.raises(TypeError, match=r"type\(s\) complex128\[::1\], complex128, "
                                         r"complex128"):
        _launch(k, np.zeros(1, np.complex128), 1j, 1j)
    assert r[0] == 7
    with pytest.raises(TypeError, match="No matching definition"):  # without the simulator
        k[1, 1](r, 1.5, 2)


def test_ambiguous_signatures_are_refused():
    k = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(add_kernel)
    with pytest.raises(TypeError, match=r"Ambiguous overloading .*float64\[::1\], float64, "
                                        r"float64.*\(float64\[::1\], float32, float64\) and "
                                        r"\(float64\[::1\], float64, float32\)"):
        _launch(k, np.zeros(1), 1.0, 2.0)


def test_launch_arguments_convert_as_numba_converts():
    k = cuda.jit("void(int32[:], int32)")(add_kernel_one)
    r = np.zeros(3, np.int32)
    _launch(k, r, 0xFFFFFFFF)  # an int wraps to the parameter's width, as a C cast
    assert r[0] == -1
    _launch(k, r, True)  # a bool converts to an integer
    assert r[0] == 1
    base = np.zeros(6, np.int32)
    _launch(k, base[::2], 5)  # a strided view to an "A" parameter
    assert base.tolist() == [5, 0, 0, 0, 0, 0]
    c = cuda.jit("void(int32[::1], int32)")(add_kernel_one)
    with pytest.raises(TypeError, match="No matching definition"):
        _launch(c, base[::2], 5)  # a "C" parameter takes contiguous arrays only
    f = cuda.jit("void(float32[:], float32)")(add_kernel_one)
    a = np.zeros(1, np.float32)
    _launch(f, a, 2 ** 24 + 1)  # an int to a float32: rounded
    assert a[0] == np.float32(2 ** 24)


def add_kernel_one(r, v):
    r[0] = v


def test_specialize():
    k = cuda.jit(add_kernel)
    assert not k.specialized and k.specializations == {} and k.signatures == []
    s1 = k.specialize(np.zeros(1), 1.0, 2.0)
    assert s1.specialized and s1.signatures == [(ArrayType(float64, 1, "C"), float64, float64)]
    assert k.specialize(float64[::1], float64, float64) is s1  # the same types: the same kernel
    s2 = k.specialize(float64[:], float64, float64)
    assert s2 is not s1 and len(k.specializations) == 2
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        s1.specialize(float64[::1], float64, float64)
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        cuda.jit("void(float32[::1], float32, float32)")(add_kernel).specialize(float32[::1])
    r = np.zeros(1)
    _launch(s1, r, 1, 2)
    assert r[0] == 3.0
    with pytest.raises(TypeError, match="No matching definition"):
        _launch(s1, r[::1].astype(np.float32), 1, 2)


def test_overloads_and_signatures_of_a_lazy_kernel():
    k = cuda.jit(add_kernel)
    _launch(k, np.zeros(1), 1.0, 2.0)
    _launch(k, np.zeros(1), 1, 2.0)
    assert k.signatures == [(ArrayType(float64, 1, "C"), float64, float64),
                            (ArrayType(float64, 1, "C"), int64, float64)]
    assert len(k.overloads) == 2


# ---- device functions ------------------------------------------------------------------------

def add(x, y):
    return x + y


def call_add(r, x, y):
    r[0] = dev_add(x, y)


dev_add = cuda.jit("float32(float32, float32)", device=True)(add)


def test_a_device_signature_converts_arguments_and_result():
    k = cuda.jit(call_add)
    r = np.zeros(1)
    src = k.cuda_source(r, 1.0, 2.0)
    assert "__device__ __forceinline__ float add(float x, float y)" in src
    assert "(double)add((float)x, (float)y)" in src
    _launch(k, r, 1.0, 2 ** -25)  # float64 arguments become float32: 2**-25 is lost
    assert r[0] == 1.0


def test_device_signatures_pick_the_first_best():
    global dev_add
    saved = dev_add
    try:
        dev_add = cuda.jit(["(float32, float64)", "(float64, float32)", "(int64, int64)"],
                           device=True)(add)
        r = np.zeros(1)
        _launch(cuda.jit(call_add), r, 1.5, 2.5)
        assert r[0] == 4.0
        dev_add = cuda.jit(["(int64, int64)"], device=True)(add)  # a cast, as numba converts
        k = cuda.jit(call_add)
        # the C++ of call_add cached by the test above is not reused: the device function's
        # signatures changed
        assert "int64_t add(int64_t x, int64_t y)" in k.cuda_source(r, 1.5, 2.5)
        _launch(k, r, 1.5, 2.5)
        assert r[0] == 3.0
    finally:
        dev_add = saved


def returns_nothing(x):
    x += 1


def returns_a_value(x):
    return x * 2


def test_device_return_types_are_checked():
    with pytest.raises(KernelCompileError, match="declared to return float32, but it returns "
                                                 "nothing"):
        cuda.jit("float32(float32)", device=True)(returns_nothing)
    with pytest.raises(KernelCompileError, match="declared void, but it returns a value"):
        cuda.jit("void(float32)", device=True)(returns_a_value)
    d = cuda.jit("(float32,)", device=True)(returns_a_value)  # the return type is inferred
    assert d.declared_signatures[0].return_type is None


def call_twice(r, a):
    r[0] = dev_twice(a)


def twice(a):
    return a[0] * 2


dev_twice = cuda.jit("float32(float32[:])", device=True)(twice)


def test_a_device_call_with_no_matching_signature_is_refused():
    with pytest.raises(KernelCompileError, match=r"has no signature for argument types "
                                                 r"\(float64\[::1\]\)"):
        _launch(cuda.jit(call_twice), np.zeros(1), np.zeros(1))


# ---- options ---------------------------------------------------------------------------------

def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


@pytest.mark.parametrize("opts, flags", [
    ({}, ("-lineinfo",)),
    ({"debug": True, "opt": False}, ("-G",)),
    ({"debug": True}, ("-G", "-dopt=on")),
    ({"opt": False}, ("--ptxas-options=-O0", "-lineinfo")),
    ({"opt": 0, "lineinfo": False}, ("--ptxas-options=-O0",)),
    ({"fastmath": True, "max_registers": 40, "lineinfo": False},
     ("--use_fast_math", "--maxrregcount=40")),
    ({"cache": True, "inline": "always", "forceinline": True, "lto": True, "link": [],
      "extensions": [], "boundscheck": False, "shared_memory_carveout": "MaxShared"}, None),
])
def test_numbas_options_are_accepted(opts, flags):
    k = cuda.jit(**opts)(fill)
    if flags is not None:
        assert k.options == flags
    a = np.zeros(40, np.int64)
    _launch(k, a, config=(2, 32))
    assert a.tolist() == list(range(40))


def test_debug_and_opt_compile():
    k = cuda.jit("void(int64[:])", debug=True, opt=False)(fill)
    assert k.compile("void(int64[:])", arch="sm_80").cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("bounds, text", [
    (128, "__launch_bounds__(128) fill("),
    ((128,), "__launch_bounds__(128) fill("),
    ((128, 2), "__launch_bounds__(128, 2) fill("),
    ((128, 2, 4), "#define TT_LAUNCH_BOUNDS_fill __launch_bounds__(128, 2, 4)"),
])
def test_launch_bounds(bounds, text):
    k = cuda.jit("void(int64[:])", launch_bounds=bounds)(fill)
    assert text in k.cuda_source("void(int64[:])")
    for arch in ("sm_80", "sm_90"):  # clusters exist from sm_90: sm_80 drops the third
        assert k.compile("void(int64[:])", arch=arch).cubin[:4] == b"\x7fELF"
    a = np.zeros(128, np.int64)
    _launch(k, a, config=(1, 128))
    assert a.tolist() == list(range(128))
    with pytest.raises(LaunchError, match=r"CUDA_ERROR_INVALID_VALUE: .*blocks of at most "
                       r"128 threads") as e:
        _launch(k, a, config=(1, 256))
    # what the driver would say, as the error numba-cuda's users catch (cuda.core's)
    from cuda.core._utils.cuda_utils import CUDAError
    assert isinstance(e.value, CUDAError) and e.value.name == "CUDA_ERROR_INVALID_VALUE"


@pytest.mark.parametrize("opts, exc, msg", [
    ({"launch_bounds": (128, 2, 4, 8)}, ValueError, "Got 4 launch bounds"),
    ({"launch_bounds": 0}, ValueError, "positive ints"),
    ({"launch_bounds": 2048}, ValueError, "at most 1024"),
    ({"shared_memory_carveout": 150}, ValueError, "must be between -1 and 100"),
    ({"shared_memory_carveout": -2}, ValueError, "must be between -1 and 100"),
    ({"shared_memory_carveout": "InvalidOption"}, ValueError, "Invalid carveout value"),
    ({"link": ["f.cu"]}, ValueError, "does not link"),
    ({"extensions": [object()]}, ValueError, "has no prepare_args"),
    ({"boundscheck": True}, ValueError, "simulate"),
    ({"inline": "sometimes"}, ValueError, "'never', 'always'"),
    ({"no_such_option": 1}, TypeError, "unknown option no_such_option"),
])
def test_bad_options_are_refused_when_decorating(opts, exc, msg):
    with pytest.raises(exc, match=msg):
        cuda.jit(**opts)(fill)
    with pytest.raises(exc, match=msg):
        cuda.jit("void(int64[:])", **opts)(fill)


@pytest.mark.parametrize("carveout", ["MaxL1", "MaxShared", "default", 0, 50, 100, -1])
def test_valid_carveouts(carveout):
    k = cuda.jit(shared_memory_carveout=carveout)(fill)
    assert -1 <= k.numba_options["shared_memory_carveout"] <= 100


def test_extensions_are_a_list_given_by_jit():
    k = cuda.jit(fill)
    assert k.extensions == []

    class Ext:
        def prepare_args(self, ty, val, **kwargs):
            return ty, val

    e = Ext()
    assert cuda.jit(extensions=[e])(fill).extensions == [e]


def test_launch_bounds_are_for_kernels():
    with pytest.raises(ValueError, match="device function"):
        cuda.jit(device=True, launch_bounds=128)(add)


def test_answers_by_types_take_numbas_types_as_keys():
    """get_regs_per_thread() and inspect_asm() answer a dict by argument types that numba's
    own types (sig.args of numba's void(float32[::1], int64)) also index."""
    numba_types = pytest.importorskip("numba.cuda.types")
    from threadtile.lang.signatures import ByTypes, signature

    key = tuple(signature("void(float32[::1], int64)").args)
    d = ByTypes({key: 7})
    nsig = numba_types.void(numba_types.float32[::1], numba_types.int64)
    assert d[nsig.args] == 7 and nsig.args in d and d.get(nsig.args) == 7
    assert d.get((numba_types.float64[::1], numba_types.int64)) is None
    with pytest.raises(KeyError):
        d[(numba_types.float64[::1],)]
