"""Thread-level intrinsics (``ir.Call``) -> CUDA C++: ``CALLS`` has one entry per name of
the registry's ``INTRINSICS`` (ir/ops.py), each giving the C++ text and its precedence."""

from __future__ import annotations

from ...ir import nodes as ir
from ...ir.ops import ATOMICS, CMATH1
from ...lang.types import Type, float32, float64
from . import coop
from .cxx import PREC, tuple_struct

# math intrinsics: name -> (float spelling, double spelling)
MATH = {n: (n + "f", n) for n in (
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma",
    "tgamma", "exp2", "rsqrt", "cbrt", "floor", "ceil", "trunc", "fabs", "pow", "atan2",
    "hypot", "copysign", "fmod", "rint", "fma", "remainder", "nextafter", "ldexp", "fmin",
    "fmax")}

_CALLS = {  # intrinsic -> C++ format (args by position)
    "syncthreads": "tt::syncthreads()", "syncthreads_count": "__syncthreads_count({0})",
    "syncthreads_and": "__syncthreads_and({0})", "syncthreads_or": "__syncthreads_or({0})",
    "syncwarp": "__syncwarp({0})", "threadfence": "__threadfence()",
    "threadfence_block": "__threadfence_block()", "threadfence_system": "__threadfence_system()",
    "activemask": "__activemask()", "lanemask_lt": "tt::lanemask_lt()",
    "all_sync": "__all_sync({0}, {1})", "any_sync": "__any_sync({0}, {1})",
    "eq_sync": "__uni_sync({0}, {1})", "ballot_sync": "__ballot_sync({0}, {1})",
    "match_any_sync": "__match_any_sync({0}, {1})",
    "cg.this_grid": "(void)cooperative_groups::this_grid()",
    "cg.grid_sync": "cooperative_groups::this_grid().sync()",
    "griddepcontrol.wait": "tt::griddep_wait()",
    "griddepcontrol.launch_dependents": "tt::griddep_launch_dependents()",
    "round_ndigits": "tt::round_ndigits({0}, {1})",
    "selp": "tt::selp({0}, {1}, {2})",
}
_SHFL = {"shfl_sync": "__shfl_sync", "shfl_up_sync": "__shfl_up_sync",
         "shfl_down_sync": "__shfl_down_sync", "shfl_xor_sync": "__shfl_xor_sync"}
_SHFL_NATIVE = {"int32", "uint32", "int64", "uint64", "float32", "float64", "float16",
                "bfloat16"}
_BITS = {"popc": ("__popc", "__popcll"), "clz": ("__clz", "__clzll"),
         "ffs": ("__ffs", "__ffsll"), "brev": ("__brev", "__brevll")}


def math_call(name: str, t: Type, args: list[str]) -> str:
    """The C library's ``name`` for float32 or float64 ``t`` on C++ operands ``args``."""
    fl, db = MATH[name]
    if t == float32:
        return f"{fl}({', '.join(args)})"
    if t == float64:
        return f"{db}({', '.join(args)})"
    raise NotImplementedError(f"{name} on {t}")


def _math(em, x: ir.Call):
    return math_call(x.name, x.type, [em.e(a) for a in x.args]), PREC["atom"]


def _shfl(em, x: ir.Call):
    mask, v, lane = x.args
    vt = v.type
    fn = _SHFL[x.name]
    if vt.name in _SHFL_NATIVE:
        return f"{fn}({em.e(mask)}, {em.e(v)}, {em.e(lane)})", PREC["atom"]
    return (f"({vt.cname}){fn}({em.e(mask)}, int32_t({em.e(v)}), {em.e(lane)})",
            PREC["unary"])


