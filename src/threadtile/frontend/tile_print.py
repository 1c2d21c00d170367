"""Printing in tile kernels, as cuTile prints: ``ct.print(*args, sep=' ', end='\\n')``, the
builtin ``print`` in a tile kernel (the same), f-strings, and ``ct.printf(format, *args)``.

Everything becomes one ``printf`` tile operation (once per block, by its first thread): a C
format and its runtime arguments. What is known at compile time (strings, numbers, dtypes,
enum members, tuples of them, a tile's shape) is text of the format; a runtime value is one
conversion: a scalar prints as C's printf prints it, a tile as a nested list of its elements
(``[[0, 1], [2, 3]]``), each element by the value's conversion. A tile's conversion comes
from its f-string spec (``{t:.5f}`` is ``%.5f``) or, without one, from its dtype (``%d`` for
integers and bools, ``%f`` for floats). Tuples print as Python prints them (strings inside as
``repr``), frozen dataclasses with their generated ``__repr__`` (``Foo(x=[0, 1], z='a')``,
fields declared ``repr=False`` left out; ``<Foo object>`` where the class has ``repr=False``).

An f-string with runtime values is a :class:`FStr`: it can be stored in a variable, nested in
another f-string, concatenated with ``+`` and printed; it is not a runtime string.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import TileCodeSyntaxError, TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import Scalar, TileType, void
from .source import get_source
from .tiles import is_tile, tile_op
from .values import Py, Tup

if TYPE_CHECKING:
    from .lower import Lowerer

# the Python functions of tile kernels: a builtin print() in one prints once per block
TILE_KERNELS: weakref.WeakSet = weakref.WeakSet()


@dataclass
class Arg:
    """A runtime value in printed text, with its C conversion (``%.5f``)."""

    value: ir.Expr
    conv: str


@dataclass
class FStr:
    """A string built at compile time around runtime values: text and :class:`Arg` pieces."""

    pieces: list


def is_tile_kernel(lw: Lowerer) -> bool:
    return getattr(lw.spec, "tile_kernel", False)


# ---- f-strings -------------------------------------------------------------------------------

def joined_str(lw: Lowerer, node: ast.JoinedStr):
    """An f-string: a compile-time string where every part is known, else an FStr."""
    pieces: list = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            pieces.append(str(part.value))
            continue
        assert isinstance(part, ast.FormattedValue)
        if part.conversion != -1:
            raise lw.error(part, "f-string conversions (!r, !s, !a) are not supported in kernels",
                           "format the value without one: f'{x}'", cls=TileCodeSyntaxError)
        spec = ""
        if part.format_spec is not None:
            fs = part.format_spec
            if not all(isinstance(v, ast.Constant) for v in getattr(fs, "values", [])):
                raise lw.error(part.format_spec, "the f-string format spec must be a literal "
                                                 "string in kernels (not {...} inside it)",
                               cls=TileCodeSyntaxError)
            spec = "".join(str(v.value) for v in fs.values)
        pieces += formatted(lw, lw.expr(part.value), spec, part)
    return make_string(pieces)


def make_string(pieces: list):
    merged = _merge(pieces)
    if all(isinstance(p, str) for p in merged):
        return Py("".join(merged))
    return FStr(merged)


def _merge(pieces: list) -> list:
    out: list = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif not (isinstance(p, str) and p == ""):
            out.append(p)
    return out


def concat(a, b):
    """``a + b`` of strings where one is an FStr; None where neither is a string."""
    parts = []
    for v in (a, b):
        if isinstance(v, FStr):
            parts += v.pieces
        elif isinstance(v, Py) and isinstance(v.obj, str):
            parts.append(v.obj)
        else:
            return None
    return make_string(parts)


def _custom(cls, name: str) -> bool:
    """Whether ``cls`` defines ``name`` itself (not object's, not @dataclass's)."""
    for c in cls.__mro__[:-1]:
        f = c.__dict__.get(name)
        if f is not None:  # @dataclass's methods are compiled from strings (and wrapped)
            f = inspect.unwrap(f) if callable(f) else f
            return getattr(getattr(f, "__code__", None), "co_filename", "") != "<string>"
    return False


def formatted(lw: Lowerer, v, spec: str, node) -> list:
    """The pieces of ``format(v, spec)``, as an f-string's ``{v:spec}`` formats it."""
    if isinstance(v, Tup) and v.cls is not None and _custom(v.cls, "__format__"):
        raise lw.error(node, "Formatting dataclass values with custom __format__() is not "
                             f"supported ({v.cls.__name__} defines one)", cls=TileCodeTypeError)
    if isinstance(v, Py):
        try:
            return [format(v.obj, spec)]
        except (TypeError, ValueError) as e:
            raise lw.error(node, f"cannot apply format spec {spec!r} to "
                                 f"{type(v.obj).__name__}: {e}", cls=TileCodeTypeError) from None
    if spec:
        if isinstance(v, (Tup, FStr)):
            what = "str" if isinstance(v, FStr) else "tuple" if v.cls is None else v.cls.__name__
            raise lw.error(node, f"cannot apply format spec to a value of type {what} (the "
                                 f"spec {spec!r})", "format its items one by one",
                           cls=TileCodeTypeError)
        return [Arg(v, _conversion(lw, v, spec, node))]
    return to_str(lw, v, node)


