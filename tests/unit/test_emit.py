"""The CUDA C++ emitter: readable names, #line directives back to the Python source, float32
code without doubles, and the spellings that earlier bugs got wrong."""

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pytest
import unit_kernels as uk
from conftest import compile_source
from kernels import MODULES, language, lecture, mathfuncs, numba_docs, warp

import threadtile
from threadtile.backends.cuda.cxx import literal as _literal
from threadtile.lang.types import float16, float32, float64, int8, int64, uint32, uint64

F32 = np.zeros(4, np.float32)
LINE = re.compile(r'^#line (\d+) "(.*)"$')


def body(source: str) -> str:
    """The source without #line directives."""
    return "\n".join(ln for ln in source.splitlines() if not ln.startswith("#line"))


def statement_after(source: str, path: str, marker: str) -> str:
    """The C++ statement emitted right after the #line directive for the Python line of
    ``path`` that ends with ``# L <marker>``."""
    lines = Path(path).read_text().splitlines()
    (n,) = [k for k, t in enumerate(lines, 1) if t.rstrip().endswith(f"# L {marker}")]
    cxx = source.splitlines()
    for k, text in enumerate(cxx):
        m = LINE.match(text)
        if m and int(m.group(1)) == n and m.group(2) == path:
            return cxx[k + 1].strip()
    raise AssertionError(f"no #line {n} in the source")


# ---- names and #line -------------------------------------------------------------------------

def test_names_come_from_the_python_source():
    src = body(lecture.matmul_static.cuda_source(*lecture.EXAMPLES["matmul_static"][0][0]))
    for decl in ("__shared__ float ms[16][16];", "int64_t tr = (int64_t)threadIdx.y;",
                 "int64_t h = m.shape[0];", "float p = 0.0f;", "p = p + ms[tr][i] * ns[i][tc];",
                 "out(r, c) = p;"):
        assert decl in src


def test_cxx_keywords_and_reserved_prefixes_are_renamed():
    src = uk.reserved_names.cuda_source(F32)
    assert "float new_ = a(0LL);" in src and "float double_ = new_ * 2.0f;" in src
    assert "float tt_x_ = double_ + 1.0f;" in src
    assert compile_source(src, "sm_80")[:4] == b"\x7fELF"


def test_locals_named_like_math_functions_do_not_hide_them():
    src = uk.shadows_math.cuda_source(np.zeros(4))
    assert "double log_ = log(a(i));" in src and "bool isnan_ = isnan(exp_);" in src
    assert compile_source(src, "sm_90")[:4] == b"\x7fELF"


def test_line_directives_point_at_the_python_statement():
    src = uk.weak_accumulator.cuda_source(F32, F32, F32)
    assert statement_after(src, uk.__file__, "acc-update") == "acc = acc + a(i) * b(i);"
    assert statement_after(src, uk.__file__, "acc-init") == "float acc = 0.0f;"


def _all_kernel_sources():
    for name in MODULES:
        mod = importlib.import_module(f"kernels.{name}")
        for kname, examples in mod.EXAMPLES.items():
            args, consts = examples[0]
            yield pytest.param(getattr(mod, kname), args, consts, id=f"{name}.{kname}")


@pytest.mark.parametrize(("kernel", "args", "consts"), list(_all_kernel_sources()))
def test_every_line_directive_names_a_line_of_the_kernel(kernel, args, consts):
    """Every #line names the kernel's own file and a line inside one of the functions it
    compiles (the kernel or a device function it calls)."""
    src = kernel.cuda_source(*args, **consts)
    module = kernel._spec_for(args, consts).module
    spans = {}
    for f in module.kernel.all_functions():
        lines, first = _source_span(f.pyfunc)
        spans.setdefault(f.source_file, []).append((first, first + lines - 1))
    directives = [LINE.match(t) for t in src.splitlines() if t.startswith("#line")]
    assert directives, "no #line directives"
    for m in directives:
        n, path = int(m.group(1)), m.group(2)
        assert path in spans, f"#line names {path}"
        assert any(lo <= n <= hi for lo, hi in spans[path]), f"#line {n} outside the functions"


def _source_span(fn):
    import inspect  # noqa: PLC0415

    lines, first = inspect.getsourcelines(fn)
    return len(lines), first


def test_sources_without_line_directives():
    from threadtile.backends.cuda.emit import emit_module  # noqa: PLC0415

    module = uk.weak_accumulator._spec_for((F32, F32, F32), {}).module
    assert "#line" not in emit_module(module, line_directives=False).text


# ---- no double in float32 code ---------------------------------------------------------------

