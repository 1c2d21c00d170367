"""Tile calls about dtypes: ``astype`` with a rounding mode, ``astile`` (a tile from numbers),
``bitcast``, ``pack_to_bytes`` and ``unpack_from_bytes``; and the rule that restricted floats
(tfloat32, the 8-bit floats, float4_e2m1fn) take no arithmetic.

Rounding modes of float-to-float conversions (``astype(..., rounding_mode=...)``), as cuTile
accepts them (to nearest even, RN, is the default everywhere but float8_e8m0fnu):

==========================  =============================================================
to                          modes
==========================  =============================================================
float64                     RN, RZ, RM, RP, RA
float32                     RN, RZ; RM, RP unless from float8_e8m0fnu; RA unless from
                            float64 or float8_e8m0fnu
tfloat32                    RN, RZ; RA unless from float64 or float8_e8m0fnu
float16                     RN, RZ; RM, RP, RA unless from float64, float32, tfloat32 or
                            float8_e8m0fnu
bfloat16                    RN, RZ
float8_e4m3fn, float8_e5m2,
float4_e2m1fn               RN
float8_e8m0fnu              RZ, RP (no default: one must be named)
==========================  =============================================================
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang import tile as lt
from ..lang.types import (
    Scalar,
    TileType,
    bool_,
    float16,
    float32,
    float64,
    tfloat32,
    uint8,
)
from . import typing as ty
from .tiles import bind_args, cast, dtype_of, enum_member, is_pow2, is_tile, no_tf32, tile_op
from .values import Py, Tup, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer

RM = lt.RoundingMode
_SHORT = {RM.RN: "rn", RM.RZ: "rz", RM.RM: "rm", RM.RP: "rp", RM.RA: "ra"}
_E8M0 = "float8_e8m0fnu"


def rounding_modes(src: Scalar, dst: Scalar) -> tuple:
    """The rounding modes of a conversion from float ``src`` to float ``dst`` (the table in
    this module's docstring), in cuTile's order."""
    e8 = src.name == _E8M0
    if dst == float64:
        return (RM.RN, RM.RZ, RM.RM, RM.RP, RM.RA)
    if dst == float32:
        return (RM.RN, RM.RZ) + (() if e8 else (RM.RM, RM.RP)) + \
            (() if e8 or src == float64 else (RM.RA,))
    if dst == tfloat32:
        return (RM.RN, RM.RZ) + (() if e8 or src == float64 else (RM.RA,))
    if dst == float16:
        return (RM.RN, RM.RZ) + (() if e8 or src in (float64, float32, tfloat32) else
                                 (RM.RM, RM.RP, RM.RA))
    if dst.name == _E8M0:
        return (RM.RZ, RM.RP)
    if dst.restricted:
        return (RM.RN,)
    return (RM.RN, RM.RZ)  # bfloat16


def astype(lw: Lowerer, x, t: Scalar, mode, node) -> ir.Expr:
    """``x.astype(t, rounding_mode=mode)`` (a tile or a scalar)."""
    m = None if mode is None or (isinstance(mode, Py) and mode.obj is None) else \
        enum_member(lw, mode, RM, node, "rounding_mode")
    src = x.type.dtype if is_tile(x) else lw.scalar(x, node).type
    if m is not None and not (src.is_float and t.is_float):
        raise lw.error(node, f"astype({src} -> {t}, rounding_mode={m}): rounding_mode is "
                             "only valid for float to float conversions", cls=TileCodeTypeError)
    if src == t:
        return x
    if src.is_float and t.is_float and (m is not None or t.name == _E8M0):
        # a conversion to float8_e8m0fnu has no default mode: it always checks
        modes = rounding_modes(src, t)
        want = m or RM.RN
        if want not in modes:
            raise lw.error(node, f"astype(): rounding_mode={want} is not supported for "
                                 f"conversion from {src} to {t}, supported rounding modes "
                                 f"for this conversion are {modes}",
                           "name one of them: rounding_mode=ct.RoundingMode.RZ...",
                           cls=TileCodeTypeError)
        m = want
    if not is_tile(x):
        if m not in (None, RM.RN):
            raise lw.error(node, f"astype() of a scalar with rounding_mode={m} is not "
                                 "supported yet", "convert a tile: ct.full((), x, ...)")
        return ty.convert(lw.scalar(x, node), t)
    if m in (None, RM.RN):
        return cast(lw, x, t, node)
    if src == tfloat32 and t != float32:
        x = cast(lw, x, float32, node)
    return tile_op(lw, node, TileType(t, x.type.shape), "cast", [x], rounding=_SHORT[m])


def no_arith(lw: Lowerer, v, node, what: str) -> None:
    """The error for arithmetic (``what``: an operator, a reduction...) on a restricted float
    tile: tfloat32, the 8-bit floats and float4_e2m1fn only convert and feed mma."""
    no_tf32(lw, v, node, what)


# ---- astile ---------------------------------------------------------------------------------

def astile(lw: Lowerer, node: ast.Call) -> ir.Expr:
    """``ct.astile(value, dtype)``: a tile of the numbers of a (nested) tuple, of their
    nesting's shape (each length a power of two), or a 0-d tile of one number."""
    v = bind_args(lw, node, "astile", ["value", "dtype"], {"dtype": None})
    val = v["value"]
    if is_tile(val):
        raise lw.error(node, "astile(): Expected a scalar or (possibly nested) tuple of "
                             f"scalars at value, got a {val.type}",
                       "a tile is already a tile: use .astype() to convert it",
                       cls=TileCodeTypeError)
    leaves: list = []
    shape = _nest(lw, val, "value", leaves, node)
    if v["dtype"] is None or (isinstance(v["dtype"], Py) and v["dtype"].obj is None):
        exprs = [lw.scalar(x, node) for x in leaves]
        t = exprs[0].type if exprs else float32
        for e in exprs[1:]:
            t, _ = ty.unify(t, False, e.type, False)
    else:
        t = dtype_of(lw, v["dtype"], node)
        exprs = [lw.scalar(x, node) for x in leaves]
    vals = [_convert(e, t) for e in exprs]
    return tile_op(lw, node, TileType(t, shape), "from_scalars", vals)


def _convert(e: ir.Expr, t: Scalar) -> ir.Expr:
    if isinstance(e, ir.Const) and t.restricted and not isinstance(e.value, complex):
        return ir.Const(t, e.loc, float(e.value))
    return ty.convert(e, t)


def _nest(lw: Lowerer, v, where: str, leaves: list, node) -> tuple:
    """The shape of nested tuple ``v`` (its numbers appended to ``leaves`` in order)."""
    items = None
    if isinstance(v, Tup):
        items = v.items
    elif isinstance(v, Py) and isinstance(v.obj, tuple):
        items = [Py(x) for x in v.obj]
    if items is None:
        if isinstance(v, Py) and not isinstance(v.obj, (bool, int, float)) or is_tile(v) and \
                v.type.ndim > 0:
            raise lw.error(node, f"astile(): Expected scalar elements at {where}, got "
                                 f"{describe_value(v)}", cls=TileCodeTypeError)
        leaves.append(v)
        return ()
    if not is_pow2(len(items)):
        raise lw.error(node, f"astile(): Tuple length {len(items)} at {where} is not a power "
                             "of 2", "tile shapes are powers of two", cls=TileCodeTypeError)
    shapes = [_nest(lw, x, f"{where}[{k}]", leaves, node) for k, x in enumerate(items)]
    if any(s != shapes[0] for s in shapes):
        raise lw.error(node, f"astile(): Tuple has non-uniform inner shapes at {where}: "
                             f"{', '.join(map(str, shapes))}", cls=TileCodeTypeError)
    return (len(items),) + shapes[0]


# ---- bitcast, pack_to_bytes, unpack_from_bytes ----------------------------------------------

def bytes_call(lw: Lowerer, fname: str, node: ast.Call) -> ir.Expr:
    """``bitcast(x, dtype)``, ``pack_to_bytes(x)``, ``unpack_from_bytes(x, dtype)``."""
    if fname == "pack_to_bytes":
        x = _tile(lw, bind_args(lw, node, fname, ["x"], {})["x"], fname, node)
        t = x.type.dtype
        if t == bool_:
            raise lw.error(node, "pack_to_bytes from a bool_ tile is not supported",
                           "convert it first: .astype(ct.uint8)", cls=TileCodeTypeError)
        nbits = x.type.size * t.bits
        if nbits % 8:
            raise lw.error(node, f"pack_to_bytes(): {x.type.size} elements of {t} are not a "
                                 "whole number of bytes", cls=TileCodeTypeError)
        return tile_op(lw, node, TileType(uint8, (nbits // 8,)), "bytes", [x])
    v = bind_args(lw, node, fname, ["x", "dtype"], {})
    x = _tile(lw, v["x"], fname, node)
    t = dtype_of(lw, v["dtype"], node)
    if fname == "bitcast":
        src = x.type.dtype
        if src == bool_ or t == bool_ or src.bits != t.bits:
            raise lw.error(node, f"bitcast() from {src} to {t}: the dtypes must have the same "
                                 "width, and neither may be bool_",
                           "use astype() to convert values", cls=TileCodeTypeError)
        if src == t:
            return x
        return tile_op(lw, node, TileType(t, x.type.shape), "bytes", [x])
    if x.type.dtype != uint8:
        raise lw.error(node, f"unpack_from_bytes requires uint8 tile, got {x.type}",
                       cls=TileCodeTypeError)
    if x.type.ndim != 1:
        raise lw.error(node, f"unpack_from_bytes requires a 1D tile, got {x.type}",
                       "reshape it first", cls=TileCodeTypeError)
    if t == bool_:
        raise lw.error(node, "unpack_from_bytes to a bool_ tile is not supported",
                       "unpack to uint8 and compare with 0", cls=TileCodeTypeError)
    nbits = x.type.size * 8
    if nbits % t.bits:
        raise lw.error(node, f"unpack_from_bytes(): {nbits} bits is not divisible by "
                             f"{t.bits}, the width of {t}", cls=TileCodeTypeError)
    return tile_op(lw, node, TileType(t, (nbits // t.bits,)), "bytes", [x])


def _tile(lw: Lowerer, x, fname: str, node) -> ir.Expr:
    if not is_tile(x):
        raise lw.error(node, f"{fname}() needs a tile, got {describe_value(x)}",
                       cls=TileCodeTypeError)
    return x