def _bits(em, x: ir.Call):
    (v,) = x.args
    bits = v.type.bits
    fn = _BITS[x.name][bits == 64]
    cast = "unsigned long long" if bits == 64 else "uint32_t"
    arg = em.e(v)
    if bits < 32:  # zero-extend, then count and reverse within the value's own width
        arg = f"(uint{bits}_t)({arg})"
    text = f"{fn}(({cast})({arg}))"
    if bits < 32 and x.name in ("clz", "brev"):
        return f"({text} {'-' if x.name == 'clz' else '>>'} {32 - bits})", PREC["atom"]
    return text, PREC["atom"]


def _abs(em, x: ir.Call):
    (v,) = x.args
    t = v.type
    if t.is_float:
        if t.bits == 16:
            return f"{t.cname}(fabsf(float({em.e(v)})))", PREC["atom"]
        return math_call("fabs", t, [em.e(v)]), PREC["atom"]
    if t.kind == "u":
        return em.e(v), PREC["atom"]
    return f"({t.cname})({'llabs' if t.bits == 64 else 'abs'}({em.e(v)}))", PREC["unary"]


def _atomic(em, x: ir.Call):
    op = x.name.split(".")[1].rstrip("_")
    target, *vals = x.args
    ref = em.ref(target.array, target.indices)
    return f"tt::atomic_{op}(&{ref}, {', '.join(em.e(v) for v in vals)})", PREC["atom"]


def _pred(em, x: ir.Call):
    (v,) = x.args
    arg = f"float({em.e(v)})" if v.type.bits == 16 else em.e(v)
    return f"{x.name}({arg})", PREC["atom"]


def _minmax(em, x: ir.Call):
    a, b = x.args
    return f"tt::{x.name}({em.e(a)}, {em.e(b)})", PREC["atom"]


def _pair(em, x: ir.Call):
    """An intrinsic giving two values: tt::frexp<S>(x), tt::match_all<S>(mask, v), with S the
    struct of the tuple it returns."""
    fn = {"frexp": "frexp", "modf": "modf", "match_all_sync": "match_all"}[x.name]
    args = ", ".join(em.e(a) for a in x.args)
    return f"tt::{fn}<{tuple_struct(x.type)}>({args})", PREC["atom"]


def _complex(em, x: ir.Call):
    """complex.h's operations (``complex(a, b)``, ``z.real``, ``cmath.sqrt(z)``...)."""
    args = [em.e(a) for a in x.args]
    if x.name == "complex":
        return f"{x.type.cname}({', '.join(args)})", PREC["atom"]
    if x.name in ("real", "imag"):
        return f"{em.e(x.args[0], PREC['atom'])}.{x.name[:2]}", PREC["atom"]
    fn = "cmath::" + x.name[6:] if x.name.startswith("cmath.") else x.name
    return f"tt::{fn}({', '.join(args)})", PREC["atom"]


def _format(fmt: str):
    return lambda em, x: (fmt.format(*[em.e(a) for a in x.args]), PREC["atom"])


CALLS = {
    **{n: _math for n in MATH},
    **{n: _shfl for n in _SHFL},
    **{n: _bits for n in _BITS},
    **{n: _format(f) for n, f in _CALLS.items()},
    **{n: _pred for n in ("isnan", "isinf", "isfinite")},
    **{f"atomic.{n}": _atomic for n in ATOMICS},
    "abs": _abs, "min": _minmax, "max": _minmax,
    # without debug the raising thread stops; with debug the host raises it (emit.py)
    "raise": lambda em, x: (em.raise_call(x), PREC["atom"]),
    "bitcast": lambda em, x: (f"tt::bitcast<{x.type.cname}>({em.e(x.args[0])})", PREC["atom"]),
    **{f"bf16_round_{m}": _format(f"tt::bf16_round_{m}({{0}})") for m in ("rz", "rd", "ru")},
    "frexp": _pair, "modf": _pair, "match_all_sync": _pair,
    **{n: _complex for n in ("complex", "rect", "real", "imag", "cabs", "phase", "conj",
                             "cisnan", "cisinf", "cisfinite", *(f"cmath.{m}" for m in CMATH1))},
    **coop.CALLS,  # threadtile.coop's primitives (coop.py)
}
