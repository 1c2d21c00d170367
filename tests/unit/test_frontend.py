"""The frontend's typing rules: the promotion table, weak literals (NEP 50), constant folding,
the variable-type fixpoint, device-function specialization and Constant parameters."""

import math
from pathlib import Path

import numpy as np
import pytest
import unit_kernels as uk
from kernels import language, lecture

from threadtile.errors import KernelCompileError
from threadtile.frontend import typing as ty
from threadtile.ir import nodes as ir
from threadtile.lang.types import (
    ArrayType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    promote,
    uint8,
    uint16,
    uint32,
    uint64,
)

F32 = np.zeros(4, np.float32)


def spec(kernel, *args, **constants):
    return kernel._spec_for(args, constants)


def locals_of(kernel, *args, **constants) -> dict:
    return spec(kernel, *args, **constants).module.kernel.locals


def body_of(kernel, *args, **constants) -> list:
    return spec(kernel, *args, **constants).module.kernel.body


# ---- the promotion table ---------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "want"), [
    (int8, int16, int16), (uint8, uint32, uint32), (int32, int64, int64),
    (int32, uint32, int64), (int8, uint8, int16), (int16, uint16, int32),
    (int32, uint16, int32), (int16, uint32, int64), (int64, uint64, int64),
    (int64, float32, float32), (uint8, float16, float16), (int32, float64, float64),
    (float16, bfloat16, float32), (float16, float32, float32), (float32, float64, float64),
    (bfloat16, float64, float64), (bool_, int8, int8), (bool_, float16, float16),
    (bool_, bool_, bool_), (uint64, uint64, uint64),
])
def test_promotion_table(a, b, want):
    assert promote(a, b) == want
    assert promote(b, a) == want


@pytest.mark.parametrize(("weak", "strong", "want"), [
    (float64, float32, float32), (float64, float16, float16), (float64, bfloat16, bfloat16),
    (int64, int8, int8), (int64, uint16, uint16), (int64, float32, float32),
    (float64, int32, float64),  # a float literal with an integer gives float64, as in NumPy
    (bool_, uint8, uint8), (int64, bool_, int64), (float64, bool_, float64),
])
def test_weak_literal_takes_the_strong_type(weak, strong, want):
    assert ty.unify(weak, True, strong, False) == (want, False)
    assert ty.unify(strong, False, weak, True) == (want, False)


def test_two_weak_literals_stay_weak():
    assert ty.unify(int64, True, float64, True) == (float64, True)
    assert ty.unify(int64, True, int64, True) == (int64, True)


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    ("/", int32, int32, float64), ("/", float32, int32, float32), ("+", bool_, bool_, int64),
    ("//", int8, int8, int8), ("%", uint16, uint16, uint16), ("*", float16, bfloat16, float32),
    ("&", bool_, bool_, bool_),
])
def test_operator_result_types(op, a, b, want):
    assert ty.arith_type(op, a, False, b, False)[0] == want


@pytest.mark.parametrize(("value", "t", "want"), [
    (300, uint8, 44), (-1, uint32, 0xFFFFFFFF), (200, int8, -56), (1 << 63, int64, -(1 << 63)),
    (2.5, int32, 2), (-2.5, int32, -2), (0.1, float32, float(np.float32(0.1))), (3, bool_, True),
])
def test_constants_convert_like_c(value, t, want):
    assert ty.py_value(value, t) == want


# ---- the float rule --------------------------------------------------------------------------

def test_accumulator_literal_takes_the_array_type():
    assert locals_of(uk.weak_accumulator, F32, F32, F32)["acc"] == float32
    text = uk.weak_accumulator.ir(F32, F32, F32)
    assert "float64" not in text
    assert "acc = 0.0:float32" in text


def test_accumulator_follows_float64_arrays():
    f64 = np.zeros(4)
    assert locals_of(uk.weak_accumulator, f64, f64, f64)["acc"] == float64


def test_literals_and_weak_variables_keep_float32():
    text = uk.literal_mix.ir(F32, F32)
    assert "float64" not in text
    assert "0.5:float32" in text and "float32(k)" in text
    assert locals_of(uk.literal_mix, F32, F32)["k"] == int64  # k = 3 alone: a weak int


@pytest.mark.parametrize(("kernel", "args"), [
    (language.scale_half, (F32, F32)), (language.dot_acc, (F32, F32, F32)),
    (uk.weak_accumulator, (F32, F32, F32)), (uk.literal_mix, (F32, F32))])
def test_no_float64_anywhere_in_float32_kernels(kernel, args):
    assert "float64" not in kernel.ir(*args)


def test_weak_arguments_stay_weak_in_device_functions():
    """clamp(a[0], 0.5, 4.0) computes in float32, as the same expression inline would."""
    module = spec(uk.clamp_f32, F32).module
    clamp = module.kernel.callees[0]
    assert clamp.return_type == float32
    assert [(p.type, p.weak) for p in clamp.params] == [(float32, False), (float64, True),
                                                        (float64, True)]
    text = uk.clamp_f32.ir(F32)
    assert "(x < float32(lo))" in text


def test_device_function_specializations_are_shared():
    """Two calls with the same argument types reach one specialization; a different weak-ness
    of the arguments is a different one (language.device_calls calls square twice)."""
    module = spec(language.device_calls, F32, F32, F32, np.zeros((4, 2), np.int64)).module
    names = [f.name for f in module.kernel.all_functions()]
    assert names.count("square") == 1 and "square_1" in names  # float32 and int64 variants
    assert names[-1] == "device_calls"


# ---- constant folding ------------------------------------------------------------------------

