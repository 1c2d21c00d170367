"""Signatures: the types a kernel or device function is compiled for, as numba writes them.

``jit(signature)`` takes a signature in any of numba's spellings, and this module reads each
into one :class:`~threadtile.lang.types.Signature` of threadtile types:

- a string in numba's grammar: ``"void(float32[:], int32)"``, ``"(float64[:, ::1], i8)"``,
  ``"float32(float32, float32)"`` (a device function's return type), the aliases ``f4``,
  ``i8``, ``b1``, ``double``, ``boolean``, ``intp``... (:data:`NAMES`), and the forms numba
  prints: ``"(array(float32, 1d, A), int32) -> none"``, ``"readonly array(float32, 2d, C)"``,
  ``"UniTuple(int32 x 2)"``, ``"Tuple(int32, float32)"``;
- threadtile's types: ``void(float32[:], int32)``, or a tuple of argument types
  ``(float32[::1], int32)``;
- numba's own type and signature objects (``numba.cuda.types.float32[:]``,
  ``types.void(...)``), read by what they print: threadtile never imports numba.

Array axes are ``:`` (any stride) or ``::1`` (the contiguous one): ``float32[:, ::1]`` is a
C-contiguous 2-d array (layout ``"C"``); every other layout, Fortran order included, is a
strided one (layout ``"A"``).

A launch picks among a kernel's signatures by :func:`select`: each argument type either is
the parameter's type, or converts to it (:func:`conversion`: numba's ranking of exact,
promoting, safe and unsafe conversions); the signature whose worst conversions are fewest wins.
"""

from __future__ import annotations

import difflib
import re

import numpy as np

from .records import RecordType, parse_record
from .types import (
    ArrayType,
    Scalar,
    Signature,
    TupleType,
    Type,
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    is_numba_type,
    scalar_of,
    spell,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)

__all__ = ["NAMES", "parse", "parse_type", "as_type", "signature", "signatures",
           "is_signature", "EXACT", "PROMOTE", "SAFE", "UNSAFE", "conversion", "rate",
           "select", "spell_args", "spell_type", "convert"]

# Every name a signature string may use for a scalar type: threadtile's and numba's (numba's
# aliases as numba.cuda.types defines them: `byte` is uint8 there, `char` int8).
NAMES: dict[str, Scalar] = {
    "bool": bool_, "bool_": bool_, "boolean": bool_, "b1": bool_,
    "int8": int8, "i1": int8, "char": int8,
    "int16": int16, "i2": int16, "short": int16,
    "int32": int32, "i4": int32, "intc": int32,
    "int64": int64, "i8": int64, "int_": int64, "intp": int64, "long_": int64,
    "longlong": int64, "ssize_t": int64,
    "uint8": uint8, "u1": uint8, "byte": uint8, "uchar": uint8,
    "uint16": uint16, "u2": uint16, "ushort": uint16,
    "uint32": uint32, "u4": uint32, "uintc": uint32,
    "uint64": uint64, "u8": uint64, "uint": uint64, "uintp": uint64, "ulong": uint64,
    "ulonglong": uint64, "size_t": uint64,
    "float16": float16, "f2": float16, "half": float16,
    "bfloat16": bfloat16, "__nv_bfloat16": bfloat16,
    "float32": float32, "f4": float32,
    "float64": float64, "f8": float64, "double": float64,
    "complex64": complex64, "c8": complex64, "complex128": complex128, "c16": complex128,
    "void": void, "none": void,
}

# numba's types that kernels cannot take, and why
_REFUSED = {
    **dict.fromkeys(("CPointer", "voidptr", "RawPointer"),
                    "pointers are not kernel arguments in threadtile: pass the array itself"),
    **dict.fromkeys(("Record", "NestedArray"),
                    "record (structured) dtypes are not supported in kernels"),
    **dict.fromkeys(("pyobject", "unicode_type", "string", "Object"),
                    "Python objects cannot be passed to kernels"),
    **dict.fromkeys(("dim3", "grid_group"),
                    "this is a value inside kernels, not a parameter type"),
}