@pytest.mark.parametrize(("kernel", "args"), [
    (language.scale_half, (F32, F32)), (language.dot_acc, (F32, F32, F32)),
    (uk.weak_accumulator, (F32, F32, F32)), (uk.literal_mix, (F32, F32)),
    (lecture.matmul_naive, (np.zeros((4, 4), np.float32),) * 3),
    (numba_docs.matmul, (np.zeros((4, 4), np.float32),) * 3),
    (numba_docs.fast_matmul, (np.zeros((4, 4), np.float32),) * 3),
    (mathfuncs.unary_math, (F32, np.zeros((mathfuncs.N_UNARY, 4), np.float32))),
    (warp.warp_sum, (F32, F32)),
])
def test_float32_kernels_have_no_double(kernel, args):
    src = kernel.cuda_source(*args)
    assert not re.search(r"\bdouble\b", src), [ln for ln in src.splitlines() if "double" in ln]
    assert not re.search(r"\d\.\d+(e[-+]?\d+)?(?![\df])", body(src).replace("LL", "")), \
        "a float literal without its f suffix is a double"


def test_float32_math_uses_the_float_functions():
    src = mathfuncs.unary_math.cuda_source(F32, np.zeros((mathfuncs.N_UNARY, 4), np.float32))
    for fn in ("sqrtf(", "expf(", "logf(", "powf(", "sinf(", "tanhf(", "erff(", "floorf("):
        assert fn in src
    assert "sqrt(" not in src.replace("sqrtf(", "")


# ---- spellings -------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "t", "text"), [
    (0.5, float32, "0.5f"), (2.0, float64, "2.0"), (1e-30, float32, "1e-30f"),
    (math.nan, float32, "__int_as_float(0x7fc00000)"),
    (-math.inf, float64, "-__longlong_as_double(0x7ff0000000000000LL)"),
    (math.nan, float16, "__half(__int_as_float(0x7fc00000))"), (1.5, float16, "__half(1.5f)"),
    (math.inf, float16, "__half(__int_as_float(0x7f800000))"),
    (7, int64, "7LL"), (-3, int8, "int8_t(-3)"), (0xFFFFFFFF, uint32, "0xffffffffu"),
    (1 << 63, uint64, "0x8000000000000000ULL"), (5, uint64, "5ULL"),
])
def test_literals(value, t, text):
    assert _literal(value, t) == text


def test_constant_arrays_bound_to_names_are_views():
    src = language.const_arrays.cuda_source(np.zeros((8, 3), np.float32))
    assert "__constant__ float const_0[5] = {1.5f, -2.0f, 0.25f, 4.0f, -0.5f};" in src
    assert "auto c = tt::CArray<float, 1>{&const_0[0], {5}, {1}};" in src


def test_dynamic_shared_memory_and_its_views():
    m = np.zeros((4, 4), np.float32)
    src = lecture.matmul_dynamic.cuda_source(m, m, m, tw=16)
    assert "extern __shared__ __align__(16) unsigned char tt_dynamic_smem[];" in src
    assert "tt::CArray<float, 1> sh = {(float*)tt_dynamic_smem" in src
    assert "auto ms = tt::CArray<float, 1>{sh.data, {tt::slice_len(0, 256LL, 1LL" in src


def test_device_functions_come_before_the_kernel():
    src = language.device_calls.cuda_source(F32, F32, F32, np.zeros((4, 2), np.int64))
    order = [src.index(s) for s in ("float square(float x)", "float hypot2(float a, float b)",
                                     "float clamp(float x, double lo, double hi)",
                                     'extern "C" __global__ void device_calls(')]
    assert order == sorted(order)
    assert "__device__ __forceinline__ float square(float x)" in src


def test_python_division_only_where_the_sign_can_be_negative():
    src = body(language.pydivmod.cuda_source(*language.EXAMPLES["pydivmod"][0][0]))
    assert "tt::floordiv(a(i), b(i))" in src and "tt::pymod(a(i), b(i))" in src
    lanes = body(language.lanes.cuda_source(np.zeros((4, 3), np.int32)))
    # t is a sum of thread indices: never negative, so C's division is Python's
    assert "out(i, 2LL) = (int32_t)(t / 32LL);" in lanes


def test_true_division_of_integers_keeps_a_float_operand():
    src = body(language.true_division.cuda_source(*language.EXAMPLES["true_division"][0][0]))
    assert "out(i, 0LL) = a(i) / (double)b(i);" in src


@pytest.mark.parametrize(("dtype", "clz"), [(np.int8, "__clz((uint32_t)((uint8_t)(v))) - 24"),
                                            (np.uint16, "__clz((uint32_t)((uint16_t)(v))) - 16"),
                                            (np.int32, "__clz((uint32_t)(v))")])
