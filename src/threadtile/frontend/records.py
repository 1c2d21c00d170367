"""Records in kernels: fields of arrays whose dtype is a NumPy structured dtype (numba's
``Record``; lang/records.py).

A record is always memory: ``a[i]`` of a record array is a 0-d view of element ``i`` (an
``ir.Slice`` indexing every axis), a record argument is a 0-d array. A field is an
``ir.Field``: a view of the same memory with the field's dtype and the field's subarray axes
appended; a scalar field of one record is read and written through that 0-d view. Assigning a
record copies it whole (struct assignment in C++, the element's bytes in the simulator);
assigning an array to an array field copies it element by element.
"""

from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as ir
from ..lang.records import Field, RecordType, text_unit, unsupported_reason
from ..lang.types import ArrayType, int64
from . import typing as ty
from .values import Py, describe_value

if TYPE_CHECKING:
    from .lower import Lowerer


def is_record_array(v) -> bool:
    return isinstance(v, ir.Expr) and isinstance(v.type, ArrayType) and \
        isinstance(v.type.dtype, RecordType)


def element(lw: Lowerer, arr: ir.Expr, indices: list[ir.Expr], node) -> ir.Expr:
    """``arr[i, j]`` of a record array: the 0-d view of that record."""
    at: ArrayType = arr.type
    return ir.Slice(ArrayType(at.dtype, 0, "C", at.space, at.readonly), lw.loc(node), arr,
                    list(indices))


def _field(lw: Lowerer, rec: RecordType, name: str, node) -> Field:
    f = rec.field(name)
    if f is None:
        raise lw.error(node, f"the record has no field '{name}'",
                       f"its fields are {', '.join(rec.numpy.names)}")
    elem = f.dtype
    if elem is None and f.numpy.kind in "SU" and f.numpy.isnative:  # text: constants only
        elem = text_unit(f.numpy)
    if elem is None:
        raise lw.error(node, unsupported_reason(f))
    size = elem.itemsize
    align = elem.alignment if isinstance(elem, RecordType) else size
    if f.offset % align or rec.itemsize % size:
        # a view steps through the records in units of the field's element, and a GPU loads
        # an element only at a multiple of its alignment: a packed layout that puts a float64
        # at byte 4 of a 12-byte record has neither
        why = (f"it sits at byte {f.offset}, not a multiple of {align}" if f.offset % align
               else f"the record's {rec.itemsize} bytes are not a multiple of its {size}")
        raise lw.error(node, f"field '{name}' of type {elem.name} is not aligned: {why}",
                       "use align=True in the dtype, or reorder the fields")
    return f


def field_view(lw: Lowerer, arr: ir.Expr, name: str, node) -> ir.Field:
    """Field ``name`` of every record of ``arr``: an array of the field's dtype, the field's
    subarray axes after ``arr``'s."""
    at: ArrayType = arr.type
    f = _field(lw, at.dtype, name, node)
    if f.dtype is None:  # bytes/unicode: the code units are one more axis
        unit = text_unit(f.numpy)
        shape = f.shape + (f.numpy.itemsize // unit.itemsize,)
        t = ArrayType(unit, at.ndim + len(shape), "A", at.space, at.readonly)
        return ir.Field(t, lw.loc(node), arr, name, f.offset, shape, text=True)
    t = ArrayType(f.dtype, at.ndim + len(f.shape), "A", at.space, at.readonly)
    return ir.Field(t, lw.loc(node), arr, name, f.offset, f.shape)


def refuse_text(lw: Lowerer, view, node) -> None:
    """Reading a bytes/unicode field, or one of its characters: numba's strings are not here."""
    if isinstance(view, ir.Field) and view.text:
        f = view.array.type.dtype.field(view.name)
        raise lw.error(node, unsupported_reason(f) + "; only a constant string may be "
                             "assigned to it")


def field_value(lw: Lowerer, arr: ir.Expr, name: str, node):
    """``r.x`` / ``r['x']``: a scalar field of one record is its value; anything else a view."""
    view = field_view(lw, arr, name, node)
    refuse_text(lw, view, node)
    if view.type.ndim == 0 and not isinstance(view.type.dtype, RecordType):
        return ir.Load(view.type.dtype, view.loc, view, [])
    return view


def field_key(node: ast.Subscript) -> str | None:
    """The field name of ``r['x']``, else None."""
    sl = node.slice
    if isinstance(sl, ast.Constant) and isinstance(sl.value, str):
        return sl.value
    return None


def store(lw: Lowerer, arr: ir.Expr, indices: list[ir.Expr], value, node) -> list[ir.Stmt]:
    """``arr[i] = value`` for a record array: ``value`` is a record of the same layout."""
    at: ArrayType = arr.type
    if not (is_record_array(value) and value.type.ndim == 0):
        raise lw.error(node, f"an element of an array of records takes a whole record, not "
                             f"{describe_value(value)}",
                       "assign its fields: a[i].x = ... (or a[i]['x'] = ...)")
    if value.type.dtype != at.dtype:
        raise lw.error(node, f"cannot assign a {value.type.dtype} to an element of an array "
                             f"of {at.dtype}", "records are copied between equal layouts only")
    return [ir.Store(lw.loc(node), arr, indices, ir.Load(at.dtype, lw.loc(node), value, []))]


def copy_into(lw: Lowerer, dst: ir.Field, value, node) -> list[ir.Stmt]:
    """``r['arr'] = src``: an array field of one record (a static shape) takes ``src``
    element by element (a scalar is broadcast); ``r['name'] = "text"``: a bytes or unicode
    field takes a constant string, NumPy's way (encoded, cut to the field, zero-padded)."""
    if dst.array.type.ndim != 0:
        raise lw.error(node, "assigning to a whole array (a slice)",
                       "assign its elements in a loop")
    if dst.text:
        return _store_text(lw, dst, value, node)
    shape = dst.shape
    is_arr = isinstance(value, ir.Expr) and isinstance(value.type, ArrayType)
    if is_arr and value.type.ndim != len(shape):
        raise lw.error(node, f"cannot assign a {value.type.ndim}-d array to a field of shape "
                             f"{shape}")
    out: list[ir.Stmt] = []
    loc = lw.loc(node)
    if not is_arr:  # one value broadcast: computed once
        value = lw.scalar(value, node)
        if not isinstance(value, (ir.Const, ir.Var)):
            tmp = lw.spec.fresh("t")
            out += lw.assign_name(node, tmp, value)
            value = lw.read_var(tmp, node)
    for pos in itertools.product(*(range(n) for n in shape)):
        idx = [ir.Const(int64, loc, p) for p in pos]
        v = ir.Load(value.type.dtype, loc, value, list(idx)) if is_arr else value
        out.append(ir.Store(loc, dst, idx, ty.convert(v, dst.type.dtype)))
    return out


def _store_text(lw: Lowerer, dst: ir.Field, value, node) -> list[ir.Stmt]:
    f = dst.array.type.dtype.field(dst.name)
    text = value.obj if isinstance(value, Py) else None
    if f.shape or not isinstance(text, (str, bytes)):
        refuse_text(lw, dst, node)
    try:
        units = np.array(text, dtype=f.numpy).reshape(1).view(dst.type.dtype.numpy)
    except (UnicodeError, ValueError) as e:
        raise lw.error(node, f"{text!r} does not fit field '{f.name}' ({f.numpy}): {e}") from None
    loc = lw.loc(node)
    return [ir.Store(loc, dst, [ir.Const(int64, loc, k)],
                     ir.Const(dst.type.dtype, loc, int(u))) for k, u in enumerate(units)]