# -- reading ----------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(->)|(\d+)|([A-Za-z_][A-Za-z0-9_]*)|('[^']*'|\"[^\"]*\")|(\S))")


class _Bad(Exception):
    """A signature string that does not parse; ``parse`` names the text around it."""


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[tuple[str, int]] = []
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                break
            tok = m.group(m.lastindex) if m.lastindex else ""
            if tok:
                self.toks.append((tok, m.start(m.lastindex)))
            pos = m.end()
        if text[pos:].strip():
            raise _Bad(f"unexpected {text[pos:].strip()!r}")
        self.i = 0

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j][0] if j < len(self.toks) else None

    def next(self) -> str:
        tok = self.peek()
        if tok is None:
            raise _Bad("it ends too early")
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def expect(self, tok: str) -> None:
        got = self.peek()
        if got != tok:
            raise _Bad(f"expected {tok!r} {self.where()}")
        self.i += 1

    def where(self) -> str:
        if self.i >= len(self.toks):
            return "at the end"
        return f"at {self.toks[self.i][0]!r} (column {self.toks[self.i][1] + 1})"

    def number(self) -> int:
        tok = self.next()
        if not tok.isdigit():
            self.i -= 1
            raise _Bad(f"expected a number {self.where()}")
        return int(tok)

    # signature := [type] '(' types ')' ['->' type]
    def signature(self) -> Signature:
        ret = None
        if self.peek() != "(":
            ret = self.type()
        if self.peek() != "(":
            raise _Bad("a signature is written 'void(float32[:], int32)', '(float32[:], int32)' "
                       "or 'float32(float32, float32)'")
        self.expect("(")
        args = self.types(")")
        if self.accept("->"):
            if ret is not None:
                raise _Bad("two return types")
            ret = self.type()
        self.end()
        return Signature(tuple(args), ret)

    def end(self) -> None:
        if self.peek() is not None:
            raise _Bad(f"unexpected {self.where()}")

    def types(self, close: str) -> list:
        items = []
        while not self.accept(close):
            items.append(self.type())
            if not self.accept(","):
                self.expect(close)
                break
        return items

    def type(self):
        if self.accept("("):
            return TupleType(tuple(self.types(")")))
        name = self.next()
        if not (name[0].isalpha() or name[0] == "_"):
            self.i -= 1
            raise _Bad(f"expected a type {self.where()}")
        if name == "unaligned":  # numba prints arrays of packed records so: same layout here
            t = self.type()
            if not isinstance(t, ArrayType):
                raise _Bad("'unaligned' qualifies an array type")
            return t
        if name == "readonly":
            t = self.type()
            if not isinstance(t, ArrayType):
                raise _Bad("'readonly' qualifies an array type")
            return ArrayType(t.dtype, t.ndim, t.layout, t.space, True)
        if self.peek() == "(" and name in ("array", "Array"):
            t = self.array(name)
        elif self.peek() == "(" and name == "UniTuple":
            self.expect("(")
            item = self.type()
            if not (self.accept("x") or self.accept(",")):
                raise _Bad(f"expected 'x' {self.where()}")
            n = self.number()
            self.expect(")")
            t = TupleType((item,) * n)
        elif self.peek() == "(" and name == "Tuple":
            self.expect("(")
            if self.peek() == "(":  # numba's constructor: Tuple((int32, float32))
                self.expect("(")
                items = self.types(")")
                self.expect(")")
            else:
                items = self.types(")")
            t = TupleType(tuple(items))
        else:
            self.i -= 1
            t = self.element()
        while self.peek() in ("[", "*"):
            if self.accept("*"):
                raise _Bad(f"{spell_type(t)}*: " + _REFUSED["CPointer"])
            t = self.subscript(t)
        if isinstance(t, RecordType):  # a record by itself: the kernel takes it as a 0-d array
            t = ArrayType(t, 0, "C")
        return t

    def element(self):
        """An array's dtype: a scalar, or numba's ``Record(...)`` (a structured dtype)."""
        name = self.next()
        if name != "Record" or self.peek() != "(":
            return self.scalar(name)
        start = self.toks[self.i][1]
        depth, end = 0, None
        for k in range(start, len(self.text)):
            depth += {"(": 1, ")": -1}.get(self.text[k], 0)
            if depth == 0:
                end = k
                break
        if end is None:
            raise _Bad("Record( is not closed")
        try:
            t = parse_record(self.text[start + 1:end])
        except ValueError as e:
            raise _Bad(str(e)) from None
        while self.i < len(self.toks) and self.toks[self.i][1] <= end:
            self.i += 1
        return t

    def scalar(self, name: str) -> Scalar:
        t = NAMES.get(name)
        if t is not None:
            return t
        why = _REFUSED.get(name)
        if why is not None:
            raise _Bad(f"{name}: {why}")
        close = difflib.get_close_matches(name, NAMES, 1)
        raise _Bad(f"unknown type {name!r}" + (f" (did you mean {close[0]!r}?)" if close
                                               else ""))

    def subscript(self, t) -> ArrayType:
        self.expect("[")
        dims = []
        while True:
            self.expect(":")
            if self.accept(":"):
                dims.append(slice(None, None, self.number()))
            else:
                dims.append(slice(None))
            if not self.accept(","):
                break
        self.expect("]")
        if isinstance(t, RecordType):
            return ArrayType(t, len(dims), "C" if dims[-1].step == 1 else "A")
        if not isinstance(t, Scalar):
            raise _Bad(f"{spell_type(t)}[...]: arrays hold scalars")
        try:
            return t[tuple(dims)]
        except TypeError as e:
            raise _Bad(str(e)) from None

    def array(self, name: str) -> ArrayType:
        # numba prints array(float32, 2d, C) and writes Array(float32, 2, 'C', False, ...)
        self.expect("(")
        dtype = self.element()
        self.expect(",")
        ndim = self.number()
        if name == "array":
            self.expect("d")
        self.expect(",")
        layout = self.next().strip("'\"")
        if layout not in ("C", "F", "A"):
            raise _Bad(f"array layout {layout!r}: C, F or A")
        readonly, positional = False, 0
        while self.accept(","):
            key = self.next()
            if self.accept("="):
                val = self.next()
                if key == "readonly":
                    readonly = val == "True"
            elif key in ("True", "False") and positional == 0:
                readonly, positional = key == "True", 1
            elif key == "readonly":
                readonly = True
        self.expect(")")
        if isinstance(dtype, RecordType):
            return ArrayType(dtype, ndim, "C" if layout == "C" else "A", readonly=readonly)
        if ndim < 1 or dtype.kind == "v":
            raise _Bad(f"{name}({dtype}, {ndim}): kernels take arrays of 1 or more dimensions "
                       "of a scalar dtype")
        return ArrayType(dtype, ndim, "C" if layout == "C" else "A", readonly=readonly)


