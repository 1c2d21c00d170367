"""The C++ spelling of values and types: literals of every dtype, the C++ type of an array,
scalar, tile or tuple, and the names generated code gives tile and tuple types."""

from __future__ import annotations

from ...ir import tiling
from ...ir.operands import pitch
from ...lang.types import (
    NARROW_FLOATS,
    ArrayType,
    Scalar,
    TileType,
    TupleType,
    Type,
    float32,
    float64,
)

# C++ operator precedence (higher binds tighter)
PREC = {"?:": 3, "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10,
         "<=": 10, ">": 10, ">=": 10, "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13,
         "%": 13, "unary": 15, "atom": 16}

_SHORT = {"bool": "b8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "bfloat16": "bf16", "float32": "f32", "tfloat32": "tf32", "float64": "f64",
          "complex64": "c64", "complex128": "c128", "float8_e4m3fn": "f8e4m3",
          "float8_e5m2": "f8e5m2", "float8_e8m0fnu": "f8e8m0", "float4_e2m1fn": "f4e2m1"}


def alias(t: TileType) -> str:
    """The name generated code gives a tile type (``using tile_f32_64x32 = ...``)."""
    dims = "x".join(map(str, t.shape)) or "scalar"
    lay = "" if t.layout == "blocked" else "_" + t.layout
    return f"tile_{_SHORT[t.dtype.name]}_{dims}{lay}"


def spelled(t: TileType, threads: int) -> str:
    if t.layout.startswith("smem"):  # an mma operand in shared memory (tile/operands.h)
        swap = t.layout.startswith("smemt")
        ld = pitch(t)
        wg = "true" if t.layout.endswith("w") else "false"
        return (f"tt::tile::SmemTile<{t.dtype.cname}, {threads}, {t.shape[0]}, {t.shape[1]}, "
                f"{'true' if swap else 'false'}, {ld}, {wg}>")
    if t.layout == "mmarow":  # (M, 1): the rows of fragment tiles (tile/fragments.h)
        return f"tt::tile::MmaRows<{t.dtype.cname}, {threads}, {t.shape[0]}>"
    if t.layout == "mmacol":  # (1, N): the columns of fragment tiles (tile/fragments.h)
        return f"tt::tile::MmaCols<{t.dtype.cname}, {threads}, {t.shape[1]}>"
    # (ones elsewhere: the same fragments as the 2-d tile's, ir/tiling.py matrix_axes)
    shape = tiling.matrix(t.shape) if t.layout == "mma" else t.shape
    dims = "".join(f", {d}" for d in shape)
    kind = "MmaTile" if t.layout == "mma" else "Tile"
    return f"tt::tile::{kind}<{t.dtype.cname}, {threads}{dims}>"


def _mangle(t: Type) -> str:
    if isinstance(t, Scalar):
        return _SHORT[t.name]
    if isinstance(t, ArrayType):
        return f"a{t.layout}{t.ndim}{_SHORT[t.dtype.name]}"
    if isinstance(t, TupleType):  # the count first keeps nested tuples unambiguous
        return f"t{len(t.items)}" + "".join("_" + _mangle(x) for x in t.items)
    if isinstance(t, TileType):
        return alias(t)
    raise TypeError(f"no C++ type for {t}")


def tuple_struct(t: TupleType) -> str:
    """The name of the struct a tuple type is (``tt_t2_i64_f64``): its items' types, so equal
    types share one struct whatever their field names."""
    return "tt_" + _mangle(t)


def tuple_definition(t: TupleType) -> str:
    """``struct tt_t2_i64_f64 { int64_t _0; double _1; };``: members in order, each at its
    natural alignment, as runtime/abi.py packs a tuple argument."""
    members = "".join(f" {ctype(x)} _{k};" for k, x in enumerate(t.items))
    return f"struct {tuple_struct(t)} {{{members} }};"


def ctype(t: Type) -> str:
    if isinstance(t, Scalar):
        return t.cname
    if isinstance(t, ArrayType):
        return f"tt::{'CArray' if t.layout == 'C' else 'Array'}<{t.dtype.cname}, {t.ndim}>"
    if isinstance(t, TileType):
        return alias(t)
    if isinstance(t, TupleType):
        return tuple_struct(t)
    raise TypeError(f"no C++ type for {t}")


def literal(v, t: Scalar) -> str:
    if t.is_complex:
        v = complex(v)
        ft = t.real_type
        return f"{t.cname}({literal(v.real, ft)}, {literal(v.imag, ft)})"
    if t.kind == "b":
        return "true" if v else "false"
    if t.is_int:
        if t.kind == "i" and t.bits >= 32 and v == -(1 << (t.bits - 1)):
            # -2147483648 is the negation of a long (2147483648 is no int): spell the minimum
            # as a value of its own type
            return f"(-{(1 << (t.bits - 1)) - 1}{'LL' if t.bits == 64 else ''} - 1)"
        if t.bits == 64:
            return f"{v}LL" if t.kind == "i" else (f"{v:#x}ULL" if v >= 1 << 16 else f"{v}ULL")
        if t.bits < 32:  # a plain literal would be an int: spell the type (int8_t(3))
            return f"{t.cname}({v})"
        if t.kind == "u":
            return f"{v:#x}u" if v >= 1 << 16 else f"{v}u"
        return str(v)
    if t.name in NARROW_FLOATS:  # cuda_fp8.h's types, spelled by their bits (tile/narrow.h)
        from ...lang.minifloat import encode  # noqa: PLC0415

        return f"tt::tile::narrow_bits<{t.cname}>({int(encode([v], t.name)[0]):#04x})"
    if t.bits == 16:  # __half and __nv_bfloat16 are built from a float
        return f"{t.cname}({literal(v, float32)})"
    if v != v:
        return "__int_as_float(0x7fc00000)" if t == float32 else "__longlong_as_double(" \
               "0x7ff8000000000000LL)"
    if v in (float("inf"), float("-inf")):
        s = "" if v > 0 else "-"
        return f"{s}__int_as_float(0x7f800000)" if t == float32 else \
            f"{s}__longlong_as_double(0x7ff0000000000000LL)"
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    if t == float32:
        return r + "f"
    if t == float64:
        return r
    if t.name == "tfloat32":  # rounded to its 10 mantissa bits (tile/elementwise.h)
        return f"tt::tile::to<{t.cname}>({r}f)"
    return f"{t.cname}({r}f)"
