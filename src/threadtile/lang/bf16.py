"""``cuda.bf16``: numba's bfloat16 intrinsics (``numba.cuda.bf16``), by numba's names.

Arithmetic (``hadd``, ``hsub``, ``hmul``, ``hdiv``, their ``_rn`` and ``_sat`` forms — ``_sat``
clamps the result to [0, 1] —, ``hfma``, ``hfma_sat``, ``hfma_relu``, ``hneg``, ``habs``),
comparisons (``heq hne hge hgt hle hlt``, false where an operand is NaN; the unordered
``hequ hneu hgeu hgtu hleu hltu``, true there), ``hmax``/``hmin`` (a NaN operand is ignored),
``hmax_nan``/``hmin_nan`` (a NaN operand is the result), ``hisnan``, ``hisinf`` (1, -1 or 0),
the math functions (``hsqrt hrsqrt hrcp hlog hlog2 hlog10 hexp hexp2 hexp10 hsin hcos htanh
htanh_approx htrunc hceil hfloor hrint``: computed in float32, rounded once), conversions
with a rounding mode (``int32_to_bfloat16_rz``, ``bfloat16_to_uint16_rd``, ... ``_rn`` to
nearest even, ``_rz`` towards zero, ``_rd`` down, ``_ru`` up), ``float32_to_bfloat16``,
``float64_to_bfloat16``, ``bfloat16_to_float32`` and the bit casts ``bfloat16_as_int16``,
``bfloat16_as_uint16``, ``int16_as_bfloat16``, ``uint16_as_bfloat16``.

numba's own objects (``from numba.cuda.bf16 import hadd``; their CUDA names, ``__hadd``) are
recognised by their module and name (:func:`from_numba`): threadtile never imports numba.
"""

from __future__ import annotations

from .thread import _intrinsic, _Namespace

ARITH = {"habs": 1, "hadd": 2, "hsub": 2, "hmul": 2, "hadd_rn": 2, "hsub_rn": 2, "hmul_rn": 2,
         "hdiv": 2, "hadd_sat": 2, "hsub_sat": 2, "hmul_sat": 2, "hfma": 3, "hfma_sat": 3,
         "hneg": 1, "hfma_relu": 3, "hmax": 2, "hmin": 2, "hmax_nan": 2, "hmin_nan": 2,
         "hisinf": 1, "hisnan": 1}
COMPARE = {"heq": "==", "hne": "!=", "hge": ">=", "hgt": ">", "hle": "<=", "hlt": "<"}
UNORDERED = {"hequ": "!=", "hneu": "==", "hgeu": "<", "hgtu": "<=", "hleu": ">", "hltu": ">="}
MATH = {"htrunc": "trunc", "hceil": "ceil", "hfloor": "floor", "hrint": "rint",
        "hsqrt": "sqrt", "hrsqrt": "rsqrt", "hrcp": "rcp", "hlog": "log", "hlog2": "log2",
        "hlog10": "log10", "hcos": "cos", "hsin": "sin", "htanh": "tanh",
        "htanh_approx": "tanh", "hexp": "exp", "hexp2": "exp2", "hexp10": "exp10"}
MODES = ("rn", "rz", "rd", "ru")
INTS = ("int16", "uint16", "int32", "uint32", "int64", "uint64")


def _conversions() -> list[str]:
    out = ["float32_to_bfloat16", "float64_to_bfloat16", "bfloat16_to_float32",
           "bfloat16_to_int8_rz", "bfloat16_to_uint8_rz", "bfloat16_as_int16",
           "bfloat16_as_uint16", "int16_as_bfloat16", "uint16_as_bfloat16"]
    out += [f"float32_to_bfloat16_{m}" for m in MODES]
    out += [f"{t}_to_bfloat16_{m}" for t in INTS for m in MODES]
    out += [f"bfloat16_to_{t}_{m}" for t in INTS for m in MODES]
    return out


NAMES = list(ARITH) + list(COMPARE) + list(UNORDERED) + list(MATH) + _conversions()

bf16 = _Namespace("bf16", **{n: _intrinsic(f"bf16.{n}", f"bf16.{n}: numba's bfloat16 "
                                           "intrinsic of that name") for n in NAMES})

# numba's CUDA names (what its objects are called) -> threadtile's
_C_TYPES = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16",
            "int": "int32", "uint": "uint32", "ll": "int64", "ull": "uint64",
            "float": "float32", "double": "float64"}


def canonical(cname: str) -> str | None:
    """threadtile's name for one of numba's bfloat16 functions (``__bfloat162short_rz`` ->
    ``bfloat16_to_int16_rz``), or None."""
    n = cname[2:] if cname.startswith("__") else cname
    if n in NAMES:
        return n
    if n.startswith("bfloat16_as_") or n.endswith("_as_bfloat16"):
        n = n.replace("ushort", "uint16").replace("short", "int16")
        return n if n in NAMES else None
    base, _, mode = n.partition("_")
    for src, dst in (("bfloat162", "bfloat16_to_{}"), ("2bfloat16", "{}_to_bfloat16")):
        if src == "bfloat162" and base.startswith(src):
            t = _C_TYPES.get(base[len(src):])
        elif src == "2bfloat16" and base.endswith(src):
            t = _C_TYPES.get(base[:-len(src)])
        else:
            continue
        if t is None:
            return None
        out = dst.format(t) + (f"_{mode}" if mode else "")
        return out if out in NAMES else None
    return None


def from_numba(obj):
    """threadtile's intrinsic for one of numba's bfloat16 functions, or None."""
    if getattr(obj, "__module__", None) != "numba.cuda._internal.cuda_bf16":
        return None
    name = canonical(getattr(obj, "__name__", ""))
    return getattr(bf16, name) if name else None
