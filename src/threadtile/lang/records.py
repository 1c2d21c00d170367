"""Records: NumPy structured dtypes as the element type of kernel arrays (numba's ``Record``).

A :class:`RecordType` is the NumPy dtype itself, with its fields' byte offsets and its item
size exactly as NumPy lays them out (``align=True`` or packed). In a kernel a record is always
reached through memory: ``a[i]`` of a record array is a 0-d view of element ``i``, a record
passed by itself is a 0-d array, and a field is a view of the same memory with the field's
dtype (``a[i].x``, ``a[i]['x']``, ``a[i].arr[j]`` for an array field). Fields whose dtype
kernels do not compute with (complex, bytes, unicode, objects) stay in the layout: they are
copied with their record, and naming one in a kernel is refused with the field's name.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

import numpy as np

from .types import Scalar, Type, is_numba_type, scalar_of, uint8, uint32

__all__ = ["RecordType", "Field", "record_of", "parse_record", "text_unit",
           "unsupported_reason"]


@dataclass(frozen=True)
class Field:
    """One field: its name, its dtype (a Scalar, a RecordType, or None for a dtype kernels do
    not compute with), its subarray shape (``()`` for a scalar field), its byte offset."""

    name: str
    dtype: Scalar | RecordType | None
    shape: tuple[int, ...]
    offset: int
    numpy: np.dtype  # the field's base dtype, as NumPy spells it

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize


@dataclass(frozen=True)
class RecordType(Type):
    """A structured NumPy dtype as a kernel element type, compared by its layout and by whether
    it is an aligned struct (NumPy calls two dtypes with equal offsets equal either way; numba
    and the C++ struct's alignment tell them apart)."""

    numpy: np.dtype
    aligned: bool = False

    kind = "V"  # not a number: promotion and arithmetic refuse it
    is_float = False
    is_int = False
    is_signed = False

    def __repr__(self) -> str:
        return self.name

    @property
    def fields(self) -> tuple[Field, ...]:
        out = []
        for name in self.numpy.names:
            dt, off = self.numpy.fields[name][:2]
            base, shape = (dt.subdtype if dt.subdtype is not None else (dt, ()))
            out.append(Field(name, _elem_of(base), tuple(shape), int(off), base))
        return tuple(out)

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize

    @property
    def bits(self) -> int:
        return 8 * self.itemsize

    @property
    def alignment(self) -> int:
        return self.numpy.alignment

    @property
    def name(self) -> str:
        """numba's spelling: ``Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)``."""
        parts = []
        for f in self.fields:
            t = f.dtype.name if f.dtype is not None else str(f.numpy)
            if f.shape:
                t = f"nestedarray({t}, {f.shape})"
            parts.append(f"{f.name}[type={t};offset={f.offset}]")
        return f"Record({','.join(parts)};{self.itemsize};{self.aligned})"

    @property
    def cname(self) -> str:
        """The C++ struct's name: a digest of the layout, so equal layouts share one struct."""
        key = repr((self.numpy.descr, self.itemsize, self.alignment, self.aligned)).encode()
        return "tt_rec_" + hashlib.sha1(key).hexdigest()[:12]


def _elem_of(dt: np.dtype) -> Scalar | RecordType | None:
    if dt.names is not None:
        return RecordType(dt, bool(dt.isalignedstruct))
    if (dt.kind in "biuf" or dt.name == "bfloat16") and dt.isnative:
        return scalar_of(dt)
    return None


def record_of(obj) -> RecordType | None:
    """The RecordType of a structured dtype (a NumPy dtype, or anything with one: a record,
    an array), else None. A record array's dtype is ``(numpy.record, ...)``: its layout is
    what counts."""
    if is_numba_type(obj) and str(obj).startswith("Record("):  # numba's from_dtype(...)
        try:
            return parse_record(str(obj)[len("Record("):-1])
        except ValueError:
            return None
    dt = getattr(obj, "dtype", obj)
    if not isinstance(dt, np.dtype):
        if isinstance(obj, (str, type)) or dt is None:  # np.float32, 'int32': no records
            return None
        try:
            dt = np.dtype(dt)
        except (TypeError, ValueError):
            return None
    if dt.names is None or dt.subdtype is not None:
        return None
    aligned = bool(dt.isalignedstruct)
    if dt.type is not np.void:  # (numpy.record, [...]): the same layout
        dt = np.dtype((np.void, dt))
    return RecordType(dt, aligned)


def text_unit(dt: np.dtype) -> Scalar:
    """The element a bytes (``S``) or unicode (``U``, UTF-32) field is written in."""
    return uint8 if dt.kind == "S" else uint32


def unsupported_reason(f: Field) -> str:
    """Why kernels do not compute with field ``f`` (its dtype is None)."""
    if not f.numpy.isnative:
        return (f"field '{f.name}' has dtype {f.numpy}: a non-native byte order is not "
                "supported in kernels (convert with .astype(dtype.newbyteorder('=')))")
    kind = {"c": "complex numbers", "S": "bytes", "U": "unicode strings", "O": "Python objects",
            "M": "datetimes", "m": "timedeltas", "V": "raw bytes"}.get(f.numpy.kind, "this dtype")
    return (f"field '{f.name}' has dtype {f.numpy}: {kind} are not supported in kernels "
            "(the field is kept in the record's layout and copied with it)")


_FIELD_TEXT = re.compile(r"(\w+)\[type=(.*?);offset=(\d+)\]")


def parse_record(body: str) -> RecordType:
    """The record numba prints as ``Record(a[type=int32;offset=0],...;16;True)``, from the
    text between its parentheses."""
    try:
        head, size, aligned = body.rsplit(";", 2)
        names, formats, offsets = [], [], []
        for m in _FIELD_TEXT.finditer(head):
            t = m.group(2)
            if t.startswith("nestedarray(") and t.endswith(")"):
                base, shape = t[len("nestedarray("):-1].split(",", 1)
                fmt = (np.dtype(base.strip()), tuple(ast.literal_eval(shape.strip())))
            else:
                fmt = np.dtype(t)
            names.append(m.group(1))
            formats.append(fmt)
            offsets.append(int(m.group(3)))
        dt = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                       "itemsize": int(size)}, align=aligned.strip() == "True")
    except (TypeError, ValueError, SyntaxError) as e:
        raise ValueError(f"cannot read the record Record({body}): {e}") from None
    if not names:
        raise ValueError(f"cannot read the record Record({body})")
    return RecordType(dt, bool(dt.isalignedstruct))