class ByTypes(dict):
    """A dict keyed by tuples of argument types (numba's ``get_regs_per_thread()`` and
    ``inspect_asm()`` answers) that numba's own types and any spelling of a signature's
    arguments also index: ``d[sig.args]`` with numba's ``void(float32[::1], int64)``."""

    def _key(self, key):
        if dict.__contains__(self, key):
            return key
        try:
            return tuple(signature(tuple(key)).args)
        except (TypeError, ValueError):
            return key

    def __getitem__(self, key):
        return dict.__getitem__(self, self._key(key))

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, self._key(key))

    def get(self, key, default=None):
        return dict.get(self, self._key(key), default)


def _bad(text: str, why: str) -> TypeError:
    return TypeError(f"bad signature {text!r}: {why}")


def parse(text: str) -> Signature:
    """The :class:`Signature` a string spells (numba's grammar, or the forms numba prints).
    Raises TypeError naming the string and what is wrong with it."""
    try:
        sig = _Parser(text).signature()
    except _Bad as e:
        raise _bad(text, str(e)) from None
    return _checked(sig, text)


def parse_type(text: str):
    """The type a string spells: ``"float32[:, ::1]"``, ``"i8"``, ``"array(float32, 1d, A)"``."""
    try:
        p = _Parser(text)
        t = p.type()
        p.end()
    except _Bad as e:
        raise TypeError(f"bad type {text!r}: {e}") from None
    return t