def test_bit_functions_count_within_the_type(dtype, clz):
    src = warp.bit_ops.cuda_source(np.zeros(8, dtype), np.zeros((8, 4), dtype))
    assert clz in src


def test_half_precision_predicates_and_powers_go_through_float():
    h = np.zeros(8, np.float16)
    src = mathfuncs.nan_inf.cuda_source(h, np.zeros((8, 3), np.bool_), np.zeros((8, 3),
                                                                                  np.float16))
    assert "isnan(float(v))" in src and "isinf(float(v))" in src
    src = mathfuncs.unary_math.cuda_source(h, np.zeros((mathfuncs.N_UNARY, 8), np.float16))
    assert "__half(powf(float(a), float(__half(0.5f))))" in src


# ---- for loops -------------------------------------------------------------------------------

def test_loop_local_variables_are_declared_by_their_loops():
    src = body(language.loop_variables.cuda_source(np.zeros(4, np.int32),
                                                   np.zeros(4, np.int64)))
    assert src.count("for (int32_t q = 0, q_stop = ") == 2  # each loop scopes its own bound


def test_a_loop_variable_read_after_the_loop_keeps_its_last_value():
    src = body(language.loop_variables.cuda_source(np.zeros(4, np.int32),
                                                   np.zeros(4, np.int64)))
    assert "for (int32_t tt_k = 0, k_stop = n(0LL); tt_k < k_stop; ++tt_k) {\n    k = tt_k;" \
        in src
    # the body's j += 10 cannot skip iterations
    assert "j = tt_j;\n    j = tt::wadd(j, 10LL);" in src


def test_loop_sources_compile():
    src = language.loop_variables.cuda_source(np.zeros(4, np.int32), np.zeros(4, np.int64))
    assert compile_source(src, "sm_90")[:4] == b"\x7fELF"



EMPTY = np.array([])


def test_an_empty_constant_array_compiles(target):
    # C++ has no zero-sized arrays: `__constant__ double c[0]` did not compile
    import threadtile as cuda

    @cuda.jit("void(int64[:])")
    def k(a):
        c = cuda.const.array_like(EMPTY)
        a[cuda.grid(1)] = len(c)

    for arch in ("sm_80", "sm_90"):
        assert k.compile("void(int64[:])", arch=arch).cubin
    a = target.to_device(np.full(1, -1, np.int64))
    target.launch(k, 1, 1, a)
    assert target.to_host(a)[0] == 0


@threadtile.jit
def _u16_product(a, b, out):
    i = threadtile.threadIdx.x
    out[i] = a[i] * b[i]


def test_a_uint16_product_wraps_in_unsigned():
    """C++ multiplies two uint16 values in int, where 65535 * 65535 overflows: the product
    goes through tt::wmul (unsigned arithmetic) and wraps as NumPy's does."""
    a = np.array([65535, 300, 2], np.uint16)
    out = np.zeros(3, np.uint16)
    src = _u16_product.cuda_source(a, a, out)
    assert "tt::wmul(a(i), b(i))" in src
    assert compile_source(src, "sm_90")[:4] == b"\x7fELF"
    with threadtile.simulate():
        _u16_product[1, 3](a, a, out)
    assert out.tolist() == [int(x) ** 2 % 65536 for x in a]


def test_constant_records_padding_is_zeros():
    """A constant array of records is spelled from its fields' values alone: bytes in the
    padding between and after fields (uninitialized in many NumPy arrays) come out as zeros,
    so the source, and the cubin cache's key, is the same from run to run."""
    from threadtile.backends.cuda.records import initializer
    from threadtile.lang.records import record_of

    dt = np.dtype([("k", np.int8), ("x", np.float64), ("y", np.int32)], align=True)
    a = np.zeros(2, dt)
    a["k"], a["x"], a["y"] = [1, -2], [0.5, 2.0], [7, 9]
    b = np.frombuffer(bytearray(a.tobytes()), dt).copy()
    raw = bytearray(b.tobytes())
    raw[1:8] = b"\xab" * 7  # the padding after k, and after y
    raw[20:24] = b"\xcd" * 4
    b = np.frombuffer(bytes(raw), dt)
    assert (b["k"] == a["k"]).all() and (b["x"] == a["x"]).all() and (b["y"] == a["y"]).all()
    t = record_of(dt)
    one = [initializer(t, x[k:k + 1].tobytes()) for x in (a, b) for k in range(2)]
    assert one[:2] == one[2:]
    assert "171" not in "".join(one) and "205" not in "".join(one)
    assert one[0].startswith("{int8_t(1), {0, 0, 0, 0, 0, 0, 0}, 0.5, 7, {0, 0, 0, 0}}")
