"""What a name in a kernel may stand for while it is lowered, besides IR expressions:
compile-time Python objects, tuples of values, array declarations; and how to name them in
messages. Shared by the Lowerer and the call and tile modules it hands work to."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as ir
from ..lang.types import Scalar
from . import typing as ty


@dataclass
class Py:
    """A compile-time Python object met while lowering (a module, a function, a dtype...)."""

    obj: object


@dataclass
class Tup:
    """A tuple of lowered values (``a.shape``, ``grid(2)``, ``(i, j)``); ``names`` are a
    namedtuple's fields."""

    items: list
    names: tuple = ()
    cls: object = None  # a frozen dataclass the tuple stands for (frontend/dataclassvals.py)


@dataclass
class ScalarMethod:
    """``x.bit_count`` before the call: the number and the method's name."""

    base: object
    name: str


@dataclass
class DeclRequest:
    """``shared.array(...)`` and friends: only allowed as the right side of ``name = ...``."""

    space: str
    dtype: Scalar
    shape: tuple[int, ...]
    init: object = None


@dataclass
class IndexSlice:
    """``ct.Slice(start, length)``: ``length`` consecutive elements of an array axis from
    ``start`` (int64), an index of ``load/store_advanced_indexing``."""

    start: ir.Expr
    length: int


def pyname(obj) -> str:
    if isinstance(obj, str):
        return "a string"
    n = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    mod = getattr(obj, "__module__", None)
    if n:
        return f"{mod}.{n}" if mod and mod != "builtins" else n
    return repr(obj)


def describe_value(v) -> str:
    if isinstance(v, Py):
        return pyname(v.obj)
    if isinstance(v, Tup):
        return "a namedtuple" if v.names else "a tuple"
    if isinstance(v, ir.Expr):
        return ty.describe(v.type)
    if isinstance(v, IndexSlice):
        return f"ct.Slice(..., {v.length})"
    return type(v).__name__