def as_type(obj) -> Type:
    """``obj`` as a threadtile type: a threadtile type, a string, one of numba's type objects
    (by what it prints), or a dtype NumPy or Python names (``np.float32``, ``int``)."""
    if isinstance(obj, Type):
        return obj
    if isinstance(obj, str):
        return parse_type(obj)
    if is_numba_type(obj):
        return parse_type(str(obj))
    t = scalar_of(obj)
    if t is not None:
        return t
    raise TypeError(f"{obj!r} is not a type: a signature's types are threadtile's (float32, "
                    "int32[:], float32[:, ::1]...), numba's, or strings")


def _checked(sig: Signature, text) -> Signature:
    for a in sig.args:
        if isinstance(a, Scalar) and a.kind == "v":
            raise _bad(str(text), "void is only a return type")
    return sig


def signature(obj) -> Signature:
    """One signature, in any spelling (the module docstring): a string, a
    :class:`~threadtile.lang.types.Signature`, a tuple of argument types, or numba's
    signature object."""
    if isinstance(obj, str):
        return parse(obj)
    if isinstance(obj, tuple):
        return _checked(Signature(tuple(_arg(a, obj) for a in obj), None), obj)
    if isinstance(obj, Signature) or _is_numba_signature(obj):
        ret = obj.return_type
        ret = None if ret is None else _arg(ret, obj)
        return _checked(Signature(tuple(_arg(a, obj) for a in obj.args), ret), obj)
    raise TypeError(f"{obj!r} is not a signature: write 'void(float32[:], int32)', "
                    "void(float32[:], int32) or a tuple of argument types")


def _arg(a, whole) -> Type:
    try:
        return as_type(a)
    except TypeError as e:
        raise TypeError(f"bad signature {_text(whole)}: {e}") from None


def _text(obj) -> str:
    if isinstance(obj, tuple):
        return "(" + ", ".join(str(a) for a in obj) + ")"
    return str(obj)


def _is_numba_signature(obj) -> bool:
    return (type(obj).__module__ or "").startswith("numba") and hasattr(obj, "args") and \
        hasattr(obj, "return_type")


def is_signature(obj) -> bool:
    """Whether ``jit``'s first argument is signatures rather than a function."""
    return isinstance(obj, (str, tuple, list, Signature)) or _is_numba_signature(obj)


def signatures(obj) -> list[Signature]:
    """``jit``'s first argument as a list of signatures: a list holds several, anything else
    is one."""
    if isinstance(obj, list):
        if not obj:
            raise TypeError("jit([]): an empty list of signatures")
        return [signature(s) for s in obj]
    return [signature(obj)]


def spell_type(t) -> str:
    return spell(t) if isinstance(t, Type) else str(t)


def spell_args(types) -> str:
    """Argument types as a signature writes them, for messages: ``float32[::1], int64``."""
    return ", ".join(spell_type(t) for t in types)


# -- choosing a signature ---------------------------------------------------------------------

# How an argument's type converts to a parameter's, best first (numba's ranking): the same
# type; a wider one of the same kind (int32 -> int64, float32 -> float64, a contiguous array
# to a strided parameter); a safe change of kind (uint8 -> int16, int32 -> float64, bool ->
# int); an unsafe one that loses range or precision (int64 -> int32, float64 -> float32).
EXACT, PROMOTE, SAFE, UNSAFE = range(4)

