"""Records (NumPy structured dtypes) in C++: a struct whose members sit at NumPy's offsets.

The kernel reaches fields through byte-offset views (``ir.Field``), so the struct's job is its
size and alignment (what array indexing and record copies use) and a readable layout; the
``static_assert``s make NVRTC prove both equal NumPy's. A member that cannot sit at its offset
with its natural alignment (a packed layout), or whose dtype kernels do not compute with
(complex, bytes...), is spelled as bytes; the gaps between members are padding bytes.
"""

from __future__ import annotations

import numpy as np

from ...lang.records import RecordType
from ...lang.types import Scalar
from .cxx import literal

_ALIGN = {"bool": 1, "__half": 2, "__nv_bfloat16": 2}


def _member_align(dtype) -> int:
    if isinstance(dtype, RecordType):
        return dtype.alignment if dtype.aligned else 1
    return _ALIGN.get(dtype.cname, dtype.itemsize)


def members(t: RecordType) -> list[tuple]:
    """The struct's members in offset order: (name, C++ element type or None for bytes, dims,
    offset, size in bytes, Field or None for padding)."""
    out: list[tuple] = []
    pos = 0
    fields = sorted(t.fields, key=lambda f: f.offset)
    for k, f in enumerate(fields):
        size = f.itemsize * int(np.prod(f.shape, dtype=np.int64))
        if f.offset < pos:  # overlapping fields (a union): the record is plain bytes
            return [("_bytes", None, (t.itemsize,), 0, t.itemsize, None)]
        if f.offset > pos:
            out.append((f"_pad{k}", None, (f.offset - pos,), pos, f.offset - pos, None))
        typed = f.dtype is not None and not (isinstance(f.dtype, RecordType) and
                                             not f.dtype.aligned)
        if typed:
            a = _member_align(f.dtype)
            typed = f.offset % a == 0 and t.itemsize % a == 0
        if typed:
            out.append((f.name, f.dtype.cname, f.shape, f.offset, size, f))
        else:
            out.append((f.name, None, (size,), f.offset, size, f))
        pos = f.offset + size
    if pos < t.itemsize:
        out.append(("_pad_end", None, (t.itemsize - pos,), pos, t.itemsize - pos, None))
    return out


def nested(t: RecordType) -> list[RecordType]:
    """``t`` after the records its fields hold (the order their definitions need)."""
    out: list[RecordType] = []
    for f in t.fields:
        if isinstance(f.dtype, RecordType):
            out += [r for r in nested(f.dtype) if r not in out]
    return out + [t]


def definition(t: RecordType) -> str:
    """The struct of ``t`` with static_asserts of its size and alignment."""
    name = t.cname
    align = f"__align__({t.alignment}) " if t.aligned else ""
    lines = [f"// {t.name}", f"struct {align}{name} {{"]
    for m, ctype, dims, _, _, f in members(t):
        dims_text = "".join(f"[{n}]" for n in dims)
        member = f"_f_{m}" if f is not None else m
        note = "" if ctype is not None or f is None else f"  // {f.numpy}"
        lines.append(f"  {ctype or 'unsigned char'} {member}{dims_text};{note}")
    lines.append("};")
    lines.append(f'static_assert(sizeof({name}) == {t.itemsize}, "record size");')
    if t.aligned:
        lines.append(f'static_assert(alignof({name}) == {t.alignment}, "record alignment");')
    # the members' offsets follow from the padding members between them (NVRTC on the H100
    # refused __builtin_offsetof to check them; tests/codegen checks them by NumPy's offsets)
    return "\n".join(lines)


def initializer(t: RecordType, raw: bytes) -> str:
    """The aggregate initializer of one record from its bytes (a constant array's element).
    Padding between and after the fields is zeros, whatever the array held there (NumPy
    leaves it uninitialized in many arrays): the source, and so its cache key, depends on the
    values alone."""
    items = []
    for name, ctype, dims, off, size, f in members(t):
        chunk = raw[off:off + size]
        if f is None and name.startswith("_pad"):
            items.append("{" + ", ".join(["0"] * size) + "}")
            continue
        if ctype is None:
            items.append("{" + ", ".join(str(b) for b in chunk) + "}")
            continue
        if isinstance(f.dtype, RecordType):
            n = f.dtype.itemsize
            vals = [initializer(f.dtype, chunk[i:i + n]) for i in range(0, size, n)]
        else:
            dt: Scalar = f.dtype
            vals = [literal(v, dt) for v in np.frombuffer(chunk, f.numpy).tolist()]
        items.append(("{" + ", ".join(vals) + "}") if dims else vals[0])
    return "{" + ", ".join(items) + "}"