_PY_SPEC = re.compile(r"([<>])?([+\- ])?(#)?(0)?(\d+)?(?:\.(\d+))?([dxXobeEfFgGn%]?)$")


def _conversion(lw: Lowerer, v: ir.Expr, spec: str, node) -> str:
    """The C conversion of a Python format spec for a runtime value."""
    dt = _dtype(lw, v, node)
    m = _PY_SPEC.match(spec)
    if m is None or m.group(7) in ("n", "%", "b"):
        raise lw.error(node, f"the format spec {spec!r} is not supported for a runtime value "
                             "in kernels", "use alignment, sign, #, 0, width, precision and "
                             "one of d x X o e E f F g G", cls=TileCodeSyntaxError)
    align, sign, alt, zero, width, prec, kind = m.groups()
    if not kind:
        kind = "f" if dt.is_float else "d"
    if kind in "dxXo" and dt.is_float:
        raise lw.error(node, f"Unknown format code {kind!r} for a {dt} value",
                       "use f, e or g for floats", cls=TileCodeTypeError)
    flags = ("-" if align == "<" else "") + (sign or "").strip("-") + (alt or "") + (zero or "")
    return "%" + flags + (width or "") + (f".{prec}" if prec is not None else "") + kind


def _dtype(lw: Lowerer, v, node) -> Scalar:
    if not isinstance(v, ir.Expr) or not isinstance(v.type, (Scalar, TileType)):
        raise lw.error(node, f"cannot print {type(v).__name__} in kernels",
                       cls=TileCodeTypeError)
    return v.type.dtype if isinstance(v.type, TileType) else v.type


def _default(lw: Lowerer, v, node) -> Arg:
    dt = _dtype(lw, v, node)
    if dt.is_complex:
        raise lw.unsupported(node, "printing complex numbers")
    return Arg(v, "%f" if dt.is_float else "%d")


def to_str(lw: Lowerer, v, node) -> list:
    """The pieces of ``str(v)``."""
    if isinstance(v, Py):
        return [str(v.obj)]
    if isinstance(v, FStr):
        return list(v.pieces)
    if isinstance(v, Tup):
        if v.cls is not None and _custom(v.cls, "__str__"):
            return _dunder(lw, v, "__str__", node)
        return to_repr(lw, v, node)
    return [_default(lw, v, node)]


def to_repr(lw: Lowerer, v, node) -> list:
    """The pieces of ``repr(v)``."""
    if isinstance(v, Py):
        return [repr(v.obj)]
    if isinstance(v, FStr):
        return _quoted(v.pieces)
    if isinstance(v, Tup):
        cls = v.cls
        if cls is not None:
            if _custom(cls, "__repr__"):
                return _dunder(lw, v, "__repr__", node)
            if not cls.__dataclass_params__.repr:
                return [f"<{cls.__name__} object>"]
            shown = {f.name for f in dataclasses.fields(cls) if f.repr}
            out: list = [cls.__name__ + "("]
            first = True
            for name, it in zip(v.names, v.items):
                if name in shown:
                    out += ([] if first else [", "]) + [f"{name}="] + to_repr(lw, it, node)
                    first = False
            return out + [")"]
        out = ["("]
        for k, it in enumerate(v.items):
            if k:
                out.append(", ")
            if v.names:
                out.append(f"{v.names[k]}=")
            out += to_repr(lw, it, node)
        return out + ([",)"] if len(v.items) == 1 and not v.names else [")"])
    return [_default(lw, v, node)]


def _dunder(lw: Lowerer, v: Tup, name: str, node) -> list:
    """A dataclass's own ``__str__``/``__repr__`` of one ``return`` statement (an f-string of
    its fields, typically), evaluated with ``self`` bound to the instance."""
    fn = inspect.unwrap(getattr(v.cls, name))
    tree = get_source(fn).tree
    body = [s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(
        s.value, ast.Constant) and isinstance(s.value.value, str))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None \
            or not tree.args.args:
        raise lw.unsupported(node, f"{v.cls.__name__}.{name}() other than one return "
                                   "statement", "return an f-string of the fields")
    self_name = tree.args.args[0].arg
    missing = object()
    saved = lw.statics.get(self_name, missing)
    lw.statics[self_name] = v
    try:
        r = lw.expr(body[0].value)
    finally:
        if saved is missing:
            del lw.statics[self_name]
        else:
            lw.statics[self_name] = saved
    if isinstance(r, FStr):
        return list(r.pieces)
    if isinstance(r, Py) and isinstance(r.obj, str):
        return [r.obj]
    raise lw.error(node, f"{v.cls.__name__}.{name}() returned {type(r).__name__}, not a "
                         "string", cls=TileCodeTypeError)


