"""What a module's CUDA C++ needs before its functions (backends/cuda/emit.py): the record
and tuple types its arrays and values hold, in the order their struct definitions need, and
which of the toolkit's and threadtile's numeric headers (cuda_fp16.h and cuda_bf16.h,
cuda_fp8.h, complex.h or cmath.h) its types and calls take."""

from __future__ import annotations

from ...ir import nodes as ir
from ...lang.records import RecordType
from ...lang.types import NARROW_FLOATS, ArrayType, Scalar, TileType, TupleType
from . import records
from .cxx import tuple_struct


def record_types(module: ir.Module) -> list[RecordType]:
    """Every record type the module's arrays hold, each after the records it nests."""
    out: list[RecordType] = []

    def add(t) -> None:
        if isinstance(t, TupleType):
            for x in t.items:
                add(x)
        elif isinstance(t, ArrayType) and isinstance(t.dtype, RecordType):
            out.extend(r for r in records.nested(t.dtype) if r not in out)

    for d in module.const_arrays:
        add(d.type)
    for f in module.kernel.all_functions():
        for t in [p.type for p in f.params if not p.is_constant] + list(f.locals.values()):
            add(t)
        for s in ir.walk_stmts(f.body):
            if isinstance(s, ir.ArrayDecl):
                add(s.type)
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    add(x.type)
    return out


def tuple_types(module: ir.Module) -> list[TupleType]:
    """Every tuple type of the module, each after the tuple types it holds (the order their
    struct definitions need)."""
    out: dict[str, TupleType] = {}

    def add(t) -> None:
        if isinstance(t, TupleType) and tuple_struct(t) not in out:
            for x in t.items:
                add(x)
            out[tuple_struct(t)] = t

    for f in module.kernel.all_functions():
        for t in [p.type for p in f.params if not p.is_constant] + list(f.locals.values()) + [
                f.return_type]:
            add(t)
        for s in ir.walk_stmts(f.body):
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    add(x.type)
    return list(out.values())


def uses_half(module: ir.Module) -> bool:
    def half(t) -> bool:
        if isinstance(t, TupleType):
            return any(half(x) for x in t.items)
        if isinstance(t, (ArrayType, TileType)):
            t = t.dtype
        if isinstance(t, RecordType):  # its struct has a __half member
            return any(half(f.dtype) for f in t.fields if f.dtype is not None)
        return isinstance(t, Scalar) and (t.bits == 16 and t.is_float or t.name in NARROW_FLOATS)

    if any(half(d.type) for d in module.const_arrays):
        return True
    for f in module.kernel.all_functions():
        if any(half(p.type) for p in f.params) or any(half(t) for t in f.locals.values()):
            return True
        for s in ir.walk_stmts(f.body):
            if isinstance(s, ir.ArrayDecl) and half(s.type):
                return True
            for e in ir.stmt_exprs(s):
                if any(half(x.type) for x in ir.walk_expr(e)):
                    return True
    return any(half(d.type) for d in module.const_arrays)


def uses_narrow(module: ir.Module) -> bool:
    """Whether a tile or array of the kernel holds a narrow float (cuda_fp8.h's types)."""
    for f in module.kernel.all_functions():
        types = [p.type for p in f.params] + list(f.locals.values())
        for s in ir.walk_stmts(f.body):
            for e in ir.stmt_exprs(s):
                types += [x.type for x in ir.walk_expr(e)]
        for t in types:
            d = getattr(t, "dtype", t)
            if isinstance(d, Scalar) and d.name in NARROW_FLOATS:
                return True
    return False


def complex_includes(module: ir.Module) -> list[str]:
    """complex.h where a kernel has complex numbers; cmath.h (libcu++'s <cuda/std/complex>,
    about two seconds of NVRTC) only where it calls a cmath function."""
    calls = set()
    uses = False

    def cx(t) -> bool:
        if isinstance(t, TupleType):
            return any(cx(x) for x in t.items)
        if isinstance(t, (ArrayType, TileType)):
            t = t.dtype
        return isinstance(t, Scalar) and t.is_complex

    for f in module.kernel.all_functions():
        uses = uses or any(cx(p.type) for p in f.params) or any(cx(t) for t in
                                                                 f.locals.values())
        for s in ir.walk_stmts(f.body):
            if isinstance(s, ir.ArrayDecl) and cx(s.type):
                uses = True
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    uses = uses or cx(x.type)
                    if isinstance(x, ir.Call) and x.name.startswith("cmath."):
                        calls.add(x.name)
    uses = uses or any(cx(d.type) for d in module.const_arrays)
    if calls:
        return ['#include "cmath.h"']
    return ['#include "complex.h"'] if uses else []