_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def conversion(src: Type, dst: Type, *, casts: bool = False) -> int | None:
    """How a value of type ``src`` converts to a parameter of type ``dst`` (``EXACT``,
    ``PROMOTE``, ``SAFE``, ``UNSAFE``), or None where it does not. A launch (``casts`` False)
    converts a number to a parameter of a wider or narrower type of its kind, an integer or a
    bool to a float, a bool to an integer, and no float to an integer; a call of a device
    function (``casts`` True) converts any number to any other, as a cast would."""
    if src == dst:
        return EXACT
    if isinstance(src, Scalar) and isinstance(dst, Scalar):
        return _scalar(src, dst, casts)
    if isinstance(src, ArrayType) and isinstance(dst, ArrayType):
        if src.dtype != dst.dtype or src.ndim != dst.ndim:
            return None
        if dst.layout == "C" and src.layout != "C":
            return None
        return EXACT if src.layout == dst.layout else PROMOTE
    if isinstance(src, TupleType) and isinstance(dst, TupleType):
        if len(src.items) != len(dst.items):
            return None
        kinds = [conversion(a, b, casts=casts) for a, b in zip(src.items, dst.items)]
        return None if None in kinds else max(kinds, default=EXACT)
    return None


def _scalar(src: Scalar, dst: Scalar, casts: bool) -> int | None:
    if "v" in (src.kind, dst.kind) or "tfloat32" in (src.name, dst.name):
        return None
    if src.is_complex or dst.is_complex:  # a complex number never becomes a real one
        if not dst.is_complex:
            return None
        if src.is_complex:
            return PROMOTE if dst.bits > src.bits else UNSAFE
        return SAFE
    if src.kind == "b":
        return SAFE
    if dst.kind == "b" or (src.is_float and dst.is_int):
        return UNSAFE if casts else None
    if src.is_float:  # to a float
        if src.bits == dst.bits:  # float16 <-> bfloat16
            return UNSAFE
        return PROMOTE if dst.bits > src.bits else UNSAFE
    if dst.is_float:  # an integer to a float: safe where the mantissa holds every value
        value_bits = src.bits - (src.kind == "i")
        safe = value_bits <= _MANTISSA[dst.name] or dst.bits == 64
        return SAFE if safe else UNSAFE
    if src.kind == dst.kind:
        return PROMOTE if dst.bits >= src.bits else UNSAFE
    if src.kind == "u" and dst.bits > src.bits:  # uint8 -> int16 holds every value
        return SAFE
    return UNSAFE


def rate(params, args, *, casts: bool = False) -> tuple[int, int, int] | None:
    """How well arguments of types ``args`` fit parameters ``params``: (unsafe, safe,
    promoting conversions), fewer is better; None where one does not convert."""
    if len(params) != len(args):
        return None
    counts = [0, 0, 0, 0]
    for a, p in zip(args, params):
        k = conversion(a, p, casts=casts)
        if k is None:
            return None
        counts[k] += 1
    return counts[UNSAFE], counts[SAFE], counts[PROMOTE]


def select(sigs: list[Signature], args, *, casts: bool = False) -> list[int]:
    """The indices of the signatures of ``sigs`` that fit arguments of types ``args`` best
    (:func:`rate`), in order; empty where none does. More than one is an ambiguity: a launch
    refuses it, a device-function call takes the first."""
    rated = [(r, i) for i, s in enumerate(sigs)
             if (r := rate(s.args, args, casts=casts)) is not None]
    if not rated:
        return []
    best = min(r for r, _ in rated)
    return [i for r, i in rated if r == best]


def convert(value, t: Scalar):
    """Scalar launch argument ``value`` as a value of parameter type ``t`` (a NumPy scalar of
    it): an integer wraps to ``t``'s width as a C cast does (numba's launch converts so), a
    float rounds to ``t``, a bool stays one."""
    if t.kind == "b":
        return np.bool_(value)
    if t.is_complex:
        return t.numpy.type(value)
    if t.is_int:
        v = int(value) & ((1 << t.bits) - 1)
        if t.kind == "i" and v >= 1 << (t.bits - 1):
            v -= 1 << t.bits
        return t.numpy.type(v)
    if t.name == "bfloat16" and t.numpy.kind != "V" and t.numpy.name != "bfloat16":
        return float(value)  # NumPy without ml_dtypes: the launch rounds it to bfloat16
    return t.numpy.type(value)