def _quoted(pieces: list) -> list:
    """``repr`` of a string with runtime numbers in it: Python's choice of quote, from the
    text (numbers hold no quotes), and its escapes."""
    text = "".join(p for p in pieces if isinstance(p, str))
    q = '"' if "'" in text and '"' not in text else "'"
    return [q] + [_escape(p, q) if isinstance(p, str) else p for p in pieces] + [q]


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(s: str, q: str) -> str:
    return "".join(_ESCAPES.get(c) or ("\\" + c if c == q else c if c.isprintable()
                                      else repr(c)[1:-1]) for c in s)


def assign(lw: Lowerer, node, name: str, value: FStr) -> list:
    """``msg = f"...{t}..."``: the name stands for the f-string; its runtime values are
    computed here (into variables), as Python computes them."""
    out: list = []
    pieces: list = []
    for p in value.pieces:
        if isinstance(p, Arg) and not isinstance(p.value, (ir.Var, ir.Const)):
            tmp = lw.spec.fresh(f"{name}_v")
            out += lw.assign_name(node, tmp, p.value)
            p = Arg(lw.read_name(tmp, node), p.conv)
        pieces.append(p)
    lw.statics[name] = FStr(pieces)
    return out


# ---- print and printf ------------------------------------------------------------------------

def lower_print(lw: Lowerer, node: ast.Call) -> ir.Expr:
    """``ct.print(*args, sep=' ', end='\\n')`` and the builtin print in a tile kernel."""
    opts = {"sep": " ", "end": "\n"}
    for kw in node.keywords:
        v = lw.expr(kw.value) if kw.arg in opts else None
        if v is None or not (isinstance(v, Py) and isinstance(v.obj, str)):
            raise lw.error(node, f"print() keyword {kw.arg!r} is not supported in kernels",
                           "print takes values, sep='...' and end='...' (strings)",
                           cls=TileCodeTypeError)
        opts[kw.arg] = v.obj
    pieces: list = []
    for k, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            raise lw.unsupported(a, "print(*args)")
        if k:
            pieces.append(opts["sep"])
        pieces += to_str(lw, lw.expr(a), a)
    pieces.append(opts["end"])
    fmt, args = "", []
    for p in _merge(pieces):
        if isinstance(p, str):
            fmt += p.replace("%", "%%")
        else:
            fmt += p.conv
            args.append(p.value)
    return printf_op(lw, node, fmt, args)


_CONV = re.compile(r"%(%|[-+ #0-9.]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcfFeEgGaA]))")


def format_specs(fmt: str) -> list[tuple[str, str]] | None:
    """[(conversion, 'i' | 'f')] for each conversion of a C format (``%%`` is text), or None
    where a ``%`` starts no conversion threadtile prints."""
    out = []
    k = 0
    while (k := fmt.find("%", k)) >= 0:
        m = _CONV.match(fmt, k)
        if m is None or m.group(2) in ("c", "a", "A"):
            return None
        if m.group(1) != "%":
            out.append((m.group(0), "f" if m.group(2) in "fFeEgG" else "i"))
        k = m.end()
    return out


def printf_op(lw: Lowerer, node, fmt: str, args: list) -> ir.Expr:
    """The printf tile operation: ``fmt``'s conversions take ``args`` (scalars or tiles)."""
    specs = format_specs(fmt)
    if specs is None:
        raise lw.error(node, f"printf(): unsupported format {fmt!r}",
                       "use %d %i %u %o %x %X %f %F %e %E %g %G (with flags, width, "
                       "precision and length) and %% for a percent sign", cls=TileCodeTypeError)
    if len(args) != len(specs):
        raise lw.error(node, f"printf(): the format has {len(specs)} conversions for "
                             f"{len(args)} arguments", cls=TileCodeTypeError)
    vals = []
    for a, (s, kind) in zip(args, specs):
        if not is_tile(a):
            a = lw.scalar(a, node)
        dt = _dtype(lw, a, node)
        if kind == "i" and dt.is_float:
            raise lw.error(node, f"printf(): {s} needs an integer, got {dt}",
                           cls=TileCodeTypeError)
        if dt.is_complex:
            raise lw.unsupported(node, "printing complex numbers")
        vals.append(a)
    return tile_op(lw, node, void, "printf", vals, fmt=fmt, kinds=tuple(k for _, k in specs))


def printf(lw: Lowerer, node: ast.Call) -> ir.Expr:
    """``ct.printf(format, *args)``: C's format; a tile argument prints as a nested list."""
    if not node.args:
        raise lw.error(node, "printf() needs a format string", cls=TileCodeTypeError)
    fmt = lw.expr(node.args[0])
    if not (isinstance(fmt, Py) and isinstance(fmt.obj, str)):
        raise lw.error(node, "printf(): the format must be a string literal",
                       cls=TileCodeTypeError)
    return printf_op(lw, node, fmt.obj, [lw.expr(a) for a in node.args[1:]])
