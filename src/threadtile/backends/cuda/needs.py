"""What a module's CUDA C++ needs before its functions (backends/cuda/emit.py): the record
and tuple types its arrays and values hold, in the order their struct definitions need, and
which of the toolkit's and threadtile's numeric headers (cuda_fp16.h and cuda_bf16.h,
cuda_fp8.h, complex.h or cmath.h) its types and calls take."""

from __future__ import annotations

from collections.abc import Iterator

from ...ir import nodes as ir
from ...lang.records import RecordType
from ...lang.types import NARROW_FLOATS, ArrayType, Scalar, TileType, TupleType
from . import records
from .cxx import tuple_struct


def _exprs(f: ir.Function) -> Iterator[ir.Expr]:
    for s in ir.walk_stmts(f.body):
        for e in ir.stmt_exprs(s):
            yield from ir.walk_expr(e)


def _types(module: ir.Module, constant_params: bool = True) -> Iterator:
    """Every type the module's source spells or holds: its constant arrays', then each
    function's parameters (compile-time constants too where ``constant_params``), locals,
    return type, shared and local array declarations and expressions, in that order."""
    for d in module.const_arrays:
        yield d.type
    for f in module.kernel.all_functions():
        yield from (p.type for p in f.params if constant_params or not p.is_constant)
        yield from f.locals.values()
        yield f.return_type
        for s in ir.walk_stmts(f.body):
            if isinstance(s, ir.ArrayDecl):
                yield s.type
        yield from (x.type for x in _exprs(f))


def _elements(t) -> Iterator:
    """The scalar (or record) types a tuple, array or tile type is made of."""
    if isinstance(t, TupleType):
        for x in t.items:
            yield from _elements(x)
    elif isinstance(t, (ArrayType, TileType)):
        yield t.dtype
    else:
        yield t


def record_types(module: ir.Module) -> list[RecordType]:
    """Every record type the module's arrays hold, each after the records it nests."""
    out: list[RecordType] = []

    def add(t) -> None:
        if isinstance(t, TupleType):
            for x in t.items:
                add(x)
        elif isinstance(t, ArrayType) and isinstance(t.dtype, RecordType):
            out.extend(r for r in records.nested(t.dtype) if r not in out)

    for t in _types(module, constant_params=False):
        add(t)
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

    for t in _types(module, constant_params=False):
        add(t)
    return list(out.values())


def uses_half(module: ir.Module) -> bool:
    """Whether the module holds a 16-bit or narrower float (cuda_fp16.h and cuda_bf16.h)."""
    def half(t) -> bool:
        if isinstance(t, RecordType):  # its struct has a __half member
            return any(half(e) for f in t.fields if f.dtype is not None
                       for e in _elements(f.dtype))
        return isinstance(t, Scalar) and (t.bits == 16 and t.is_float or t.name in NARROW_FLOATS)

    return any(half(e) for t in _types(module) for e in _elements(t))


def uses_narrow(module: ir.Module) -> bool:
    """Whether the module holds a narrow float (cuda_fp8.h's types)."""
    return any(isinstance(e, Scalar) and e.name in NARROW_FLOATS
               for t in _types(module) for e in _elements(t))


def complex_includes(module: ir.Module) -> list[str]:
    """complex.h where a kernel has complex numbers; cmath.h (libcu++'s <cuda/std/complex>,
    about two seconds of NVRTC) only where it calls a cmath function."""
    if any(isinstance(x, ir.Call) and x.name.startswith("cmath.")
           for f in module.kernel.all_functions() for x in _exprs(f)):
        return ['#include "cmath.h"']
    uses = any(isinstance(e, Scalar) and e.is_complex for t in _types(module)
               for e in _elements(t))
    return ['#include "complex.h"'] if uses else []