def test_constant_folding_follows_python():
    stores = [s for s in body_of(uk.folding, np.zeros(8)) if isinstance(s, ir.Store)]
    values = [s.value.value for s in stores]
    assert all(isinstance(s.value, ir.Const) for s in stores)
    assert values == [7.0, -4.0, 2.0, 4.0, 1024.0, 2.0, 9.0]  # -7 // 2 == -4, -7 % 3 == 2


def test_if_on_a_global_constant_keeps_only_the_taken_branch():
    body = body_of(uk.folding, np.zeros(8))
    assert not any(isinstance(s, ir.If) for s in ir.walk_stmts(body))
    assert len([s for s in body if isinstance(s, ir.Store)]) == 7


def test_constant_division_by_zero_is_a_compile_error():
    with pytest.raises(KernelCompileError, match="divides by zero"):
        uk.divides_by_zero.cuda_source(np.zeros(2))


def test_math_on_constants_is_folded():
    assert math.isclose(next(s.value.value for s in body_of(uk.folding, np.zeros(8))
                             if isinstance(s, ir.Store) and s.indices[0].value == 3), 4.0)


# ---- variable types --------------------------------------------------------------------------

def test_fixpoint_types_a_variable_read_before_its_typed_assignment():
    assert locals_of(uk.fixpoint, F32, F32) == {"p": float32, "q": float32, "i": int64}


def test_integer_promotions_in_kernels():
    out = np.zeros(4)
    stores = [s for s in body_of(uk.int_promotions, np.zeros(2, np.int32),
                                 np.zeros(2, np.uint32), np.zeros(2, np.int8), out)
              if isinstance(s, ir.Store)]
    types = [s.value.value.type if isinstance(s.value, ir.Cast) else s.value.type
             for s in stores]
    assert types == [int64, int8, float64, int32]


def test_special_register_types():
    # thread and block indices are int64 (numba's index arithmetic): no overflow past 2**31
    assert locals_of(uk.specials, np.zeros(2)) == {"t": int64, "g": int64, "lane": int32}


def test_math_floor_is_an_int_and_np_floor_a_float():
    stores = [s for s in body_of(uk.floors, F32, F32) if isinstance(s, ir.Store)]
    assert isinstance(stores[0].value, ir.Cast) and stores[0].value.value.type == int64
    assert stores[1].value.type == float32


def test_a_literal_assigned_to_a_parameter_takes_its_type():
    f = spec(uk.retype_param_literal, F32, np.int32(3)).module.kernel
    assert f.params[1].type == int32 and "n" not in f.locals
    assert "n = 0:int32" in uk.retype_param_literal.ir(F32, np.int32(3))


def test_shape_unpacking_len_and_ndim():
    text = uk.constant_shape.ir(np.zeros((2, 3)), np.zeros(2))
    assert "h = a.shape[0]" in text and "w = a.shape[1]" in text
    assert "2?" in text  # a.ndim is a compile-time constant


# ---- specialization --------------------------------------------------------------------------

def test_constant_parameters_compile_one_variant_per_value():
    a = np.zeros(8, np.float32)
    s1, s4 = spec(language.unrolled_sum, a, a, n=1), spec(language.unrolled_sum, a, a, n=4)
    assert s1 is not s4
    assert spec(language.unrolled_sum, a, a, n=4) is s4
    assert "k < 4LL" in s4.source and "k < 1LL" in s1.source
    assert [p.type for p in s4.module.kernel.params if not p.is_constant] == [
        ArrayType(float32, 1, "C")] * 2
    assert "void unrolled_sum(tt::CArray<float, 1> a, tt::CArray<float, 1> out)" in s4.source


def test_lecture_dynamic_tile_width_is_a_template_constant():
    m = np.zeros((4, 4), np.float32)
    src = lecture.matmul_dynamic.cuda_source(m, m, m, tw=16)
    assert "256LL" in src and "tw" not in src


def test_layout_is_part_of_the_specialization():
    m = np.zeros((4, 4), np.float32)
    c = spec(lecture.matmul_naive, m, m, m)
    t = spec(lecture.matmul_naive, m.T, m, m)
    assert c is not t
    assert "tt::CArray<float, 2> m" in c.source and "tt::Array<float, 2> m" in t.source


def test_globals_and_closures_are_frozen_as_constants():
    src = language.frozen_globals.cuda_source(F32, F32)
    assert "* 3.0f + 0.25f" in src
    assert "* 2.0f + 1.0f" in language.affine_2_1.cuda_source(F32, F32)
    assert "* -3.0f + 0.5f" in language.affine_m3_half.cuda_source(F32, F32)


def test_a_changed_global_does_not_change_a_compiled_kernel(tmp_path, monkeypatch):
    """numba's rule: the value at compile time is the value."""
    import importlib  # noqa: PLC0415

    (tmp_path / "frozen_mod.py").write_text(
        "import threadtile as cuda\nFACTOR = 2\n\n\n@cuda.jit\ndef k(a):\n"
        "    a[0] = a[0] * FACTOR\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("frozen_mod")
    before = mod.k.cuda_source(F32)
    mod.FACTOR = 5
    assert mod.k.cuda_source(F32) == before and "* 2.0f" in before
    assert "* 5.0" in mod.k.cuda_source(np.zeros(4))  # a new specialization reads it anew


def test_kernel_source_lines_come_from_its_file():
    f = spec(uk.weak_accumulator, F32, F32, F32).module.kernel
    assert Path(f.source_file).name == "unit_kernels.py"
    assign = next(s for s in ir.walk_stmts(f.body) if isinstance(s, ir.Assign)
                  and s.name == "acc" and isinstance(s.value, ir.BinOp))
    line = Path(f.source_file).read_text().splitlines()[assign.loc.line - 1]
    assert line.rstrip().endswith("# L acc-update")
