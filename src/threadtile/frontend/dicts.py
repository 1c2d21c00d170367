"""Dicts with string keys, at compile time: a helper's ``**kwargs`` and ``{"a": 1}`` literals.

As in cuTile, a dict is a compile-time object whose keys are strings known when the kernel is
compiled and whose values are any kernel values: ``d["k"]``, ``d.get("k", default)``,
``"k" in d``, ``f(**d)`` and ``d == {...}`` (of compile-time values) all resolve then.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from ..ir import nodes as ir
from ..lang.types import bool_
from .values import Py, Tup

if TYPE_CHECKING:
    from .lower import Lowerer


class KwDict:
    """A dict of string keys to kernel values (ir expressions, Py, Tup)."""

    def __init__(self, items: dict):
        self.items = dict(items)

    def __repr__(self) -> str:
        return "dict(" + ", ".join(f"{k}={_py(v)!r}" for k, v in self.items.items()) + ")"

    def __eq__(self, other) -> bool:
        if isinstance(other, dict) and all(isinstance(k, str) for k in other):
            other = KwDict({k: Py(v) for k, v in other.items()})
        if not isinstance(other, KwDict) or list(self.items) != list(other.items) and set(
                self.items) != set(other.items):
            return False
        for k, v in self.items.items():
            a, b = _py(v), _py(other.items[k])
            if a is _NO or b is _NO or not (a is b or a == b):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    # what ct.static_eval/static_assert see: a mapping of the compile-time values
    def __contains__(self, key) -> bool:
        return key in self.items

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key):
        v = _py(self.items[key])
        return self.items[key] if v is _NO else v

    def get(self, key, default=None):
        return self[key] if key in self.items else default


class DictMethod:
    """``d.get`` before the call."""

    def __init__(self, d: KwDict, name: str):
        self.d = d
        self.name = name


_NO = object()


def _py(v):
    if isinstance(v, ir.Const):
        return v.value
    if isinstance(v, Py):
        return v.obj
    return _NO


def is_dict(v) -> bool:
    return isinstance(v, Py) and isinstance(v.obj, KwDict)


def literal(lw: Lowerer, node: ast.Dict) -> Py:
    items = {}
    for k, v in zip(node.keys, node.values):
        if k is None:  # {**d}
            d = lw.expr(v)
            if not is_dict(d):
                raise lw.error(v, "only a dict can be unpacked with ** in a dict")
            items.update(d.obj.items)
            continue
        key = lw.expr(k)
        if not (isinstance(key, Py) and isinstance(key.obj, str)):
            raise lw.error(k, "dict keys in kernels are strings written in the code",
                           cls=TileCodeTypeError)
        items[key.obj] = lw.expr(v)
    return Py(KwDict(items))


def getitem(lw: Lowerer, d: KwDict, node: ast.Subscript):
    key = lw.expr(node.slice)
    if not (isinstance(key, Py) and isinstance(key.obj, str)):
        raise lw.error(node, "a dict is indexed by a string written in the code",
                       cls=TileCodeTypeError)
    if key.obj not in d.items:
        raise lw.error(node, f"Key '{key.obj}' not found in dictionary (its keys: "
                             f"{', '.join(map(repr, d.items)) or 'none'})",
                       cls=TileCodeTypeError)
    return d.items[key.obj]


def call_method(lw: Lowerer, m: DictMethod, node: ast.Call):
    args = [lw.expr(a) for a in node.args]
    if m.name == "get" and 1 <= len(args) <= 2 and not node.keywords:
        key = args[0]
        if not (isinstance(key, Py) and isinstance(key.obj, str)):
            raise lw.error(node, "dict.get() takes a string key written in the code",
                           cls=TileCodeTypeError)
        return m.d.items.get(key.obj, args[1] if len(args) == 2 else Py(None))
    if m.name in ("keys", "values", "items") and not args and not node.keywords:
        keys = list(m.d.items)
        if m.name == "keys":
            return Tup([Py(k) for k in keys])
        if m.name == "values":
            return Tup(list(m.d.items.values()))
        return Tup([Tup([Py(k), v]) for k, v in m.d.items.items()])
    raise lw.unsupported(node, f"dict.{m.name}() with these arguments")


def attr(d: KwDict, name: str):
    if name in ("get", "keys", "values", "items"):
        return Py(DictMethod(d, name))
    return None


def contains(lw: Lowerer, key, d: KwDict, negate: bool, node) -> ir.Const:
    if not (isinstance(key, Py) and isinstance(key.obj, str)):
        raise lw.error(node, "`in` a dict takes a string key written in the code",
                       cls=TileCodeTypeError)
    return ir.Const(bool_, lw.loc(node), (key.obj in d.items) != negate)
